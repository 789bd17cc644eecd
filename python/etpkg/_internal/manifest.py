"""The SDK summary a wheel carries in its CMake config (`# etpkg-sdk: {json}`), both ways.

wheelify writes it from the Sdk; verify parses it back into the same Sdk model, laid out as
the wheel holds it (package_folder = Path(name), headers in include/, libraries in lib/).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from etpkg._internal.errors import WheelError
from etpkg._internal.model import Component, Sdk
from etpkg._internal.naming import library_name

MARKER = "# etpkg-sdk: "
_LINE = re.compile(r"^# etpkg-sdk: (.*)$", re.M)


def to_json(sdk: Sdk) -> str:
    data = {
        "name": sdk.name,
        "version": sdk.version,
        "cmake_file_name": sdk.cmake_file_name,
        "variable_prefix": sdk.variable_prefix,
        "cxx_standard": sdk.cxx_standard,
        "components": [
            {
                "name": c.name,
                "target": c.target,
                "files": list(c.files),
                "requires": list(c.requires),
                "defines": list(c.defines),
                "registration_only": c.registration_only,
            }
            for c in sdk.components
        ],
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def find(config_text: str) -> str | None:
    """The manifest's JSON in a config file's text, or None when it carries none."""
    match = _LINE.search(config_text)
    return match.group(1) if match else None


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WheelError(f"{what} is not a list of strings")
    return tuple(value)


def _string(data: dict[str, Any], key: str, what: str) -> str:
    if key not in data:
        raise WheelError(f"{what} lacks the key {key!r}")
    value = data[key]
    if not isinstance(value, str) or not value:
        raise WheelError(f"{what}: {key} is not a non-empty string")
    return value


def from_json(text: str, where: str) -> Sdk:
    """Parses a manifest into an Sdk; anything malformed is a WheelError naming `where`."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise WheelError(f"{where}: the etpkg-sdk manifest is not valid JSON ({exc})") from exc
    what = f"{where}: the etpkg-sdk manifest"
    if not isinstance(data, dict):
        raise WheelError(f"{what} is not a JSON object")
    name = _string(data, "name", what)
    if "components" not in data or not isinstance(data["components"], list):
        raise WheelError(f"{what} lacks the list 'components'")
    cxx = data.get("cxx_standard")
    if cxx is not None and not isinstance(cxx, str):
        raise WheelError(f"{what}: cxx_standard is not a string")
    comps: list[Component] = []
    for i, c in enumerate(data["components"]):
        cwhat = f"{what}, component {i}"
        if not isinstance(c, dict):
            raise WheelError(f"{cwhat} is not a JSON object")
        files = _strings(c.get("files"), f"{cwhat}: files")
        try:
            libs = tuple(library_name(f) for f in files)
        except ValueError as exc:
            raise WheelError(f"{cwhat}: {exc}") from exc
        for key in ("requires", "defines"):
            if key not in c:
                raise WheelError(f"{cwhat} lacks the key {key!r}")
        if not isinstance(c.get("registration_only"), bool):
            raise WheelError(f"{cwhat}: registration_only is not true or false")
        comps.append(
            Component(
                name=_string(c, "name", cwhat),
                target=_string(c, "target", cwhat),
                libs=libs,
                requires=_strings(c["requires"], f"{cwhat}: requires"),
                defines=_strings(c["defines"], f"{cwhat}: defines"),
                registration_only=c["registration_only"],
            )
        )
    names = {c.name for c in comps}
    for comp in comps:
        unknown = [r for r in comp.requires if r not in names]
        if unknown:
            raise WheelError(f"{what}: component {comp.name} requires unknown {unknown}")
    cmake_file_name = _string(data, "cmake_file_name", what)
    first = comps[0].target if comps else name
    sdk = Sdk(
        name=name,
        version=_string(data, "version", what),
        package_folder=Path(name),
        components=tuple(comps),
        cmake_file_name=cmake_file_name,
        cmake_namespace=first.split("::", 1)[0] if "::" in first else name,
        cxx_standard=cxx,
    )
    if data.get("variable_prefix", sdk.variable_prefix) != sdk.variable_prefix:
        raise WheelError(f"{what}: variable_prefix does not match cmake_file_name")
    return sdk

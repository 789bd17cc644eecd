"""The SDK summary a wheel carries in its CMake config (`# etpkg-sdk: {json}`), both ways.

wheelify writes it from the wheel's Sdk; verify parses it back into the same Sdk model, laid
out as the wheel holds it (package_folder = Path(import_name), headers in include/, libraries
in lib/). It holds everything verify needs to know what a consumer should get (names, files,
languages, pkg-config names, system libraries), so verify reads no other generated file to
learn it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from etpkg._internal.errors import LayoutError, WheelError
from etpkg._internal.model import (
    LANGUAGES,
    SHARED,
    STATIC,
    CMakeVariable,
    Component,
    Dependency,
    RunEnvEntry,
    Sdk,
    WheelRequirement,
)
from etpkg._internal.naming import is_static_file, library_name

MARKER = "# etpkg-sdk: "
_LINE = re.compile(r"^# etpkg-sdk: (.*)$", re.M)


def to_json(sdk: Sdk) -> str:
    data: dict[str, Any] = {
        "name": sdk.name,
        "version": sdk.version,
        "import_name": sdk.import_name,
        "cmake_file_name": sdk.cmake_file_name,
        "cmake_target": sdk.cmake_target,
        "cmake_namespace": sdk.cmake_namespace,
        "pkg_config_name": sdk.pkg_config_name,
        "variable_prefix": sdk.variable_prefix,
        "cxx_standard": sdk.cxx_standard,
        "executables": list(sdk.executables),
        "res_dirs": list(sdk.res_dirs),
        "components": [
            {
                "name": c.name,
                "target": c.target,
                "files": list(c.files),
                "requires": list(c.requires),
                "defines": list(c.defines),
                "registration_only": c.registration_only,
                "pkg_config_name": c.pkg_config_name,
                "system_libs": list(c.system_libs),
                "languages": list(c.languages),
                "headers": bool(c.include_dirs),
                "dependency_files": list(c.dependency_files),
            }
            for c in sdk.components
        ],
    }
    if sdk.build_modules:  # absent when none, as in wheels made before it was recorded
        data["build_modules"] = list(sdk.build_modules)
    if sdk.build_dirs:
        data["build_dirs"] = list(sdk.build_dirs)
    if sdk.run_env:  # absent when none, as in wheels made before it was recorded
        data["run_env"] = [
            {
                "name": e.name,
                "op": e.op,
                "values": list(e.values),
                "path": e.path,
                "separator": e.separator,
            }
            for e in sdk.run_env
        ]
    carried = {b.name: b.cmake_file_name for b in sdk.bundled}
    required = [
        {"name": d.name, "system": d.system, "cmake_file_name": carried.get(d.name, "")}
        for d in sdk.dependencies
        if d.headers or d.libs
    ]
    if required:  # absent when none, as in wheels made before it was recorded
        data["required"] = required
    if sdk.wheel_requires:  # SDK wheels depended on (depend.py)
        data["wheel_requires"] = [
            {
                "name": w.name,
                "distribution": w.distribution,
                "specifier": w.specifier,
                "import_name": w.import_name,
                "cmake_file_name": w.cmake_file_name,
                "sonames": [list(pair) for pair in w.sonames],
            }
            for w in sdk.wheel_requires
        ]
    if sdk.cmake_config_version_compat != "SameMajorVersion":
        data["cmake_config_version_compat"] = sdk.cmake_config_version_compat
    if sdk.system_package_version:
        data["system_package_version"] = sdk.system_package_version
    if sdk.cmake_variable_prefixes:
        data["cmake_variable_prefixes"] = list(sdk.cmake_variable_prefixes)
    if sdk.cmake_extra_dependencies:
        data["cmake_extra_dependencies"] = list(sdk.cmake_extra_dependencies)
    if sdk.cmake_extra_variables:
        data["cmake_extra_variables"] = [v._asdict() for v in sdk.cmake_extra_variables]
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


def _list(data: dict[str, Any], key: str, what: str) -> tuple[str, ...]:
    if key not in data:
        raise WheelError(f"{what} lacks the key {key!r}")
    return _strings(data[key], f"{what}: {key}")


def _component(c: Any, what: str) -> Component:
    if not isinstance(c, dict):
        raise WheelError(f"{what} is not a JSON object")
    files = _list(c, "files", what)
    try:
        libs = tuple(library_name(f) for f in files)
    except ValueError as exc:
        raise WheelError(f"{what}: {exc}") from exc
    kinds = {is_static_file(f) for f in files}
    if len(kinds) > 1:
        raise WheelError(f"{what}: mixes shared libraries and archives: {list(files)}")
    if not isinstance(c.get("registration_only"), bool):
        raise WheelError(f"{what}: registration_only is not true or false")
    if not isinstance(c.get("headers"), bool):
        raise WheelError(f"{what}: headers is not true or false")
    languages = _list(c, "languages", what)
    if not languages or not set(languages) <= set(LANGUAGES):
        raise WheelError(f"{what}: languages {list(languages)} (expected C and/or C++)")
    return Component(
        name=_string(c, "name", what),
        target=_string(c, "target", what),
        libs=libs,
        requires=_list(c, "requires", what),
        defines=_list(c, "defines", what),
        include_dirs=("include",) if c["headers"] else (),
        system_libs=_list(c, "system_libs", what),
        registration_only=c["registration_only"],
        pkg_config_name=_string(c, "pkg_config_name", what),
        languages=languages,
        linkage=STATIC if kinds == {True} else SHARED,
        dependency_files=_list(c, "dependency_files", what),
    )


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
    comps = [_component(c, f"{what}, component {i}") for i, c in enumerate(data["components"])]
    names = {c.name for c in comps}
    for comp in comps:
        unknown = [r for r in comp.requires if r not in names]
        if unknown:
            raise WheelError(f"{what}: component {comp.name} requires unknown {unknown}")
    if not comps:
        raise WheelError(f"{what} lists no component")
    import_name = _string(data, "import_name", what)
    sdk = Sdk(
        name=name,
        version=_string(data, "version", what),
        package_folder=Path(import_name),
        components=tuple(comps),
        cmake_file_name=_string(data, "cmake_file_name", what),
        cmake_namespace=_string(data, "cmake_namespace", what),
        cxx_standard=cxx,
        import_name=import_name,
        cmake_target=_string(data, "cmake_target", what),
        pkg_config_name=_string(data, "pkg_config_name", what),
        executables=_list(data, "executables", what),
        res_dirs=_list(data, "res_dirs", what),
        build_modules=_strings(data.get("build_modules", []), f"{what}: build_modules"),
    )
    sdk = dataclasses.replace(
        sdk,
        dependencies=_required(data.get("required", []), what),
        cmake_config_version_compat=_policy(data.get("cmake_config_version_compat"), what),
        system_package_version=str(data.get("system_package_version") or ""),
        build_dirs=_strings(data.get("build_dirs", []), f"{what}: build_dirs"),
        cmake_variable_prefixes=_strings(
            data.get("cmake_variable_prefixes", []), f"{what}: cmake_variable_prefixes"
        ),
        wheel_requires=_wheel_requires(data.get("wheel_requires", []), what),
        run_env=_run_env(data.get("run_env", []), what),
        cmake_extra_dependencies=_strings(
            data.get("cmake_extra_dependencies", []), f"{what}: cmake_extra_dependencies"
        ),
        cmake_extra_variables=_extra_variables(data.get("cmake_extra_variables", []), what),
    )
    if data.get("variable_prefix", sdk.variable_prefix) != sdk.variable_prefix:
        raise WheelError(f"{what}: variable_prefix does not match cmake_file_name")
    try:
        sdk.wheel_version  # noqa: B018
    except LayoutError as exc:
        raise WheelError(f"{what}: {exc}") from exc
    return sdk


def _extra_variables(value: Any, what: str) -> tuple[CMakeVariable, ...]:
    where = f"{what}: cmake_extra_variables"
    if not isinstance(value, list):
        raise WheelError(f"{where} is not a list")
    out = []
    for item in value:
        try:
            var = CMakeVariable(**item)
        except TypeError as exc:
            raise WheelError(f"{where} holds {item!r}: {exc}") from exc
        if not all(isinstance(getattr(var, k), str) for k in ("name", "value", "cache_type")):
            raise WheelError(f"{where} holds {item!r}, whose name, value or type is no string")
        out.append(var)
    return tuple(out)


def _wheel_requires(value: Any, what: str) -> tuple[WheelRequirement, ...]:
    """The SDK wheels the wheel depends on (names, range, SONAMEs as built and as shipped)."""
    where = f"{what}: wheel_requires"
    if not isinstance(value, list):
        raise WheelError(f"{where} is not a list")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise WheelError(f"{where}[{i}] is not an object")
        sonames = item.get("sonames", [])
        if not isinstance(sonames, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in sonames
        ):
            raise WheelError(f"{where}[{i}]: sonames is not a list of [built, shipped] pairs")
        out.append(
            WheelRequirement(
                name=_string(item, "name", f"{where}[{i}]"),
                distribution=_string(item, "distribution", f"{where}[{i}]"),
                specifier=str(item.get("specifier") or ""),
                import_name=_string(item, "import_name", f"{where}[{i}]"),
                cmake_file_name=_string(item, "cmake_file_name", f"{where}[{i}]"),
                cmake_version="",
                package_target="",
                sonames=tuple((a, b) for a, b in sonames),
            )
        )
    return tuple(out)


def _required(value: Any, what: str) -> tuple[Dependency, ...]:
    """The required packages reaching consumers: names, and whether the OS answers for them."""
    if not isinstance(value, list):
        raise WheelError(f"{what}: required is not a list")
    out = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("system"), bool):
            raise WheelError(f"{what}: required holds {item!r}, not {{name, system}}")
        file_name = item.get("cmake_file_name", "")
        if not isinstance(file_name, str):
            raise WheelError(f"{what}: required holds {item!r}, not {{name, system}}")
        dep = Dependency(_string(item, "name", what), "", True, True, item["system"], None)
        out.append(dataclasses.replace(dep, cmake_file_name=file_name))
    return tuple(out)


POLICIES = ("SameMajorVersion", "AnyNewerVersion", "SameMinorVersion", "ExactVersion")


def _policy(value: Any, what: str) -> str:
    if value is None:
        return "SameMajorVersion"
    if value not in POLICIES:
        raise WheelError(f"{what}: cmake_config_version_compat {value!r} is not one of {POLICIES}")
    return str(value)


def _run_env(data: object, what: str) -> tuple[RunEnvEntry, ...]:
    if not isinstance(data, list):
        raise WheelError(f"{what}: run_env is not a list")
    out = []
    for item in data:
        if not isinstance(item, dict) or item.get("op") not in ("define", "prepend", "append"):
            raise WheelError(f"{what}: run_env entry {item!r} is not valid")
        values = _strings(item.get("values", []), f"{what}: run_env values")
        out.append(
            RunEnvEntry(
                str(item.get("name", "")),
                str(item["op"]),
                values,
                bool(item.get("path")),
                str(item.get("separator", " ")),
            )
        )
    return tuple(out)

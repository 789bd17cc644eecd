"""The dist-info files (METADATA, WHEEL, entry_points.txt), rendered from the Sdk; pure."""

from __future__ import annotations

import configparser
import io
import re
from collections.abc import Sequence

from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression
from packaging.metadata import Metadata, RawMetadata
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from etpkg._internal import properties, tags
from etpkg._internal.errors import LayoutError
from etpkg._internal.model import Sdk
from etpkg._internal.tags import WheelName

GENERATOR = "etpkg"
# packaging writes markers in this normal form: extra == "name".
_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")
# The core metadata spec's spellings. packaging writes field names in lower case, which is
# valid (they are case-insensitive) but twine looks for the bytes b"Metadata-Version".
_FIELD_NAMES = {
    "metadata-version": "Metadata-Version",
    "license-expression": "License-Expression",
    "license-file": "License-File",
    "project-url": "Project-URL",
    "requires-dist": "Requires-Dist",
    "provides-extra": "Provides-Extra",
}


def wheel_name(sdk: Sdk, platform: str) -> WheelName:
    return tags.wheel_name(sdk.name, sdk.wheel_version, platform)


def render_metadata(sdk: Sdk, license_files: Sequence[str] = ()) -> bytes:
    """METADATA 2.4; `license_files` are paths under .dist-info/licenses/ (PEP 639)."""
    raw: RawMetadata = {
        "metadata_version": "2.4",
        "name": sdk.name,
        "version": sdk.wheel_version,
    }
    summary = " ".join(sdk.description.split())
    if summary:
        raw["summary"] = summary
    if sdk.license:
        try:
            raw["license_expression"] = canonicalize_license_expression(sdk.license)
        except InvalidLicenseExpression:
            raw["license"] = sdk.license
    if license_files:
        raw["license_files"] = list(license_files)
    if sdk.homepage:
        raw["project_urls"] = {"Homepage": sdk.homepage}
    requires, extras = requirements(sdk)
    if requires:
        raw["requires_dist"] = requires
    if extras:
        raw["provides_extra"] = extras
    try:
        message = Metadata.from_raw(raw).as_rfc822()
    except Exception as exc:  # packaging raises an ExceptionGroup of InvalidMetadata
        raise LayoutError(f"cannot write METADATA for {sdk.name}: {exc}") from exc
    lines = [f"{_field_name(key)}: {value}" for key, value in message.items()]
    return ("\n".join(lines) + "\n\n").encode()


def _field_name(key: str) -> str:
    key = key.lower()
    return _FIELD_NAMES.get(key, "-".join(part.capitalize() for part in key.split("-")))


def requirements(sdk: Sdk) -> tuple[list[str], list[str]]:
    """(Requires-Dist in the given order, normalized, and the sorted extras their markers name)."""
    requires: list[str] = []
    extras: set[str] = set()
    for text in sdk.python_requires:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise LayoutError(
                f"{properties.PYTHON_REQUIRES.name} of {sdk.name}: {text!r} is not a PEP 508 "
                f"requirement ({exc})"
            ) from exc
        if req.marker is not None:
            for name in _EXTRA.findall(str(req.marker)):
                extras.add(str(canonicalize_name(name)))
        requires.append(str(req))
    # SDK wheels depended on instead of grafted (depend.py): pip refuses a version outside
    # the range the Conan requirement allows.
    requires += [str(Requirement(r.requirement)) for r in sdk.wheel_requires]
    return requires, sorted(extras)


def render_wheel(tag: str, generator_version: str) -> bytes:
    # A wheel with nothing platform-specific (header-only: py3-none-any) is purelib.
    purelib = "true" if tag.endswith("-any") else "false"
    lines = [
        "Wheel-Version: 1.0",
        f"Generator: {GENERATOR} {generator_version}",
        f"Root-Is-Purelib: {purelib}",
        f"Tag: {tag}",
    ]
    return ("\n".join(lines) + "\n").encode()


def entry_points(sdk: Sdk) -> dict[str, dict[str, str]]:
    """Discovery by scikit-build-core (cmake.root / cmake.prefix) and pkgconf-pypi (pkg_config)."""
    pkg = sdk.import_name
    return {
        # scikit-build-core sets <name>_ROOT from the entry point's name: the find_package name.
        "cmake.root": {sdk.cmake_file_name: pkg},
        # ...and adds the package dir to CMAKE_PREFIX_PATH; <pkg>/lib/cmake/<name>/ is searched.
        "cmake.prefix": {pkg: pkg},
        "pkg_config": {pkg: f"{pkg}.lib.pkgconfig"},
    }


def render_entry_points(sdk: Sdk) -> bytes:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    for group, items in sorted(entry_points(sdk).items()):
        parser[group] = dict(sorted(items.items()))
    out = io.StringIO()
    parser.write(out)
    return out.getvalue().encode()

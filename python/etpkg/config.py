"""The generated CMake package of a wheel: <name>-config.cmake, its version file, the runpath file.

Pure: render_cmake_package() turns an Sdk into file contents keyed by wheel-relative path. The
templates live in etpkg/cmake/; this module only prepares the data they are filled with.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources

import jinja2
from packaging.version import InvalidVersion, Version

from etpkg.errors import LayoutError
from etpkg.model import Component, Sdk

RUNPATH_FILE = "runpath.ldopts"


def library_file(lib: str) -> str:
    """The file a library of the Conan package is shipped as in <pkg>/lib (also its SONAME)."""
    return f"lib{lib}.so"


def cmake_dir(sdk: Sdk) -> str:
    """Wheel-relative directory of the CMake package."""
    return f"{sdk.name}/lib/cmake/{sdk.cmake_file_name}"


def variable_prefix(sdk: Sdk) -> str:
    """Prefix of the config's result variables: ETRT for find_package(etrt)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", sdk.cmake_file_name).upper()


def cmake_version(version: str) -> str:
    """The numeric release part of a PEP 440 version, the only form CMake compares."""
    try:
        return ".".join(str(n) for n in Version(version).release)
    except InvalidVersion as exc:
        raise LayoutError(f"version {version!r} is not a valid version") from exc


def cmake_quote(value: str) -> str:
    """A CMake quoted argument holding value literally."""
    if ";" in value or "\n" in value:
        raise LayoutError(f"cannot express {value!r} in a CMake list (contains ';' or a newline)")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


@dataclass(frozen=True)
class _ComponentView:
    """What the config template needs of one component."""

    name: str
    target: str
    files: tuple[str, ...]  # library files in <pkg>/lib; the first is the target's location
    defines: tuple[str, ...]
    system_libs: tuple[str, ...]
    registration_only: bool
    closure: tuple[str, ...]  # this component and everything it requires, dependencies first
    link_items: tuple[
        str, ...
    ]  # INTERFACE_LINK_LIBRARIES: required targets, extra files, system libs

    @property
    def retained(self) -> tuple[str, ...]:
        return self.files if self.registration_only else ()


def _closure(sdk: Sdk, comp: Component) -> tuple[str, ...]:
    wanted: set[str] = set()
    pending = [comp.name]
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending.extend(sdk.component(name).requires)
    return tuple(c.name for c in sdk.components if c.name in wanted)


def _views(sdk: Sdk) -> list[_ComponentView]:
    names = {c.name for c in sdk.components}
    views = []
    for comp in sdk.components:
        unknown = [r for r in comp.requires if r not in names]
        if unknown:
            raise LayoutError(f"component {comp.name} requires unknown component(s): {unknown}")
        files = tuple(library_file(lib) for lib in comp.libs)
        link_items = [sdk.component(r).target for r in comp.requires]
        # A second library of one component is linked by path (a target has one location).
        link_items += ["${lib}/" + f for f in files[1:]]
        link_items += list(comp.system_libs)
        views.append(
            _ComponentView(
                name=comp.name,
                target=comp.target,
                files=files,
                defines=comp.defines,
                system_libs=comp.system_libs,
                registration_only=comp.registration_only,
                closure=_closure(sdk, comp),
                link_items=tuple(link_items),
            )
        )
    return views


def manifest(sdk: Sdk) -> dict[str, object]:
    """The machine-readable summary written into the config (read by `etpkg verify`)."""
    return {
        "name": sdk.name,
        "version": sdk.version,
        "cmake_file_name": sdk.cmake_file_name,
        "variable_prefix": variable_prefix(sdk),
        "cxx_standard": sdk.cxx_standard,
        "components": [
            {
                "name": c.name,
                "target": c.target,
                "files": [library_file(lib) for lib in c.libs],
                "requires": list(c.requires),
                "defines": list(c.defines),
                "registration_only": c.registration_only,
            }
            for c in sdk.components
        ],
    }


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["cmake_quote"] = cmake_quote
    return env


def _template(name: str) -> str:
    return (resources.files("etpkg") / "cmake" / name).read_text(encoding="utf-8")


def render_cmake_package(sdk: Sdk) -> dict[str, bytes]:
    """Wheel-relative path -> content of every file of the generated CMake package."""
    if not sdk.components:
        raise LayoutError(f"{sdk.name} declares no component: nothing to export to CMake")
    version = cmake_version(sdk.version)
    release = Version(sdk.version).release
    major, minor = release[0], (release[1] if len(release) > 1 else 0)
    context = {
        "name": sdk.name,
        "version": sdk.version,
        "cmake_version": version,
        "major": major,
        "range_example": f"{major}.{minor}...<{major}.{minor + 1}",
        "cmake_file_name": sdk.cmake_file_name,
        "pkg": sdk.cmake_file_name,
        "var": variable_prefix(sdk),
        "fn_id": re.sub(r"[^A-Za-z0-9_]", "_", sdk.cmake_file_name),
        "cxx_standard": sdk.cxx_standard,
        "components": _views(sdk),
        "component_names": [c.name for c in sdk.components],
        "targets": [c.target for c in sdk.components],
        "manifest": json.dumps(manifest(sdk), sort_keys=True, separators=(",", ":")),
    }
    env = _environment()
    base = cmake_dir(sdk)
    stem = sdk.cmake_file_name
    files = {
        f"{base}/{stem}-config.cmake": env.from_string(_template("config.cmake.j2")).render(
            context
        ),
        f"{base}/{stem}-config-version.cmake": env.from_string(
            _template("config-version.cmake.j2")
        ).render(context),
        f"{base}/{RUNPATH_FILE}": _template(RUNPATH_FILE),
    }
    return {path: text.encode() for path, text in sorted(files.items())}

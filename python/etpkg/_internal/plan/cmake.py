"""The generated CMake package of a wheel: <name>-config.cmake, its version file, the runpath file.

Pure: render_cmake_package() turns an Sdk into file contents keyed by wheel-relative path. The
templates live in plan/templates/; this module only prepares the data they are filled with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import Version

from etpkg._internal import manifest, naming
from etpkg._internal.errors import LayoutError
from etpkg._internal.model import Sdk
from etpkg._internal.plan.render import render, template_text

RUNPATH_FILE = "runpath.ldopts"


def cmake_dir(sdk: Sdk) -> str:
    """Wheel-relative directory of the CMake package."""
    return f"{sdk.name}/lib/cmake/{sdk.cmake_file_name}"


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
    def variable_items(self) -> tuple[str, ...]:
        """The files as quoted link items of <NAME>_LIBRARIES; a raw item reaches the shell
        verbatim, so a retained path is quoted inside its -Wl token."""
        if self.registration_only:
            quoted = ['\\"${lib}/' + f + '\\"' for f in self.files]
            return tuple('"' + naming.retained_flag([q]) + '"' for q in quoted)
        return tuple('"${lib}/' + f + '"' for f in self.files)

    @property
    def retained_options(self) -> tuple[str, ...]:
        """INTERFACE_LINK_OPTIONS that keep a registration-only component's files linked."""
        if not self.registration_only:
            return ()
        return tuple("LINKER:" + naming.retained(["${lib}/" + f]) for f in self.files)


def _views(sdk: Sdk) -> list[_ComponentView]:
    names = {c.name for c in sdk.components}
    views = []
    for comp in sdk.components:
        unknown = [r for r in comp.requires if r not in names]
        if unknown:
            raise LayoutError(f"component {comp.name} requires unknown component(s): {unknown}")
        files = comp.files
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
                closure=sdk.closure([comp.name]),
                link_items=tuple(link_items),
            )
        )
    return views


def render_cmake_package(sdk: Sdk) -> dict[str, bytes]:
    """Wheel-relative path -> content of every file of the generated CMake package."""
    if not sdk.components:
        raise LayoutError(f"{sdk.name} declares no component: nothing to export to CMake")
    version = sdk.cmake_version
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
        "var": sdk.variable_prefix,
        "fn_id": re.sub(r"[^A-Za-z0-9_]", "_", sdk.cmake_file_name),
        "cxx_standard": sdk.cxx_standard,
        "components": _views(sdk),
        "component_names": [c.name for c in sdk.components],
        "targets": [c.target for c in sdk.components],
        "manifest": manifest.to_json(sdk),
    }
    filters = {"cmake_quote": cmake_quote}
    base = cmake_dir(sdk)
    stem = sdk.cmake_file_name
    files = {
        f"{base}/{stem}-config.cmake": render("config.cmake.j2", context, filters),
        f"{base}/{stem}-config-version.cmake": render("config-version.cmake.j2", context, filters),
        f"{base}/{RUNPATH_FILE}": template_text(RUNPATH_FILE),
    }
    return {path: text.encode() for path, text in sorted(files.items())}

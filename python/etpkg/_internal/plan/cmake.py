"""The generated CMake package of a wheel: the config file, its version file, the runpath files.

Pure: render_cmake_package() turns the wheel's Sdk (plan/view.py) into file contents keyed by
wheel-relative path. The templates live in plan/templates/; this module only prepares the
data they are filled with.

File names follow CMake's find_package search and CMakeDeps' choice: a lower-case
cmake_file_name gives `<name>-config.cmake` + `<name>-config-version.cmake`, any other
`<Name>Config.cmake` + `<Name>ConfigVersion.cmake` (CMake looks for exactly these two
spellings; `GeoKit-config.cmake` is never found).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from packaging.version import Version

from etpkg._internal import manifest, naming
from etpkg._internal.errors import LayoutError
from etpkg._internal.model import Component, Sdk
from etpkg._internal.plan.render import render, template_text
from etpkg._internal.plan.view import PREFIX

RUNPATH_FILE = "runpath.ldopts"
# For MODULE libraries (Python extensions) installed in site-packages or one package below it.
MODULE_RUNPATH_FILE = "runpath-module.ldopts"


def config_file_name(cmake_file_name: str) -> str:
    if cmake_file_name == cmake_file_name.lower():
        return f"{cmake_file_name}-config.cmake"
    return f"{cmake_file_name}Config.cmake"


def version_file_name(cmake_file_name: str) -> str:
    if cmake_file_name == cmake_file_name.lower():
        return f"{cmake_file_name}-config-version.cmake"
    return f"{cmake_file_name}ConfigVersion.cmake"


def install_file_name(cmake_file_name: str) -> str:
    """The generated file holding the install function (kept apart from the config)."""
    return f"{cmake_file_name}-etpkg-install.cmake"


def install_function_name(cmake_file_name: str) -> str:
    """`<cmake file name>_install_runtime`, with any character CMake names cannot hold as '_'."""
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', cmake_file_name)}_install_runtime"


def cmake_dir(sdk: Sdk) -> str:
    """Wheel-relative directory of the CMake package."""
    return f"{sdk.import_name}/lib/cmake/{sdk.cmake_file_name}"


def cmake_quote(value: str) -> str:
    """A CMake quoted argument holding value literally."""
    if ";" in value or "\n" in value:
        raise LayoutError(f"cannot express {value!r} in a CMake list (contains ';' or a newline)")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


def cmake_path(value: str) -> str:
    """A flag holding ${prefix} (the package root, a variable of the config) as a CMake
    quoted argument: everything literal except that one reference."""
    return cmake_quote(value).replace("\\${prefix}", "${prefix}")


def genex_text(value: str) -> str:
    """value inside a $<condition:...> generator expression, quoted (',' and '>' escaped)."""
    quoted = cmake_path(value)[1:-1]
    # One pass: replacing ',' first would have the '>' of its $<COMMA> replaced too.
    return re.sub(r"[,>]", lambda m: "$<COMMA>" if m[0] == "," else "$<ANGLE-R>", quoted)


@dataclass(frozen=True)
class _ComponentView:
    """What the config template needs of one component."""

    name: str
    target: str
    kind: str  # "SHARED", "STATIC" or "INTERFACE"
    files: tuple[str, ...]  # library files in <pkg>/lib; the first is the target's location
    defines: tuple[str, ...]
    system_libs: tuple[str, ...]
    registration_only: bool
    cxx_standard: str | None  # only for a component consumed from C++
    link_language: str  # IMPORTED_LINK_INTERFACE_LANGUAGES of an archive
    has_headers: bool
    closure: tuple[str, ...]  # this component and everything it requires, dependencies first
    # The entries below are written inside quoted CMake arguments (escaped already).
    link_items: tuple[str, ...]  # INTERFACE_LINK_LIBRARIES
    compile_options: tuple[str, ...]  # INTERFACE_COMPILE_OPTIONS entries (genexes)
    link_options: tuple[str, ...]  # INTERFACE_LINK_OPTIONS entries besides the runpath
    variable_items: tuple[str, ...]  # <NAME>_LIBRARIES items, each a quoted argument
    runtime_files: tuple[str, ...]  # what an installed app needs beside it
    runpath: bool  # links shared libraries: give consumers the $ORIGIN runpath


def _retained_items(comp: Component) -> tuple[str, ...]:
    """The files as quoted link items of <NAME>_LIBRARIES; a raw item reaches the shell
    verbatim, so a retained path is quoted inside its -Wl token."""
    if comp.registration_only:
        quoted = ['\\"${lib}/' + f + '\\"' for f in comp.files]
        return tuple('"' + naming.retained_flag([q], static=comp.static) + '"' for q in quoted)
    return tuple('"${lib}/' + f + '"' for f in comp.files)


def _type_genex(kinds: tuple[str, ...], flags: tuple[str, ...]) -> list[str]:
    if not flags:
        return []
    text = ";".join(genex_text(f) for f in flags)
    return [f"$<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,{kind}>:{text}>" for kind in kinds]


_SAFE_ITEM = re.compile(r"[A-Za-z0-9._+/:${}-]+")


def _item(value: str, what: str) -> str:
    """A link item written into a quoted CMake list: nothing that needs escaping."""
    if not _SAFE_ITEM.fullmatch(value):
        raise LayoutError(f"{what} {value!r} cannot be named in a CMake link interface")
    return value


def _view(sdk: Sdk, comp: Component) -> _ComponentView:
    files = comp.files
    where = f"component {comp.name}"
    link_items = [sdk.component(r).target for r in comp.requires]
    # A second library of one component is linked by path (a target has one location).
    link_items += ["${lib}/" + _item(f, f"{where}: library file") for f in files[1:]]
    deps = ["${site}/" + _item(p, f"{where}: dependency file") for p in comp.dependency_files]
    link_items += deps
    link_items += [_item(s, f"{where}: system library") for s in comp.system_libs]
    compile_options = [f"$<$<COMPILE_LANGUAGE:C>:{genex_text(f)}>" for f in comp.cflags]
    compile_options += [f"$<$<COMPILE_LANGUAGE:CXX>:{genex_text(f)}>" for f in comp.cxxflags]
    link_options = [
        *_type_genex(("SHARED_LIBRARY", "MODULE_LIBRARY"), comp.sharedlinkflags),
        *_type_genex(("EXECUTABLE",), comp.exelinkflags),
    ]
    if comp.registration_only:
        link_options += [
            "LINKER:" + naming.retained(["${lib}/" + f], static=comp.static) for f in files
        ]
    kind = "INTERFACE" if comp.header_only else ("STATIC" if comp.static else "SHARED")
    shared_deps = [d for d in deps if not naming.is_static_file(d)]
    runtime = [] if comp.static else ["${lib}/" + f for f in files]
    return _ComponentView(
        name=comp.name,
        target=comp.target,
        kind=kind,
        files=files,
        defines=comp.defines,
        system_libs=comp.system_libs,
        registration_only=comp.registration_only,
        cxx_standard=sdk.cxx_standard if comp.cxx else None,
        link_language="C" if comp.c_only else "CXX",
        has_headers=bool(comp.include_dirs),
        closure=sdk.closure([comp.name]),
        link_items=tuple(link_items),
        compile_options=tuple(compile_options),
        link_options=tuple(link_options),
        variable_items=(
            *_retained_items(comp),
            *(f'"{d}"' for d in deps),
            *(f'"{s}"' for s in comp.system_libs),
        ),
        runtime_files=(*runtime, *shared_deps),
        runpath=kind == "SHARED" or bool(shared_deps),
    )


def _views(sdk: Sdk) -> list[_ComponentView]:
    names = {c.name for c in sdk.components}
    for comp in sdk.components:
        unknown = [r for r in comp.requires if r not in names]
        if unknown:
            raise LayoutError(f"component {comp.name} requires unknown component(s): {unknown}")
    return [_view(sdk, c) for c in sdk.components]


def _executables(sdk: Sdk) -> list[tuple[str, str]]:
    """(imported target, file) of each executable: <namespace>::<file name>."""
    taken = {c.target for c in sdk.components} | {sdk.cmake_target}
    out = []
    for exe in sdk.executables:
        target = f"{sdk.cmake_namespace}::{exe}"
        if target in taken:
            raise LayoutError(f"executable {exe}: its imported target {target} is a component's")
        out.append((target, exe))
    return out


def runpath_files(sdk: Sdk) -> dict[str, str]:
    plain = template_text(RUNPATH_FILE)
    extra = [f"$ORIGIN/{sdk.import_name}/lib", f"$ORIGIN/../{sdk.import_name}/lib"]
    libs = libs_dir_name(sdk)
    extra += [f"$ORIGIN/{libs}", f"$ORIGIN/../{libs}"]
    module = plain.rstrip("\n") + "".join(f" -rpath {e}" for e in extra) + "\n"
    return {RUNPATH_FILE: plain, MODULE_RUNPATH_FILE: module}


def libs_dir_name(sdk: Sdk) -> str:
    """Where auditwheel grafts external libraries: <escaped distribution>.libs."""
    return f"{sdk.distribution.replace('-', '_')}.libs"


def render_cmake_package(sdk: Sdk) -> dict[str, bytes]:
    """Wheel-relative path -> content of every file of the generated CMake package."""
    if not sdk.components:
        raise LayoutError(f"{sdk.name} declares no component: nothing to export to CMake")
    version = sdk.cmake_version
    release = Version(sdk.wheel_version).release
    major, minor = release[0], (release[1] if len(release) > 1 else 0)
    base = cmake_dir(sdk)
    views = _views(sdk)
    context = {
        "name": sdk.name,
        "version": sdk.wheel_version,
        "cmake_version": version,
        "major": major,
        "range_example": f"{major}.{minor}...<{major}.{minor + 1}",
        "cmake_file_name": sdk.cmake_file_name,
        "config_file": config_file_name(sdk.cmake_file_name),
        "version_file": version_file_name(sdk.cmake_file_name),
        "pkg": sdk.cmake_file_name,
        "var": sdk.variable_prefix,
        "fn_id": re.sub(r"[^A-Za-z0-9_]", "_", sdk.cmake_file_name),
        "cxx_standard": sdk.cxx_standard if any(c.cxx for c in sdk.components) else None,
        "components": views,
        "component_names": [c.name for c in sdk.components],
        "targets": [c.target for c in sdk.components],
        "aggregate": sdk.aggregate_target,
        "executables": _executables(sdk),
        "res_dirs": [cmake_path(f"{PREFIX}/{d}")[1:-1] for d in sdk.res_dirs],
        "libs_dir": libs_dir_name(sdk),
        "has_headers": any(v.has_headers for v in views),
        "build_modules": [
            posixpath.relpath(rel, f"lib/cmake/{sdk.cmake_file_name}") for rel in sdk.build_modules
        ],
        "manifest": manifest.to_json(sdk),
        "install_file": install_file_name(sdk.cmake_file_name),
        "install_fn": install_function_name(sdk.cmake_file_name),
        "runpath_file": RUNPATH_FILE,
        "module_runpath_file": MODULE_RUNPATH_FILE,
    }
    filters = {"cmake_quote": cmake_quote}
    files = {
        f"{base}/{config_file_name(sdk.cmake_file_name)}": render(
            "config.cmake.j2", context, filters
        ),
        f"{base}/{version_file_name(sdk.cmake_file_name)}": render(
            "config-version.cmake.j2", context, filters
        ),
        f"{base}/{install_file_name(sdk.cmake_file_name)}": render(
            "install.cmake.j2", context, filters
        ),
    }
    if any(v.runpath for v in views):
        for name, text in runpath_files(sdk).items():
            files[f"{base}/{name}"] = text
    return {path: text.encode() for path, text in sorted(files.items())}

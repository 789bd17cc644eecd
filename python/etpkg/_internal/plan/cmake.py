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

import dataclasses
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from etpkg._internal import manifest, naming
from etpkg._internal.errors import LayoutError
from etpkg._internal.model import CMakeVariable, Component, Sdk
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


_POLICY_TEXT = {
    "SameMajorVersion": "a request is compatible when it names this major version and is not "
    "newer than this build.",
    "AnyNewerVersion": "a request is compatible when it is not newer than this build.",
    "SameMinorVersion": "a request is compatible when it names this major and minor version "
    "and is not newer than this build.",
    "ExactVersion": "a request is compatible when it names this major, minor and patch version.",
}


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
    include_dirs: tuple[str, ...]  # ${prefix}/include, ${prefix}/include/<sub>
    closure: tuple[str, ...]  # this component and everything it requires, dependencies first
    # The entries below are written inside quoted CMake arguments (escaped already).
    link_items: tuple[str, ...]  # INTERFACE_LINK_LIBRARIES
    compile_options: tuple[str, ...]  # INTERFACE_COMPILE_OPTIONS entries (genexes)
    link_options: tuple[str, ...]  # INTERFACE_LINK_OPTIONS entries besides the runpath
    variable_items: tuple[str, ...]  # <NAME>_LIBRARIES items, each a quoted argument
    runtime_files: tuple[str, ...]  # what an installed app needs beside it
    runpath: bool  # links shared libraries: give consumers the $ORIGIN runpath
    # CMakeDeps' data variables of the component, <package>_<target, '::' as '_'>_<X>_RELEASE,
    # which build modules read (openssl's: <pkg>_OpenSSL_Crypto_LIBS_RELEASE): -l names,
    # and the targets it requires.
    data_prefix: str
    libs: tuple[str, ...]
    dependencies: tuple[str, ...]


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
    # Targets of SDK wheels depended on (depend.py), defined by their own configs.
    link_items += _wheel_targets(sdk, comp)
    # A second library of one component is linked by path (a target has one location).
    link_items += ["${lib}/" + _item(f, f"{where}: library file") for f in files[1:]]
    deps = ["${site}/" + _item(p, f"{where}: dependency file") for p in comp.dependency_files]
    link_items += deps
    # cmake_extra_interface_libs: CMakeDeps links them as it links system libraries.
    system_libs = (*comp.system_libs, *comp.cmake_interface_libs)
    link_items += [_item(s, f"{where}: system library") for s in system_libs]
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
        system_libs=system_libs,
        registration_only=comp.registration_only,
        cxx_standard=sdk.cxx_standard if comp.cxx else None,
        link_language="C" if comp.c_only else "CXX",
        has_headers=bool(comp.include_dirs),
        include_dirs=tuple(cmake_path(f"{PREFIX}/{d}")[1:-1] for d in comp.include_dirs),
        closure=sdk.closure([comp.name]),
        link_items=tuple(link_items),
        compile_options=tuple(compile_options),
        link_options=tuple(link_options),
        variable_items=(
            *_retained_items(comp),
            *(f'"{d}"' for d in deps),
            *(f'"{s}"' for s in system_libs),
        ),
        runtime_files=(*runtime, *shared_deps),
        runpath=kind == "SHARED" or bool(shared_deps),
        data_prefix=data_prefix(sdk.name, comp.target),
        libs=tuple(_item(lib, f"{where}: library") for lib in comp.libs),
        dependencies=tuple(
            [sdk.component(r).target for r in comp.requires] + _wheel_targets(sdk, comp)
        ),
    )


def _variable(var: CMakeVariable, fn_id: str) -> str:
    """The arguments of set() for a cmake_extra_variables entry, as CMakeDeps writes them;
    the package root as the config's top-level _<fn_id>_prefix."""
    value = var.value
    if var.quoted:
        value = '"' + value.replace(PREFIX, "${_" + fn_id + "_prefix}") + '"'
    if var.cache_type:
        value += f' CACHE {var.cache_type} "{var.docstring}"' + (" FORCE" if var.force else "")
    return f"{var.name} {value}"


def data_prefix(package: str, target: str) -> str:
    """CMakeDeps' prefix of a component's data variables: the package name, '_', the
    component's target with '::' as '_' (openssl, OpenSSL::Crypto: openssl_OpenSSL_Crypto)."""
    return f"{package}_{target.replace('::', '_')}"


def _wheel_targets(sdk: Sdk, comp: Component) -> list[str]:
    wheels = {w.name: w for w in sdk.wheel_requires}
    out: list[str] = []
    for req in comp.external_requires:
        pkg, _, part = req.partition("::")
        if pkg in wheels:
            out.append(_item(wheels[pkg].target(part), f"component {comp.name}: target"))
    return list(dict.fromkeys(out))


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


def _bundled_requires(sdk: Sdk, is_module: bool) -> list[str]:
    """find_package calls for the carried packages this one's components require: its own
    file name in CONFIG mode, searched only next to this config."""
    wanted = {r.partition("::")[0] for c in sdk.components for r in c.external_requires}
    out = []
    for dep in sdk.bundled:
        if dep.name in wanted:
            out.append(dep.cmake_file_name)
    return out


MODULE_DIR = "lib/cmake/modules"  # <pkg>/..., Find<Name>.cmake for cmake_find_mode module/both


def module_view(sdk: Sdk) -> Sdk:
    """The Sdk as its Find module names it: cmake_module_file_name, the module targets."""

    def module_target(c: Component) -> str:
        if c.module_target:
            return c.module_target
        # A package without components: its one target is the package's.
        return sdk.cmake_module_target if c.target == sdk.cmake_target else c.target

    comps = tuple(dataclasses.replace(c, target=module_target(c)) for c in sdk.components)
    return dataclasses.replace(
        sdk,
        components=comps,
        cmake_file_name=sdk.cmake_module_file_name,
        cmake_target=sdk.cmake_module_target,
        cmake_module_file_name=sdk.cmake_module_file_name,
        cmake_module_target=sdk.cmake_module_target,
        # CMakeDeps' Find module reports the Conan version; only its config's version file
        # takes system_package_version.
        system_package_version="",
    )


def _context(
    sdk: Sdk, base: str, *, is_module: bool, libs_dir: str, with_manifest: bool = False
) -> dict[str, Any]:
    version = sdk.cmake_version
    release = tuple(int(n) for n in version.split("."))
    major, minor = release[0], (release[1] if len(release) > 1 else 0)
    patch = release[2] if len(release) > 2 else 0
    views = _views(sdk)
    defines = dict.fromkeys(sdk.package_defines or [d for c in sdk.components for d in c.defines])
    prefixes = [sdk.cmake_file_name, sdk.cmake_file_name.upper(), *sdk.cmake_variable_prefixes]
    aliases = [(a, sdk.cmake_target) for a in sdk.cmake_target_aliases]
    aliases += [(a, c.target) for c in sdk.components for a in c.target_aliases]
    fn_id = re.sub(r"[^A-Za-z0-9_]", "_", sdk.cmake_file_name) + ("_module" if is_module else "")
    return {
        "name": sdk.name,
        "version": sdk.wheel_version,
        "conan_version": sdk.version,
        "cmake_version": version,
        "major": major,
        "minor": minor,
        "patch": patch,
        "policy": sdk.cmake_config_version_compat,
        "policy_text": _POLICY_TEXT[sdk.cmake_config_version_compat],
        "range_example": f"{major}.{minor}...<{major}.{minor + 1}",
        "is_module": is_module,
        "find_mode": sdk.cmake_find_mode,
        "import_name": sdk.import_name,
        "cmake_file_name": sdk.cmake_file_name,
        "config_file": config_file_name(sdk.cmake_file_name),
        "version_file": version_file_name(sdk.cmake_file_name),
        "pkg": sdk.cmake_file_name,
        "var": sdk.variable_prefix,
        "cmakedeps_prefixes": [
            p for p in dict.fromkeys(prefixes) if re.fullmatch(r"[A-Za-z0-9_.+-]+", p)
        ],
        "root_target": sdk.cmake_target,
        "aliases": aliases,
        "define_flags": ["-D" + d for d in defines],
        "fn_id": fn_id,
        "cxx_standard": sdk.cxx_standard if any(c.cxx for c in sdk.components) else None,
        "components": views,
        "component_names": [c.name for c in sdk.components],
        "component_lookup": _component_lookup(sdk),
        "targets": [c.target for c in sdk.components],
        "aggregate": sdk.aggregate_target,
        "executables": _executables(sdk),
        "res_dirs": [cmake_path(f"{PREFIX}/{d}")[1:-1] for d in sdk.res_dirs],
        "libs_dir": libs_dir or libs_dir_name(sdk),
        # Required packages the wheel carries, found before this package's targets are made
        # (CMakeDeps' find_dependency): (file name, mode) of each this package requires.
        "bundled": _bundled_requires(sdk, is_module),
        # SDK wheels depended on (depend.py): find_dependency, their sibling dir as a hint.
        "wheel_requires": [
            {
                "cmake_file_name": w.cmake_file_name,
                "cmake_version": w.cmake_version,
                "import_name": w.import_name,
                "distribution": w.distribution,
                "specifier": w.specifier,
                "var": re.sub(r"[^A-Za-z0-9_]", "_", w.cmake_file_name).upper(),
            }
            for w in sdk.wheel_requires
        ],
        "has_headers": any(v.has_headers for v in views),
        "include_dirs": list(dict.fromkeys(d for v in views for d in v.include_dirs)),
        "build_modules": [posixpath.relpath(rel, base) for rel in sdk.build_modules],
        # CMakeDeps' data variables (<package>_LIBS_RELEASE, <package>_<comp>_LIBS_RELEASE, ...)
        # are what build modules read; the wheel is one configuration, Release as Conan's
        # default build type.
        "data_name": sdk.name,
        "data_config": "RELEASE",
        "data_libs": list(dict.fromkeys(lib for v in reversed(views) for lib in v.libs)),
        "data_system_libs": list(dict.fromkeys(s for v in reversed(views) for s in v.system_libs)),
        "build_dirs": [posixpath.relpath(rel, base) for rel in sdk.build_dirs],
        "extra_dependencies": [
            _item(d, "cmake_extra_dependencies entry") for d in sdk.cmake_extra_dependencies
        ],
        "extra_variables": [_variable(v, fn_id) for v in sdk.cmake_extra_variables],
        "manifest": manifest.to_json(sdk) if with_manifest and not is_module else "",
        "install_file": install_file_name(sdk.cmake_file_name),
        "install_fn": install_function_name(sdk.cmake_file_name),
        "runpath_file": RUNPATH_FILE,
        "module_runpath_file": MODULE_RUNPATH_FILE,
    }


def render_cmake_package(
    sdk: Sdk, *, libs_dir: str = "", with_manifest: bool = True
) -> dict[str, bytes]:
    """Wheel-relative path -> content of every file of the generated CMake package: the
    config and its version file (always: the config carries the wheel's manifest), and a
    Find module for cmake_find_mode module or both."""
    if not sdk.components:
        raise LayoutError(f"{sdk.name} declares no component: nothing to export to CMake")
    base = cmake_dir(sdk)
    rel_base = f"lib/cmake/{sdk.cmake_file_name}"
    context = _context(
        sdk, rel_base, is_module=False, libs_dir=libs_dir, with_manifest=with_manifest
    )
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
    runpath = any(v.runpath for v in context["components"])
    if runpath:
        for name, text in runpath_files(sdk).items():
            files[f"{base}/{name}"] = text
    if sdk.cmake_find_mode in ("module", "both"):
        module = module_view(sdk)
        module_dir = f"{sdk.import_name}/{MODULE_DIR}"
        module_context = _context(module, MODULE_DIR, is_module=True, libs_dir=libs_dir)
        files[f"{module_dir}/Find{module.cmake_file_name}.cmake"] = render(
            "config.cmake.j2", module_context, filters
        )
        # The Find module defines the install function too (it includes this file).
        files[f"{module_dir}/{install_file_name(module.cmake_file_name)}"] = render(
            "install.cmake.j2", module_context, filters
        )
        if runpath:
            for name, text in runpath_files(sdk).items():
                files[f"{module_dir}/{name}"] = text
    return {path: text.encode() for path, text in sorted(files.items())}


def _component_lookup(sdk: Sdk) -> list[tuple[str, str]]:
    """(name a consumer may ask find_package for, the component): each Conan component
    name, then each target (PCRE2::8BIT), then its name after '::' (8BIT), then the aliases
    the wheel's maker gave (Enc for vorbisenc); a name already taken keeps its first meaning."""
    out: dict[str, str] = {}
    for names in (
        [(c.name, c.name) for c in sdk.components],
        [(c.target, c.name) for c in sdk.components],
        [(c.target.rpartition("::")[2], c.name) for c in sdk.components],
        list(sdk.component_aliases),
    ):
        for name, comp in names:
            if name and re.fullmatch(r"[A-Za-z0-9_.+:-]+", name):
                out.setdefault(name, comp)
    return list(out.items())

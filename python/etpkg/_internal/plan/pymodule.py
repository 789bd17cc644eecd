"""The generated Python side of the wheel: <pkg>/_etpkg.py (paths + CLI), a default __main__
and __init__, from the templates in plan/templates/."""

from __future__ import annotations

from etpkg._internal import naming
from etpkg._internal.model import Sdk
from etpkg._internal.plan.render import render


def render_helper(sdk: Sdk) -> bytes:
    # Tuples, not sets: set reprs vary between runs and the wheel must be reproducible.
    components = {c.name: c.files for c in sdk.components}
    registration_only = tuple(c.name for c in sdk.components if c.registration_only)
    defines: list[str] = []
    for comp in sdk.components:
        defines.extend(d for d in comp.defines if d not in defines)
    cxx_only = all(not c.c_only and "C" not in c.languages for c in sdk.components)
    c_only = all(c.c_only for c in sdk.components)
    compile_flags: list[str] = []
    for comp in sdk.components:
        own = comp.cflags if c_only else comp.cxxflags if cxx_only else ()
        compile_flags.extend(f for f in own if f not in compile_flags)
    extra_libs: list[str] = []  # wheel-relative (site-packages-relative once installed)
    system_libs: list[str] = []
    link_flags: list[str] = []
    for comp in reversed(sdk.components):
        extra_libs.extend(f for f in comp.dependency_files if f not in extra_libs)
        system_libs.extend(s for s in comp.system_libs if s not in system_libs)
        link_flags.extend(f for f in comp.exelinkflags if f not in link_flags)
    # The generated module runs without etpkg: it gets naming's rules as string constants.
    retain_begin, retain_end = naming.retained_flag(["\0"]).split("\0")
    static_begin, _ = naming.retained_flag(["\0"], static=True).split("\0")
    context = {
        "name": sdk.import_name,
        "version": sdk.wheel_version,
        "cmake_file_name": sdk.cmake_file_name,
        "cxx_standard": sdk.cxx_standard if cxx_only else None,
        "defines": tuple(defines),
        "compile_flags": tuple(compile_flags),
        "components": components,
        "registration_only": registration_only,
        "extra_libs": tuple(extra_libs),
        "system_libs": tuple(system_libs),
        "link_flags": tuple(link_flags),
        "has_headers": any(c.include_dirs for c in sdk.components),
        "include_dirs": tuple(dict.fromkeys(d for c in sdk.components for d in c.include_dirs)),
        "res_dirs": sdk.res_dirs,
        "run_env": tuple(tuple(e) for e in sdk.run_env),  # plain tuples in the generated module
        "depends": tuple(r.import_name for r in sdk.wheel_requires),
        "has_bin": bool(sdk.executables),
        "has_module": sdk.cmake_find_mode in ("module", "both"),
        "module_file_name": sdk.cmake_module_file_name,
        "find_mode": sdk.cmake_find_mode,
        "retain_begin": retain_begin,
        "retain_static_begin": static_begin,
        "retain_end": retain_end,
    }
    return render("_etpkg.py.j2", context).encode()


def render_main(sdk: Sdk) -> bytes:
    return render("__main__.py.j2", {"name": sdk.import_name}).encode()


def render_init(sdk: Sdk) -> bytes:
    summary = " ".join(sdk.description.split()) or "a C++ SDK packaged by etpkg"
    return render("__init__.py.j2", {"name": sdk.import_name, "summary": summary}).encode()

"""The generated Python side of the wheel: <pkg>/_etpkg.py (paths + CLI), a default __main__
and __init__, from the templates in plan/templates/."""

from __future__ import annotations

from etpkg._internal import naming
from etpkg._internal.model import Sdk
from etpkg._internal.plan.render import render


def render_helper(sdk: Sdk) -> bytes:
    components = {c.name: c.files for c in sdk.components}
    # Tuples, not sets: set reprs vary between runs and the wheel must be reproducible.
    registration_only = tuple(c.name for c in sdk.components if c.registration_only)
    defines: list[str] = []
    for comp in sdk.components:
        defines.extend(d for d in comp.defines if d not in defines)
    # The generated module runs without etpkg: it gets naming's rule as two string constants.
    retain_begin, retain_end = naming.retained_flag(["\0"]).split("\0")
    context = {
        "name": sdk.name,
        "cmake_file_name": sdk.cmake_file_name,
        "cxx_standard": sdk.cxx_standard,
        "defines": tuple(defines),
        "components": components,
        "registration_only": registration_only,
        "retain_begin": retain_begin,
        "retain_end": retain_end,
    }
    return render("_etpkg.py.j2", context).encode()


def render_main(sdk: Sdk) -> bytes:
    return render("__main__.py.j2", {"name": sdk.name}).encode()


def render_init(sdk: Sdk) -> bytes:
    summary = " ".join(sdk.description.split()) or "a C++ SDK packaged by etpkg"
    return render("__init__.py.j2", {"name": sdk.name, "summary": summary}).encode()

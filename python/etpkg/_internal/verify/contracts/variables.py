"""Variables: the <NAME>_LIBRARIES / _INCLUDE_DIRS / _COMPILE_DEFINITIONS / _CXX_STANDARD route
on old CMake, consumer pinned to C++14; each variable shown necessary by dropping it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from etpkg._internal.verify.consumers import (
    entry_source,
    expect_loaded,
    headers_source,
    render,
    wheel_needed,
    write,
)
from etpkg._internal.verify.contracts.headers import public_headers
from etpkg._internal.verify.runner import CheckFailed, run

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite

VARIABLES = ("LIBRARIES", "INCLUDE_DIRS", "COMPILE_DEFINITIONS", "CXX_STANDARD")
# Where the build must fail without the variable, and what the failure says.
_DROPPED = {
    "LIBRARIES": ("link", r"undefined reference"),
    "INCLUDE_DIRS": ("compile", r"No such file or directory"),
    "COMPILE_DEFINITIONS": ("compile", r"error"),
    "CXX_STANDARD": ("compile", r"error"),
}


def project(suite: Suite, src: Path) -> Path:
    m = suite.m
    symbols = [s for c in m.components for s in suite.symbols_for(c.name)]
    regular = [h for h in public_headers(suite) if h not in suite.exempt_headers]
    write(src / "main.cpp", entry_source(symbols))
    write(src / "headers.cpp", headers_source(regular))
    write(src / "CMakeLists.txt", render("variables.cmake.j2", sdk=m))
    return src


def check(suite: Suite, version: str) -> str:
    """Every variable used: builds and runs on both generators; drop one: fails as expected."""
    ws, m = suite.ws, suite.m
    tool = ws.tool(version)
    base = ws.root / "variables" / version
    src = project(suite, base / "src")
    all_files = m.files([c.name for c in m.components])
    use_all = [f"-DUSE_{v}=ON" for v in VARIABLES]
    lines = []
    for gen in suite.generators:
        build = base / f"build-{gen.replace(' ', '_')}"
        ws.configure(tool, gen, src, build, *use_all)
        ws.build(tool, build)
        needed = wheel_needed(build / "app", m)
        if needed != all_files:
            raise CheckFailed(
                f"{gen}: app needs {sorted(needed)}, expected {sorted(all_files)} (retention)"
            )
        expect_loaded(run([build / "app"], env=ws.env(tool)).stdout, all_files, ws.lib_dir)
        lines.append(f"{gen}: all four -> builds, runs, every library loaded")
    for var in VARIABLES:
        if var == "COMPILE_DEFINITIONS" and not any(c.defines for c in m.components):
            lines.append(f"{var}: n/a (the package declares no definitions)")
            continue
        if var == "CXX_STANDARD" and not m.cxx_standard:
            lines.append(f"{var}: n/a (the package declares no C++ standard)")
            continue
        build = base / f"drop-{var}"
        args = [a for a in use_all if a != f"-DUSE_{var}=ON"]
        ws.configure(tool, suite.generators[0], src, build, *args)
        proc = ws.build(tool, build, check=False)
        out = proc.stdout + proc.stderr
        stage, pattern = _DROPPED[var]
        linked_failed = "undefined reference" in out or "ld returned" in out
        if proc.returncode == 0:
            raise CheckFailed(f"{version}: dropping {m.variable_prefix}_{var} still builds")
        header_missing = "No such file or directory" in out and var != "INCLUDE_DIRS"
        if (stage == "link") != linked_failed or not re.search(pattern, out) or header_missing:
            raise CheckFailed(
                f"{version}: dropping {m.variable_prefix}_{var} failed in an unexpected "
                f"way:\n{out[-2500:]}"
            )
        first = next((ln.strip() for ln in out.splitlines() if re.search(pattern, ln)), "")
        message = first.split(": ", 1)[-1]  # without the file:line:col prefix
        lines.append(f"drop {var}: {stage} error ({message[:160]})")
    return "; ".join(lines)

"""Variables: the <NAME>_LIBRARIES / _INCLUDE_DIRS / _COMPILE_DEFINITIONS / _CXX_STANDARD route
on old CMake, a C++ consumer pinned to C++14.

With every variable the app builds, runs and loads every library (retention included), and
the app itself shows that each definition reached it with its value and that the standard
is the package's. Dropping a variable must break what cannot work without it (the libraries:
undefined references; the include dirs: missing headers); dropping the definitions or the
standard is only reported, since a header may give a definition a default or need no newer
standard for what it declares."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from etpkg._internal.verify.consumers import (
    dropped_archives,
    entry_source,
    expect_loaded,
    expect_needed,
    headers_source,
    languages,
    linked_shared,
    printed_defines,
    render,
    source_suffix,
    write,
)
from etpkg._internal.verify.contracts.headers import public_headers
from etpkg._internal.verify.runner import CheckFailed, run

if TYPE_CHECKING:
    from etpkg._internal.model import Sdk
    from etpkg._internal.verify.suite import Suite

VARIABLES = ("LIBRARIES", "INCLUDE_DIRS", "COMPILE_DEFINITIONS", "CXX_STANDARD")
# What a build without the variable says, where the variable is needed.
_DROPPED = {
    "LIBRARIES": ("link", r"undefined reference"),
    "INCLUDE_DIRS": ("compile", r"No such file or directory"),
    "COMPILE_DEFINITIONS": ("compile", r"error"),
    "CXX_STANDARD": ("compile", r"error"),
}
# __cplusplus of each -std=c++N.
_CPLUSPLUS = {"11": 201103, "14": 201402, "17": 201703, "20": 202002, "23": 202302}


def expected_defines(sdk: Sdk) -> dict[str, str]:
    """NAME -> the expansion a consumer must see: "NAME=VALUE" gives VALUE, "NAME" gives 1."""
    out: dict[str, str] = {}
    for comp in sdk.components:
        for define in comp.defines:
            name, sep, value = define.partition("=")
            out[name] = value if sep else "1"
    return out


def project(suite: Suite, src: Path) -> Path:
    m = suite.sdk
    symbols = [s for c in m.components for s in suite.symbols_for(c.name)]
    # Headers the headers check found not self-contained (lenient mode) stay out, as exempt ones.
    left_out = set(suite.exempt_headers) | suite.lone_failures
    regular = [h for h in public_headers(suite) if h not in left_out]
    suffix = source_suffix(m)
    cxx = suffix == "cpp" and bool(m.cxx_standard)
    write(
        src / f"main.{suffix}",
        entry_source(symbols, defines=list(expected_defines(m)), cxx_standard=cxx),
    )
    write(src / f"headers.{suffix}", headers_source(regular))
    write(
        src / "CMakeLists.txt",
        render(
            "variables.cmake.j2",
            sdk=m,
            languages=languages(m),
            cxx=suffix == "cpp",
            sources=[f"main.{suffix}", f"headers.{suffix}"],
        ),
    )
    return src


def _applies(suite: Suite, var: str, has_symbols: bool) -> str | None:
    """Why dropping var proves nothing for this SDK, or None."""
    m = suite.sdk
    if var == "LIBRARIES" and not has_symbols:
        return "nothing of the package is referenced (header-only or registration-only)"
    if var == "INCLUDE_DIRS" and not public_headers(suite):
        return "the package ships no header"
    if var == "COMPILE_DEFINITIONS" and not expected_defines(m):
        return "the package declares no definitions"
    if var == "CXX_STANDARD" and (not m.cxx_standard or source_suffix(m) == "c"):
        return "no C++ standard applies"
    return None


def check(suite: Suite, version: str) -> str:
    """Every variable used: builds and runs on both generators, definitions and standard
    seen by the app; drop one: libraries and include dirs must fail, the rest is reported."""
    ws, m = suite.ws, suite.sdk
    tool = ws.tool(version)
    base = ws.root / "variables" / version
    src = project(suite, base / "src")
    all_files = linked_shared(m, [c.name for c in m.components])
    defines = expected_defines(m)
    use_all = [f"-DUSE_{v}=ON" for v in VARIABLES]
    lines = []
    for gen in suite.generators:
        build = base / f"build-{gen.replace(' ', '_')}"
        ws.configure(tool, gen, src, build, *use_all)
        ws.build(tool, build)
        expect_needed(build / "app", m, [c.name for c in m.components], gen)
        dropped = dropped_archives(build / "app", m, [c.name for c in m.components], ws.lib_dir)
        if dropped:
            raise CheckFailed(f"{gen}: the app holds nothing of {dropped} (retention)")
        out = run([build / "app"], env=ws.env(tool)).stdout
        expect_loaded(out, all_files, ws.wheel_lib_dirs)
        seen = printed_defines(out)
        wrong = {n: seen.get(n) for n, v in defines.items() if _norm(seen.get(n, "")) != _norm(v)}
        if wrong:
            raise CheckFailed(
                f"{gen}: definitions as the app sees them {wrong}, expected "
                f"{ {n: defines[n] for n in wrong} }"
            )
        standard = re.search(r"^cplusplus=(\d+)$", out, re.M)
        if standard and m.cxx_standard in _CPLUSPLUS:
            if int(standard.group(1)) < _CPLUSPLUS[m.cxx_standard]:
                raise CheckFailed(
                    f"{gen}: the app compiled with __cplusplus {standard.group(1)}, below "
                    f"C++{m.cxx_standard}"
                )
        lines.append(f"{gen}: all four -> builds, runs, every library loaded, definitions seen")
    has_symbols = any(suite.symbols_for(c.name) for c in m.components)
    for var in VARIABLES:
        reason = _applies(suite, var, has_symbols)
        if reason is not None:
            lines.append(f"{var}: n/a ({reason})")
            continue
        build = base / f"drop-{var}"
        args = [a for a in use_all if a != f"-DUSE_{var}=ON"]
        ws.configure(tool, suite.generators[0], src, build, *args)
        proc = ws.build(tool, build, check=False)
        out = proc.stdout + proc.stderr
        stage, pattern = _DROPPED[var]
        required = var in ("LIBRARIES", "INCLUDE_DIRS")
        if proc.returncode == 0:
            if required:
                raise CheckFailed(f"{version}: dropping {m.variable_prefix}_{var} still builds")
            lines.append(f"drop {var}: still builds (the headers need no more)")
            continue
        linked_failed = "undefined reference" in out or "ld returned" in out
        header_missing = "No such file or directory" in out and var != "INCLUDE_DIRS"
        if required and (
            (stage == "link") != linked_failed or not re.search(pattern, out) or header_missing
        ):
            raise CheckFailed(
                f"{version}: dropping {m.variable_prefix}_{var} failed in an unexpected "
                f"way:\n{out[-2500:]}"
            )
        first = next((ln.strip() for ln in out.splitlines() if re.search(pattern, ln)), "")
        message = first.split(": ", 1)[-1]  # without the file:line:col prefix
        lines.append(f"drop {var}: {stage} error ({message[:160]})")
    return "; ".join(lines)


def _norm(text: str) -> str:
    return " ".join(text.split())

"""Headers: each public header compiles on its own. Strict (an exempt list given, or asked
for): a header that does not is a failure, and the exempt list is compiled and must still fail
(so it cannot go stale). Otherwise self-contained headers are a contract the SDK has not opted
into: the ones that do not compile alone are reported (count, first few), not a failure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from etpkg._internal.verify.consumers import (
    headers_source,
    languages,
    render,
    source_suffix,
    write,
)
from etpkg._internal.verify.runner import CheckFailed

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx")
# Ninja's line for a failed edge: "FAILED: [code=1] CMakeFiles/h12.dir/h12.cpp.o".
FAILED_EDGE = re.compile(r"^FAILED: .*?CMakeFiles/h(\d+)\.dir/", re.M)


def public_headers(suite: Suite) -> list[str]:
    include = suite.ws.include_dir
    return sorted(
        p.relative_to(include).as_posix()
        for p in include.rglob("*")
        if p.suffix in HEADER_SUFFIXES and p.is_file()
    )


def compile_each(suite: Suite, name: str, headers: Sequence[str]) -> dict[str, bool]:
    """Compiles one translation unit per header against every target; header -> compiled."""
    if not headers:
        return {}
    ws, m = suite.ws, suite.sdk
    tool, gen = suite.modern()
    base = ws.root / name
    suffix = source_suffix(m)  # a C-only SDK's headers are compiled as C
    for i, h in enumerate(headers):
        write(base / "src" / f"h{i}.{suffix}", headers_source([h]))
    write(
        base / "src" / "CMakeLists.txt",
        render(
            "headers.cmake.j2",
            sdk=m,
            components=[c.name for c in m.components],
            targets=[c.target for c in m.components],
            count=len(headers),
            languages=languages(m),
            suffix=suffix,
        ),
    )
    ws.configure(tool, gen, base / "src", base / "build")
    proc = ws.build(tool, base / "build", "--", "-k", "0", check=False)
    marker = base / "build" / "etpkg-syntax-only"
    if marker.is_file() and marker.read_text().strip() == "ON":
        if proc.returncode == 0:
            return dict.fromkeys(headers, True)
        failed = {int(n) for n in FAILED_EDGE.findall(proc.stdout + proc.stderr)}
        if not failed:  # the build failed, yet no translation unit did: not a header's fault
            raise CheckFailed(f"the headers build failed:\n{(proc.stdout + proc.stderr)[-2000:]}")
        return {h: i not in failed for i, h in enumerate(headers)}
    return {
        h: (base / "build" / "CMakeFiles" / f"h{i}.dir" / f"h{i}.{suffix}.o").is_file()
        for i, h in enumerate(headers)
    }


SHOWN = 5  # headers named in the lenient mode's note


def check(suite: Suite) -> str:
    headers = public_headers(suite)
    exempt = suite.exempt_headers
    unknown = sorted(set(exempt) - set(headers))
    if unknown:
        raise CheckFailed(f"exempt headers that the wheel does not ship: {unknown}")
    regular = [h for h in headers if h not in exempt]
    failed = sorted(h for h, ok in compile_each(suite, "headers", regular).items() if not ok)
    as_c = " as C" if source_suffix(suite.sdk) == "c" else ""
    if not suite.strict_headers:
        suite.lone_failures = frozenset(failed)
        done = f"{len(regular) - len(failed)} of {len(regular)} headers compile on their own{as_c}"
        if not failed:
            return done
        more = f", ... ({len(failed) - SHOWN} more)" if len(failed) > SHOWN else ""
        return (
            f"{done}; note: {len(failed)} do not (not a failure without --strict-headers or "
            f"--exempt-headers): {', '.join(failed[:SHOWN])}{more}"
        )
    if failed:
        raise CheckFailed(f"headers that do not compile on their own: {failed}")
    now_fine = sorted(h for h, ok in compile_each(suite, "headers-exempt", exempt).items() if ok)
    if now_fine:
        raise CheckFailed(
            f"exempt headers that now compile (remove them from the exempt list): {now_fine}"
        )
    return f"{len(regular)} headers compile on their own{as_c}; {len(exempt)} exempt still fail"

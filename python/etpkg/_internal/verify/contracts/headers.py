"""Headers: each public header compiles on its own; the exempt list is compiled and must
still fail (so it cannot go stale)."""

from __future__ import annotations

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
    ws.build(tool, base / "build", "--", "-k", "0", check=False)
    return {
        h: (base / "build" / "CMakeFiles" / f"h{i}.dir" / f"h{i}.{suffix}.o").is_file()
        for i, h in enumerate(headers)
    }


def check(suite: Suite) -> str:
    headers = public_headers(suite)
    exempt = suite.exempt_headers
    unknown = sorted(set(exempt) - set(headers))
    if unknown:
        raise CheckFailed(f"exempt headers that the wheel does not ship: {unknown}")
    regular = [h for h in headers if h not in exempt]
    failed = sorted(h for h, ok in compile_each(suite, "headers", regular).items() if not ok)
    if failed:
        raise CheckFailed(f"headers that do not compile on their own: {failed}")
    now_fine = sorted(h for h, ok in compile_each(suite, "headers-exempt", exempt).items() if ok)
    if now_fine:
        raise CheckFailed(
            f"exempt headers that now compile (remove them from the exempt list): {now_fine}"
        )
    as_c = " as C" if source_suffix(suite.sdk) == "c" else ""
    return f"{len(regular)} headers compile on their own{as_c}; {len(exempt)} exempt still fail"

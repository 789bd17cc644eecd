"""Components: an unknown one fails at configure naming it, <pkg>_<comp>_FOUND per component,
an app linking one component's target needs only that component and what it requires, and
the package-wide target (CMakeDeps' <name>::<name>) links every component."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etpkg._internal.verify.consumers import (
    expect_linked,
    expect_loaded,
    linked_shared,
    targets_project,
)
from etpkg._internal.verify.runner import CheckFailed, run

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite

BOGUS = "etpkg_no_such_component"


def check_unknown(suite: Suite) -> str:
    m = suite.sdk
    first = m.components[0].name
    proc = suite.configure_only(
        "component-unknown", "component_unknown.cmake.j2", first=first, bogus=BOGUS, check=False
    )
    if proc.returncode == 0:
        raise CheckFailed("configure succeeded with an unknown required component")
    if BOGUS not in proc.stderr:
        raise CheckFailed(f"the configure error does not name {BOGUS}:\n{proc.stderr[-1500:]}")
    proc = suite.configure_only(
        "component-optional",
        "component_optional.cmake.j2",
        shipped=[c.name for c in m.components],
        bogus=BOGUS,
    )
    # A component name is any text without whitespace ("io-core", "grpc++"); the value
    # follows the last '=' of the line.
    flags = dict(re.findall(r"^(?:-- )?etpkg: (\S+)=(\S*)$", proc.stdout, re.M))
    bad = {c: v for c, v in flags.items() if (v in ("1", "TRUE")) != (c != BOGUS)}
    if bad or len(flags) != len(m.components) + 1:
        raise CheckFailed(f"<pkg>_<comp>_FOUND wrong: {flags}")
    line = (
        next(ln for ln in [*proc.stderr.splitlines(), ""] if BOGUS in ln)
        if BOGUS in proc.stderr
        else ""
    )
    return f"unknown required component fails naming it; _FOUND: {flags} {line}".strip()


def _build_and_run(
    suite: Suite, key: str, comps: list[str], targets: list[str] | None, what: str
) -> list[str]:
    """Builds an app linking `targets` (default: the components' own), checks it needs the
    shared libraries of `comps` and nothing outside their closure, runs it."""
    ws, m = suite.ws, suite.sdk
    tool, gen = suite.modern()
    base = ws.root / "entry" / key
    symbols = [s for c in comps for s in suite.symbols_for(c)]
    src = targets_project(
        base / "src", m, [] if targets is not None else comps, symbols, targets=targets
    )
    try:
        ws.configure(tool, gen, src, base / "build")
        ws.build(tool, base / "build")
    except CheckFailed as exc:
        raise CheckFailed(f"{what}: {exc}") from exc
    app = base / "build" / "app"
    needed = expect_linked(app, m, comps, ws.lib_dir, what)
    expected = linked_shared(m, comps)
    expect_loaded(run([app], env=ws.env(tool)).stdout, expected, ws.wheel_lib_dirs)
    return sorted(needed)


def check_each_alone(suite: Suite) -> str:
    """Per component: an app linking only its target builds, needs only its closure, runs."""
    lines = []
    for comp in suite.sdk.components:
        needed = _build_and_run(suite, comp.name, [comp.name], None, comp.target)
        kind = "header-only" if comp.header_only else "static" if comp.static else "shared"
        lines.append(f"{comp.target} ({kind}) -> {needed}")
    return "; ".join(lines)


def check_package_target(suite: Suite) -> str:
    """find_package(<name>) with no component, linking <name>::<name> alone: every
    component's libraries are linked and loaded (CMakeDeps' package-wide target)."""
    m = suite.sdk
    target = m.aggregate_target
    if target is None:
        return f"{m.cmake_target} is the package's only component's target (checked above)"
    comps = [c.name for c in m.components]
    needed = _build_and_run(suite, "_package", comps, [target], target)
    return f"{target} -> {needed}"

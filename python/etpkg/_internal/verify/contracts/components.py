"""Components: an unknown one fails at configure naming it, <pkg>_<comp>_FOUND per component,
and an app linking one component's target needs only that component and what it requires."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etpkg._internal.verify.consumers import expect_loaded, targets_project, wheel_needed
from etpkg._internal.verify.runner import CheckFailed, run

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite

BOGUS = "etpkg_no_such_component"


def check_unknown(suite: Suite) -> str:
    m = suite.m
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
    flags = dict(re.findall(r"etpkg: (\w+)=(\S*)", proc.stdout))
    bad = {c: v for c, v in flags.items() if (v in ("1", "TRUE")) != (c != BOGUS)}
    if bad or len(flags) != len(m.components) + 1:
        raise CheckFailed(f"<pkg>_<comp>_FOUND wrong: {flags}")
    line = (
        next(ln for ln in [*proc.stderr.splitlines(), ""] if BOGUS in ln)
        if BOGUS in proc.stderr
        else ""
    )
    return f"unknown required component fails naming it; _FOUND: {flags} {line}".strip()


def check_each_alone(suite: Suite) -> str:
    """Per component: an app linking only its target builds, needs only its closure, runs."""
    ws, m = suite.ws, suite.m
    tool, gen = suite.modern()
    lines = []
    for comp in m.components:
        base = ws.root / "entry" / comp.name
        src = targets_project(base / "src", m, [comp.name], suite.symbols_for(comp.name))
        ws.configure(tool, gen, src, base / "build")
        ws.build(tool, base / "build")
        app = base / "build" / "app"
        needed = wheel_needed(app, m)
        allowed = m.files(m.closure([comp.name]))
        if not set(comp.files) <= needed or not needed <= allowed:
            raise CheckFailed(
                f"{comp.target}: app needs {sorted(needed)}; must include {sorted(comp.files)} "
                f"and stay within {sorted(allowed)}"
            )
        expect_loaded(run([app], env=ws.env(tool)).stdout, set(comp.files), ws.lib_dir)
        lines.append(f"{comp.target} -> {sorted(needed)}")
    return "; ".join(lines)

"""pkg-config: every .pc, alone and all together, builds and runs an app with --as-needed
(retention holds), by the system's pkg-config and PyPI's pkgconf, as a Makefile passes the
flags and as Meson rewrites them."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from etpkg._internal.verify.consumers import (
    entry_source,
    expect_loaded,
    meson_link_args,
    wheel_needed,
    write,
)
from etpkg._internal.verify.runner import CheckFailed, run
from etpkg._internal.verify.tools import ensure_pkgconf

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite


def tools(suite: Suite) -> list[tuple[str, Path]]:
    """Debian's pkg-config (pkgconf 1.x) and pkgconf from PyPI (>= 2): they quote apart."""
    system = next((shutil.which(t) for t in ("pkg-config", "pkgconf") if shutil.which(t)), None)
    if system is None:
        raise CheckFailed("neither pkg-config nor pkgconf is installed (apt-get install pkgconf)")
    found = []
    for exe in (Path(system), ensure_pkgconf(suite.ws.cmake_cache)):
        version = run([exe, "--version"]).stdout.strip()
        found.append((f"{exe.name} {version}", exe))
    return found


def app(
    suite: Suite, tool: tuple[str, Path], modules: Sequence[str], comps: Sequence[str], tag: str
) -> str:
    """Builds an app from `tool --cflags --libs modules` as given and as Meson rewrites it,
    with --as-needed (retention must hold); it needs and loads exactly comps' files."""
    ws, m = suite.ws, suite.m
    label, exe = tool
    env = dict(os.environ, PKG_CONFIG_PATH=str(ws.lib_dir / "pkgconfig"))
    env.pop("PKG_CONFIG_LIBDIR", None)
    flags = shlex.split(run([exe, "--cflags", "--libs", *modules], env=env).stdout)
    libdir = " ".join(shlex.split(run([exe, "--variable=libdir", modules[0]], env=env).stdout))
    if Path(libdir).resolve() != ws.lib_dir.resolve():
        raise CheckFailed(f"{modules[0]} via {label}: libdir {libdir!r} is not {ws.lib_dir}")
    symbols = [s for c in comps for s in suite.symbols_for(c)]
    expected = m.files(comps)
    allowed = m.files(m.closure(comps))
    base = ws.root / "pkgconfig" / f"{exe.name}-{exe.parent.parent.name}" / tag
    src = write(base / "main.cpp", entry_source(symbols))
    for style, args in (("as given", flags), ("Meson-style", meson_link_args(flags))):
        binary = base / f"app-{style.split()[0].lower()}"
        # The .pc carries no runpath (see plan/pkgconfig.py); the consumer adds one.
        run(["g++", src, "-o", binary, "-Wl,--as-needed", *args, f"-Wl,-rpath,{libdir}"])
        needed = wheel_needed(binary, m)
        if not expected <= needed or not needed <= allowed:
            raise CheckFailed(
                f"{' '.join(modules)} via {label} ({style}: {shlex.join(args)}): app needs "
                f"{sorted(needed)}, expected {sorted(expected)} within {sorted(allowed)}"
            )
        expect_loaded(run([binary]).stdout, expected, ws.lib_dir)
    return label


def check(suite: Suite) -> str:
    """Each .pc file, alone and all together, builds an app that needs and loads its
    libraries (registration-only ones retained under --as-needed), under the workspace's
    path with a space: by pkgconf 1.x and >= 2, with the flags as a Makefile takes them
    and as Meson rewrites them (-L dropped, -l resolved to paths)."""
    m = suite.m
    pcs = sorted((suite.ws.lib_dir / "pkgconfig").glob("*.pc"))
    modules = []
    for comp in m.components:
        module = next((p.stem for p in pcs if f"(component {comp.name})" in p.read_text()), None)
        if module is None:
            raise CheckFailed(f"no .pc file for component {comp.name} in {pcs}")
        modules.append(module)
    labels = []
    for tool in tools(suite):
        for comp, module in zip(m.components, modules, strict=True):
            app(suite, tool, [module], [comp.name], comp.name)
        labels.append(app(suite, tool, modules, [c.name for c in m.components], "all"))
    return (
        f"{', '.join(f'{n}.pc' for n in modules)} each and all together, as given and "
        f"Meson-style, via {' and '.join(labels)}"
    )

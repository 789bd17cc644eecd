"""pkg-config: every .pc, alone and all together, and the package's own .pc, builds and runs
an app with --as-needed (retention holds), by the system's pkg-config and PyPI's pkgconf, as a
Makefile passes the flags and as Meson rewrites them. A C component's flags hold no C++ flag:
its app is C, compiled by gcc (clang refuses -std=c++N for C)."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from etpkg._internal.plan.pkgconfig import pc_name, pkg_config_modules
from etpkg._internal.verify.consumers import (
    c_only,
    entry_source,
    expect_linked,
    expect_loaded,
    linked_shared,
    meson_link_args,
    source_suffix,
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
    ws, m = suite.ws, suite.sdk
    label, exe = tool
    env = dict(os.environ, PKG_CONFIG_PATH=ws.pkg_config_path)
    env.pop("PKG_CONFIG_LIBDIR", None)
    flags = shlex.split(run([exe, "--cflags", "--libs", *modules], env=env).stdout)
    c_app = c_only(m)
    cxx_flags = [f for f in flags if f.startswith("-std=c++")]
    if c_app and cxx_flags:
        raise CheckFailed(f"{' '.join(modules)} via {label}: C++ flags {cxx_flags} for C")
    libdir = " ".join(shlex.split(run([exe, "--variable=libdir", modules[0]], env=env).stdout))
    if Path(libdir).resolve() != ws.lib_dir.resolve():
        raise CheckFailed(f"{modules[0]} via {label}: libdir {libdir!r} is not {ws.lib_dir}")
    symbols = [s for c in comps for s in suite.symbols_for(c)]
    expected = linked_shared(m, comps)
    base = ws.root / "pkgconfig" / f"{exe.name}-{exe.parent.parent.name}" / tag
    src = write(base / f"main.{source_suffix(m)}", entry_source(symbols))
    for style, args in (("as given", flags), ("Meson-style", meson_link_args(flags))):
        binary = base / f"app-{style.split()[0].lower()}"
        # The .pc carries no runpath (see plan/pkgconfig.py); the consumer adds one.
        rpaths = [f"-Wl,-rpath,{d}" for d in ws.wheel_lib_dirs]
        cc = ws.c_compiler if c_app else ws.cxx_compiler
        run([cc, src, "-o", binary, "-Wl,--as-needed", *args, *rpaths])
        what = f"{' '.join(modules)} via {label} ({style}: {shlex.join(args)})"
        expect_linked(binary, m, comps, ws.lib_dir, what)
        expect_loaded(run([binary]).stdout, expected, ws.wheel_lib_dirs)
    return label


def check(suite: Suite) -> str:
    """Each .pc file, alone and all together, builds an app that needs and loads its
    libraries (registration-only ones retained under --as-needed), under the workspace's
    path with a space: by pkgconf 1.x and >= 2, with the flags as a Makefile takes them
    and as Meson rewrites them (-L dropped, -l resolved to paths)."""
    m = suite.sdk
    shipped = {p.stem for p in (suite.ws.lib_dir / "pkgconfig").glob("*.pc")}
    modules = [pc_name(m, c) for c in m.components]
    missing = sorted(set(pkg_config_modules(m)) - shipped)
    if missing:
        raise CheckFailed(f"the wheel ships no {missing} (.pc) in {suite.ws.lib_dir / 'pkgconfig'}")
    everything = [c.name for c in m.components]
    aggregate = m.aggregate_pkg_config
    labels = []
    for tool in tools(suite):
        for comp, module in zip(m.components, modules, strict=True):
            app(suite, tool, [module], [comp.name], comp.name)
        labels.append(app(suite, tool, modules, everything, "all"))
        if aggregate is not None:
            app(suite, tool, [aggregate], everything, "package")
    own = f" and the package's {aggregate}.pc" if aggregate else ""
    return (
        f"{', '.join(f'{n}.pc' for n in modules)} each and all together{own}, as given and "
        f"Meson-style, via {' and '.join(labels)}"
    )

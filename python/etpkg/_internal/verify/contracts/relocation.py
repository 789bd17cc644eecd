"""Relocation: installed apps run moved elsewhere (bin/ + lib/, and flat), the wheel uninstalled."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from etpkg._internal.verify.consumers import expect_loaded, linked_shared
from etpkg._internal.verify.runner import CheckFailed, run

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite


def check(suite: Suite) -> str:
    ws, m = suite.ws, suite.sdk
    comps = [c.name for c in m.components]
    all_files = linked_shared(m, comps)
    moved_root = ws.root / "moved"
    if moved_root.exists():
        shutil.rmtree(moved_root)
    grafted = sorted(ws.grafted_dir.iterdir()) if ws.grafted_dir.is_dir() else []
    apps: list[tuple[str, Path, Path]] = []
    for version in suite.versions:
        for gen in suite.generators:
            inst = suite.matrix_dir(version, gen) / "inst"
            if not (inst / "bin" / "app").is_file():
                raise CheckFailed(f"no installed app for {version} {gen}")
            key = f"{version}-{gen.replace(' ', '_')}"
            tree = moved_root / key / "tree"
            shutil.copytree(inst, tree)
            missing = [g.name for g in grafted if not (tree / "lib" / g.name).is_file()]
            if missing:
                raise CheckFailed(f"{key}: cmake --install did not install the grafted {missing}")
            flat = moved_root / key / "flat"
            flat.mkdir(parents=True)
            shutil.copy2(tree / "bin" / "app", flat / "app")
            libs = sorted((tree / "lib").iterdir()) if (tree / "lib").is_dir() else []
            for lib in libs:  # none when the app links only archives
                shutil.copy2(lib, flat / lib.name)
            apps += [
                (f"{key} bin/+lib/", tree / "bin" / "app", tree / "lib"),
                (f"{key} flat", flat / "app", flat),
            ]
    ws.uninstall()
    try:
        tool = ws.tool(suite.versions[-1])
        for label, app, libdir in apps:
            try:
                expect_loaded(run([app], env=ws.env(tool)).stdout, all_files, libdir)
            except CheckFailed as exc:
                raise CheckFailed(f"{label}: {exc}") from exc
    except KeyboardInterrupt:
        raise  # stopping: no tool is started on the way out
    except BaseException:
        ws.reinstall()
        raise
    ws.reinstall()
    return f"{len(apps)} moved apps run with the wheel uninstalled" + (
        f" ({len(grafted)} grafted libs installed beside)" if grafted else ""
    )

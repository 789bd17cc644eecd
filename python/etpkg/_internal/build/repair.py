"""auditwheel: choose the platform tag from its own analysis, repair, then undo its DT_RPATH."""

from __future__ import annotations

import logging
from pathlib import Path

from etpkg._internal.build.elf import is_elf, read_elf
from etpkg._internal.build.tools import auditwheel, patchelf
from etpkg._internal.errors import ToolError
from etpkg._internal.tags import manylinux_platform

log = logging.getLogger(__name__)


def choose_platform(wheel: Path) -> str:
    """The manylinux platform auditwheel's analysis finds the wheel meets (see tags.py)."""
    tag = manylinux_platform(auditwheel("show", "--json", wheel), wheel.name)
    log.info("auditwheel: %s", tag)
    return tag


def repair(wheel: Path, platform: str, out_dir: Path) -> Path:
    """auditwheel repair --only-plat into out_dir; returns the repaired wheel."""
    auditwheel("repair", "--plat", platform, "--only-plat", "-w", out_dir, wheel)
    wheels = sorted(out_dir.glob("*.whl"))
    if len(wheels) != 1:
        raise ToolError(f"auditwheel repair wrote {len(wheels)} wheels into {out_dir}, expected 1")
    return wheels[0]


def restore_runpaths(root: Path) -> list[Path]:
    """auditwheel writes DT_RPATH (--force-rpath); rewrite each as DT_RUNPATH, same value."""
    changed: list[Path] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        if not is_elf(path):
            continue
        info = read_elf(path)
        if info.rpath is None:
            continue
        value = ":".join(info.rpath)
        if info.runpath is not None:
            value = ":".join(dict.fromkeys([*info.rpath, *info.runpath]))
        patchelf("--set-rpath", value, path)  # no --force-rpath: DT_RUNPATH
        log.debug("%s: DT_RPATH -> DT_RUNPATH %s", path.relative_to(root), value)
        changed.append(path)
    return changed

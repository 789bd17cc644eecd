"""Staging a plan on disk: write every file, then patch each library as the plan says."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from etpkg._internal.facts import SourceFile
from etpkg._internal.build.tools import patchelf
from etpkg._internal.plan.layout import Plan

log = logging.getLogger(__name__)


def write_files(root: Path, files: Mapping[str, SourceFile | bytes]) -> None:
    """Writes each wheel-relative path under root (replacing what is there)."""
    for rel, source in sorted(files.items()):
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(source.path.read_bytes() if isinstance(source, SourceFile) else source)


def stage(plan: Plan, root: Path) -> None:
    """Writes the plan under root and fixes the ELF files' SONAME, NEEDED and RUNPATH."""
    write_files(root, plan.files)
    for patch in plan.patches:
        args = patch.patchelf_args()
        log.debug("%s: %s", patch.path, " ".join(args))
        patchelf(*args, root / patch.path)

"""Staging a plan on disk: write every file, then patch each library as the plan says."""

from __future__ import annotations

import logging
from pathlib import Path

from etpkg._internal.facts import SourceFile
from etpkg._internal.build.tools import patchelf
from etpkg._internal.plan.layout import Plan

log = logging.getLogger(__name__)


def stage(plan: Plan, root: Path) -> None:
    """Writes the plan under root and fixes the libraries' SONAME, NEEDED and RUNPATH."""
    for rel, source in sorted(plan.files.items()):
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(source.path.read_bytes() if isinstance(source, SourceFile) else source)
    for patch in plan.patches:
        args = patch.patchelf_args()
        log.debug("%s: %s", patch.path, " ".join(args))
        patchelf(*args, root / patch.path)

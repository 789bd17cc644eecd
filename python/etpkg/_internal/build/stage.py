"""Staging a plan on disk: write every file, then patch each library as the plan says."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from etpkg._internal.build.elf import dynstr_span, read_elf
from etpkg._internal.build.tools import patchelf
from etpkg._internal.errors import ElfError
from etpkg._internal.facts import SourceFile
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
        stale = [old for old, _ in patch.replace_needed if "/" in old]
        if stale:
            _scrub_directories(root / patch.path, stale)


def _scrub_directories(path: Path, entries: list[str]) -> None:
    """Zeroes the directory part of each DT_NEEDED path patchelf replaced, which it leaves in
    .dynstr unreferenced: the build machine's path must not ship. The file name part stays
    (another string may share it as a suffix); the ELF facts must read the same after."""
    span = dynstr_span(path)
    if span is None:
        return
    before = read_elf(path)
    data = bytearray(path.read_bytes())
    start, end = span[0], span[0] + span[1]
    for entry in entries:
        directory = entry.rsplit("/", 1)[0].encode() + b"/"
        needle = entry.encode() + b"\0"
        at = data.find(needle, start, end)
        while at != -1:
            # Only a whole string: the byte before it ends the previous one.
            if at == start or data[at - 1] == 0:
                data[at : at + len(directory)] = bytes(len(directory))
            at = data.find(needle, at + 1, end)
    path.write_bytes(bytes(data))
    if read_elf(path) != before:
        raise ElfError(f"{path}: scrubbing the replaced DT_NEEDED paths changed its dynamic tags")

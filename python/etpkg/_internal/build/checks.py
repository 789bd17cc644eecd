"""Checks on the final wheel tree: runpaths, and no build-machine path in any file."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from etpkg._internal.build.elf import is_elf, read_elf
from etpkg._internal.errors import CheckError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Problem:
    path: str  # wheel-relative
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def runpath_problems(
    root: Path, libraries: list[str], siblings: tuple[str, ...] = ()
) -> list[Problem]:
    """DT_RUNPATH only; every entry $ORIGIN-relative, non-empty and inside the wheel, or one
    of `siblings` (wheel-relative lib dirs of the SDK wheels depended on, installed beside
    this one). `libraries` (wheel-relative) must also carry $ORIGIN itself."""
    sibling_dirs = {(root / s).resolve() for s in siblings}
    problems: list[Problem] = []
    root_resolved = root.resolve()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if not is_elf(path):
            continue
        rel = path.relative_to(root).as_posix()
        info = read_elf(path)
        if info.rpath is not None:
            problems.append(Problem(rel, f"has DT_RPATH {':'.join(info.rpath)} (want DT_RUNPATH)"))
        entries = info.runpath or ()
        if rel in libraries and "$ORIGIN" not in entries:
            problems.append(Problem(rel, "DT_RUNPATH lacks $ORIGIN"))
        for entry in entries:
            if not entry:
                problems.append(
                    Problem(
                        rel,
                        f"empty DT_RUNPATH entry in {':'.join(entries)!r} "
                        "(the loader reads it as the current directory)",
                    )
                )
                continue
            if entry != "$ORIGIN" and not entry.startswith("$ORIGIN/"):
                problems.append(Problem(rel, f"DT_RUNPATH entry {entry!r} is not $ORIGIN-relative"))
                continue
            target = (path.parent / entry.replace("$ORIGIN", ".", 1)).resolve()
            if not target.is_relative_to(root_resolved):
                problems.append(
                    Problem(rel, f"DT_RUNPATH entry {entry!r} points outside the wheel")
                )
            elif not target.is_dir() and target not in sibling_dirs:
                problems.append(Problem(rel, f"DT_RUNPATH entry {entry!r} points nowhere"))
    return problems


@dataclass(frozen=True)
class EmbeddedPath:
    """A build-machine path inside an ELF file's data (a __FILE__ string, a debug path):
    nothing a consumer or the loader opens, so it is reported, not refused."""

    path: str  # wheel-relative
    count: int

    def __str__(self) -> str:
        return f"{self.path}: holds a build-machine path {self.count} time(s) as string data"


def _needles(forbidden: list[Path]) -> list[bytes]:
    """Each build-machine directory as given and resolved: a Conan home reached through a
    symbolic link is written into files by its real path (CMake and compilers resolve the
    source and build folders), which the link's spelling does not match."""
    spellings = {s for p in forbidden for s in (str(p), os.path.realpath(p)) if str(p) != ""}
    return sorted({os.fsencode(s) for s in spellings if s not in ("", "/")}, key=len, reverse=True)


def embedded_paths(root: Path, forbidden: list[Path]) -> list[EmbeddedPath]:
    """ELF files holding a build-machine path as data, with how often. Their RUNPATH is
    runpath_problems()'s (an absolute entry is an error there)."""
    needles = _needles(forbidden)
    found: list[EmbeddedPath] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if not is_elf(path):
            continue
        data = path.read_bytes()
        count = max((data.count(n) for n in needles), default=0)
        if count:
            found.append(EmbeddedPath(path.relative_to(root).as_posix(), count))
    return found


def forbidden_path_problems(
    root: Path, forbidden: list[Path], *, strict: bool = False
) -> list[Problem]:
    """Every file but ELF files (unless strict) scanned for every build-machine directory
    (as bytes, anywhere in the file): configs, .pc files, scripts and data a consumer opens."""
    needles = _needles(forbidden)
    problems: list[Problem] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if not strict and is_elf(path):
            continue
        data = path.read_bytes()
        for needle in needles:
            if needle in data:
                problems.append(
                    Problem(
                        path.relative_to(root).as_posix(),
                        f"contains the build-machine path {os.fsdecode(needle)}",
                    )
                )
                break
    return problems


def raise_problems(problems: list[Problem]) -> None:
    for problem in problems:
        log.info("check failed: %s", problem)
    if problems:
        more = (
            f" (and {len(problems) - 1} more problem(s); run with -v)" if len(problems) > 1 else ""
        )
        raise CheckError(f"{problems[0]}{more}")

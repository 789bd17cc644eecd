"""What probing the package on disk found (build/probe.py): the input of pure planning."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from etpkg._internal import naming


@dataclass(frozen=True)
class SourceFile:
    path: Path  # the real file (symlinks resolved)
    digest: str  # sha256 of the content: planning tells duplicates from conflicts by it


@dataclass(frozen=True)
class Library:
    component: str
    name: str  # as given to the linker, e.g. "toysdk_core"
    source: SourceFile
    aliases: frozenset[str]  # names other libraries may use for it in DT_NEEDED
    needed: tuple[str, ...]  # its DT_NEEDED entries as built

    @property
    def file_name(self) -> str:
        return naming.library_file(self.name)


@dataclass(frozen=True)
class Tree:
    """A directory of the package to ship: (relative posix path, file) for each file."""

    root: Path
    files: tuple[tuple[str, SourceFile], ...]


@dataclass(frozen=True)
class PackageFiles:
    libraries: tuple[Library, ...]
    include_trees: tuple[Tree, ...]
    python_trees: tuple[Tree, ...]  # one per etpkg_python_packages entry, in order

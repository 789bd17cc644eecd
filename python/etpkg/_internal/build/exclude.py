"""`--exclude GLOB`: files of the package folder the user leaves out of the wheel (a script
holding the build-machine path, a program nobody needs), matched on the package-relative path."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from etpkg._internal.errors import LayoutError
from etpkg._internal.facts import PackageFiles, Tree


def _rel(tree: Tree, folder: Path, path: str) -> str | None:
    """`path` (relative to tree.root) relative to the package folder, None when outside it."""
    try:
        return (tree.root / path).relative_to(folder).as_posix()
    except ValueError:
        return None


def exclude_files(
    files: PackageFiles, folder: Path, bin_dirs: Sequence[str], globs: Sequence[str]
) -> tuple[PackageFiles, list[str]]:
    """files without the package-folder files matching a glob (fnmatch: `*` crosses `/`), and
    the package-relative paths left out. Headers, resources, build-module directories,
    bin-dir files and loadable modules (plugins in lib subdirectories) can be left out; a
    glob that leaves nothing out is an error (a typo would
    otherwise ship the file it meant)."""
    if not globs:
        return files, []
    used: set[str] = set()
    excluded: list[str] = []

    def out(rel: str | None) -> bool:
        hits = [g for g in globs if rel is not None and fnmatchcase(rel, g)]
        used.update(hits)
        if hits and rel is not None:
            excluded.append(rel)
        return bool(hits)

    def keep(tree: Tree) -> Tree:
        return Tree(tree.root, tuple(f for f in tree.files if not out(_rel(tree, folder, f[0]))))

    def exe_rel(name: str) -> str | None:
        for d in bin_dirs:
            if (folder / d / name).exists():
                return (Path(d) / name).as_posix()
        return None

    result = dataclasses.replace(
        files,
        include_trees=tuple(keep(t) for t in files.include_trees),
        executables=tuple(e for e in files.executables if not out(exe_rel(e.name))),
        res_trees=tuple((rel, keep(t)) for rel, t in files.res_trees),
        build_module_trees=tuple((rel, keep(t)) for rel, t in files.build_module_trees),
        loadable_modules=tuple(m for m in files.loadable_modules if not out(m.path)),
    )
    unused = [g for g in globs if g not in used]
    if unused:
        raise LayoutError(
            f"--exclude {unused[0]}: matches no header, resource, build-module, bin-dir or "
            "loadable-module file "
            "of the package folder (paths are relative to it, e.g. bin/NAME-config)"
        )
    return result, sorted(set(excluded))

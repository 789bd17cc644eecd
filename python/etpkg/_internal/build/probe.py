"""Probing the package on disk: the facts planning needs, so that planning itself is pure.

For each component library: the real file behind lib<name>.so (symlinks resolved), the other
names it goes by, its DT_NEEDED (checked to be an ELF shared object of the right arch). For
headers and Python packages: every file with its content digest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from etpkg._internal import naming, properties
from etpkg._internal.build.elf import check_shared_library
from etpkg._internal.errors import LayoutError
from etpkg._internal.facts import Library, PackageFiles, SourceFile, Tree
from etpkg._internal.model import Component, Sdk
from etpkg._internal.tags import Arch

_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def source_file(path: Path) -> SourceFile:
    return SourceFile(path, hashlib.sha256(path.read_bytes()).hexdigest())


def find_libraries(sdk: Sdk, arch: Arch) -> tuple[Library, ...]:
    """Every component library as one real ELF shared object of the right arch."""
    found: dict[str, Library] = {}
    for comp in sdk.components:
        for name in comp.libs:
            lib = _find_library(sdk, comp, name, arch)
            previous = found.get(lib.file_name)
            if previous is not None and previous.source.path != lib.source.path:
                raise LayoutError(
                    f"{lib.file_name} is both {previous.source.path} and {lib.source.path}"
                )
            found.setdefault(lib.file_name, lib)
    return tuple(found.values())


def _find_library(sdk: Sdk, comp: Component, name: str, arch: Arch) -> Library:
    file_name = naming.library_file(name)
    dirs = [sdk.package_folder / d for d in comp.lib_dirs]
    for d in dirs:
        candidate = d / file_name
        if not (candidate.is_file() or candidate.is_symlink()):
            continue
        real = candidate.resolve()
        if not real.is_file():
            raise LayoutError(f"component {comp.name}: {candidate} is a broken symlink")
        aliases = {file_name, real.name}
        for other in d.iterdir():  # the rest of the chain, e.g. libx.so.1 -> libx.so.1.2.0
            if other.is_symlink() and other.resolve() == real:
                aliases.add(other.name)
        info = check_shared_library(real, arch)
        return Library(comp.name, name, source_file(real), frozenset(aliases), info.needed)
    where = ", ".join(str(d) for d in dirs) or "(no lib dirs)"
    raise LayoutError(f"component {comp.name}: library {file_name} not found in {where}")


def tree(root: Path) -> Tree:
    files: list[tuple[str, SourceFile]] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts) or path.name.endswith(_SKIP_SUFFIXES):
            continue
        if path.is_file():  # symlinks to files are shipped as the file they point to
            files.append((rel.as_posix(), source_file(path.resolve())))
    return Tree(root, tuple(files))


def probe_package(sdk: Sdk, arch: Arch) -> PackageFiles:
    libraries = find_libraries(sdk, arch)
    include_dirs = dict.fromkeys(
        sdk.package_folder / d for c in sdk.components for d in c.include_dirs
    )
    includes = tuple(tree(inc) for inc in include_dirs if inc.is_dir())
    pythons: list[Tree] = []
    for rel_dir in sdk.python_packages:
        src = sdk.package_folder / rel_dir
        if not (src / "__init__.py").is_file():
            raise LayoutError(
                f"Python package {rel_dir} ({properties.PYTHON_PACKAGES.name}) has no "
                f"__init__.py in {sdk.package_folder}"
            )
        pythons.append(tree(src))
    return PackageFiles(libraries, includes, tuple(pythons))

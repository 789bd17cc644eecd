"""Measuring a wheel's manylinux floor (policy.py) from its files: the ELF files of the staged
tree and the libraries auditwheel will graft; and the report of what sets it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from etpkg._internal.build.elf import VersionedImport, is_elf, versioned_imports
from etpkg._internal.build.tools import demangler
from etpkg._internal.policy import SHOWN_SYMBOLS, Choice, Floor, Need, describe, floor_of
from etpkg._internal.tags import Arch


def measure(tree: Path, external: Mapping[str, Path], arch: Arch) -> Floor:
    """The floor of every ELF file under `tree` (by wheel path) and of each library auditwheel
    grafts (`external`: SONAME -> the file it copies; named by SONAME)."""
    imports: dict[str, tuple[VersionedImport, ...]] = {}
    for path in sorted(tree.rglob("*")):
        if path.is_file() and not path.is_symlink() and is_elf(path):
            imports[path.relative_to(tree).as_posix()] = versioned_imports(path)
    for soname, path in external.items():
        imports[f"{soname} (grafted)"] = versioned_imports(path)
    return floor_of(imports, arch)


def demangler_for(needs: tuple[Need, ...]) -> Callable[[str], str]:
    return demangler(s for n in needs for s in n.symbols[:SHOWN_SYMBOLS])


def report(choice: Choice) -> list[str]:
    """What the note says: the tag, then one line per (file, version) holding the floor."""
    floor = choice.floor
    deciding = floor.deciding()
    demangle = demangler_for(deciding)
    head = f"platform {choice.platform}"
    if choice.target is not None and choice.platform != floor.tag:
        head += f" (the target; the files need {floor.tag})"
    if not deciding:
        return [f"{head}: no file needs a symbol version newer than {floor.tag} allows"]
    return [f"{head}, set by:"] + [f"  {describe(n, floor.arch, demangle)}" for n in deciding]


def record(choice: Choice) -> tuple[tuple[str, str], ...]:
    """The floor as SBOM properties of the wheel (no path of the build machine in them)."""
    floor = choice.floor
    deciding = floor.deciding()
    demangle = demangler_for(deciding)
    props = [("etpkg:manylinux:floor", floor.tag)]
    if choice.target is not None:
        props.append(("etpkg:manylinux:target", choice.target.tag(floor.arch)))
    props += [("etpkg:manylinux:set-by", describe(n, floor.arch, demangle)) for n in deciding]
    return tuple(props)

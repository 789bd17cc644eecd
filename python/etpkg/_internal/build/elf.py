"""Reading the few ELF facts etpkg needs (pyelftools); no writing here (see tools.patchelf)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

from etpkg._internal.errors import ElfError
from etpkg._internal.tags import Arch

ELF_MAGIC = b"\x7fELF"


@dataclass(frozen=True)
class ElfInfo:
    machine: str
    elfclass: int
    elf_type: str  # "ET_DYN" for shared objects
    soname: str | None
    needed: tuple[str, ...]
    # None when the tag is absent; entries are kept as written, empty ones included.
    rpath: tuple[str, ...] | None
    runpath: tuple[str, ...] | None


def _text(tag: object, attr: str) -> str:
    # pyelftools attaches the string of a string-valued tag under the tag's own name.
    return str(getattr(tag, attr))


def is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == ELF_MAGIC


def read_elf(path: Path) -> ElfInfo:
    """Reads one ELF file; a file that is not ELF is a LayoutError naming it."""
    try:
        with path.open("rb") as f:
            elf = ELFFile(f)
            soname: str | None = None
            needed: list[str] = []
            rpath: tuple[str, ...] | None = None
            runpath: tuple[str, ...] | None = None
            for section in elf.iter_sections():
                if not isinstance(section, DynamicSection):
                    continue
                for tag in section.iter_tags():
                    kind = tag.entry.d_tag
                    if kind == "DT_SONAME":
                        soname = _text(tag, "soname")
                    elif kind == "DT_NEEDED":
                        needed.append(_text(tag, "needed"))
                    elif kind == "DT_RPATH":
                        rpath = tuple(_text(tag, "rpath").split(":"))
                    elif kind == "DT_RUNPATH":
                        runpath = tuple(_text(tag, "runpath").split(":"))
            return ElfInfo(
                machine=str(elf["e_machine"]),
                elfclass=int(elf.elfclass),
                elf_type=str(elf["e_type"]),
                soname=soname,
                needed=tuple(needed),
                rpath=rpath,
                runpath=runpath,
            )
    except (ELFError, OSError, ValueError) as exc:
        raise ElfError(f"{path}: not a readable ELF file ({exc})") from exc


def check_shared_library(path: Path, arch: Arch) -> ElfInfo:
    """The file must be an ELF shared object built for `arch`."""
    if not is_elf(path):
        raise ElfError(f"{path}: not an ELF file (expected a shared library)")
    info = read_elf(path)
    if info.elf_type != "ET_DYN":
        raise ElfError(f"{path}: ELF type {info.elf_type}, expected a shared object (ET_DYN)")
    if info.machine != arch.machine or info.elfclass != arch.elfclass:
        raise ElfError(
            f"{path}: built for {info.machine} ({info.elfclass}-bit), "
            f"but the package's arch is {arch.conan} ({arch.machine})"
        )
    return info

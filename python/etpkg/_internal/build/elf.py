"""Reading the few ELF facts etpkg needs (pyelftools), in shared objects, executables and the
objects of ar archives; no writing here (see tools.patchelf)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection, GNUVerSymSection
from elftools.elf.sections import SymbolTableSection

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


def dynstr_span(path: Path) -> tuple[int, int] | None:
    """(file offset, size) of the .dynstr section, None without one."""
    try:
        with path.open("rb") as f:
            section = ELFFile(f).get_section_by_name(".dynstr")
            return None if section is None else (section["sh_offset"], section["sh_size"])
    except (ELFError, OSError, ValueError) as exc:
        raise ElfError(f"{path}: not a readable ELF file ({exc})") from exc


def _check_arch(path: Path, info: ElfInfo, arch: Arch) -> None:
    if info.machine != arch.machine or info.elfclass != arch.elfclass:
        raise ElfError(
            f"{path}: built for {info.machine} ({info.elfclass}-bit), "
            f"but the package's arch is {arch.conan} ({arch.machine})"
        )


def check_shared_library(path: Path, arch: Arch) -> ElfInfo:
    """The file must be an ELF shared object built for `arch`."""
    if not is_elf(path):
        raise ElfError(f"{path}: not an ELF file (expected a shared library)")
    info = read_elf(path)
    if info.elf_type != "ET_DYN":
        raise ElfError(f"{path}: ELF type {info.elf_type}, expected a shared object (ET_DYN)")
    _check_arch(path, info, arch)
    return info


def check_executable(path: Path, arch: Arch) -> ElfInfo:
    """An ELF program (ET_EXEC, or ET_DYN for a PIE) built for `arch`."""
    info = read_elf(path)
    if info.elf_type not in ("ET_EXEC", "ET_DYN"):
        raise ElfError(f"{path}: ELF type {info.elf_type}, expected an executable")
    _check_arch(path, info, arch)
    return info


AR_MAGIC = b"!<arch>\n"


def archive_members(path: Path) -> list[tuple[str, bytes]]:
    """(name, data) of each member of a System V / GNU ar archive, symbol and name tables
    excluded; a file that is not one is an ElfError."""
    data = path.read_bytes()
    if not data.startswith(AR_MAGIC):
        raise ElfError(f"{path}: not an ar archive (expected a static library)")
    members: list[tuple[str, bytes]] = []
    names = b""
    pos = len(AR_MAGIC)
    while pos + 60 <= len(data):
        header = data[pos : pos + 60]
        raw_name = header[:16].decode("ascii", "replace").rstrip()
        try:
            size = int(header[48:58].decode("ascii").strip())
        except ValueError as exc:
            raise ElfError(f"{path}: malformed ar member header at offset {pos}") from exc
        body = data[pos + 60 : pos + 60 + size]
        pos += 60 + size + (size % 2)
        if raw_name in ("/", "/SYM64/"):
            continue
        if raw_name == "//":
            names = body
            continue
        if raw_name.startswith("/") and raw_name[1:].isdigit():
            offset = int(raw_name[1:])
            end = names.find(b"/\n", offset)
            raw_name = names[offset:end].decode("utf-8", "replace")
        members.append((raw_name.rstrip("/"), body))
    return members


def check_static_library(path: Path, arch: Arch) -> int:
    """The file must be an ar archive of ELF relocatable objects built for `arch`; returns
    how many objects it holds."""
    objects = 0
    for name, body in archive_members(path):
        if not body.startswith(ELF_MAGIC):
            raise ElfError(f"{path}: member {name} is not an ELF object")
        try:
            elf = ELFFile(io.BytesIO(body))
            info_type, machine, elfclass = str(elf["e_type"]), str(elf["e_machine"]), elf.elfclass
        except (ELFError, ValueError) as exc:
            raise ElfError(f"{path}: member {name} is not a readable ELF object ({exc})") from exc
        if info_type != "ET_REL":
            raise ElfError(f"{path}: member {name} is {info_type}, expected an object (ET_REL)")
        if machine != arch.machine or elfclass != arch.elfclass:
            raise ElfError(
                f"{path}: member {name} built for {machine} ({elfclass}-bit), "
                f"but the package's arch is {arch.conan} ({arch.machine})"
            )
        objects += 1
    if not objects:
        raise ElfError(f"{path}: an archive holding no object")
    return objects


@dataclass(frozen=True)
class VersionedImport:
    """One symbol version an ELF file needs of a library it links (its .gnu.version_r)."""

    library: str  # the DT_NEEDED name the version belongs to, e.g. "libstdc++.so.6"
    version: str  # e.g. "GLIBCXX_3.4.30"
    symbols: tuple[str, ...]  # the undefined symbols bound to it, mangled, sorted


def versioned_imports(path: Path) -> tuple[VersionedImport, ...]:
    """Each symbol version `path` needs, with the symbols that need it (a version no
    undefined symbol names, still required by the loader, has none)."""
    try:
        with path.open("rb") as f:
            elf = ELFFile(f)
            names: dict[int, tuple[str, str]] = {}
            versym: GNUVerSymSection | None = None
            for section in elf.iter_sections():
                if isinstance(section, GNUVerNeedSection):
                    for verneed, auxes in section.iter_versions():
                        for aux in auxes:
                            names[int(aux["vna_other"])] = (str(verneed.name), str(aux.name))
                elif isinstance(section, GNUVerSymSection):
                    versym = section
            symbols: dict[tuple[str, str], list[str]] = {key: [] for key in names.values()}
            dynsym = elf.get_section_by_name(".dynsym")
            if versym is not None and isinstance(dynsym, SymbolTableSection):
                for index, symbol in enumerate(dynsym.iter_symbols()):
                    if symbol["st_shndx"] != "SHN_UNDEF" or not symbol.name:
                        continue
                    ndx = versym.get_symbol(index)["ndx"]
                    if isinstance(ndx, int) and ndx in names:
                        symbols[names[ndx]].append(str(symbol.name))
    except (ELFError, OSError, ValueError) as exc:
        raise ElfError(f"{path}: not a readable ELF file ({exc})") from exc
    return tuple(
        VersionedImport(library, version, tuple(sorted(set(found))))
        for (library, version), found in sorted(symbols.items())
    )

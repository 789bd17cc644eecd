"""Probing the package on disk: the facts planning needs, so that planning itself is pure.

For each component library: the real file behind lib<name>.so (symlinks resolved) or the
archive lib<name>.a, the other names it goes by, its DT_NEEDED (checked to be an ELF shared
object, or an archive of ELF objects, of the right arch). For headers, Python packages, data
(resdirs), executables (bindirs), CMake build modules and licence files: every file with its
content digest. For each required package whose headers or libraries reach consumers: what of
it must ship (see model.Dependency and build/system.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

from etpkg._internal import naming, process, properties
from etpkg._internal.build import system
from etpkg._internal.build.elf import (
    check_executable,
    check_shared_library,
    check_static_library,
    is_elf,
    read_elf,
)
from etpkg._internal.errors import LayoutError
from etpkg._internal.facts import (
    DependencyFiles,
    Executable,
    Library,
    LoadableModule,
    PackageFiles,
    SourceFile,
    Tree,
)
from etpkg._internal.model import SHARED, STATIC, Component, Dependency, Sdk
from etpkg._internal.tags import Arch

_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")
LICENSES_DIR = "licenses"  # Conan's convention: recipes copy licence files here
# Compilers search these by default; a dependency naming one cannot have it shipped whole.
_DEFAULT_INCLUDE_DIRS = (Path("/usr/include"), Path("/usr/local/include"))


def source_file(path: Path) -> SourceFile:
    return SourceFile(path, hashlib.sha256(path.read_bytes()).hexdigest())


def find_libraries(
    sdk: Sdk, arch: Arch | None
) -> tuple[tuple[Library, ...], tuple[tuple[str, str], ...]]:
    """Every component library as one real file of the right arch, and each library
    component's linkage (what its package type says, else what is on disk)."""
    found: dict[str, Library] = {}
    linkage: list[tuple[str, str]] = []
    for comp in sdk.components:
        if comp.header_only:
            continue
        if arch is None:
            raise LayoutError(
                f"component {comp.name} has libraries {list(comp.libs)}, but the package has "
                "no arch setting (a header-library must list none)"
            )
        kind = comp.linkage
        for name in comp.libs:
            lib = _find_library(sdk, comp, name, arch, kind)
            kind = STATIC if lib.static else SHARED
            previous = found.get(lib.file_name)
            if previous is not None and previous.source.path != lib.source.path:
                raise LayoutError(
                    f"{lib.file_name} is both {previous.source.path} and {lib.source.path}"
                )
            found.setdefault(lib.file_name, lib)
        linkage.append((comp.name, kind))
    return tuple(found.values()), tuple(linkage)


def _find_library(sdk: Sdk, comp: Component, name: str, arch: Arch, kind: str) -> Library:
    dirs = [sdk.package_folder / d for d in comp.lib_dirs]
    shared_file = naming.library_file(name)
    static_file = naming.library_file(name, static=True)
    wanted = {SHARED: [shared_file], STATIC: [static_file]}.get(kind, [shared_file, static_file])
    for file_name in wanted:
        for d in dirs:
            candidate = d / file_name
            if not (candidate.is_file() or candidate.is_symlink()):
                continue
            real = candidate.resolve()
            if not real.is_file():
                raise LayoutError(f"component {comp.name}: {candidate} is a broken symlink")
            if file_name == static_file:
                check_static_library(real, arch)
                return Library(comp.name, name, source_file(real), frozenset(), (), static=True)
            aliases = {file_name, real.name}
            for other in d.iterdir():  # the rest of the chain, e.g. libx.so.1 -> libx.so.1.2.0
                if other.is_symlink() and other.resolve() == real:
                    aliases.add(other.name)
            info = check_shared_library(real, arch)
            # Its DT_SONAME is what anything linked against it names in DT_NEEDED, also when
            # the file is a copy under another name (libunwind's package() replaces the link
            # libunwind-generic.so with a copy of libunwind-x86_64.so.8, whose SONAME
            # libunwind-setjmp.so needs): without it, auditwheel grafts the system's library.
            if info.soname:
                aliases.add(info.soname)
            return Library(comp.name, name, source_file(real), frozenset(aliases), info.needed)
    where = ", ".join(str(d) for d in dirs) or "(no lib dirs)"
    other_file = {SHARED: static_file, STATIC: shared_file}.get(kind)
    hint = ""
    if other_file and any((d / other_file).exists() for d in dirs):
        built = "static" if other_file == static_file else "shared"
        hint = f" (it holds {other_file}: a {built} build)"
    raise LayoutError(
        f"component {comp.name}: library {' or '.join(wanted)} not found in {where}{hint}"
    )


def tree(root: Path) -> Tree:
    files: list[tuple[str, SourceFile]] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts) or path.name.endswith(_SKIP_SUFFIXES):
            continue
        if path.is_file():  # symlinks to files are shipped as the file they point to
            files.append((rel.as_posix(), source_file(path.resolve())))
    return Tree(root, tuple(files))


def find_executables(sdk: Sdk, arch: Arch | None) -> tuple[Executable, ...]:
    found: dict[str, Executable] = {}
    for rel in sdk.bin_dirs:
        d = sdk.package_folder / rel
        if not d.is_dir():
            continue
        for path in sorted(d.iterdir()):
            if path.is_dir():
                raise LayoutError(f"bin dir {rel} holds a directory, {path.name}: not supported")
            real = path.resolve()
            elf = is_elf(real)
            needed: tuple[str, ...] = ()
            if elf:
                if arch is None:
                    raise LayoutError(f"{path} is an ELF program, but the package has no arch")
                needed = check_executable(real, arch).needed
            previous = found.get(path.name)
            if previous is not None and previous.source.path != real:
                raise LayoutError(f"two executables named {path.name} ({previous.source.path})")
            found[path.name] = Executable(path.name, source_file(real), elf, needed)
    return tuple(found.values())


def find_loadable_modules(
    sdk: Sdk, arch: Arch | None, libraries: tuple[Library, ...]
) -> tuple[LoadableModule, ...]:
    """The ELF shared objects in subdirectories of the components' lib dirs that are no
    component's library: plugins the libraries load at run time (openssl's providers and
    engines), which a Conan consumer reaches in the package folder."""
    named = {lib.source.path for lib in libraries}
    lib_dirs = dict.fromkeys(sdk.package_folder / d for c in sdk.components for d in c.lib_dirs)
    found: dict[str, LoadableModule] = {}
    for d in lib_dirs:
        if not d.is_dir():
            continue
        for path in sorted(d.rglob("*")):
            if path.parent == d or path.is_symlink() or not path.is_file():
                continue
            if path.resolve() in named or not is_elf(path) or arch is None:
                continue
            info = read_elf(path)
            if info.elf_type != "ET_DYN":
                continue
            check_shared_library(path, arch)
            rel = path.relative_to(sdk.package_folder).as_posix()
            found.setdefault(rel, LoadableModule(rel, source_file(path), info.needed))
    return tuple(found.values())


def _licenses(folder: Path, prefix: str = "") -> tuple[tuple[str, SourceFile], ...]:
    root = folder / LICENSES_DIR
    if not root.is_dir():
        return ()
    return tuple((prefix + rel, src) for rel, src in tree(root).files)


def probe_dependency(dep: Dependency, arch: Arch | None) -> DependencyFiles:
    """What of a required package consumers get, found on disk; a LayoutError names what
    cannot be shipped."""
    what = f"{dep.name}/{dep.version}"
    headers: list[Tree] = []
    licenses: list[tuple[str, SourceFile]] = []
    if dep.headers:
        for inc in dep.include_dirs:
            if inc not in _DEFAULT_INCLUDE_DIRS:
                headers.append(tree(inc))
        if dep.system:
            headers += _system_headers(dep, what)
    archives: list[Library] = []
    shared: list[str] = []
    by_lib: list[tuple[str, str]] = []
    if dep.libs and not dep.system:
        for name in dep.libs_names:
            archive, soname = _dependency_library(dep, name, arch, what)
            if archive is not None:
                archives.append(archive)
                by_lib.append((name, archive.file_name))
            if soname is not None:
                shared.append(soname)
                by_lib.append((name, soname))
    if dep.system:
        for package in dep.apt_packages:
            copyright_path = system.copyright_file(package)
            if copyright_path is not None:
                licenses.append((f"{package}/copyright", source_file(copyright_path)))
    elif dep.package_folder is not None:
        licenses += _licenses(dep.package_folder, f"{dep.name}/")
    if (headers or archives or shared) and not licenses:
        raise LayoutError(
            f"the wheel would ship {what}'s {'headers' if headers else 'libraries'} without its "
            f"licence: its package has no {LICENSES_DIR}/ folder"
            + (" and its Debian packages no copyright file" if dep.system else "")
        )
    return DependencyFiles(
        name=dep.name,
        headers=tuple(headers),
        archives=tuple(archives),
        shared=tuple(shared),
        system_libs=dep.system_libs if dep.libs else (),
        by_lib=tuple(by_lib),
        licenses=tuple(licenses),
    )


def _system_headers(dep: Dependency, what: str) -> list[Tree]:
    """A system package's headers: those of the Debian packages its recipe installs."""
    if not dep.apt_packages:
        raise LayoutError(
            f"consumers need the headers of {what}, a system package whose recipe installs no "
            "Debian package (apt-get) etpkg could take them from; package its headers instead"
        )
    files: list[tuple[str, SourceFile]] = []
    for package in dep.apt_packages:
        found = system.headers(package)
        files += [(rel, source_file(path)) for rel, path in found]
    if not files:
        raise LayoutError(
            f"consumers need the headers of {what}, but its Debian packages "
            f"{list(dep.apt_packages)} install none under {system.INCLUDE_ROOT} (or dpkg is "
            "missing)"
        )
    return [Tree(system.INCLUDE_ROOT, tuple(files))]


def dependency_sonames(dep: Dependency, arch: Arch | None) -> tuple[tuple[str, str], ...]:
    """(SONAME as built, file name in its wheel's lib/) of each of a required package's
    shared libraries, whether or not consumers link them (a library of the SDK may need
    them): what an SDK wheel of it provides (depend.py). Its wheel names each library
    lib<name>.so with that SONAME (naming.library_file), so libfmt.so.9 becomes libfmt.so."""
    found: list[tuple[str, str]] = []
    if dep.system or arch is None:
        return ()
    for name in dep.libs_names:
        for d in dep.lib_dirs:
            shared = d / naming.library_file(name)
            if shared.exists():
                info = check_shared_library(shared.resolve(), arch)
                found.append((info.soname or shared.resolve().name, naming.library_file(name)))
                break
    return tuple(found)


def _dependency_library(
    dep: Dependency, name: str, arch: Arch | None, what: str
) -> tuple[Library | None, str | None]:
    for d in dep.lib_dirs:
        archive = d / naming.library_file(name, static=True)
        shared = d / naming.library_file(name)
        if shared.exists() and arch is not None:
            info = check_shared_library(shared.resolve(), arch)
            return None, info.soname or shared.resolve().name
        if archive.exists() and arch is not None:
            real = archive.resolve()
            check_static_library(real, arch)
            lib = Library(f"{dep.name}::", name, source_file(real), frozenset(), (), static=True)
            return lib, None
    raise LayoutError(
        f"consumers link {what}'s library {name}, but lib{name}.so / lib{name}.a is not in "
        f"{[str(d) for d in dep.lib_dirs]}"
    )


def probe_package(sdk: Sdk, arch: Arch | None) -> PackageFiles:
    libraries, linkage = find_libraries(sdk, arch)
    include_dirs = dict.fromkeys(
        sdk.package_folder / d for c in sdk.components for d in c.include_dirs
    )
    # A dir nested in another declared include dir ships with that one's tree, once.
    outer = [
        inc
        for inc in include_dirs
        if not any(other != inc and inc.is_relative_to(other) for other in include_dirs)
    ]
    includes = tuple(tree(inc) for inc in outer if inc.is_dir())
    pythons: list[Tree] = []
    for rel_dir in sdk.python_packages:
        src = sdk.package_folder / rel_dir
        if not (src / "__init__.py").is_file():
            raise LayoutError(
                f"Python package {rel_dir} ({properties.PYTHON_PACKAGES.name}) has no "
                f"__init__.py in {sdk.package_folder}"
            )
        pythons.append(tree(src))
    res = tuple(
        (rel, tree(sdk.package_folder / rel))
        for rel in sdk.res_dirs
        if (sdk.package_folder / rel).is_dir()
    )
    modules: list[tuple[str, SourceFile]] = []
    for rel in sdk.build_modules:
        path = sdk.package_folder / rel
        if not path.is_file():
            raise LayoutError(f"cmake_build_modules entry {rel} is not a file in the package")
        modules.append((rel, source_file(path.resolve())))
    module_trees = tuple((rel, tree(sdk.package_folder / rel)) for rel in build_module_dirs(sdk))
    deps = tuple(probe_dependency(d, arch) for d in sdk.dependencies)
    system_names = dict.fromkeys(
        [n for c in sdk.components for n in c.system_libs]
        + [n for d in deps for n in d.system_libs]
    )
    return PackageFiles(
        libraries=libraries,
        include_trees=includes,
        python_trees=tuple(pythons),
        executables=find_executables(sdk, arch),
        res_trees=res,
        build_modules=tuple(modules),
        build_module_trees=module_trees,
        licenses=_licenses(sdk.package_folder),
        dependencies=deps,
        linkage=linkage,
        system_sonames=tuple((name, system_soname(name)) for name in system_names),
        loadable_modules=find_loadable_modules(sdk, arch, libraries),
    )


def build_module_dirs(sdk: Sdk) -> list[str]:
    """The package-relative directory of each cmake_build_modules entry that is shipped whole,
    so that the files a module reads beside it (configure_file templates, scripts, further
    modules) are where it looks for them. Not the package root, nor a directory holding (or
    being) one etpkg lays out itself (lib, bin, include and Python dirs, licenses: their files
    are selected or moved), nor one inside a res dir (shipped whole already)."""
    laid_out = [
        *(d for c in sdk.components for d in (*c.lib_dirs, *c.include_dirs)),
        *sdk.bin_dirs,
        *sdk.python_packages,
        "licenses",
    ]
    found: list[str] = []
    for rel in sdk.build_modules:
        parent = PurePosixPath(rel).parent
        if str(parent) in ("", "."):
            continue
        if any(
            parent == PurePosixPath(d) or PurePosixPath(d).is_relative_to(parent) for d in laid_out
        ):
            continue
        if any(parent.is_relative_to(PurePosixPath(d)) for d in sdk.res_dirs):
            continue
        if (sdk.package_folder / parent).is_dir() and str(parent) not in found:
            found.append(str(parent))
    for rel in sdk.build_dirs:  # builddirs ship whole, wherever they are
        if rel not in found and not any(
            PurePosixPath(rel).is_relative_to(PurePosixPath(d)) for d in sdk.res_dirs
        ):
            found.append(rel)
    return found


def system_soname(name: str) -> str | None:
    """The SONAME -l<name> links here, as the compiler driver finds lib<name>.so; None for a
    linker script (libm.so, libc.so) or a library that is not installed."""
    file_name = naming.library_file(name)
    try:
        proc = process.run(["cc", f"-print-file-name={file_name}"])
    except OSError:
        return None
    found = Path(proc.stdout.strip())
    if proc.returncode != 0 or not found.is_absolute() or not found.is_file():
        return None
    real = found.resolve()
    if not is_elf(real):
        return None
    return read_elf(real).soname or real.name

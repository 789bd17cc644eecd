"""The Sdk as the wheel lays it out (pure): what every generated file is rendered from.

- Headers in <pkg>/include (the package's and those of required packages that reach
  consumers), libraries in <pkg>/lib, each component's linkage as found on disk.
- Flags (cflags, cxxflags, sharedlinkflags, exelinkflags) carried to consumers with every
  path of the package rewritten as `${prefix}/<path in the wheel's package dir>`; a flag
  holding any other build-machine path, or a `$` (which no CMake before 3.28 and no shell
  passes through), is refused by name. A flag that only repeats the retention etpkg writes
  for a registration-only component is dropped as represented.
- What required packages give consumers beside files (model.Dependency: defines, compile and
  link flags) is added to each component requiring them, after the component's own, as
  CMakeDeps and PkgConfigDeps pass it on; paths in their package folders are relocated like
  the package's own (their include dirs merge into include/, their archives into lib/).
- What consumers link from required packages (model.Component.dependency_files): archives
  shipped in <pkg>/lib, and the copies of shared libraries auditwheel grafted (`grafts`, known
  once the wheel is repaired); system libraries auditwheel grafted are linked by path to the
  copy too, the rest stay -l<name>.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import TypeVar

from etpkg._internal import naming
from etpkg._internal.errors import LayoutError
from etpkg._internal.facts import DependencyFiles, PackageFiles
from etpkg._internal.model import CMakeVariable, Component, Dependency, Sdk

PREFIX = "${prefix}"
# A path inside a flag ends at one of these (an option's value in -Wl,a,b or -Dx=y).
_PATH_END = re.compile(r"[,;\s\"'=]")


def include_dir_in_wheel(sdk: Sdk, rel: str) -> str:
    """Where a declared include dir lands: include/, or include/<sub> for one nested in
    another declared include dir (freetype's include and include/freetype2), whose files ship
    once, with the outer dir's tree."""
    path = PurePosixPath(rel)
    outer = [
        PurePosixPath(d)
        for c in sdk.components
        for d in c.include_dirs
        if PurePosixPath(d) != path and path.is_relative_to(PurePosixPath(d))
    ]
    if not outer:
        return "include"
    top = min(outer, key=lambda d: len(d.parts))
    return f"include/{path.relative_to(top).as_posix()}"


def relocation_table(sdk: Sdk, files: PackageFiles) -> list[tuple[str, str]]:
    """(package-relative path, path in the wheel's package dir), longest first: where each
    shipped file or dir of the package lands."""
    table: list[tuple[str, str]] = []
    for lib in files.libraries:
        for comp in sdk.components:
            if comp.name != lib.component:
                continue
            for d in comp.lib_dirs:
                for alias in {*lib.aliases, lib.file_name, lib.source.path.name}:
                    table.append((f"{d}/{alias}", f"lib/{lib.file_name}"))
    for comp in sdk.components:
        for d in comp.include_dirs:
            table.append((d, include_dir_in_wheel(sdk, d)))
    for d in sdk.res_dirs:
        table.append((d, d))
    for d in sdk.bin_dirs:
        table.append((d, "bin"))
    for rel, _ in files.build_modules:
        table.append((rel, rel))
    for rel, _ in files.build_module_trees:
        table.append((rel, rel))
    return sorted(set(table), key=lambda item: (-len(item[0]), item))


def dependency_relocation_table(
    dep: Dependency, files: DependencyFiles | None
) -> list[tuple[str, str]]:
    """relocation_table() of a required package: (path relative to its package folder, path
    in the wheel's package dir) of what of it ships."""
    if dep.package_folder is None or files is None:
        return []
    folder = dep.package_folder.resolve()
    table: list[tuple[str, str]] = []
    shipped = {tree.root.resolve() for tree in files.headers}
    for inc in dep.include_dirs:
        if inc.resolve() in shipped and inc.resolve().is_relative_to(folder):
            table.append((inc.resolve().relative_to(folder).as_posix(), "include"))
    for lib in files.archives:
        for d in dep.lib_dirs:
            lib_dir = d.resolve()
            if lib_dir.is_relative_to(folder) and (d / lib.file_name).resolve() == lib.source.path:
                rel = (lib_dir / lib.file_name).relative_to(folder).as_posix()
                table.append((rel, f"lib/{lib.file_name}"))
    return sorted(set(table), key=lambda item: (-len(item[0]), item))


def relocate_flag(
    flag: str,
    sdk: Sdk,
    table: list[tuple[str, str]],
    where: str,
    folder: Path | None = None,
) -> str:
    """The flag with each path of the package (or of `folder`, a required package's folder)
    as ${prefix}/<wheel path>."""
    out = _relocated_paths(flag, sdk, table, where, f"flag {flag!r}", folder)
    if "$" in out.replace(PREFIX, ""):
        raise LayoutError(
            f"{where}: flag {flag!r} holds a '$', which CMake before 3.28 and shells mangle; "
            "it cannot be carried to consumers"
        )
    return out


def relocate_variable(
    var: CMakeVariable,
    sdk: Sdk,
    table: list[tuple[str, str]],
    where: str,
    folder: Path | None = None,
) -> CMakeVariable:
    """A cmake_extra_variables entry with each path of the package (the package folder
    itself too) as ${prefix}[/<wheel path>]; CMake expands any other ${...} as CMakeDeps'."""
    if not var.quoted:
        return var
    what = f"cmake_extra_variables {var.name} = {var.value!r}"
    if PREFIX in var.value:
        raise LayoutError(
            f"{where}: {what} names ${{prefix}}, which the wheel's config sets to its own "
            "root: write the package folder's path instead"
        )
    base = sdk.package_folder if folder is None else folder
    text = var.value
    for root in sorted({str(base), str(base.resolve())}, key=len, reverse=True):
        text = re.sub(re.escape(root) + r"(?=$|[,;\s'=])", lambda _m: PREFIX, text)
    return var._replace(value=_relocated_paths(text, sdk, table, where, what, folder))


def _relocated_paths(
    text: str,
    sdk: Sdk,
    table: list[tuple[str, str]],
    where: str,
    what: str,
    folder: Path | None,
) -> str:
    base = sdk.package_folder if folder is None else folder
    roots = sorted({str(base), str(base.resolve())}, key=len)
    out = text
    for root in reversed(roots):
        pieces = out.split(root + "/")
        rebuilt = pieces[0]
        for piece in pieces[1:]:
            end = _PATH_END.search(piece)
            rel, rest = (piece[: end.start()], piece[end.start() :]) if end else (piece, "")
            rebuilt += _relocated(rel, table, what, where) + rest
        out = rebuilt
    for path in sdk.forbidden_paths:
        if str(path) not in ("", "/") and str(path) in out:
            raise LayoutError(f"{where}: {what} holds the build-machine path {path}")
    return out


def _relocated(rel: str, table: list[tuple[str, str]], what: str, where: str) -> str:
    path = PurePosixPath(rel)
    for src, dest in table:
        src_path = PurePosixPath(src)
        if path == src_path or path.is_relative_to(src_path):
            tail = path.relative_to(src_path)
            target = PurePosixPath(dest) / tail if str(tail) != "." else PurePosixPath(dest)
            return f"{PREFIX}/{target}"
    raise LayoutError(f"{where}: {what} names {rel} in the package, which the wheel does not ship")


def _relocated_flags(comp: Component, sdk: Sdk, table: list[tuple[str, str]]) -> Component:
    retention = naming.retained_flag([f"{PREFIX}/lib/{f}" for f in comp.files], static=comp.static)

    def carried(kind: str, flags: tuple[str, ...]) -> tuple[str, ...]:
        where = f"component {comp.name}: {kind}"
        out = [relocate_flag(f, sdk, table, where) for f in flags]
        if comp.registration_only and kind.endswith("linkflags"):
            out = [f for f in out if f != retention]
        return tuple(out)

    return _with_flags(comp, carried)


def _relocated_dependency(dep: Dependency, files: DependencyFiles | None, sdk: Sdk) -> Dependency:
    """The dependency with the flags it gives consumers relocated (a path in its package
    folder the wheel does not ship, like any build-machine path, is refused by name)."""
    table = dependency_relocation_table(dep, files)

    def carried(kind: str, flags: tuple[str, ...]) -> tuple[str, ...]:
        where = f"required package {dep.name}: {kind}"
        if dep.package_folder is None:
            return tuple(relocate_flag(f, sdk, [], where) for f in flags)
        return tuple(relocate_flag(f, sdk, table, where, dep.package_folder) for f in flags)

    return _with_flags(dep, carried)


_Flagged = TypeVar("_Flagged", Component, Dependency)


def _with_flags(
    item: _Flagged, carried: Callable[[str, tuple[str, ...]], tuple[str, ...]]
) -> _Flagged:
    """`item` with each kind of flag replaced by carried(kind, its flags)."""
    return dataclasses.replace(
        item,
        cflags=carried("cflags", item.cflags),
        cxxflags=carried("cxxflags", item.cxxflags),
        sharedlinkflags=carried("sharedlinkflags", item.sharedlinkflags),
        exelinkflags=carried("exelinkflags", item.exelinkflags),
    )


def _with_dependencies(comp: Component, deps: list[Dependency]) -> Component:
    """The component giving consumers what the required packages it brings give them too,
    after its own (CMake orders a target's own usage requirements first). Flags are kept as
    given (a pair like `-Xlinker x` must stay whole); a definition is given once."""
    return dataclasses.replace(
        comp,
        defines=tuple(dict.fromkeys([*comp.defines, *(f for d in deps for f in d.defines)])),
        cflags=comp.cflags + tuple(f for d in deps for f in d.cflags),
        cxxflags=comp.cxxflags + tuple(f for d in deps for f in d.cxxflags),
        sharedlinkflags=comp.sharedlinkflags + tuple(f for d in deps for f in d.sharedlinkflags),
        exelinkflags=comp.exelinkflags + tuple(f for d in deps for f in d.exelinkflags),
    )


def _dependency_names(comp: Component, sdk: Sdk) -> dict[str, set[str] | None]:
    """The required packages reaching consumers that this component brings, each with the
    components of it brought (None: the whole package): those it names and, through them,
    what they require in turn. A requirement on `<pkg>::<comp>` brings that component and
    what it requires (in its package and in others), as CMakeDeps and PkgConfigDeps link it;
    `<pkg>::<pkg>` (no component of that name) or a package without components, all of it."""
    by_name = {d.name: d for d in sdk.dependencies}
    pending = list(comp.external_requires)
    brought: dict[str, set[str] | None] = {}
    while pending:
        pkg, _, part = pending.pop(0).partition("::")
        dep = by_name.get(pkg)
        if dep is None:
            continue
        parts = {c.name: c for c in dep.components}
        if part not in parts:  # the whole package
            if pkg in brought and brought[pkg] is None:
                continue
            brought[pkg] = None
            pending.extend(dep.requires)
            continue
        have = brought.setdefault(pkg, set())
        if have is None or part in have:
            continue
        have.add(part)
        pending.extend(r if "::" in r else f"{pkg}::{r}" for r in parts[part].requires)
    return brought


def _linked_of(dep: Dependency, files: DependencyFiles, parts: set[str] | None) -> DependencyFiles:
    """What of `files` consumers link when they require only `parts` of the package (None:
    all of it): the libraries and system libraries of those components."""
    if parts is None:
        return files
    chosen = [c for c in dep.components if c.name in parts]
    names = {n for c in chosen for n in c.libs_names}
    entries = {entry for name, entry in files.by_lib if name in names}
    system_libs = dict.fromkeys(n for c in chosen for n in c.system_libs)
    return dataclasses.replace(
        files,
        archives=tuple(lib for lib in files.archives if lib.file_name in entries),
        shared=tuple(soname for soname in files.shared if soname in entries),
        system_libs=tuple(system_libs) if dep.libs else (),
    )


def wheel_sdk(sdk: Sdk, files: PackageFiles, grafts: Mapping[str, str] | None = None) -> Sdk:
    """The Sdk as the wheel holds it. `grafts` maps an original SONAME to the wheel path of
    the copy auditwheel grafted (None before repair: grafted links are left out)."""
    linkage = dict(files.linkage)
    table = relocation_table(sdk, files)
    dep_files = {d.name: d for d in files.dependencies}
    required = {
        d.name: _relocated_dependency(d, dep_files.get(d.name), sdk) for d in sdk.dependencies
    }
    sonames = dict(files.system_sonames)
    pkg = sdk.import_name
    has_headers = bool(files.include_trees) or any(d.headers for d in files.dependencies)
    comps = []
    for comp in sdk.components:
        kind = linkage.get(comp.name, comp.linkage)
        comp = dataclasses.replace(comp, linkage=kind)
        names = _dependency_names(comp, sdk)
        deps = [
            _linked_of(required[n], dep_files[n], parts)
            for n, parts in names.items()
            if n in dep_files
        ]
        own = _with_dependencies(_relocated_flags(comp, sdk, table), [required[n] for n in names])
        linked: list[str] = []
        system_libs: list[str] = []
        for dep in deps:
            linked += [f"{pkg}/lib/{lib.file_name}" for lib in dep.archives]
            for dep_soname in dep.shared:
                if grafts is not None:
                    linked.append(_grafted(grafts, dep_soname, f"{dep.name}'s library"))
        for lib_name in [*comp.system_libs, *(n for d in deps for n in d.system_libs)]:
            soname = sonames.get(lib_name)
            if grafts is not None and soname is not None and soname in grafts:
                linked.append(grafts[soname])
            else:
                system_libs.append(lib_name)
        comps.append(
            dataclasses.replace(
                own,
                include_dirs=tuple(
                    dict.fromkeys(
                        [include_dir_in_wheel(sdk, d) for d in comp.include_dirs]
                        or (["include"] if deps else [])
                    )
                ),
                lib_dirs=("lib",),
                system_libs=tuple(dict.fromkeys(system_libs)),
                dependency_files=tuple(dict.fromkeys(linked)),
            )
        )
    if not has_headers:
        comps = [dataclasses.replace(c, include_dirs=()) for c in comps]
    carried = [
        _bundled(d, required[d.name], dep_files[d.name], sdk, grafts, sonames)
        for d in sdk.dependencies
        if d.described is not None and not d.system and d.name in dep_files
    ]
    bundled = tuple(b for b in carried if b is not None)
    # Each names the others, so that one requiring another finds it first.
    bundled = tuple(
        dataclasses.replace(b, bundled=tuple(o for o in bundled if o.name != b.name))
        for b in bundled
    )
    return dataclasses.replace(
        sdk,
        bundled=bundled,
        cmake_extra_variables=tuple(
            relocate_variable(v, sdk, table, "the package") for v in sdk.cmake_extra_variables
        ),
        package_folder=Path(pkg),
        components=tuple(comps),
        executables=tuple(e.name for e in files.executables),
        build_modules=tuple(rel for rel, _ in files.build_modules),
        res_dirs=tuple(rel for rel, _ in files.res_trees),
        bin_dirs=("bin",) if files.executables else (),
    )


def _grafted(grafts: Mapping[str, str], soname: str, what: str) -> str:
    if soname not in grafts:
        raise LayoutError(
            f"consumers link {what} {soname}, but no library of the wheel needs it, so "
            "auditwheel grafted no copy to link (build that package static, or make the "
            "SDK's libraries link it)"
        )
    return grafts[soname]


def static_archives(files: PackageFiles) -> Iterable[str]:
    """File names of every archive the wheel ships (the package's and its dependencies')."""
    yield from (lib.file_name for lib in files.libraries if lib.static)
    for dep in files.dependencies:
        yield from (lib.file_name for lib in dep.archives)


def _bundled(
    dep: Dependency,
    relocated: Dependency,
    files: DependencyFiles,
    sdk: Sdk,
    grafts: Mapping[str, str] | None,
    sonames: Mapping[str, str | None],
) -> Sdk | None:
    """A required package the wheel carries, as its own config and .pc files describe it:
    each component an interface target linking the wheel's copies of its libraries (an
    archive in <pkg>/lib, a grafted shared library) with its headers in include/. None when
    the wheel holds none of its components' libraries."""
    assert dep.described is not None
    own = dep.described
    pkg = sdk.import_name
    entries = dict(files.by_lib)
    archives = {lib.file_name for lib in files.archives}
    shipped_headers = bool(files.headers)
    comps = []
    missing: set[str] = set()  # components whose libraries the wheel lacks
    for comp in own.components:
        linked: list[str] = []
        system_libs: list[str] = []
        for lib in comp.libs:
            entry = entries.get(lib)
            if entry in archives:
                linked.append(f"{pkg}/lib/{entry}")
            elif entry is not None and grafts is not None and entry in grafts:
                linked.append(grafts[entry])
            elif grafts is not None and dep.libs:
                missing.add(comp.name)  # its libraries reach consumers, the wheel lacks this one
        for lib_name in comp.system_libs:
            soname = sonames.get(lib_name)
            if grafts is not None and soname is not None and soname in grafts:
                linked.append(grafts[soname])
            else:
                system_libs.append(lib_name)
        flags = relocated if len(own.components) == 1 else None
        comps.append(
            dataclasses.replace(
                comp,
                libs=(),
                linkage="",
                include_dirs=("include",) if shipped_headers and comp.include_dirs else (),
                lib_dirs=("lib",),
                system_libs=tuple(system_libs),
                dependency_files=tuple(dict.fromkeys(linked)),
                registration_only=False,
                # Flags naming its package folder are carried relocated for a package of one
                # component; a component's own flags otherwise only when they name no path.
                cflags=flags.cflags if flags else _pathless(comp.cflags),
                cxxflags=flags.cxxflags if flags else _pathless(comp.cxxflags),
                sharedlinkflags=flags.sharedlinkflags if flags else _pathless(comp.sharedlinkflags),
                exelinkflags=flags.exelinkflags if flags else _pathless(comp.exelinkflags),
                # Its requirements on packages the wheel does not carry stay unnamed.
                external_requires=comp.external_requires,
            )
        )
    # A component is carried only with its libraries (and what it requires): a target or
    # .pc linking nothing would be a lie. Nothing ships it when no library of the wheel
    # needs it (libbase_extra.so when only base::core is required).
    changed = True
    while changed:
        changed = False
        for comp in comps:
            if comp.name not in missing and any(r in missing for r in comp.requires):
                missing.add(comp.name)
                changed = True
    kept = tuple(c for c in comps if c.name not in missing)
    if not kept:
        return None
    table = dependency_relocation_table(dep, files)
    where = f"required package {dep.name}"
    return dataclasses.replace(
        own,
        cmake_extra_variables=tuple(
            relocate_variable(v, sdk, table, where, dep.package_folder)
            if dep.package_folder is not None
            else relocate_variable(v, sdk, [], where)
            for v in own.cmake_extra_variables
        ),
        package_folder=Path(pkg),
        import_name=pkg,
        components=kept,
        python_packages=(),
        python_requires=(),
        forbidden_paths=(),
        build_modules=(),
        bin_dirs=(),
        res_dirs=(),
        executables=(),
        dependencies=(),
        bundled=(),
    )


def _pathless(flags: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f for f in flags if "/" not in f)

"""pkg-config files of a wheel: <pkg>/lib/pkgconfig/<pkg-config name>.pc, one per component,
plus the package's own (PkgConfigDeps' names: the package's pkg_config_name, default its name,
`Requires:` every component's; a component's default is `<package pc name>-<component>`).

Pure. The files are relocatable: prefix is ${pcfiledir}/../.., so they work wherever the wheel
is installed. A library is named by its exact file, not -lX: a wheel holds no symlinks, so the
name cannot resolve through a versioned chain or to a same-named library elsewhere.

- A plain library is `-L${libdir} -l:libX.so`: pkgconf quotes -L paths, Meson turns the pair
  into the file's path.
- A registration-only component's libraries go into one scoped token that names each file by
  path, `-Wl,--push-state,--no-as-needed,${libdir}/libX.so,--pop-state`. The path, not -l:,
  because Meson drops -L (it resolves -L/-l pairs itself) and never looks inside -Wl, so a
  retained `-l:libX.so` is not found. One token per component, never split into
  `-Wl,--no-as-needed -l:... -Wl,...` pieces: pkg-config deduplicates identical fragments
  across modules, which removes a second module's retention. The `.pc` keeps `-L${libdir}`
  in front of it for the reason below.

Paths with spaces (site-packages under "/opt/my env/"): pkgconf 1.8 (Debian 12's pkg-config)
and pkgconf >= 2 (PyPI's) print ${pcfiledir} with each space escaped, inside -Wl tokens too,
so make, shells and Meson keep the path whole. The one trap is in pkgconf 1.x: an untyped
fragment (-Wl,... and the like; -I, -L and -l are typed) that directly follows another
untyped one on the same Libs line is merged into it and printed unescaped. Merging is per
line, so only this file's own order matters: the token always follows -L${libdir}. Paths
holding quotes, parentheses or '&' break pkg-config output in every version (for -I and -L
too); that is not ours to fix.

Languages: Cflags carry the C++ standard (-std=c++N) and cxxflags only for a component
consumed from C++ alone; a C component's carry its cflags; one for both carries its cflags,
and its `cxxflags` / `cxx_std` variables hold what C++ consumers add (clang refuses -std=c++N
for C). Archives: `-l:libX.a` with the link interface (system libraries, the libraries and
archives of required packages) in Libs, not Libs.private: an archive is the only variant the
wheel has, so every link needs it and `pkg-config --libs`, Meson's dependency() and CMake's
pkg_check_modules read Libs only. Libraries of required packages (a grafted
<dist>.libs/libx-1a2b3c4d.so.1, an archive in lib/) are typed `-L<dir> -l:<file>` pairs too.

No runpath: pkg-config cannot carry $ORIGIN (its output goes through make and shells, which
mangle '$') and a -rpath holding the wheel's path is one more untyped fragment. A consumer
adds its own for in-place runs, one per -L dir (`pkg-config --libs-only-L`: lib/, and
<dist>.libs when a grafted library is linked); Meson adds the dir of each resolved library to
the build-tree runpath itself.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from etpkg._internal import naming
from etpkg._internal.errors import LayoutError
from etpkg._internal.model import Component, Sdk
from etpkg._internal.plan.render import render

_UNSAFE = re.compile(r"""([\s"'\\$#])""")
# A file name goes unescaped into -l: and into a comma-separated -Wl token.
_SAFE_FILE = re.compile(r"[A-Za-z0-9._+-]+")
PREFIX = "${prefix}"


def pc_name(sdk: Sdk, comp: Component) -> str:
    """The pkg-config module name of a component (its file is <name>.pc)."""
    return comp.pkg_config_name or f"{sdk.pkg_config_name}-{comp.name}"


def pkg_config_modules(sdk: Sdk) -> list[str]:
    """Every module the wheel ships: each component's, then the package's own if any."""
    names = [pc_name(sdk, c) for c in sdk.components]
    aggregate = sdk.aggregate_pkg_config
    return names + ([aggregate] if aggregate is not None and aggregate not in names else [])


def pc_dir(sdk: Sdk) -> str:
    return f"{sdk.import_name}/lib/pkgconfig"


def _escape(flag: str) -> str:
    if "\n" in flag:
        raise LayoutError(f"cannot write {flag!r} into a pkg-config file")
    return _UNSAFE.sub(r"\\\1", flag)


def _escape_flag(flag: str) -> str:
    """A carried flag: escaped, but the ${prefix} it may hold kept a variable reference."""
    return _escape(flag).replace("\\${prefix}", PREFIX)


def _safe_file(comp: Component, name: str) -> str:
    if not _SAFE_FILE.fullmatch(name):
        raise LayoutError(
            f"component {comp.name}: library file {name!r} cannot be named in a pkg-config "
            "file (allowed: letters, digits and ._+-)"
        )
    return name


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _dependency_libs(comp: Component, pkg: str) -> list[str]:
    """Each library of a required package as a typed -L<dir> -l:<file> pair; the dir is
    given once, in order."""
    out: list[str] = []
    for path in comp.dependency_files:
        rel = PurePosixPath(path)
        own_lib = rel.parent == PurePosixPath(pkg, "lib")
        where = "${libdir}" if own_lib else f"{PREFIX}/../{rel.parent}"
        flag = f"-L{where}"
        if flag not in out:
            out.append(flag)
        out.append("-l:" + _safe_file(comp, rel.name))
    return out


def _cflags(sdk: Sdk, comp: Component) -> tuple[list[str], dict[str, str]]:
    cflags = ["-I${includedir}" + d.removeprefix("include") for d in comp.include_dirs]
    cflags += ["-D" + _escape(d) for d in comp.defines]
    variables: dict[str, str] = {}
    # PkgConfigDeps never writes -std; a component whose languages the recipe declares as
    # C++ alone gets it (etpkg_cxx_standard), any other leaves the standard to the consumer.
    std = [f"-std=c++{sdk.cxx_standard}"] if sdk.cxx_standard and comp.languages_declared else []
    cxx = [_escape_flag(f) for f in comp.cxxflags] + std
    if not comp.languages_declared:  # as PkgConfigDeps: cflags then cxxflags
        cflags += [_escape_flag(f) for f in comp.cflags + comp.cxxflags]
    elif comp.c_only:
        cflags += [_escape_flag(f) for f in comp.cflags]
    elif "C" not in comp.languages:
        cflags += cxx
    else:  # consumed from C and C++: C++ consumers add these variables themselves
        cflags += [_escape_flag(f) for f in comp.cflags]
        if comp.cxxflags:
            variables["cxxflags"] = " ".join(_escape_flag(f) for f in comp.cxxflags)
        if sdk.cxx_standard:
            variables["cxx_std"] = f"-std=c++{sdk.cxx_standard}"
    return cflags, variables


def _libs(sdk: Sdk, comp: Component) -> list[str]:
    if comp.header_only and not comp.dependency_files and not comp.system_libs:
        return [_escape_flag(f) for f in comp.exelinkflags + comp.sharedlinkflags]
    # -L first: the retention token must follow a -L/-l fragment (see the module docstring).
    libs = ["-L${libdir}"]
    files = [_safe_file(comp, f) for f in comp.files]
    if comp.registration_only and files:
        libs.append(naming.retained_flag(["${libdir}/" + f for f in files], static=comp.static))
    else:
        libs += ["-l:" + f for f in files]
    libs += [f for f in _dependency_libs(comp, sdk.import_name) if f != "-L${libdir}"]
    libs += ["-l" + _escape(s) for s in comp.system_libs]
    # PkgConfigDeps writes both kinds; a pkg-config consumer is mostly an executable.
    libs += [_escape_flag(f) for f in comp.sharedlinkflags + comp.exelinkflags]
    return libs


def _variables(sdk: Sdk) -> dict[str, str]:
    out = {"libdir": "${prefix}/lib", "includedir": "${prefix}/include"}
    if sdk.executables:
        out["bindir"] = "${prefix}/bin"
    for i, d in enumerate(sdk.res_dirs):
        out[f"resdir{i or ''}"] = f"${{prefix}}/{d}"
    return out


def render_component(sdk: Sdk, comp: Component) -> str:
    cflags, extra = _cflags(sdk, comp)
    context = {
        "variables": {**_variables(sdk), **extra, **_custom(comp.pkg_config_custom_content)},
        "name": pc_name(sdk, comp),
        "description": f"{_one_line(sdk.description) or sdk.name} (component {comp.name})",
        "version": comp.version or sdk.pc_version,
        "homepage": sdk.homepage,
        "requires": [pc_name(sdk, sdk.component(r)) for r in comp.requires]
        + _external_requires(sdk, comp),
        "cflags": cflags,
        "libs": _libs(sdk, comp),
    }
    return render("component.pc.j2", context)


def _external_requires(sdk: Sdk, comp: Component) -> list[str]:
    """The .pc names of the carried packages (Sdk.bundled) and of the SDK wheels depended on
    (Sdk.wheel_requires) the component requires."""
    bundled = {b.name: b for b in sdk.bundled}
    wheels = {w.name: w for w in sdk.wheel_requires}
    out: list[str] = []
    for req in comp.external_requires:
        pkg, _, part = req.partition("::")
        wheel = wheels.get(pkg)
        if wheel is not None:  # an SDK wheel depended on: its own .pc (PKG_CONFIG_PATH)
            if wheel.pkg_config(part):
                out.append(wheel.pkg_config(part))
            continue
        dep = bundled.get(pkg)
        if dep is None:
            continue
        names = {c.name: c for c in dep.components}
        if part in names:
            out.append(pc_name(dep, names[part]))
        else:
            out.append(dep.aggregate_pkg_config or pc_name(dep, dep.components[0]))
    return list(dict.fromkeys(out))


def _custom(text: str) -> dict[str, str]:
    """pkg_config_custom_content (`key=value` lines): variables that override the wheel's own
    of the same name, as PkgConfigDeps lets them override its."""
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    # prefix stays the wheel's (${pcfiledir}/../..); a recipe's prefix was its package folder.
    return {k.strip(): v.strip() for k, _, v in pairs if k.strip() not in ("", "prefix")}


def render_alias(sdk: Sdk, alias: str, target: str, version: str) -> str:
    """An alias .pc as PkgConfigDeps writes it: the same version, requiring the module."""
    context: dict[str, Any] = {
        "variables": {},
        "name": alias,
        "description": f"Alias {alias} for {target}",
        "version": version,
        "homepage": None,
        "requires": [target],
        "cflags": [],
        "libs": [],
    }
    return render("component.pc.j2", context)


def render_aggregate(sdk: Sdk, name: str) -> str:
    context = {
        "variables": {**_variables(sdk), **_custom(sdk.pkg_config_custom_content)},
        "name": name,
        "description": _one_line(sdk.description) or sdk.name,
        "version": sdk.pc_version,
        "homepage": sdk.homepage,
        "requires": [pc_name(sdk, c) for c in sdk.components],
        "cflags": [],
        "libs": [],
    }
    return render("component.pc.j2", context)


def render_pkg_config(sdk: Sdk) -> dict[str, bytes]:
    """Wheel-relative path -> content of every .pc file."""
    names = {c.name for c in sdk.components}
    files: dict[str, bytes] = {}
    for comp in sdk.components:
        missing = [r for r in comp.requires if r not in names]
        if missing:
            raise LayoutError(f"component {comp.name} requires unknown component(s): {missing}")
        path = f"{pc_dir(sdk)}/{pc_name(sdk, comp)}.pc"
        if path in files:
            raise LayoutError(f"two components share the pkg-config name {pc_name(sdk, comp)}")
        files[path] = render_component(sdk, comp).encode()
    aggregate = sdk.aggregate_pkg_config
    if aggregate is not None and f"{pc_dir(sdk)}/{aggregate}.pc" not in files:
        files[f"{pc_dir(sdk)}/{aggregate}.pc"] = render_aggregate(sdk, aggregate).encode()
    aliases = [
        (a, pc_name(sdk, c), c.version or sdk.pc_version)
        for c in sdk.components
        for a in c.pkg_config_aliases
    ]
    root = aggregate or pc_name(sdk, sdk.components[0])
    aliases += [(a, root, sdk.pc_version) for a in sdk.pkg_config_aliases]
    for alias, target, version in aliases:
        path = f"{pc_dir(sdk)}/{alias}.pc"
        if path in files:
            raise LayoutError(f"pkg-config alias {alias} is also a module's name")
        files[path] = render_alias(sdk, alias, target, version).encode()
    return dict(sorted(files.items()))

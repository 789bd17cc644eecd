"""pkg-config files of a wheel: <pkg>/lib/pkgconfig/<pkg-config name>.pc, one per component.

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

No runpath: pkg-config cannot carry $ORIGIN (its output goes through make and shells, which
mangle '$') and a -rpath holding the wheel's path is one more untyped fragment. A consumer
adds its own, e.g. `-Wl,-rpath,$(pkg-config --variable=libdir <name>)` for in-place runs
(Meson adds the libdir of each resolved library to the build-tree runpath itself).
"""

from __future__ import annotations

import re

from etpkg._internal import naming
from etpkg._internal.errors import LayoutError
from etpkg._internal.model import Component, Sdk
from etpkg._internal.plan.render import render

_UNSAFE = re.compile(r"""([\s"'\\$#])""")
# A file name goes unescaped into -l: and into a comma-separated -Wl token.
_SAFE_FILE = re.compile(r"[A-Za-z0-9._+-]+")


def pc_name(sdk: Sdk, comp: Component) -> str:
    """The pkg-config module name of a component (its file is <name>.pc)."""
    return comp.pkg_config_name or f"{sdk.name}-{comp.name}"


def _escape(flag: str) -> str:
    if "\n" in flag:
        raise LayoutError(f"cannot write {flag!r} into a pkg-config file")
    return _UNSAFE.sub(r"\\\1", flag)


def _library_file(comp: Component, lib: str) -> str:
    name = naming.library_file(lib)
    if not _SAFE_FILE.fullmatch(name):
        raise LayoutError(
            f"component {comp.name}: library file {name!r} cannot be named in a pkg-config "
            "file (allowed: letters, digits and ._+-)"
        )
    return name


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_component(sdk: Sdk, comp: Component) -> str:
    cflags = ["-I${includedir}"] + ["-D" + _escape(d) for d in comp.defines]
    if sdk.cxx_standard:
        cflags.append(f"-std=c++{sdk.cxx_standard}")
    # -L first: the retention token must follow a -L/-l fragment (see the module docstring).
    libs = ["-L${libdir}"]
    files = [_library_file(comp, lib) for lib in comp.libs]
    if comp.registration_only and files:
        libs.append(naming.retained_flag(["${libdir}/" + f for f in files]))
    else:
        libs += ["-l:" + f for f in files]
    libs += ["-l" + _escape(s) for s in comp.system_libs]
    context = {
        "name": pc_name(sdk, comp),
        "summary": _one_line(sdk.description) or sdk.name,
        "component": comp.name,
        "version": sdk.version,
        "homepage": sdk.homepage,
        "requires": [pc_name(sdk, sdk.component(r)) for r in comp.requires],
        "cflags": cflags,
        "libs": libs,
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
        path = f"{sdk.name}/lib/pkgconfig/{pc_name(sdk, comp)}.pc"
        if path in files:
            raise LayoutError(f"two components share the pkg-config name {pc_name(sdk, comp)}")
        files[path] = render_component(sdk, comp).encode()
    return dict(sorted(files.items()))

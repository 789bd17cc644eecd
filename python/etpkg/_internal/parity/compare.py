"""Differences between what a consumer sees from Conan's generators and from the wheel, one
line each (pure)."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from etpkg._internal.parity.observe import CMakeView, PcView, Roots, linked_as, normalise_value

# What CMakeDeps gives a consumer under <prefix>_ (file name's case and upper case); the rest
# of its <name>_* variables are its own plumbing (…_RELEASE, …_DEPS_TARGET, …_MESSAGE_MODE).
PUBLIC_SUFFIXES = (
    "FOUND",
    "VERSION",
    "VERSION_STRING",
    "VERSION_MAJOR",
    "VERSION_MINOR",
    "VERSION_PATCH",
    "VERSION_TWEAK",
    "VERSION_COUNT",
    "INCLUDE_DIRS",
    "INCLUDE_DIR",
    "LIBRARIES",
    "DEFINITIONS",
)
_TARGET_FIELDS = (
    ("links", "libraries"),
    ("link options", "link_options"),
    ("include dirs", "include_dirs"),
    ("definitions", "defines"),
    ("C options", "c_options"),
    ("C++ options", "cxx_options"),
)


def _internal_target(name: str) -> bool:
    return name.startswith("CONAN_LIB::") or name.endswith("_DEPS_TARGET")


def _show(values: object) -> str:
    if isinstance(values, frozenset):
        return "{" + ", ".join(sorted(values)) + "}"
    return repr(values)


def _public(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == f"{p}_{s}" for p in prefixes for s in PUBLIC_SUFFIXES)


def _truthy(value: str) -> bool:
    return value.upper() not in ("", "0", "FALSE", "OFF", "NO", "N", "IGNORE") and not (
        value.upper().endswith("-NOTFOUND")
    )


def _closures(view: CMakeView) -> dict[str, frozenset[str]]:
    return {name: t.libraries for name, t in view.targets.items()}


def compare_cmake(
    label: str,
    conan: CMakeView,
    wheel: CMakeView | None,
    conan_roots: Roots,
    wheel_roots: Roots,
    file_name: str,
    *,
    module: bool = False,
    version: str = "",
    foreign: frozenset[str] = frozenset(),
    extra_variables: tuple[str, ...] = (),
) -> list[str]:
    if wheel is None:
        return [f"{label}: the wheel has no such package"]
    out: list[str] = []
    theirs = {n: t for n, t in conan.targets.items() if not _internal_target(n)}
    for name in sorted(set(theirs) - set(wheel.targets)):
        out.append(f"{label}: target {name} is missing from the wheel")
    for name in sorted(set(wheel.targets) - set(theirs)):
        if wheel.targets[name].type != "EXECUTABLE":
            out.append(f"{label}: target {name} is the wheel's only")
    for name in sorted(set(theirs) & set(wheel.targets)):
        a, b = theirs[name], wheel.targets[name]
        for what, attr in _TARGET_FIELDS:
            va, vb = getattr(a, attr), getattr(b, attr)
            if attr == "libraries" and linked_as(va) == linked_as(vb):
                continue
            if va != vb:
                out.append(
                    f"{label}: target {name}: {what}: CMakeDeps {_show(va)}, wheel {_show(vb)}"
                )
    prefixes = (file_name, file_name.upper())
    ca, cb = _closures(conan), _closures(wheel)
    for var in sorted(v for v in conan.variables if _public(v, prefixes) or v in extra_variables):
        if var not in wheel.variables:
            out.append(f"{label}: variable {var} is not set by the wheel")
            continue
        va, vb = conan.variables[var], wheel.variables[var]
        if var.endswith("_FOUND"):
            same = _truthy(va) == _truthy(vb)
        elif var.endswith("_VERSION"):
            # etpkg's policy: CMake gets the numeric release of the version (1.2.3-rc1 ->
            # 1.2.3, 2024.05.1 -> 2024.5.1), what CMake compares.
            same = _release(va) == _release(vb)
        else:
            libraries = var.endswith("_LIBRARIES")
            va = _without(normalise_value(va, conan_roots, ca, libraries=libraries), foreign)
            vb = _without(normalise_value(vb, wheel_roots, cb, libraries=libraries), foreign)
            same = va == vb or (
                libraries
                and linked_as(frozenset(va.split(";"))) == linked_as(frozenset(vb.split(";")))
            )
        if not same:
            out.append(f"{label}: variable {var}: CMakeDeps {va!r}, wheel {vb!r}")
    for request, accepted in sorted(conan.versions.items()):
        theirs_ok = wheel.versions.get(request)
        if module and accepted and not theirs_ok and _newer(request, version):
            # CMakeDeps' Find module sets <Name>_FOUND again after find_package_handle_
            # standard_args, so it "accepts" any newer request; the wheel's refuses it.
            continue
        if theirs_ok != accepted:
            verdict = "accepts" if accepted else "refuses"
            out.append(f"{label}: version {request}: CMakeDeps {verdict} it, the wheel does not")
    return out


def compare_pc(name: str, conan: PcView, wheel: PcView) -> list[str]:
    out = []
    for what in ("cflags", "libs", "requires", "version"):
        va, vb = getattr(conan, what), getattr(wheel, what)
        if what == "version" and _pep440(va) == _pep440(vb):
            continue  # etpkg's policy: the PEP 440 normal form (1.2.3-rc1 -> 1.2.3rc1)
        if va != vb:
            out.append(f"pkg-config {name}: {what}: PkgConfigDeps {_show(va)}, wheel {_show(vb)}")
    ours = dict(wheel.variables)
    for var, value in sorted(conan.variables):  # the wheel may define more (etpkg's own)
        if ours.get(var) != value:
            out.append(
                f"pkg-config {name}: variable {var}: PkgConfigDeps {value!r}, "
                f"wheel {ours.get(var)!r}"
            )
    return out


def _newer(request: str, version: str) -> bool:
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"[0-9]+", v)[:4])

    return key(request) > key(version)


def _release(version: str) -> tuple[int, ...]:
    nums = [int(p) for p in re.findall(r"[0-9]+", version.split("-")[0])]
    while len(nums) > 1 and nums[-1] == 0:
        nums.pop()
    return tuple(nums)


def _pep440(version: str) -> str:
    try:
        return str(Version(version))
    except InvalidVersion:
        return version


def _without(value: str, foreign: frozenset[str]) -> str:
    return ";".join(item for item in value.split(";") if item not in foreign)

"""Depend instead of graft: required packages the wheel reaches as SDK wheels of their own.

Pure. plan_depends() takes the packages chosen (the recipe's etpkg_depend plus wheelify
--depend) out of what the wheel ships (their headers, libraries, licences and carried
configs) and describes each as a model.WheelRequirement, from the required package's own
cpp_info: the wheel etpkg makes of it has exactly these names (distribution, import name,
CMake file and targets, .pc names, SONAMEs), so no wheel file is needed to depend on it.

Versions: pep440_specifier() maps the Conan requirement to PEP 440 (docs/DEPENDENCIES.md
has the table). An exact reference means what Conan's default package_id mode for a library
linking a shared library (core.package_id:default_non_embed_mode = minor_mode) accepts: the
same major.minor, not older than the version built against. A range maps condition by
condition through Conan's own parser; alternatives (`||`) have no PEP 440 spelling and are
refused.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from etpkg._internal.errors import LayoutError
from etpkg._internal.facts import PackageFiles
from etpkg._internal.model import Dependency, Sdk, WheelRequirement

# PEP 508's project name.
_PROJECT_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)
_OPERATORS = {">=": ">=", ">": ">", "<": "<", "<=": "<=", "=": "=="}


def parse_choice(text: str) -> tuple[str, str | None]:
    """ "fmt" -> ("fmt", None); "fmt=fmt-sdk" -> ("fmt", "fmt-sdk")."""
    name, sep, dist = (part.strip() for part in text.partition("="))
    if not name or (sep and not dist):
        raise LayoutError(
            f"depend {text!r}: give a required package's Conan name, optionally "
            "=<distribution name of its wheel> (e.g. fmt or fmt=fmt-sdk)"
        )
    if sep and not _PROJECT_NAME.fullmatch(dist):
        raise LayoutError(f"depend {text!r}: {dist!r} is not a distribution name")
    return name, (dist if sep else None)


def pep440_specifier(required: str, built: str) -> str:
    """The PEP 440 specifier of a Conan requirement on a package built at version `built`:
    "9.1.0" -> ">=9.1.0,<9.2"; "[>=1.0 <2]" -> ">=1.0,<2"; "[~1.2]" -> ">=1.2,<1.3";
    "[^1.2]" -> ">=1.2,<2"; "[^0.1]" -> ">=0.1,<0.2"; "[*]" -> "" (any)."""
    text = required.strip()
    if not (text.startswith("[") and text.endswith("]")):
        release = _version(text or built, required).release
        upper = (release[0], release[1] + 1) if len(release) > 1 else (release[0] + 1,)
        return f">={_plain(text or built)},<{'.'.join(str(n) for n in upper)}"
    from conan.internal.model.version_range import VersionRange

    try:
        parsed = VersionRange(text[1:-1])
    except Exception as exc:  # ConanException: the recipe's range as Conan refuses it
        raise LayoutError(f"version range {required!r}: {exc}") from exc
    if len(parsed.condition_sets) != 1:
        raise LayoutError(
            f"version range {required!r} has alternatives ('||'), which PEP 440 cannot say; "
            "graft the package instead, or require one range"
        )
    clauses: list[str] = []
    for cond in parsed.condition_sets[0].conditions:
        version = _plain(str(cond.display_version))
        if cond.operator == "*":
            clauses.append(f"=={version.rstrip('.')}.*")
        elif cond.operator == ">=" and Version(version) == Version("0"):
            continue  # "*" or "": any version
        elif cond.operator in _OPERATORS:
            clauses.append(f"{_OPERATORS[cond.operator]}{version}")
        else:
            raise LayoutError(f"version range {required!r}: operator {cond.operator!r}")
    spec = ",".join(dict.fromkeys(clauses))
    try:
        SpecifierSet(spec)
    except InvalidSpecifier as exc:
        raise LayoutError(f"version range {required!r} maps to {spec!r}: {exc}") from exc
    return spec


def lowest_version(specifier: str) -> str:
    """The lowest version a specifier admits, for find_package(<dep> <version>): "" when it
    has no lower bound."""
    lows = [s.version for s in SpecifierSet(specifier) if s.operator in (">=", "==")]
    lows = [v.removesuffix(".*") for v in lows]
    if not lows:
        return ""
    return ".".join(str(n) for n in max(Version(v) for v in lows).release)


def _plain(text: str) -> str:
    """Conan writes a lower bound's "include pre-releases" as a trailing '-'."""
    return text.rstrip("-")


def _version(text: str, required: str) -> Version:
    try:
        return Version(_plain(text))
    except InvalidVersion as exc:
        raise LayoutError(f"required version {required!r} is not a PEP 440 version") from exc


def plan_depends(
    sdk: Sdk,
    files: PackageFiles,
    extra: Sequence[str] = (),
    sonames: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> tuple[Sdk, PackageFiles]:
    """sdk and files with each chosen package (and what only it brings) taken out of what
    the wheel ships and named in sdk.wheel_requires instead. `sonames`: each required
    package's shared libraries (build/probe.py dependency_sonames), never to be grafted."""
    chosen: dict[str, str | None] = {}
    for text in (*sdk.depend, *extra):
        name, dist = parse_choice(text)
        if chosen.get(name) is not None and dist is not None and chosen[name] != dist:
            raise LayoutError(f"depend: {name} given as {chosen[name]} and as {dist}")
        chosen[name] = dist if dist is not None else chosen.get(name)
    if not chosen:
        return sdk, files
    by_name = {d.name: d for d in sdk.dependencies}
    requirements: list[WheelRequirement] = []
    for name, dist in chosen.items():
        dep = by_name.get(name)
        if dep is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise LayoutError(
                f"depend {name}: {sdk.name} does not require {name} (packages reaching its "
                f"consumers: {known})"
            )
        requirements.append(_requirement(dep, dist, (sonames or {}).get(name, ())))
    gone = _brought_only_by(sdk, set(chosen))
    kept_files = dataclasses.replace(
        files, dependencies=tuple(f for f in files.dependencies if f.name not in gone)
    )
    kept = dataclasses.replace(
        sdk,
        dependencies=tuple(d for d in sdk.dependencies if d.name not in gone),
        wheel_requires=tuple(requirements),
    )
    return kept, kept_files


def _requirement(
    dep: Dependency, dist: str | None, sonames: tuple[tuple[str, str], ...]
) -> WheelRequirement:
    own = dep.described
    if own is None or dep.system:
        raise LayoutError(
            f"depend {dep.name}: etpkg cannot make a wheel of {dep.name} (a system package "
            "wrapper, or its cpp_info holds what a wheel cannot carry), so nothing to depend on"
        )
    specifier = pep440_specifier(dep.required_version, dep.version)
    return WheelRequirement(
        name=dep.name,
        distribution=canonicalize_name(dist or own.name),
        specifier=specifier,
        import_name=own.import_name,
        cmake_file_name=own.cmake_file_name,
        cmake_version=lowest_version(specifier),
        package_target=own.cmake_target,
        targets=tuple((c.name, c.target) for c in own.components),
        pkg_config_name="" if own.pkg_config_name == "none" else own.pkg_config_name,
        pkg_config_names=tuple((c.name, c.pkg_config_name or "") for c in own.components),
        sonames=sonames,
    )


def _brought_only_by(sdk: Sdk, chosen: set[str]) -> set[str]:
    """The chosen packages and the required packages reaching consumers only through them
    (their own requirements: the other wheel brings those)."""
    by_name = {d.name: d for d in sdk.dependencies}
    direct = {r.partition("::")[0] for c in sdk.components for r in c.external_requires}
    gone = set(chosen)
    pending: list[str] = [r for n in chosen for r in by_name[n].requires]
    while pending:
        name = pending.pop()
        if name in gone or name in direct or name not in by_name:
            continue
        gone.add(name)
        pending.extend(by_name[name].requires)
    return gone

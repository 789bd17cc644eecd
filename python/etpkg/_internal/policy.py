"""The manylinux policy: which symbol versions of which libraries set a wheel's platform tag, and
the target the maintainer chose (`--manylinux 2_28`, the `etpkg_manylinux` property).

auditwheel tags a wheel with the oldest manylinux policy whose table allows every symbol version
its ELF files (grafted libraries included) need of the system's libraries (GLIBC_*, GLIBCXX_*,
CXXABI_*, GCC_*, ...); it does not say which symbol raised it. This module reads the same table
(auditwheel's manylinux-policy.json) and each file's version needs (build.elf), and keeps, for
each (file, version), the oldest policy that allows it: the floor is the newest of those, and the
needs at the floor are what set it. Pure, apart from reading auditwheel's table.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

from etpkg._internal.build.elf import VersionedImport
from etpkg._internal.errors import PolicyError
from etpkg._internal.tags import Arch, strictest

_GLIBC = re.compile(r"manylinux_(\d+)_(\d+)")
_TARGET = re.compile(r"(?:manylinux_?)?(\d+)[._](\d+)(?:_\w+)?")
SHOWN_SYMBOLS = 3  # per report line; the rest are counted


@dataclass(frozen=True)
class Policy:
    """One manylinux policy of auditwheel's table, for one architecture."""

    name: str  # e.g. "manylinux_2_28"
    glibc: tuple[int, int]
    allowed: Mapping[str, frozenset[str]]  # prefix -> versions it allows: GLIBCXX -> 3.4.30

    def allows(self, version: str) -> bool:
        prefix, _, number = version.partition("_")
        return number in self.allowed.get(prefix, frozenset())

    def tag(self, arch: Arch) -> str:
        return f"{self.name}_{arch.wheel}"


@functools.cache
def policies(arch: Arch) -> tuple[Policy, ...]:
    """auditwheel's manylinux policies for `arch`, oldest glibc first."""
    table = json.loads(
        resources.files("auditwheel.policy").joinpath("manylinux-policy.json").read_text()
    )
    found: list[Policy] = []
    for entry in table:
        match = _GLIBC.fullmatch(str(entry["name"]))
        versions = entry.get("symbol_versions", {}).get(arch.wheel)
        if match is None or versions is None:
            continue
        allowed = {prefix: frozenset(vs) for prefix, vs in versions.items()}
        found.append(Policy(entry["name"], (int(match[1]), int(match[2])), allowed))
    return tuple(sorted(found, key=lambda p: p.glibc))


def policy_named(value: str, arch: Arch) -> Policy:
    """The policy a target names: "2_28", "2.28", "manylinux_2_28" or "manylinux_2_28_x86_64"."""
    match = _TARGET.fullmatch(value.strip())
    known = policies(arch)
    if match is not None:
        glibc = (int(match[1]), int(match[2]))
        for policy in known:
            if policy.glibc == glibc:
                return policy
    names = ", ".join(f"{p.glibc[0]}_{p.glibc[1]}" for p in known)
    raise PolicyError(f"unknown manylinux target {value!r} for {arch.wheel} (known: {names})")


@dataclass(frozen=True)
class Need:
    """A symbol version one file of the wheel needs, and the oldest policy that allows it."""

    file: str  # wheel path of the file, or the SONAME of a library auditwheel grafts
    library: str  # the library providing the version, e.g. "libstdc++.so.6"
    version: str  # e.g. "GLIBCXX_3.4.30"
    symbols: tuple[str, ...]  # mangled
    policy: Policy


@dataclass(frozen=True)
class Floor:
    arch: Arch
    policy: Policy  # the oldest policy every need allows
    needs: tuple[Need, ...]

    @property
    def tag(self) -> str:
        return self.policy.tag(self.arch)

    def deciding(self) -> tuple[Need, ...]:
        """The needs that hold the floor where it is (none when it is the oldest policy)."""
        oldest = policies(self.arch)[0]
        if self.policy == oldest:
            return ()
        return tuple(n for n in self.needs if n.policy == self.policy)

    def above(self, target: Policy) -> tuple[Need, ...]:
        """The needs `target` does not allow, newest first."""
        over = [n for n in self.needs if n.policy.glibc > target.glibc]
        return tuple(sorted(over, key=lambda n: (-n.policy.glibc[0], -n.policy.glibc[1])))


def floor_of(imports: Mapping[str, Iterable[VersionedImport]], arch: Arch) -> Floor:
    """The floor of files (wheel path or grafted SONAME -> what it imports). A version whose
    prefix auditwheel's table does not know (a library's own, e.g. XNNPACK's) sets nothing."""
    known = policies(arch)
    prefixes = {prefix for policy in known for prefix in policy.allowed}
    needs: list[Need] = []
    for file in sorted(imports):
        for item in imports[file]:
            if item.version.partition("_")[0] not in prefixes:
                continue
            allowing = next((p for p in known if p.allows(item.version)), None)
            if allowing is None:
                raise PolicyError(
                    f"{file} needs {item.version} of {item.library}"
                    f"{_symbols_note(item.symbols, lambda s: s)}, which no manylinux policy "
                    "allows: build it with an older toolchain"
                )
            needs.append(Need(file, item.library, item.version, item.symbols, allowing))
    floor = max((n.policy for n in needs), key=lambda p: p.glibc, default=known[0])
    return Floor(arch, floor, tuple(needs))


def describe(need: Need, arch: Arch, demangle: Callable[[str], str]) -> str:
    """`etrt/lib/libetrt.so needs GLIBCXX_3.4.30 (std::condition_variable::wait(...)) ->
    manylinux_2_35_x86_64`."""
    note = _symbols_note(need.symbols, demangle)
    return f"{need.file} needs {need.version}{note} -> {need.policy.tag(arch)}"


def _symbols_note(symbols: tuple[str, ...], demangle: Callable[[str], str]) -> str:
    if not symbols:
        return ""
    shown = ", ".join(demangle(s) for s in symbols[:SHOWN_SYMBOLS])
    more = len(symbols) - SHOWN_SYMBOLS
    return f" ({shown}{f', +{more} more' if more > 0 else ''})"


def refusal(floor: Floor, target: Policy, demangle: Callable[[str], str]) -> str:
    """Why a wheel cannot be tagged `target`: each need above it, one per line."""
    lines = [describe(n, floor.arch, demangle) for n in floor.above(target)]
    return (
        f"the wheel needs {floor.tag}, newer than the target {target.tag(floor.arch)}: "
        + "; ".join(lines)
        + " (build these with a toolchain whose libraries are no newer than the target's, "
        "or raise the target)"
    )


@dataclass(frozen=True)
class Choice:
    """The platform tag a wheel gets, and why."""

    platform: str  # e.g. "manylinux_2_28_x86_64"
    floor: Floor
    target: Policy | None


def choose(
    floor: Floor,
    audited: str,
    target: Policy | None,
    demangle: Callable[[str], str],
    archives: str | None = None,
) -> Choice:
    """The tag: the target when the wheel meets it (else a PolicyError naming what needs more),
    without one the strictest of the floor, auditwheel's own finding (`audited`) and, for a
    wheel holding static archives, the build machine's glibc (`archives`, see tags.py)."""
    required = strictest(floor.tag, audited, *([archives] if archives else []))
    if target is None:
        return Choice(required, floor, None)
    wanted = target.tag(floor.arch)
    if floor.above(target):
        raise PolicyError(refusal(floor, target, demangle))
    if archives is not None and strictest(archives, wanted) != wanted:
        raise PolicyError(
            f"the wheel holds static archives, compiled against this machine's glibc headers "
            f"({archives}): they cannot be tagged {wanted}; build them on (or with a sysroot "
            "of) the target's glibc, or raise the target"
        )
    if strictest(audited, wanted) != wanted:
        raise PolicyError(
            f"auditwheel finds the wheel meets {audited} at best, newer than the target "
            f"{wanted} (auditwheel show says why)"
        )
    return Choice(wanted, floor, target)

"""The wheel tag policy, in one place: `py3-none-<platform>`.

The wheels etpkg writes hold native libraries and pure-Python code that works on any Python 3
(no extension module built against one CPython ABI): python tag py3, ABI tag none. The platform
is first `linux_<arch>` (from the Conan arch), then the lowest manylinux policy auditwheel's
own analysis finds the wheel (external libraries included) meets; auditwheel repair writes it.

- A header-only package (no settings, no binaries) gives `py3-none-any`.
- Static archives bind their glibc symbols when the consumer links, against the headers they
  were compiled with (which may redirect to newer symbols): auditwheel cannot analyze them,
  so a wheel holding archives needs at least the build machine's glibc,
  `manylinux_<glibc>_<arch>` (or what auditwheel finds for its ELF files, if stricter).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from packaging.utils import canonicalize_name, canonicalize_version
from packaging.version import InvalidVersion, Version

from etpkg._internal.errors import LayoutError, PackageError, ToolError

PYTHON_TAG = "py3"
ABI_TAG = "none"


@dataclass(frozen=True)
class Arch:
    """What a Conan `arch` setting means for ELF files and wheel tags."""

    conan: str
    machine: str  # pyelftools e_machine name
    elfclass: int
    wheel: str  # platform tag suffix, e.g. "x86_64"


_ARCHES = (
    Arch("x86_64", "EM_X86_64", 64, "x86_64"),
    Arch("x86", "EM_386", 32, "i686"),
    Arch("armv8", "EM_AARCH64", 64, "aarch64"),
    Arch("ppc64le", "EM_PPC64", 64, "ppc64le"),
    Arch("s390x", "EM_S390", 64, "s390x"),
    Arch("riscv64", "EM_RISCV", 64, "riscv64"),
)


def arch_for_conan(conan_arch: str | None) -> Arch:
    for arch in _ARCHES:
        if arch.conan == conan_arch:
            return arch
    known = ", ".join(a.conan for a in _ARCHES)
    raise PackageError(f"unsupported Conan arch {conan_arch!r} (supported: {known})")


ANY = "any"


def unrepaired_platform(arch: Arch | None) -> str:
    """The platform tag of the wheel before auditwheel repair ("any": no arch at all)."""
    return ANY if arch is None else f"linux_{arch.wheel}"


_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(\w+)")


def glibc_platform(arch: Arch, glibc: str | None = None) -> str:
    """manylinux_<X>_<Y>_<arch> for this machine's glibc (or `glibc`, e.g. "2.36")."""
    version = glibc or (os.confstr("CS_GNU_LIBC_VERSION") or "glibc 2.17").split()[-1]
    major, minor = version.split(".")[:2]
    return f"manylinux_{int(major)}_{int(minor)}_{arch.wheel}"


def strictest(*platforms: str) -> str:
    """The manylinux platform with the newest glibc among these."""

    def key(tag: str) -> tuple[int, int]:
        match = _MANYLINUX.fullmatch(tag)
        if match is None:
            raise ToolError(f"not a manylinux platform tag: {tag}")
        return int(match.group(1)), int(match.group(2))

    return max(platforms, key=key)


def manylinux_platform(show_json: str, wheel_file: str) -> str:
    """The platform auditwheel `show --json` reports the wheel meets; only manylinux_* will do."""
    try:
        report = json.loads(show_json)
        tag = str(report["sym_tag"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ToolError(f"auditwheel show --json: unexpected output ({exc})") from exc
    if not tag.startswith("manylinux_"):
        raise ToolError(
            f"{wheel_file}: auditwheel finds no manylinux policy it satisfies "
            f"(best: {tag}); the libraries use too-recent symbol versions"
        )
    return tag


@dataclass(frozen=True)
class WheelName:
    distribution: str  # escaped for file names, e.g. "my_sdk"
    version: str  # normalized, e.g. "0.1.0"
    tag: str  # e.g. "py3-none-linux_x86_64"

    @property
    def dist_info(self) -> str:
        return f"{self.distribution}-{self.version}.dist-info"

    @property
    def filename(self) -> str:
        return f"{self.distribution}-{self.version}-{self.tag}.whl"


def wheel_name(name: str, version: str, platform: str) -> WheelName:
    try:
        normalized = str(Version(version))
    except InvalidVersion as exc:
        raise LayoutError(f"version {version!r} of {name} is not a valid Python version") from exc
    return WheelName(
        canonicalize_name(name).replace("-", "_"),
        canonicalize_version(normalized, strip_trailing_zero=False),
        f"{PYTHON_TAG}-{ABI_TAG}-{platform}",
    )

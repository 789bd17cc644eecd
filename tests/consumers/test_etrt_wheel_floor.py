"""The etrt wheel's manylinux floor holds (issue 25): manylinux_2_34 on x86_64, set by Debian
12's glibc and GCC 11+ headers (docs/PLATFORMS.md), not by a GCC 12-only libstdc++ symbol.

When a change raises it (std::condition_variable::wait binds GLIBCXX_3.4.30, a newer libm
function a newer GLIBC_2.3x), wheelify already refuses the build (etrt's etpkg_manylinux); this
test says so for a wheel built by other means, naming each file and symbol version above it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from etpkg._internal import policy
from etpkg._internal.build.floor import demangler_for, measure
from etpkg._internal.tags import arch_for_conan

FLOOR = "2_34"
X86_64 = arch_for_conan("x86_64")


def test_the_etrt_wheel_needs_no_newer_manylinux_than_2_34(
    etrt_wheel: Path, tmp_path: Path
) -> None:
    target = policy.policy_named(FLOOR, X86_64)
    assert etrt_wheel.name.endswith(f"-{target.tag(X86_64)}.whl"), etrt_wheel.name
    with zipfile.ZipFile(etrt_wheel) as zf:
        zf.extractall(tmp_path)
    floor = measure(tmp_path, {}, X86_64)
    above = floor.above(target)
    demangle = demangler_for(above)
    assert not above, "\n".join(policy.describe(n, X86_64, demangle) for n in above)
    # All five libraries and the three grafted ones were read, so the floor is theirs.
    files = {n.file for n in floor.needs}
    assert {f"etrt/lib/libetrt{s}.so" for s in ("", "_kernels_optimized", "_etdump")} <= files
    assert sum(f.startswith("etrt.libs/libcpuinfo") for f in files) == 1, files


def test_etrts_own_libraries_need_no_libstdcxx_newer_than_manylinux_2_28(
    etrt_wheel: Path, tmp_path: Path
) -> None:
    """What keeps the glibc 2.28 build possible (ci/build-manylinux_2_28.sh): GCC 12's headers
    reach GLIBCXX_3.4.29/3.4.30 symbols (std::__throw_bad_array_new_length,
    std::condition_variable::wait) that only manylinux_2_34+ libstdc++ has."""
    with zipfile.ZipFile(etrt_wheel) as zf:
        zf.extractall(tmp_path)
    floor = measure(tmp_path / "etrt" / "lib", {}, X86_64)
    cxx = [n for n in floor.needs if n.version.startswith(("GLIBCXX_", "CXXABI_", "GCC_"))]
    above = [n for n in cxx if n.policy.glibc > (2, 28)]
    demangle = demangler_for(tuple(above))
    assert not above, "\n".join(policy.describe(n, X86_64, demangle) for n in above)
    assert len({n.file for n in cxx}) == 5, sorted({n.file for n in cxx})

"""Versions: the package's policy (cmake_config_version_compat, SameMajorVersion by default),
ranges, newer and excluding requests rejected, build version."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etpkg._internal.verify.contracts.citizen import build_module_names
from etpkg._internal.verify.runner import CheckFailed

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite


def check(suite: Suite) -> str:
    m = suite.sdk
    parts = [int(p) for p in m.cmake_version.split(".")] + [0, 0]
    major, minor, patch = parts[:3]
    older = f"{major}.{minor - 1}" if minor else (f"{major}.{minor}.{patch - 1}" if patch else None)
    accept = [
        m.cmake_version,
        f"{major}.{minor}",
        f"{major}.{minor}...<{major}.{minor + 1}",
        f"{major}...<{major + 1}",
    ] + ([older] if older else [])
    reject = [
        f"{major}.{minor + 1}",
        f"{major + 1}.0",
        f"{major}.{minor}.{patch + 1}",
        f"{major}.{minor + 1}...<{major}.{minor + 2}",
        f"{major + 1}.0...<{major + 2}.0",
    ]
    if older:
        reject.append(f"{older}...<{m.cmake_version}")  # excludes the installed version
    lines = []
    version = (major, minor, patch)
    # <VAR>_BUILD_VERSION is the wheel's version unless the package's own build module sets
    # that name (OpenJPEG's sets OPENJPEG_BUILD_VERSION to the patch number): included after
    # the config, as CMakeDeps includes it, the module's value is the one a consumer sees.
    build_var = f"{m.variable_prefix}_BUILD_VERSION"
    theirs = build_var in build_module_names(
        suite, "version-traced", "version_request.cmake.j2", request=m.cmake_version
    )
    for i, request in enumerate(accept + reject):
        want = compatible(m.cmake_config_version_compat, version, request)
        proc = suite.configure_only(f"version{i}", "version_request.cmake.j2", request=request)
        got = re.search(r"etpkg: found=(\S*) version=(\S*) build=(\S*)", proc.stdout)
        if got is None:
            raise CheckFailed(f"request {request}: the probe printed nothing:\n{proc.stdout}")
        found = got.group(1) in ("1", "TRUE", "ON")
        if found != want:
            raise CheckFailed(
                f"find_package({m.cmake_file_name} {request}) found={found}, expected {want}"
            )
        build_ok = got.group(3) == m.wheel_version or theirs
        if want and (got.group(2) != m.cmake_version or not build_ok):
            raise CheckFailed(
                f"request {request}: version={got.group(2)} build={got.group(3)}, "
                f"expected {m.cmake_version} / {m.wheel_version}"
            )
        lines.append(f"{request}: {'accepted' if found else 'rejected'}")
    proc = suite.configure_only(
        "version-required", "version_required.cmake.j2", request=f"{major + 1}.0", check=False
    )
    if proc.returncode == 0 or m.cmake_version not in proc.stderr:
        raise CheckFailed(
            f"REQUIRED {major + 1}.0 should fail naming the installed version:\n"
            f"{proc.stderr[-1500:]}"
        )
    if theirs:
        lines.append(f"{build_var} is the package's build module's")
    return "; ".join(lines)


def _parts(text: str) -> tuple[int, int, int]:
    nums = [int(p) for p in text.split(".")] + [0, 0, 0]
    return nums[0], nums[1], nums[2]


def compatible(policy: str, version: tuple[int, int, int], request: str) -> bool:
    """What the generated version file answers (plan/templates/config-version.cmake.j2)."""
    major = version[0]
    if "..." in request:
        low_text, high_text = request.split("...")
        exclude = high_text.startswith("<")
        low, high = _parts(low_text), _parts(high_text.lstrip("<"))
        inside = low <= version and (version < high if exclude else version <= high)
        if policy == "SameMajorVersion":
            inside = inside and (high <= (major + 1, 0, 0) if exclude else high[0] == major)
        want = low
    else:
        want = _parts(request)
        inside = want <= version
    if not inside:
        return False
    if policy == "AnyNewerVersion":
        return True
    if policy == "SameMinorVersion":
        return want[:2] == version[:2]
    if policy == "ExactVersion":
        return want == version
    return want[0] == major

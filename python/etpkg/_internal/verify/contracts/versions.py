"""Versions: SameMajorVersion, ranges, newer and excluding requests rejected, build version."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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
    for i, request in enumerate(accept + reject):
        want = request in accept
        proc = suite.configure_only(f"version{i}", "version_request.cmake.j2", request=request)
        got = re.search(r"etpkg: found=(\S*) version=(\S*) build=(\S*)", proc.stdout)
        if got is None:
            raise CheckFailed(f"request {request}: the probe printed nothing:\n{proc.stdout}")
        found = got.group(1) in ("1", "TRUE", "ON")
        if found != want:
            raise CheckFailed(
                f"find_package({m.cmake_file_name} {request}) found={found}, expected {want}"
            )
        if want and (got.group(2) != m.cmake_version or got.group(3) != m.wheel_version):
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
    return "; ".join(lines)

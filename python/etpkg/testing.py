"""Support for an SDK's own consumer tests (public): install a wheel made by etpkg into a fresh
venv, build consumer projects against it with a pinned CMake, and inspect the apps.

    ws = prepare(wheel, work_dir, cmake_cache)      # reads the wheel's Sdk, installs it
    tool = ws.tool("3.31.10")                       # CMake + Ninja from PyPI, cached
    ws.configure(tool, "Ninja", src, build); ws.build(tool, build)
    suite = Suite(ws); suite.check_targets("3.31.10", "Ninja")   # one contract of verify

`run` raises CheckFailed (an AssertionError) with the command's output when it fails.
"""

from __future__ import annotations

from etpkg._internal.build.elf import ElfInfo, is_elf, read_elf
from etpkg._internal.verify.consumers import (
    entry_source,
    expect_loaded,
    loaded_libraries,
    meson_link_args,
    targets_project,
    wheel_needed,
)
from etpkg._internal.verify.contracts.entry_points import (
    ENTRY_POINT_GROUPS,
)
from etpkg._internal.verify.contracts.entry_points import (
    check as check_entry_points,
)
from etpkg._internal.verify.report import CheckResult, Report
from etpkg._internal.verify.runner import CheckFailed, run
from etpkg._internal.verify.suite import Suite, read_exempt
from etpkg._internal.verify.tools import (
    CMAKE_VERSIONS,
    GENERATORS,
    MODERN,
    OLD_CMAKE_VERSIONS,
    Cmake,
)
from etpkg._internal.verify.wheel import read_sdk
from etpkg._internal.verify.workspace import Workspace, prepare

__all__ = [
    "CMAKE_VERSIONS",
    "ENTRY_POINT_GROUPS",
    "GENERATORS",
    "MODERN",
    "OLD_CMAKE_VERSIONS",
    "CheckFailed",
    "CheckResult",
    "Cmake",
    "ElfInfo",
    "Report",
    "Suite",
    "Workspace",
    "check_entry_points",
    "entry_source",
    "expect_loaded",
    "is_elf",
    "loaded_libraries",
    "meson_link_args",
    "prepare",
    "read_elf",
    "read_exempt",
    "read_sdk",
    "run",
    "targets_project",
    "wheel_needed",
]

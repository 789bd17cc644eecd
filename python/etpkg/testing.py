"""Support for an SDK's own consumer tests (public, typed): install a wheel made by etpkg into a
fresh venv, run etpkg's consumer suite on it, build the SDK's own consumer projects against it
with a pinned CMake, and inspect the apps they make.

    ws = prepare(wheel, work_dir, cmake_cache)       # reads the wheel's Sdk, installs it
    report = verify_installed(ws, quick=True)         # etpkg verify's checks on that install
    tool = ws.tool("3.31.10")                         # CMake + Ninja from PyPI, cached
    ws.configure(tool, "Ninja", src, build); ws.build(tool, build)
    run([build / "app"], env=ws.env(tool))            # CheckFailed (an AssertionError) if it fails

The contract (kept across etpkg releases; everything else in etpkg._internal may change):

- `prepare(wheel, work_dir, cmake_cache) -> Workspace`: checks the wheel (WheelError when it is
  corrupt), installs it with `pip install --no-deps` into `<work_dir>/etpkg verify/consumer
  venv` (a path with a space) and makes a python3 that fails first on the PATH of `env()`.
- `Workspace`: `wheel`, `root` (the work dir), `sdk` (etpkg.Sdk read from the wheel), `venv`,
  `site` (its site-packages), `pkg_root` (`<site>/<import name>`), `lib_dir`, `include_dir`,
  `grafted_dir` (`<site>/<dist>.libs`, where auditwheel grafted external libraries),
  `wheel_lib_dirs` (both), `tool(version) -> Cmake`, `env(tool) -> dict` (a consumer's
  environment: no CMAKE_*/PYTHON*/LD_LIBRARY_PATH), `configure(tool, generator, src, build,
  *args, check=True)`, `build(tool, build, *args, check=True)`, `reinstall()`.
- `verify_installed(ws, *, quick, cmake_versions, exempt_headers) -> Report`: the checks of
  `etpkg verify` (etpkg.verify does prepare + this).
- `run(argv, *, cwd, env, check, timeout)`, `CheckFailed`; `read_elf(path) -> ElfInfo`,
  `is_elf(path)`; `wheel_needed(app, sdk)`: the wheel's shared libraries an app needs;
  `check_entry_points(ws)`: the discovery entry points' check alone; `read_exempt(path)`.
- `Cmake` (`version`, `venv`, `cmake`, `ninja`); `CMAKE_VERSIONS`, `OLD_CMAKE_VERSIONS`
  (before CMake fixed $ORIGIN in link options), `MODERN` (version, generator), `GENERATORS`,
  `ENTRY_POINT_GROUPS`.
"""

from __future__ import annotations

from collections.abc import Sequence

from etpkg._internal.build.elf import ElfInfo, is_elf, read_elf
from etpkg._internal.verify.consumers import wheel_needed
from etpkg._internal.verify.contracts.entry_points import ENTRY_POINT_GROUPS
from etpkg._internal.verify.contracts.entry_points import check as check_entry_points
from etpkg._internal.verify.report import CheckResult, Report
from etpkg._internal.verify.runner import CheckFailed, run
from etpkg._internal.verify.suite import Suite, check_selection, read_exempt
from etpkg._internal.verify.tools import (
    CMAKE_VERSIONS,
    GENERATORS,
    MODERN,
    OLD_CMAKE_VERSIONS,
    Cmake,
)
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
    "Workspace",
    "check_entry_points",
    "is_elf",
    "prepare",
    "read_elf",
    "read_exempt",
    "run",
    "verify_installed",
    "wheel_needed",
]


def verify_installed(
    ws: Workspace,
    *,
    quick: bool = False,
    cmake_versions: Sequence[str] | None = None,
    exempt_headers: Sequence[str] = (),
    strict_headers: bool = False,
    only: Sequence[str] = (),
) -> Report:
    """Runs etpkg verify's consumer checks on an installed workspace (or those `only` names, as
    `etpkg verify --only`); a failed check is a result (report.failures), not an exception. The
    headers check is strict when strict_headers or exempt_headers is given (as `etpkg
    verify`)."""
    suite = Suite(
        ws,
        versions=tuple(cmake_versions or CMAKE_VERSIONS),
        exempt_headers=tuple(exempt_headers),
        strict_headers=strict_headers or bool(exempt_headers),
    )
    return Report(ws.sdk, tuple(suite.run_all(quick=quick, only=check_selection(only))))

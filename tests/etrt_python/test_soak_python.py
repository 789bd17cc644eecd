"""The concurrency soak through the Python binding (tests/soak_python.py): threads over
modules of four programs (portable, XNNPACK-delegated, dynamic shapes with state) loading,
running against single-threaded references, resetting and closing modules other threads are
calling. The gate runs a short seeded run on the release build and one under ThreadSanitizer
(libtsan preloaded into Python); the long run (marked long) is the campaign docs/SECURITY.md
reports:

    ETRT_SOAK_SECONDS=600 python -m pytest -m "soak and long" tests/etrt_python/test_soak_python.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from runtime_build import LIBRARIES, REPO_ROOT, TSAN_OPTIONS, build_tools, libtsan, tsan_build

THREADS, MODULES = 6, 3


def run_soak(
    flavor: str, programs: list[Path], seed: int, ops: int, seconds: float
) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    env.pop("ETRT_NUM_THREADS", None)
    if flavor == "tsan":
        env.update(
            ETRT_LIBRARY_DIR=str(tsan_build(LIBRARIES)),
            LD_PRELOAD=str(libtsan()),
            TSAN_OPTIONS=TSAN_OPTIONS,
        )
    else:
        env["ETRT_LIBRARY_DIR"] = str(build_tools("runtime", LIBRARIES).build_dir)
    args = [sys.executable, str(REPO_ROOT / "tests" / "soak_python.py"), "--seed", str(seed)]
    args += ["--threads", str(THREADS), "--modules", str(MODULES), "--ops", str(ops)]
    args += ["--seconds", str(seconds), *map(str, programs)]
    proc = subprocess.run(
        args, capture_output=True, text=True, timeout=seconds + 600, check=False, env=env
    )
    print(proc.stdout)
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-8000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-8000:]
    assert proc.stdout.splitlines()[-1] == "ok"
    rows = [line.rsplit(" ", 1) for line in proc.stdout.splitlines()[1:-1]]
    got = {key: float(value) for key, value in rows}
    assert got["stateful"] >= 1 and got["dynamic"] >= 1
    assert got["mismatches"] == 0 and got["runs"] > 0 and got["resets"] > 0
    # Modules were closed under other threads' calls, which then got the clear error.
    assert got["closes"] > 0 and got["refused after close"] > 0
    return got


@pytest.mark.soak
@pytest.mark.parametrize("flavor", ["release", "tsan"])
def test_python_soak(flavor: str, soak_programs: list[Path]) -> None:
    run_soak(flavor, soak_programs, seed=3, ops=300 if flavor == "release" else 100, seconds=60)


@pytest.mark.long
@pytest.mark.soak
@pytest.mark.parametrize("flavor", ["release", "tsan"])
def test_python_soak_long(flavor: str, soak_programs: list[Path]) -> None:
    seconds = float(os.environ.get("ETRT_SOAK_SECONDS", "600"))
    seed = int(os.environ.get("ETRT_SOAK_SEED", "7"))
    run_soak(flavor, soak_programs, seed=seed, ops=10**9, seconds=seconds)

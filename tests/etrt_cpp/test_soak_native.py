"""The concurrency soak through the C ABI and the C++ API (tests/apps/soak): N threads over M
modules of four programs (portable, XNNPACK-delegated, dynamic shapes with state) loading,
running against single-threaded references, resetting, changing the pool's thread count and
freeing modules other threads are calling. The gate runs a short seeded run under
ThreadSanitizer and one under AddressSanitizer; the long run (marked long) is the campaign
docs/SECURITY.md reports:

    ETRT_SOAK_SECONDS=600 python -m pytest -m "soak and long" tests/etrt_cpp/test_soak_native.py
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from runtime_build import TSAN_OPTIONS, asan_build, build_tools, sanitizer_env, tsan_build

APP = Path("tests") / "apps" / "soak" / "etrt_soak"
THREADS, MODULES = 6, 4


def soak_exe(flavor: str) -> tuple[Path, dict[str, str]]:
    """The soak of one in-tree build and the environment it runs in."""
    env = dict(os.environ)
    env.pop("ETRT_NUM_THREADS", None)
    if flavor == "tsan":
        return tsan_build(["etrt_soak"]) / APP, dict(env, TSAN_OPTIONS=TSAN_OPTIONS)
    if flavor == "asan":
        return asan_build(["etrt_soak"]).build_dir / APP, dict(sanitizer_env(), **{})
    return build_tools("runtime", ["etrt_soak"]).build_dir / APP, env


def figures(stdout: str) -> dict[str, float]:
    """Every `word number` pair of the `soak:` and `soak-counts:` lines."""
    out: dict[str, float] = {}
    for line in stdout.splitlines():
        if line.startswith(("soak: ", "soak-counts: ")):
            words = line.split()[1:]
            out.update({words[i]: float(words[i + 1]) for i in range(0, len(words) - 1, 2)})
    return out


def run_soak(
    flavor: str, programs: list[Path], seed: int, ops: int, seconds: float
) -> dict[str, float]:
    exe, env = soak_exe(flavor)
    args = [str(exe), "--seed", str(seed), "--threads", str(THREADS), "--modules", str(MODULES)]
    args += ["--ops", str(ops), "--seconds", str(seconds), *map(str, programs)]
    proc = subprocess.run(
        args, capture_output=True, text=True, timeout=seconds + 600, check=False, env=env
    )
    print(proc.stdout)
    report = proc.stderr[-8000:]
    assert "Sanitizer" not in proc.stderr and "runtime error" not in proc.stderr, report
    assert proc.returncode == 0, proc.stdout + report
    assert proc.stdout.splitlines()[-1] == "ok"
    got = figures(proc.stdout)
    assert got["seed"] == seed and got["programs"] == len(programs)
    assert got["stateful"] >= 1 and got["dynamic"] >= 1
    assert got["mismatches"] == 0
    return got


def check_coverage(got: dict[str, float]) -> None:
    """The run did what a soak is for: both APIs ran and were checked, modules were freed
    while used and called after the free, the pool's thread count changed."""
    assert got["c-abi-runs"] > 0 and got["cpp-runs"] > 0
    assert got["frees"] > 0 and got["loads"] > MODULES
    assert got["refused-while-freeing"] + got["refused-after-free"] > 0
    assert got["thread-changes"] > 0 and got["racing-calls"] > 0


@pytest.mark.soak
@pytest.mark.parametrize("flavor", ["tsan", "asan"])
def test_soak_under_sanitizer(flavor: str, soak_programs: list[Path]) -> None:
    got = run_soak(flavor, soak_programs, seed=1 if flavor == "tsan" else 2, ops=400, seconds=60)
    check_coverage(got)


@pytest.mark.long
@pytest.mark.soak
@pytest.mark.parametrize("flavor", ["release", "tsan", "asan"])
def test_soak_long(flavor: str, soak_programs: list[Path]) -> None:
    seconds = float(os.environ.get("ETRT_SOAK_SECONDS", "600"))
    seed = int(os.environ.get("ETRT_SOAK_SEED", "7"))
    got = run_soak(flavor, soak_programs, seed=seed, ops=10**9, seconds=seconds)
    check_coverage(got)

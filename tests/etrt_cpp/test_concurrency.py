"""The threading contract of Module, Method and the C ABI under ThreadSanitizer: the stress
program (tests/apps/concurrency_stress) built against build/tsan runs real programs (a portable
MLP, a transformer, an XNNPACK-delegated CNN) from many threads; no report, no mismatch."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import etrt
import pytest
from models import make
from runtime_build import TSAN_OPTIONS, tsan_build

THREADS = 6
ITERATIONS = 4


@pytest.fixture(scope="module")
def stress() -> Path:
    build = tsan_build(["concurrency_stress"])
    return build / "tests" / "apps" / "concurrency_stress" / "concurrency_stress"


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("programs")
    paths = []
    for name, backend in (("mlp", None), ("transformer", None), ("cnn", "xnnpack")):
        model, inputs = make(name, 2)
        program = etrt.export(model, inputs, backend=backend)
        if backend == "xnnpack":
            assert "delegate:XnnpackBackend" in program.info.instruction_ops
        path = out / f"{name}_{backend or 'portable'}.etrt"
        program.save(path)
        paths.append(path)
    return paths


def run_stress(exe: Path, programs: list[Path]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TSAN_OPTIONS=TSAN_OPTIONS)
    env.pop("ETRT_NUM_THREADS", None)
    return subprocess.run(
        [str(exe), "--threads", str(THREADS), "--iterations", str(ITERATIONS), *map(str, programs)],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip


def figures(stdout: str, phase: str) -> list[dict[str, int]]:
    """Every `phase ...: key value ...` line of the report, as numbers."""
    rows = []
    for line in stdout.splitlines():
        if line.startswith(phase + " ") or line.startswith(phase + ":"):
            words = line.partition(": ")[2].split()
            rows.append({words[i - 1]: int(w) for i, w in enumerate(words) if i and w.isdigit()})
    return rows


def test_stress_under_thread_sanitizer(stress: Path, programs: list[Path]) -> None:
    proc = run_stress(stress, programs)
    print(proc.stdout)
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-8000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-8000:]
    assert proc.stdout.splitlines()[-1] == "ok"

    cold = figures(proc.stdout, "shared-cold")
    assert len(cold) == len(programs)
    for row in cold:
        assert row["threads"] == THREADS and row["mismatches"] == 0
        assert row["runs"] == THREADS * ITERATIONS
    for row in figures(proc.stdout, "own-modules"):
        assert row["runs"] == THREADS * ITERATIONS and row["mismatches"] == 0
    c_abi = figures(proc.stdout, "c-abi-shared")
    assert len(c_abi) == len(programs) and all(row["ok"] > 0 for row in c_abi)
    # Calls really overlapped: some were refused (InvalidState, never run), none failed else.
    assert sum(row["busy"] for row in c_abi + cold) > 0, proc.stdout
    for row in figures(proc.stdout, "free-during-run"):
        assert row["waited"] == row["rounds"] > 0
    switch = figures(proc.stdout, "thread-switch")
    assert next(r for r in switch if "changes" in r)["changes"] > 0
    assert all(r["mismatches"] == 0 for r in switch if "mismatches" in r)


"""etrt_module_free racing calls on the module and its methods through the C ABI (the contract
in c_api.h, "Handles and freeing"): tests/apps/c_api_free_race under ThreadSanitizer and under
AddressSanitizer. Calls that start before free returns succeed or are INVALID_STATE, calls
after it are INVALID_STATE even once a new module took the freed one's place, and no call
touches freed memory (any sanitizer report fails)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import etrt
import pytest
from models import make
from runtime_build import TSAN_OPTIONS, asan_build, sanitizer_env, tsan_build

ROUNDS = 20
APP = Path("tests") / "apps" / "c_api_free_race" / "c_api_free_race"


@pytest.fixture(scope="module")
def cnn_xnnpack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, inputs = make("cnn", 2)
    program = etrt.export(model, inputs, backend="xnnpack")
    assert "delegate:XnnpackBackend" in program.info.instruction_ops
    return program.save(tmp_path_factory.mktemp("programs") / "cnn_xnnpack.etrt")


def figures(stdout: str) -> dict[str, int]:
    line = next(x for x in stdout.splitlines() if x.startswith("free-race: "))
    words = line.split()[1:]
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def check(proc: subprocess.CompletedProcess[str]) -> None:
    report = proc.stderr[-8000:]
    assert "Sanitizer" not in proc.stderr and "runtime error" not in proc.stderr, report
    assert proc.returncode == 0, proc.stdout + proc.stderr[-8000:]
    assert proc.stdout.splitlines()[-1] == "ok"
    got = figures(proc.stdout)
    assert got["rounds"] == ROUNDS
    # Calls really raced the free: some ran, some were refused, every late one was refused.
    assert got["ok"] > 0 and got["refused"] > 0
    assert got["late"] == ROUNDS * 2 * 40


def test_racing_free_under_thread_sanitizer(cnn_xnnpack: Path) -> None:
    exe = tsan_build(["c_api_free_race"]) / APP
    env = dict(os.environ, TSAN_OPTIONS=TSAN_OPTIONS)
    proc = subprocess.run(
        [str(exe), "--rounds", str(ROUNDS), str(cnn_xnnpack)],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip
    check(proc)


def test_racing_free_under_address_sanitizer(cnn_xnnpack: Path) -> None:
    exe = asan_build(["c_api_free_race"]).build_dir / APP
    proc = subprocess.run(
        [str(exe), "--rounds", str(ROUNDS), str(cnn_xnnpack)],
        capture_output=True, text=True, timeout=600, check=False, env=sanitizer_env(),
    )  # fmt: skip
    check(proc)

"""etrt::threadpool: parallel_for is parallel exactly when the library is linked, the heavy
kernels split their work through it, and the thread count never changes results."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import etrt
import numpy as np
import pytest
import torch
from conan_consumer import ROOT, build_consumer
from models import make
from torch import nn

APPS = ROOT / "tests" / "apps"


@pytest.fixture(scope="module")
def probe_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_consumer(APPS / "threadpool_probe", tmp_path_factory.mktemp("probe"))


@pytest.fixture(scope="module")
def runner_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_consumer(APPS / "runner", tmp_path_factory.mktemp("runner"))


@pytest.fixture(scope="module")
def kernels_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_consumer(APPS / "parallel_kernels", tmp_path_factory.mktemp("kernels"))


def run(cmd: list[str], threads: int | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("ETRT_NUM_THREADS", None)
    if threads is not None:
        env["ETRT_NUM_THREADS"] = str(threads)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False, env=env)


def reported(stdout: str, key: str) -> int:
    match = re.search(rf"^{key}: (\d+)$", stdout, re.MULTILINE)
    assert match, f"no '{key}' in: {stdout}"
    return int(match.group(1))


def test_probe_linking_threadpool_runs_parallel_for_on_several_threads(probe_build: Path) -> None:
    proc = run([str(probe_build / "threadpool_probe")], threads=2)
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "parallel_num_threads") == 2
    assert reported(proc.stdout, "distinct threads") == 2


def test_probe_without_threadpool_runs_parallel_for_serially(probe_build: Path) -> None:
    proc = run([str(probe_build / "threadpool_probe_serial")], threads=2)
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "parallel_num_threads") == 1
    assert reported(proc.stdout, "distinct threads") == 1


def test_probe_follows_etrt_num_threads(probe_build: Path) -> None:
    proc = run([str(probe_build / "threadpool_probe")], threads=1)
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "distinct threads") == 1


class Bmm(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


class Mm(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)


def heavy_case(op: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    if op == "aten::addmm":
        return nn.Linear(256, 512), (torch.randn(64, 256),)
    if op == "aten::mm":
        return Mm(), (torch.randn(128, 256), torch.randn(256, 256))
    if op == "aten::bmm":
        return Bmm(), (torch.randn(8, 64, 64), torch.randn(8, 64, 64))
    return nn.Conv2d(8, 16, 3, padding=1), (torch.randn(8, 8, 32, 32),)


VIEW_OPS = {"aten::permute", "aten::permute_copy", "aten::t", "aten::view", "aten::expand"}


@pytest.mark.parametrize("op", ["aten::addmm", "aten::mm", "aten::bmm", "aten::convolution"])
def test_heavy_kernel_splits_its_work_through_parallel_for(
    kernels_build: Path, tmp_path: Path, op: str
) -> None:
    model, inputs = heavy_case(op)
    exported = etrt.export(model.eval(), inputs)
    # Only views beside it (nn.Linear transposes its weight) and the serial copy of a returned
    # convolution's channels-last result: neither calls parallel_for.
    companions = set(exported.operator_names) - {op}
    assert companions <= VIEW_OPS | {"aten::clone"}, exported.operator_names
    program = tmp_path / "op.etrt"
    exported.save(program)
    proc = run([str(kernels_build / "parallel_kernels"), str(program)])
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "split calls") >= 1, proc.stdout


def run_model(runner: Path, program: Path, inputs: tuple[torch.Tensor, ...], workdir: Path,
              threads: int) -> bytes:
    in_path, out_path = workdir / "inputs.bin", workdir / f"outputs{threads}.bin"
    in_path.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    proc = run([str(runner), str(program), "--inputs", str(in_path), "--outputs", str(out_path)],
               threads=threads)
    assert proc.returncode == 0, proc.stderr
    return out_path.read_bytes()


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_one_and_two_threads_give_identical_results(
    runner_build: Path, tmp_path: Path, name: str
) -> None:
    model, inputs = make(name, 32)
    program = tmp_path / f"{name}.etrt"
    etrt.export(model, inputs).save(program)
    runner = runner_build / "etrt_runner_threads"
    one = run_model(runner, program, inputs, tmp_path, threads=1)
    two = run_model(runner, program, inputs, tmp_path, threads=2)
    assert one == two, f"{name}: outputs differ between 1 and 2 threads"

    with torch.no_grad():
        expected = model(*inputs).numpy()
    got = np.frombuffer(two, dtype=np.float32).reshape(expected.shape)
    assert float(np.max(np.abs(got - expected))) <= 1e-5


def test_runner_threads_option_needs_the_threadpool(runner_build: Path, tmp_path: Path) -> None:
    model, inputs = make("mlp", 1)
    program = tmp_path / "mlp.etrt"
    etrt.export(model, inputs).save(program)

    with_pool = run([str(runner_build / "etrt_runner_threads"), str(program), "--threads", "2"])
    assert with_pool.returncode == 0, with_pool.stderr

    without = run([str(runner_build / "etrt_runner"), str(program), "--threads", "2"])
    assert without.returncode != 0
    assert "InvalidState" in without.stderr and "etrt::threadpool" in without.stderr


@pytest.fixture(scope="module")
def stress_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_consumer(APPS / "threadpool_stress", tmp_path_factory.mktemp("stress"))


def test_thread_count_changes_while_loops_and_borrowed_pools_run(stress_build: Path) -> None:
    proc = run([str(stress_build / "threadpool_stress")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "ok"


# The pool's sources compiled straight into the stress program, so the sanitizer sees every
# access the pool makes (the packaged libraries are not instrumented).
SANITIZED_SOURCES = [
    "tests/apps/threadpool_stress/stress.cpp", "src/threadpool/threadpool.cpp",
    "src/runtime/parallel.cpp", "src/runtime/log.cpp", "src/runtime/error.cpp",
]


@pytest.mark.parametrize("sanitizer", ["thread", "address,undefined"])
def test_thread_count_changes_are_clean_under_sanitizers(tmp_path: Path, sanitizer: str) -> None:
    exe = tmp_path / "stress"
    build = subprocess.run(
        ["g++", "-std=c++17", "-O1", "-g", f"-fsanitize={sanitizer}", "-fno-sanitize-recover=all",
         "-DETRT_API_VERSION=1", "-Iinclude", *SANITIZED_SOURCES, "-lpthreadpool", "-o", str(exe)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert build.returncode == 0, build.stderr
    env = dict(os.environ)
    env["TSAN_OPTIONS"] = "exitcode=66 halt_on_error=1"
    env["ASAN_OPTIONS"] = "detect_leaks=1:exitcode=66"
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, check=False,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "Sanitizer" not in proc.stderr, proc.stderr[-6000:]
    assert proc.stdout.strip() == "ok"


POLICY_SOURCES = [
    "tests/apps/threadpool_policy/policy.cpp", "src/threadpool/threadpool.cpp",
    "src/runtime/parallel.cpp", "src/runtime/log.cpp", "src/runtime/error.cpp",
]


@pytest.fixture(scope="module")
def policy_probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pool's sources compiled straight into the probe: the policy is the pool's own code."""
    exe = tmp_path_factory.mktemp("policy") / "policy"
    build = subprocess.run(
        ["g++", "-std=c++17", "-O1", "-DETRT_API_VERSION=1", "-Iinclude", *POLICY_SOURCES,
         "-lpthreadpool", "-o", str(exe)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    return exe


_POLICY_RUNS: dict[tuple[Path, str | None], subprocess.CompletedProcess[str]] = {}


def policy_run(exe: Path, wait: str | None) -> subprocess.CompletedProcess[str]:
    """The probe's report under one policy, run once per module."""
    if (exe, wait) not in _POLICY_RUNS:
        _POLICY_RUNS[(exe, wait)] = run_policy(exe, wait)
    return _POLICY_RUNS[(exe, wait)]


def run_policy(exe: Path, wait: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ETRT_NUM_THREADS="2")
    env.pop("ETRT_POOL_WAIT", None)
    if wait is not None:
        env["ETRT_POOL_WAIT"] = wait
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60,
                          check=False, env=env)  # fmt: skip


def cpu_ms(stdout: str, what: str) -> float:
    match = re.search(rf"^{re.escape(what)} cpu ms per [0-9]+ ms: ([0-9.]+)$", stdout, re.MULTILINE)
    assert match, stdout
    return float(match.group(1))


def test_pool_cuts_loops_into_several_chunks_per_thread(policy_probe: Path) -> None:
    # A late worker then holds up one small chunk: the others take the rest.
    proc = policy_run(policy_probe, None)
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "threads") == 2
    assert reported(proc.stdout, "chunks 1024 grain 1") == 8
    assert reported(proc.stdout, "chunks 1024 grain 300") == 4  # no chunk under the grain


def test_pool_workers_spin_only_inside_a_run_by_default(policy_probe: Path) -> None:
    default = policy_run(policy_probe, None)
    assert default.returncode == 0, default.stderr
    assert "wait policy: run" in default.stdout
    # Inside a program run the worker waits for the next job spinning (no wake-up per operator)...
    assert cpu_ms(default.stdout, "in-run") > 1.0, default.stdout
    # ...and costs nothing once the run has ended, or outside any run, or after runs on two
    # threads overlapped: a spinning worker burns milliseconds of CPU after each job.
    assert cpu_ms(default.stdout, "after-run") < 2.0, default.stdout
    assert cpu_ms(default.stdout, "idle") < 2.0, default.stdout
    assert cpu_ms(default.stdout, "after concurrent runs") < 2.0, default.stdout


def test_run_policy_stops_spinning_when_workers_share_a_cpu(policy_probe: Path) -> None:
    # 20 runs of 20 short jobs, the pool's two threads on one CPU: a spinning worker only runs
    # when the caller's time slice ends, so pthreadpool's spin costs milliseconds a job (about
    # 5 s in all, against 20 ms under sleep). The run policy sees the late worker and sleeps.
    def crowded_ms(wait: str) -> float:
        proc = run_policy(policy_probe, wait, "--crowded")
        assert proc.returncode == 0, proc.stderr
        match = re.search(r"^crowded runs ms: ([0-9.]+)$", proc.stdout, re.MULTILINE)
        assert match, proc.stdout
        return float(match.group(1))

    sleep, run = crowded_ms("sleep"), crowded_ms("run")
    assert run < max(20 * sleep, 1000.0), (sleep, run)


def test_pool_wait_policy_knob(policy_probe: Path) -> None:
    sleep = policy_run(policy_probe, "sleep")
    assert sleep.returncode == 0, sleep.stderr
    assert "wait policy: sleep" in sleep.stdout
    assert cpu_ms(sleep.stdout, "in-run") < 1.0, sleep.stdout
    assert cpu_ms(sleep.stdout, "after-run") < 2.0, sleep.stdout
    spin = policy_run(policy_probe, "spin")
    assert spin.returncode == 0, spin.stderr
    assert "wait policy: spin" in spin.stdout
    assert cpu_ms(spin.stdout, "after-run") > 2.0, spin.stdout
    bad = run_policy(policy_probe, "busy")
    assert bad.returncode == 0, bad.stderr
    assert "ignoring ETRT_POOL_WAIT='busy'" in bad.stderr
    assert "wait policy: run" in bad.stdout

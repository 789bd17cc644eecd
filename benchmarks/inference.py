"""Median latency of etrt and eager PyTorch on the test models, one thread, side by side.

    python benchmarks/inference.py [--runs N]

etrt runs in the C++ runner built against the Conan package (`conan create .` first); eager
PyTorch runs in this process with torch.set_num_threads(1). Prints one row per model and batch
with both medians and their ratio (etrt / eager: lower is better), then the same program exported
with backend="xnnpack" in a runner linking etrt::backend_xnnpack (ETRT_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

import etrt  # noqa: E402
from conan_consumer import build_consumer  # noqa: E402
from models import make  # noqa: E402

MODELS = ["mlp", "cnn", "transformer"]
TARGETS = {1: 0.5, 32: 1.0}
# etrt with the XNNPACK delegate (backend="xnnpack"), one thread: ExecuTorch 1.5.1's ratios.
XNNPACK_TARGETS = {"mlp": {1: 0.35, 32: 0.4}, "cnn": {1: 0.22, 32: 0.22},
                   "transformer": {1: 0.45, 32: 0.45}}


def eager_median_us(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], runs: int) -> float:
    times = []
    with torch.inference_mode():
        for _ in range(max(10, runs // 10)):
            model(*inputs)
        for _ in range(runs):
            start = time.perf_counter_ns()
            model(*inputs)
            times.append((time.perf_counter_ns() - start) / 1e3)
    return statistics.median(times)


def etrt_median_us(runner: Path, program: Path, inputs: tuple[torch.Tensor, ...], runs: int,
                   workdir: Path, env: dict[str, str] | None = None) -> float:
    in_path = workdir / "inputs.bin"
    in_path.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    proc = subprocess.run(
        [str(runner), str(program), "--inputs", str(in_path), "--repeat", str(runs)],
        capture_output=True, text=True, check=True, env=env,
    )
    match = re.search(r"median_us=([0-9.]+)", proc.stdout)
    if not match:
        raise SystemExit(f"runner printed no median: {proc.stdout}{proc.stderr}")
    return float(match.group(1))


def main() -> None:
    warnings.filterwarnings("ignore", category=FutureWarning)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runners = build_consumer(ROOT / "tests" / "apps" / "runner", work / "runner")
        runner = runners / "etrt_runner"
        # Links the thread pool (the delegate needs it): held to one thread like the others.
        xnnpack_runner = runners / "etrt_runner_xnnpack"
        one_thread = {**os.environ, "ETRT_NUM_THREADS": "1"}
        print(f"{'model':<12} {'batch':>5} {'etrt us':>10} {'eager us':>10} {'ratio':>7} "
              f"{'target':>7} {'+xnnpack us':>12} {'ratio':>7} {'target':>7}")
        for name in MODELS:
            for batch in (1, 32):
                model, inputs = make(name, batch)
                program = work / f"{name}-{batch}.etrt"
                etrt.export(model, inputs).save(program)
                ours = etrt_median_us(runner, program, inputs, args.runs, work)
                eager = eager_median_us(model, inputs, args.runs)
                ratio = ours / eager
                verdict = "ok" if ratio <= TARGETS[batch] else "MISS"
                delegated = work / f"{name}-{batch}-xnnpack.etrt"
                etrt.export(model, inputs, backend="xnnpack").save(delegated)
                ours_x = etrt_median_us(
                    xnnpack_runner, delegated, inputs, args.runs, work, one_thread
                )
                ratio_x = ours_x / eager
                target_x = XNNPACK_TARGETS[name][batch]
                verdict_x = "ok" if ratio_x <= target_x else "MISS"
                print(f"{name:<12} {batch:>5} {ours:>10.1f} {eager:>10.1f} {ratio:>7.2f} "
                      f"{'<=' + str(TARGETS[batch]):>5} {verdict:<4} {ours_x:>9.1f} "
                      f"{ratio_x:>7.2f} {'<=' + str(target_x):>5} {verdict_x}")


if __name__ == "__main__":
    main()

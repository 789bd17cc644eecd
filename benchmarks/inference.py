"""Median latency of eager PyTorch, etrt and etrt + XNNPACK on the test models, 1 and 2 threads.

    python benchmarks/inference.py [--runs N] [--threads 1 2]

etrt runs in C++ runners built against the Conan package (`conan create .` first): the plain
program in `etrt_runner_threads` (runtime, kernels, thread pool) and the program exported with
backend="xnnpack" in `etrt_runner_xnnpack` (plus the delegate), both with ETRT_NUM_THREADS=n.
Eager PyTorch runs in this process with torch.set_num_threads(n). Each row prints the three
medians, the ratios to eager (lower is better) and the targets, at one thread and at two. The
three are measured in turn `--rounds` times (default 3) and each figure is the median of its
rounds, so a slow spell of a shared machine does not land on one column only. Compare numbers
within one run, not across runs.
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
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

import etrt  # noqa: E402
from conan_consumer import build_consumer  # noqa: E402
from models import make  # noqa: E402

MODELS = ["mlp", "cnn", "transformer"]
BATCHES = (1, 32)
# etrt with the XNNPACK delegate, one thread: ExecuTorch 1.5.1's ratios to eager on this machine.
# etrt alone must stay within 2x of them.
XNNPACK_TARGETS = {
    "mlp": {1: 0.35, 32: 0.4},
    "cnn": {1: 0.22, 32: 0.22},
    "transformer": {1: 0.45, 32: 0.45},
}
PLAIN_FACTOR = 2.0


@dataclass(frozen=True)
class Row:
    model: str
    batch: int
    threads: int
    eager_us: float
    etrt_us: float
    xnnpack_us: float

    @property
    def target(self) -> float:
        return XNNPACK_TARGETS[self.model][self.batch]

    def cells(self) -> str:
        r, rx = self.etrt_us / self.eager_us, self.xnnpack_us / self.eager_us
        ok = "ok" if r <= PLAIN_FACTOR * self.target else "MISS"
        ok_x = "ok" if rx <= self.target else "MISS"
        if self.threads != 1:  # the targets are one-thread ratios
            ok = ok_x = ""
        return (
            f"{self.model:<12}{self.batch:>5}{self.threads:>4} {self.eager_us:>9.1f} "
            f"{self.etrt_us:>9.1f} {r:>6.2f} {ok:<4} {self.xnnpack_us:>9.1f} {rx:>6.2f} "
            f"{ok_x:<4} {self.target:>6.2f}"
        )


HEADER = (
    f"{'model':<12}{'batch':>5}{'thr':>4} {'eager us':>9} {'etrt us':>9} {'ratio':>6} {'':<4} "
    f"{'+xnn us':>9} {'ratio':>6} {'':<4} {'target':>6}"
)


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


def etrt_median_us(runner: Path, program: Path, inputs_bin: Path, runs: int, threads: int) -> float:
    proc = subprocess.run(
        [str(runner), str(program), "--inputs", str(inputs_bin), "--repeat", str(runs)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "ETRT_NUM_THREADS": str(threads)},
    )  # fmt: skip
    match = re.search(r"median_us=([0-9.]+)", proc.stdout)
    if not match:
        raise SystemExit(f"runner printed no median: {proc.stdout}{proc.stderr}")
    return float(match.group(1))


def measure(
    model: torch.nn.Module,
    inputs: tuple[torch.Tensor, ...],
    programs: list[tuple[Path, Path]],
    inputs_bin: Path,
    runs: int,
    threads: int,
    rounds: int,
) -> tuple[float, ...]:
    """Median over `rounds` of (eager, then each (runner, program)), measured in turn."""
    samples: list[list[float]] = [[] for _ in range(1 + len(programs))]
    for _ in range(max(1, rounds)):
        samples[0].append(eager_median_us(model, inputs, runs))
        for i, (runner, program) in enumerate(programs, start=1):
            samples[i].append(etrt_median_us(runner, program, inputs_bin, runs, threads))
    return tuple(statistics.median(s) for s in samples)


def main() -> None:
    warnings.filterwarnings("ignore", category=FutureWarning)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runners = build_consumer(ROOT / "tests" / "apps" / "runner", work / "runner")
        plain_runner = runners / "etrt_runner_threads"
        xnnpack_runner = runners / "etrt_runner_xnnpack"
        print(HEADER, flush=True)
        for name in MODELS:
            for batch in BATCHES:
                model, inputs = make(name, batch)
                inputs_bin = work / f"{name}-{batch}.bin"
                inputs_bin.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
                plain = etrt.export(model, inputs).save(work / f"{name}-{batch}.etrt")
                delegated = etrt.export(model, inputs, backend="xnnpack").save(
                    work / f"{name}-{batch}-xnnpack.etrt"
                )
                for threads in args.threads:
                    torch.set_num_threads(threads)
                    figures = measure(
                        model, inputs, [(plain_runner, plain), (xnnpack_runner, delegated)],
                        inputs_bin, args.runs, threads, args.rounds,
                    )  # fmt: skip
                    row = Row(name, batch, threads, *figures)
                    print(row.cells(), flush=True)
    print(
        "ratios: etrt / eager (lower is better). target: ExecuTorch 1.5.1 + XNNPACK, one thread; "
        f"etrt + xnnpack must be at or below it, etrt alone within {PLAIN_FACTOR:g}x of it."
    )


if __name__ == "__main__":
    main()

"""Median latency of eager PyTorch, etrt and etrt + XNNPACK on torchvision's ResNet18,
MobileNetV3-small, EfficientNet-B0 and SqueezeNet 1.1 (random weights), 1 and 2 threads.

    python benchmarks/vision.py [--runs N] [--rounds N] [--threads 1 2] [--models ...]

etrt runs in C++ runners built against the Conan package (`conan create .` first): the plain
program in `etrt_runner_threads`, the program exported with backend="xnnpack" in
`etrt_runner_xnnpack`, both with ETRT_NUM_THREADS=n; eager runs in this process with
torch.set_num_threads(n). The three are measured in turn `--rounds` times and each figure is
the median of its rounds. Ratios are to eager (lower is better); the targets are for etrt +
xnnpack at one thread. `load ms` is the method load of the delegated program, where XNNPACK
packs the weights once (the plain program's load, which only maps constants, is subtracted).
Compare numbers within one run, not across runs.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "benchmarks")]

import etrt  # noqa: E402
import vision  # noqa: E402
from conan_consumer import build_consumer  # noqa: E402
from inference import eager_median_us  # noqa: E402

# etrt + xnnpack / eager at one thread (ExecuTorch 1.5.1 + XNNPACK reaches 0.73, 0.27, 0.47,
# 0.27 on the reference machine).
TARGETS = {
    "resnet18": 0.65,
    "mobilenet_v3_small": 0.25,
    "efficientnet_b0": 0.45,
    "squeezenet1_1": 0.25,
}
BATCHES = {"resnet18": (1, 4), "mobilenet_v3_small": (1, 8), "efficientnet_b0": (1, 4),
           "squeezenet1_1": (1, 4)}  # fmt: skip


def runner_figures(
    runner: Path, program: Path, inputs_bin: Path, runs: int, threads: int
) -> tuple[float, float]:
    """(median run us, method load us) of one runner process."""
    proc = subprocess.run(
        [str(runner), str(program), "--inputs", str(inputs_bin), "--repeat", str(runs),
         "--threads", str(threads)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    median = re.search(r"median_us=([0-9.]+)", proc.stdout)
    load = re.search(r"load_us=([0-9.]+)", proc.stdout)
    if proc.returncode != 0 or not median or not load:
        raise SystemExit(f"{runner.name} {program.name} failed: {proc.stdout}{proc.stderr}")
    return float(median.group(1)), float(load.group(1))


def main() -> None:
    warnings.filterwarnings("ignore", category=FutureWarning)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--models", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    args = parser.parse_args()
    header = (
        f"{'model':<20}{'batch':>5}{'thr':>4} {'eager ms':>9} {'etrt ms':>9} {'ratio':>6} "
        f"{'+xnn ms':>9} {'ratio':>6} {'target':>7}{'':<5}{'calls':>5} {'load ms':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runners = build_consumer(ROOT / "tests" / "apps" / "runner", work / "runner")
        plain_runner = runners / "etrt_runner_threads"
        xnn_runner = runners / "etrt_runner_xnnpack"
        print(header, flush=True)
        for name in args.models:
            model = vision.live(vision.model(name))  # no denormals
            for batch in BATCHES[name]:
                x = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(0))
                inputs_bin = work / f"{name}-{batch}.bin"
                inputs_bin.write_bytes(x.numpy().tobytes())
                plain = etrt.export(model, (x,)).save(work / f"{name}-{batch}.etrt")
                exported = etrt.export(model, (x,), backend="xnnpack")
                calls = len(exported.info.plan.delegates)
                delegated = exported.save(work / f"{name}-{batch}-xnnpack.etrt")
                for threads in args.threads:
                    torch.set_num_threads(threads)
                    eager, ours, xnn, load_plain, load_xnn = [], [], [], [], []
                    for _ in range(max(1, args.rounds)):
                        eager.append(eager_median_us(model, (x,), args.runs))
                        us, load = runner_figures(plain_runner, plain, inputs_bin, args.runs,
                                                  threads)  # fmt: skip
                        ours.append(us)
                        load_plain.append(load)
                        us, load = runner_figures(xnn_runner, delegated, inputs_bin, args.runs,
                                                  threads)  # fmt: skip
                        xnn.append(us)
                        load_xnn.append(load)
                    e, o, xn = (statistics.median(v) / 1e3 for v in (eager, ours, xnn))
                    packing = max(0.0, statistics.median(load_xnn) - statistics.median(load_plain))
                    target = f"{TARGETS[name]:.2f}" if threads == 1 else ""
                    ok = "" if threads != 1 else (" ok" if xn / e <= TARGETS[name] else " MISS")
                    print(
                        f"{name:<20}{batch:>5}{threads:>4} {e:>9.2f} {o:>9.2f} {o / e:>6.2f} "
                        f"{xn:>9.2f} {xn / e:>6.2f} {target:>7}{ok:<5}{calls:>5} "
                        f"{packing / 1e3:>8.1f}",
                        flush=True,
                    )
    print(
        "ratios: / eager (lower is better); targets: etrt + xnnpack at one thread; calls: "
        "delegate calls in the program; load ms: XNNPACK's one-time packing at method load"
    )


if __name__ == "__main__":
    main()

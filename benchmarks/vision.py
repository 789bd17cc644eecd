"""Median latency of eager PyTorch, etrt and etrt + XNNPACK on torchvision's ResNet18,
MobileNetV3-small, EfficientNet-B0, SqueezeNet 1.1 and ViT-B/16 (random weights, activations kept
alive), at 1 and 2 threads, with each ratio to eager and the targets it is held to.

    python benchmarks/vision.py [--runs N] [--rounds N] [--threads 1 2] [--models ...]
                                [--build-dir build/runtime]

etrt runs in C++ runners built against the Conan package (`conan create .` first): the plain
program in `etrt_runner_threads`, the program exported with backend="xnnpack" in
`etrt_runner_xnnpack`, both with --threads n; with --build-dir, that in-tree build's
tools/etrt_runner runs both. Eager runs in this process with torch.set_num_threads(n). The three
are measured in turn `--rounds` times and each figure is the median of its rounds' medians, so
all three see the same load (compare numbers within one run, not across runs).

Targets, at one thread and batch 1 (ratios to eager, lower is better): etrt + XNNPACK at most
0.65 (ResNet18), 0.25 (MobileNetV3-small), 0.45 (EfficientNet-B0), 0.25 (SqueezeNet 1.1); and
the faster of etrt and etrt + XNNPACK at most 0.5 for every model, ViT included. `pack ms` is
the time XNNPACK took to create the delegate's runtimes at method load, which packs the
weights (as the delegate itself reports it; `calls` delegate calls, one runtime each).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "benchmarks")]

import etrt  # noqa: E402
import vision  # noqa: E402
from conan_consumer import build_consumer  # noqa: E402
from inference import eager_median_us  # noqa: E402

# etrt + xnnpack / eager at one thread and batch 1 (ExecuTorch 1.5.1 + XNNPACK reaches 0.73,
# 0.27, 0.47, 0.27 on the reference machine).
XNN_TARGETS = {
    "resnet18": 0.65,
    "mobilenet_v3_small": 0.25,
    "efficientnet_b0": 0.45,
    "squeezenet1_1": 0.25,
}
# The faster etrt program / eager at one thread, every vision model.
BEST_TARGET = 0.5
BATCHES = {"resnet18": (1, 4), "mobilenet_v3_small": (1, 8), "efficientnet_b0": (1, 4),
           "squeezenet1_1": (1, 4), "vit_b_16": (1,)}  # fmt: skip
MODELS = list(BATCHES)


@dataclass(frozen=True)
class RunnerFigures:
    median_us: float
    pack_us: float  # XNNPACK runtime creation at load (0 without the delegate)
    repacked: int  # runtimes the runs created (0: weights packed once, at load)


def run_runner(
    runner: Path, program: Path, inputs_bin: Path, runs: int, threads: int
) -> RunnerFigures:
    proc = subprocess.run(
        [str(runner), str(program), "--inputs", str(inputs_bin), "--repeat", str(runs),
         "--threads", str(threads)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    median = re.search(r"median_us=([0-9.]+)", proc.stdout)
    if proc.returncode != 0 or not median:
        raise SystemExit(f"{runner.name} {program.name} failed: {proc.stdout}{proc.stderr}")
    pack = re.search(r"pack_us=([0-9.]+) runs_repacked=([0-9]+)", proc.stdout)
    return RunnerFigures(
        float(median.group(1)),
        float(pack.group(1)) if pack else 0.0,
        int(pack.group(2)) if pack else 0,
    )


def runners(build_dir: Path | None, work: Path) -> tuple[Path, Path]:
    """(plain runner, delegate runner)."""
    if build_dir is not None:
        exe = build_dir / "tools" / "etrt_runner"
        if not exe.exists():
            raise SystemExit(f"no {exe}: configure with -DETRT_BUILD_TOOLS=ON and build it")
        return exe, exe
    built = build_consumer(ROOT / "tests" / "apps" / "runner", work / "runner")
    return built / "etrt_runner_threads", built / "etrt_runner_xnnpack"


def verdict(ratio: float, target: float) -> str:
    return f"{target:.2f} {'ok' if ratio <= target else 'MISS'}"


def main() -> None:
    warnings.filterwarnings("ignore", category=FutureWarning)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--build-dir", type=Path, help="an in-tree build whose etrt_runner to use")
    args = parser.parse_args()
    header = (
        f"{'model':<19}{'batch':>5}{'thr':>4} {'eager ms':>9} {'etrt ms':>9} {'ratio':>6} "
        f"{'+xnn ms':>9} {'ratio':>6} {'calls':>5} {'pack ms':>8}   targets (1 thread, batch 1)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain_runner, xnn_runner = runners(args.build_dir, work)
        print(header, flush=True)
        for name in args.models:
            model = vision.live(vision.model(name))  # no denormals
            # ViT-B/16 is 17.6 GFLOP a run: fewer timed runs (eager warms up 10 more anyway).
            runs = max(3, args.runs // 4) if name == "vit_b_16" else args.runs
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
                    eager, ours, xnn, pack = [], [], [], []
                    for _ in range(max(1, args.rounds)):
                        eager.append(eager_median_us(model, (x,), runs))
                        plain_figures = run_runner(plain_runner, plain, inputs_bin, runs, threads)
                        ours.append(plain_figures.median_us)
                        figures = run_runner(xnn_runner, delegated, inputs_bin, runs, threads)
                        if figures.repacked:
                            raise SystemExit(f"{name}: a run repacked XNNPACK weights")
                        xnn.append(figures.median_us)
                        pack.append(figures.pack_us)
                    e, o, xn = (statistics.median(v) / 1e3 for v in (eager, ours, xnn))
                    targets = ""
                    if threads == 1 and batch == 1:
                        if name in XNN_TARGETS:
                            targets += f"xnn {verdict(xn / e, XNN_TARGETS[name])}, "
                        targets += f"best {verdict(min(o, xn) / e, BEST_TARGET)}"
                    print(
                        f"{name:<19}{batch:>5}{threads:>4} {e:>9.2f} {o:>9.2f} {o / e:>6.2f} "
                        f"{xn:>9.2f} {xn / e:>6.2f} {calls:>5} "
                        f"{statistics.median(pack) / 1e3:>8.1f}   {targets}",
                        flush=True,
                    )
    print(
        "ratios: / eager (lower is better); calls: delegate calls; pack ms: XNNPACK runtime "
        "creation (weight packing) at method load, never repeated by a run"
    )


if __name__ == "__main__":
    main()

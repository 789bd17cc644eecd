"""Forward-pass latency of eager PyTorch, etrt and etrt + XNNPACK on BERT, GPT-2 and Llama
from transformers configs (tests/transformer_models.py; random weights) at two sizes, "small"
(2 layers of width 128, 32 tokens) and "bench" (4 layers of width 256, 128 tokens, where the
matrix products take most of the time), 1 and 2 threads.

    python benchmarks/transformer_forward.py [--runs N] [--rounds N] [--threads 1 2]
        [--models ...] [--sizes small bench] [--in-tree]

etrt runs in C++ runners built against the Conan package (`conan create .` first; with
--in-tree, build/runtime's etrt_runner, for working on kernels): the plain program and the
program exported with backend="xnnpack", with ETRT_NUM_THREADS=n; eager runs the transformers
model in this process with torch.set_num_threads(n). The three are measured in turn `--rounds`
times; times are the medians of the rounds, ratios the medians of each round's ratio (a busy
machine slows rounds unevenly). Ratios are to eager (lower is better); the target, 0.6 at one
thread, is checked for each of the two etrt columns ("ok"). Compare numbers within one run.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "benchmarks")]

import etrt  # noqa: E402
import transformer_models  # noqa: E402
from inference import eager_median_us, etrt_median_us  # noqa: E402

TARGET = 0.6  # etrt / eager at one thread, for an encoder or decoder forward pass


def _runners(work: Path, in_tree: bool) -> tuple[Path, Path]:
    """(plain runner, runner with the XNNPACK delegate)."""
    if in_tree:
        import runtime_build

        exe = runtime_build.tool_runner("release").exe  # links every component it builds
        return exe, exe
    from conan_consumer import build_consumer

    runners = build_consumer(ROOT / "tests" / "apps" / "runner", work / "runner")
    return runners / "etrt_runner_threads", runners / "etrt_runner_xnnpack"


def _mark(ratio: float, threads: int) -> str:
    if threads != 1:
        return ""
    return " ok" if ratio <= TARGET else " MISS"


def main() -> None:
    warnings.filterwarnings("ignore", category=FutureWarning)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    models = list(transformer_models.MODELS)
    parser.add_argument("--models", nargs="+", default=models, choices=models)
    parser.add_argument("--in-tree", action="store_true", help="use build/runtime's runner")
    parser.add_argument(
        "--sizes", nargs="+", default=["small", "bench"], choices=["small", "bench"]
    )
    args = parser.parse_args()
    print(
        f"{'model':<8}{'size':>6}{'thr':>4} {'eager ms':>9} {'etrt ms':>9} {'ratio':>6}{'':<5} "
        f"{'+xnn ms':>9} {'ratio':>6}{'':<5} {'target':>6}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain_runner, xnn_runner = _runners(work, args.in_tree)
        for size, name in itertools.product(args.sizes, args.models):
            model = transformer_models.MODELS[name](size)
            inputs = transformer_models.inputs(name, size, 1)
            inputs_bin = work / f"{name}.bin"
            inputs_bin.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
            plain = etrt.export(model, inputs).save(work / f"{name}.etrt")
            delegated = etrt.export(model, inputs, backend="xnnpack").save(work / f"{name}-x.etrt")
            for threads in args.threads:
                torch.set_num_threads(threads)
                eager, ours, xnn = [], [], []
                for _ in range(max(1, args.rounds)):
                    eager.append(eager_median_us(model, inputs, args.runs))
                    ours.append(etrt_median_us(plain_runner, plain, inputs_bin, args.runs, threads))
                    xnn.append(
                        etrt_median_us(xnn_runner, delegated, inputs_bin, args.runs, threads)
                    )
                e, o, x = (statistics.median(v) / 1e3 for v in (eager, ours, xnn))
                ro = statistics.median(a / b for a, b in zip(ours, eager, strict=True))
                rx = statistics.median(a / b for a, b in zip(xnn, eager, strict=True))
                print(
                    f"{name:<8}{size:>6}{threads:>4} {e:>9.2f} {o:>9.2f} {ro:>6.2f}"
                    f"{_mark(ro, threads):<5} {x:>9.2f} {rx:>6.2f}{_mark(rx, threads):<5} "
                    f"{TARGET if threads == 1 else '':>6}",
                    flush=True,
                )
    print("ratios: / eager (lower is better); target: etrt / eager at one thread")


if __name__ == "__main__":
    main()

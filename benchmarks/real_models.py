"""Median latency of eager PyTorch and etrt on the architectures of
tests/etrt_python/test_real_models.py.

    python benchmarks/real_models.py [--runs N] [--threads 1 2]

etrt runs in `etrt_runner_threads`, built against the Conan package (`conan create .` first),
with ETRT_NUM_THREADS=n; eager runs in this process with torch.set_num_threads(n). Ratio =
etrt / eager, lower is better. No targets: this shows that the kernels added for these
architectures carry their weight, and which of them dominate.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "benchmarks")]

import etrt  # noqa: E402
import test_real_models as real  # noqa: E402
from conan_consumer import build_consumer  # noqa: E402
from inference import eager_median_us, etrt_median_us  # noqa: E402


def main() -> None:
    warnings.filterwarnings("ignore", category=FutureWarning)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runner = build_consumer(ROOT / "tests" / "apps" / "runner", work / "runner")
        runner = runner / "etrt_runner_threads"
        print(f"{'model':<18}{'thr':>4} {'eager us':>9} {'etrt us':>9} {'ratio':>6}", flush=True)
        for name in sorted(real.MODELS):
            torch.manual_seed(0)
            model, inputs = real.MODELS[name]()
            real._randomise_batch_norm(model)
            model.eval()
            program = etrt.export(model, inputs).save(work / f"{name}.etrt")
            inputs_bin = work / f"{name}.bin"
            inputs_bin.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
            for threads in args.threads:
                torch.set_num_threads(threads)
                eager = eager_median_us(model, inputs, args.runs)
                ours = etrt_median_us(runner, program, inputs_bin, args.runs, threads)
                row = f"{name:<18}{threads:>4} {eager:>9.1f} {ours:>9.1f} {ours / eager:>6.2f}"
                print(row, flush=True)


if __name__ == "__main__":
    main()

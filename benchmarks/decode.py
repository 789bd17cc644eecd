"""Language-model decoding speed: prefill and decode tokens/s, eager PyTorch against etrt.

For each decoder of tests/decoders.py (the hand-written KV-cache decoder, GPT-2 and Llama from
transformers with their static cache; small configs, random weights) at one thread and two:
eager PyTorch (the same static-cache model under torch.no_grad(), torch.set_num_threads(n)),
etrt from C++ (examples/decode built against the Conan package, ETRT_NUM_THREADS=n) and etrt
from Python (the ctypes binding over the same libraries). Greedy generation of NEW tokens after
a PROMPT-token prompt: prefill is the prompt's one call, decode the calls of one token each.
Rounds take turns (eager, C++, Python, then again), each round the median of three generations,
and each figure is the median over --rounds rounds; ratio = etrt / eager tokens/s, higher is
better; the decode target is 2x eager at one thread.

    python benchmarks/decode.py [--rounds 5] [--threads 1 2]   (after bash ci/build.sh)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

import decoders  # noqa: E402
from conan_consumer import build_consumer, etrt_version, run  # noqa: E402

PROMPT = list(range(3, 3 + 16))
NEW = 32
DECODE_TARGET = 2.0


def timed_generation(step: decoders.Step) -> tuple[float, float]:
    """(prefill seconds, decode seconds) of one greedy generation of NEW tokens."""
    start = time.perf_counter()
    logits = step(np.array([PROMPT], np.int64), np.arange(len(PROMPT), dtype=np.int64))
    prefilled = time.perf_counter()
    position = len(PROMPT)
    for _ in range(NEW - 1):
        token = int(np.argmax(logits[0, -1]))
        logits = step(np.array([[token]], np.int64), np.array([position], np.int64))
        position += 1
    return prefilled - start, time.perf_counter() - prefilled


def rates(prefill_s: float, decode_s: float) -> tuple[float, float]:
    return len(PROMPT) / prefill_s, (NEW - 1) / decode_s


PER_ROUND = 3  # generations per round


def median_rates(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return rates(statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))


def measure_eager(model: torch.nn.Module, threads: int) -> tuple[float, float]:
    torch.set_num_threads(threads)
    step = decoders.eager_step(model)
    timed_generation(step)  # warm-up
    return median_rates([timed_generation(step) for _ in range(PER_ROUND)])


def measure_cpp(app: Path, program: Path, threads: int) -> tuple[float, float]:
    proc = subprocess.run(
        [str(app), str(program), "-n", str(NEW), "--runs", str(PER_ROUND + 1), "--stats",
         *map(str, PROMPT)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "ETRT_NUM_THREADS": str(threads)},
    )  # fmt: skip
    m = re.search(r"tokens in ([0-9.]+) us .*decode: \d+ tokens in ([0-9.]+) us", proc.stderr)
    if m is None:
        raise SystemExit(f"decode printed no statistics: {proc.stderr}")
    return rates(float(m.group(1)) / 1e6, float(m.group(2)) / 1e6)


def measure_python(lib_dir: Path, program: Path, threads: int) -> tuple[float, float]:
    """In a process of its own: the binding loads its libraries (and thread count) once."""
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", str(program)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "ETRT_LIBRARY_DIR": str(lib_dir), "ETRT_NUM_THREADS": str(threads)},
    )  # fmt: skip
    prefill, decode = json.loads(proc.stdout.strip().splitlines()[-1])
    return float(prefill), float(decode)


def python_worker(program: Path) -> None:
    import etrt

    method = etrt.load(program).method()

    def step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        (logits,) = method(tokens, positions)
        assert isinstance(logits, np.ndarray)
        return logits

    timed_generation(step)
    print(json.dumps(median_rates([timed_generation(step) for _ in range(PER_ROUND)])))


def package_lib_dir(work: Path) -> Path:
    proc = run([
        "conan", "install", f"--requires=etrt/{etrt_version()}", "-s", "build_type=Release",
        "--output-folder", work, "--format=json",
    ])  # fmt: skip
    nodes = json.loads(proc.stdout)["graph"]["nodes"].values()
    return Path(next(n["package_folder"] for n in nodes if n.get("name") == "etrt")) / "lib"


HEADER = (
    f"{'model':<12}{'thr':>4} {'phase':<8}{'eager tok/s':>12}{'etrt C++':>10}{'ratio':>8}"
    f"{'etrt py':>10}{'ratio':>8}  target"
)


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--models", nargs="+", default=list(decoders.NAMES))
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        python_worker(args.worker)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        app = build_consumer(ROOT / "examples" / "decode", work / "decode") / "decode"
        lib_dir = package_lib_dir(work / "pkg")
        print(f"prompt {len(PROMPT)} tokens, {NEW} new tokens, median of {args.rounds} rounds")
        print(HEADER, flush=True)
        for name in args.models:
            model, reference = decoders.make(name)
            program = decoders.export(model, name).save(work / f"{name}.etrt")
            for threads in args.threads:
                rounds: list[list[tuple[float, float]]] = [[], [], []]
                for _ in range(args.rounds):
                    rounds[0].append(measure_eager(reference, threads))
                    rounds[1].append(measure_cpp(app, program, threads))
                    rounds[2].append(measure_python(lib_dir, program, threads))
                eager, cpp, py = (
                    (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
                    for runs in rounds
                )
                for phase, i in (("prefill", 0), ("decode", 1)):
                    target = f">= {DECODE_TARGET:g}" if phase == "decode" and threads == 1 else ""
                    ok = (
                        (" ok" if cpp[i] / eager[i] >= DECODE_TARGET else " MISS") if target else ""
                    )
                    print(
                        f"{name:<12}{threads:>4} {phase:<8}{eager[i]:>12.0f}{cpp[i]:>10.0f}"
                        f"{cpp[i] / eager[i]:>8.1f}{py[i]:>10.0f}{py[i] / eager[i]:>8.1f}  "
                        f"{target}{ok}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()

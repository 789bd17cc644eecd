"""etrt and ONNX Runtime at one thread in one process, alternated call block by call block, with
warm caches (calls back to back) and cold ones (a 64 MB sweep before each call); and what ONNX
Runtime's own profiler adds to its run. CPU time of the calling thread, median (fastest) us.
Tells the time between operators and cache effects apart from the operators' own (docs/SCALING.md,
"The time between instructions").

    ETRT_LIBRARY_DIR=build/runtime ETRT_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=python \\
        build/bench-venv/bin/python benchmarks/one_process.py [--dir build/threads] \\
        [--models mobilenet_v3_small efficientnet_b0] [--rounds 8] [--calls 8]

--dir holds `benchmarks/threads.py --export-only`'s programs, ONNX files and inputs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

import threads  # noqa: E402


def _session(path: Path, profile_prefix: str | None = None) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix is not None:
        opts.enable_profiling = True
        opts.profile_file_prefix = profile_prefix
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def _summary(times: Sequence[float]) -> str:
    return f"{statistics.median(times):.0f} ({min(times):.0f})"


def compare(d: Path, name: str, rounds: int, calls: int) -> str:
    import etrt.runtime

    args = threads._inputs(d, name)
    module = etrt.runtime.load(d / f"{name}.etrt")
    session = _session(d / f"{name}.onnx")
    feeds = dict(zip((i.name for i in session.get_inputs()), args, strict=True))
    systems: dict[str, Callable[[], object]] = {
        "etrt": lambda: module.forward(*args),
        "ort": lambda: session.run(None, feeds),
    }
    sweep = np.ones(64 << 18, np.float32)  # 64 MB: more than this machine's caches
    times: dict[tuple[str, str], list[float]] = {}
    for call in systems.values():
        for _ in range(3):
            call()
    for _ in range(rounds):
        for system, call in systems.items():
            for mode in ("warm", "cold"):
                for _ in range(calls):
                    if mode == "cold":
                        sweep += 1.0
                    start = time.thread_time_ns()
                    call()
                    elapsed = (time.thread_time_ns() - start) / 1e3
                    times.setdefault((system, mode), []).append(elapsed)
    cells = [_summary(times[(s, m)]) for s in systems for m in ("warm", "cold")]
    return f"| {name} | " + " | ".join(cells) + " |"


def profiler_cost(d: Path, name: str, runs: int) -> str:
    """ONNX Runtime plain against profiled, alternated: its profiled node times are not its run."""
    feeds_in = threads._inputs(d, name)
    with tempfile.TemporaryDirectory() as tmp:
        plain = _session(d / f"{name}.onnx")
        profiled = _session(d / f"{name}.onnx", str(Path(tmp) / "ort"))
        feeds = dict(zip((i.name for i in plain.get_inputs()), feeds_in, strict=True))
        times: dict[str, list[float]] = {"plain": [], "profiled": []}
        for _ in range(3):
            plain.run(None, feeds)
            profiled.run(None, feeds)
        for _ in range(runs):
            for kind, session in (("plain", plain), ("profiled", profiled)):
                start = time.thread_time_ns()
                session.run(None, feeds)
                times[kind].append((time.thread_time_ns() - start) / 1e3)
        events = json.loads(Path(profiled.end_profiling()).read_text())
    per_run = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    node_count = len(nodes) // max(len(per_run), 1)
    return f"| {name} | {_summary(times['plain'])} | {_summary(times['profiled'])} | {node_count} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "threads")
    parser.add_argument("--models", nargs="+", default=["mobilenet_v3_small", "efficientnet_b0"])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--calls", type=int, default=8)
    args = parser.parse_args(argv)
    for name in args.models:
        for suffix in (".etrt", ".onnx", ".inputs.npz"):
            if not (args.dir / f"{name}{suffix}").exists():
                parser.error(
                    f"{args.dir / (name + suffix)} is missing: run threads.py --export-only"
                )
    print("| model | etrt warm | etrt cold | ORT warm | ORT cold |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in args.models:
        print(compare(args.dir, name, args.rounds, args.calls), flush=True)
    print("\n| model | ORT plain | ORT profiled | nodes |")
    print("| --- | ---: | ---: | ---: |")
    for name in args.models:
        print(profiler_cost(args.dir, name, 5 * args.rounds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Per convolution, one thread: etrt's kernel against ONNX Runtime's node on the same layer.

Runs each model's etrt program under `python -m etrt profile`'s tracer (each instruction's
fastest of --runs) and its ONNX file under ONNX Runtime's own profiler (each node's fastest of
--runs, less --ort-overhead microseconds per node, 0 by default: the profiler's own cost per
node, about 6 us, stays in ONNX Runtime's figures unless taken off), pairs the
k-th convolution of one with the k-th of the other (both keep the model's order; the pair's
output sizes must agree) and prints one row per layer kind (kernel, stride, depthwise or not,
output size) summed over the model, sorted by the gap, then the totals.

    build/bench-venv/bin/python benchmarks/conv_layers.py --dir build/threads \
        [--lib base=build/base --lib new=build/runtime] [--isa avx512 avx2] [--runs 15] \
        [--models mobilenet_v3_small efficientnet_b0]

Programs and ONNX files come from `benchmarks/threads.py --export-only`; the etrt side runs in a
worker process per instruction-set cap (ETRT_MAX_ISA, ETRT_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python")]

CONV_NAMES = ("aten::convolution", "etrt_fused::conv2d")


def _inputs(d: Path, model: str) -> list[np.ndarray]:
    with np.load(d / f"{model}.inputs.npz") as z:
        return [z[f"arg{i}"] for i in range(len(z.files))]


def etrt_convs(d: Path, model: str, runs: int) -> list[tuple[tuple[int, ...], float]]:
    """(output shape, fastest us) of each convolution instruction, in program order."""
    from etrt.profile import run_profile

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, a in enumerate(_inputs(d, model)):
            p = Path(tmp) / f"in{i}.npy"
            np.save(p, a)
            paths.append(p)
        prof = run_profile(
            d / f"{model}.etrt", "forward", paths, runs, Path(tmp) / "p.etdump", warmup=3,
            record_shapes=True,
        )  # fmt: skip
    best: dict[int, tuple[tuple[int, ...], float]] = {}
    for run in prof.dump.runs:
        for e in run.events:
            if e.name not in CONV_NAMES:
                continue
            shape = e.output_shapes[0] if e.output_shapes else ()
            us = e.duration_ns / 1000.0
            if e.instruction not in best or us < best[e.instruction][1]:
                best[e.instruction] = (tuple(shape), us)
    return [best[k] for k in sorted(best)]


OrtConv = tuple[tuple[int, ...], float, str]


def ort_convs(d: Path, model: str, runs: int, overhead_us: float) -> list[OrtConv]:
    """(output shape, fastest us less overhead, node's input shapes) of each Conv node, in
    execution order."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    with tempfile.TemporaryDirectory() as tmp:
        opts.enable_profiling = True
        opts.profile_file_prefix = str(Path(tmp) / "ort")
        session = ort.InferenceSession(
            str(d / f"{model}.onnx"), opts, providers=["CPUExecutionProvider"]
        )
        feeds = dict(zip((i.name for i in session.get_inputs()), _inputs(d, model), strict=True))
        for _ in range(3 + runs):
            session.run(None, feeds)
        events = json.loads(Path(session.end_profiling()).read_text())
    order: list[str] = []
    best: dict[str, float] = {}
    info: dict[str, tuple[tuple[int, ...], str]] = {}
    for e in events:
        args: dict[str, Any] = e.get("args", {})
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        if args.get("op_name") not in ("Conv", "FusedConv"):
            continue
        name = e["name"]
        if name not in best:
            order.append(name)
            out = next(iter(args["output_type_shape"][0].values()))
            ins = [next(iter(i.values())) for i in args["input_type_shape"]]
            info[name] = (tuple(out), json.dumps(ins))
        best[name] = min(best.get(name, 1e30), float(e["dur"]) - overhead_us)
    return [(info[n][0], best[n], info[n][1]) for n in order]


def kind_of(out: tuple[int, ...], ort_inputs: str) -> str:
    """A layer kind from ONNX Runtime's node: its weight [cout, cin/g, kh, kw] and output."""
    shapes = json.loads(ort_inputs)
    x, w = shapes[0], shapes[1]
    cout, cin_g, kh = w[0], w[1], w[2]
    hw = f"{out[-2]}x{out[-1]}"
    stride = max(1, round(x[-1] / out[-1]))
    if cin_g == 1 and cout > 1 and x[1] >= cout:
        return f"dw{kh}x{kh} s{stride} {hw}"
    if kh == 1:
        return f"pw {hw}"
    return f"conv{kh}x{kh} s{stride} {hw}"


def pairing(model: str, etrt_shapes: list[tuple[int, ...]], ort: list[OrtConv]) -> list[int]:
    """For each of ONNX Runtime's convolutions, the first unpaired etrt one with the same output
    size; ONNX Runtime's blocked layout pads the channels to its block (8 or 16). Branches of the
    same output size that the two run in another order (SqueezeNet's 1x1 and 3x3 expands) pair
    crosswise: their kinds' rows mix, the totals hold."""
    free = list(range(len(etrt_shapes)))
    order = []
    for k, (out, _, _) in enumerate(ort):

        def fits(shape: tuple[int, ...], out: tuple[int, ...] = out) -> bool:
            pads = {shape[1], -(-shape[1] // 8) * 8, -(-shape[1] // 16) * 16}
            return shape[-2:] == out[-2:] and out[1] in pads

        match = next((i for i in free if fits(etrt_shapes[i])), None)
        if match is None:
            raise SystemExit(f"{model}: ONNX Runtime's convolution {k} {out} has no etrt pair")
        free.remove(match)
        order.append(match)
    return order


def worker(args: argparse.Namespace) -> int:
    rows = {m: etrt_convs(args.dir, m, args.runs) for m in args.models}
    print(json.dumps(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "threads")
    parser.add_argument(
        "--lib", action="append", default=[], help="NAME=LIBDIR (default: the shipped ones)"
    )
    parser.add_argument("--isa", nargs="+", default=["avx512", "avx2"])
    parser.add_argument("--models", nargs="+", default=["mobilenet_v3_small", "efficientnet_b0"])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--ort-overhead", type=float, default=0.0,
        help="microseconds taken off each ONNX Runtime node (its profiler's own cost)",
    )  # fmt: skip
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    libs = [spec.partition("=") for spec in args.lib] or [("etrt", "", "")]
    etrt_rows: dict[str, dict[str, list[Any]]] = {}
    for name, _, lib in libs:
        for isa in args.isa:
            env = dict(os.environ, ETRT_NUM_THREADS="1", OMP_NUM_THREADS="1", ETRT_MAX_ISA=isa)
            if lib:
                env["ETRT_LIBRARY_DIR"] = str(Path(lib).resolve())
            argv = ["--worker", "--dir", str(args.dir), "--runs", str(args.runs)]
            out = subprocess.run(
                [sys.executable, __file__, *argv, "--models", *args.models],
                env=env, capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            etrt_rows[f"{name}/{isa}"] = json.loads(out.splitlines()[-1])
    cols = list(etrt_rows)
    print(f"load {os.getloadavg()[0]:.1f}; fastest of {args.runs}, microseconds; ratio to ORT")
    for model in args.models:
        ort = ort_convs(args.dir, model, args.runs, args.ort_overhead)
        sums: dict[str, list[float]] = defaultdict(lambda: [0.0] * (1 + len(cols)))
        counts: dict[str, int] = defaultdict(int)
        order = pairing(model, [tuple(shape) for shape, _ in etrt_rows[cols[0]][model]], ort)
        for k, (out, us, ins) in enumerate(ort):
            kind = kind_of(out, ins)
            counts[kind] += 1
            sums[kind][0] += us
            for c, col in enumerate(cols):
                sums[kind][1 + c] += etrt_rows[col][model][order[k]][1]
        print(f"\n{model}: {len(ort)} convolutions")
        print(f"| layers | n | ORT | {' | '.join(cols)} |")
        print("| --- | ---: | ---: |" + " ---: |" * len(cols))
        total = [0.0] * (1 + len(cols))
        for kind, s in sorted(sums.items(), key=lambda kv: kv[1][1] - kv[1][0], reverse=True):
            total = [a + b for a, b in zip(total, s, strict=True)]
            cells = " | ".join(f"{v:.0f} ({v / s[0]:.2f})" for v in s[1:])
            print(f"| {kind} | {counts[kind]} | {s[0]:.0f} | {cells} |")
        cells = " | ".join(f"{v:.0f} ({v / total[0]:.2f})" for v in total[1:])
        print(f"| all | {len(ort)} | {total[0]:.0f} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Per-operator scaling: etrt's profiler at one thread and at n, to name what does not get
faster with threads.

    python benchmarks/op_scaling.py [PROGRAM.etrt ...] [--threads 1 2] [--runs 20] [--top 15]
        [--by-instruction]

Default programs: the plain forward ones benchmarks/threads.py --export-only wrote (build/threads/),
run on the inputs saved beside them. Each thread count profiles in its own process
(ETRT_NUM_THREADS=n; ETRT_MAX_ISA passes through), `python -m etrt profile`'s way: the median
over --runs runs of each operator's time in one run, all its calls summed. Per program it prints
the run's speed-up and the serial fraction Amdahl's law reads from it, then the --top operators
by time at the most threads with their own speed-up; "flat" marks those under 1.2x, the time
that behaves as serial. The last row is the time between operators (dispatch, the runtime's own
work). On a machine other jobs load, the n-thread figures measure contention too.

--by-instruction adds a table of single instructions (index, operator, output shape) ranked by
the time each loses at n threads against a perfect split (t_n - t_1 / n): which layer of a
model, not which kind of operator, keeps the threads waiting.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python")]

FLAT = 1.2  # below this speed-up an operator counts as not scaling


@dataclass(frozen=True)
class OpTimes:
    name: str
    kind: str
    calls: int
    us: dict[int, float]  # threads -> median us per run


def profile_worker(program: Path, inputs: Sequence[Path], runs: int, shapes: bool) -> int:
    from etrt import profile

    with tempfile.TemporaryDirectory() as tmp:
        result = profile.run_profile(
            program, "forward", inputs, runs, Path(tmp) / "p.etdump", record_shapes=shapes
        )
    rows = [
        {"name": s.name, "kind": s.kind.name.lower() if s.kind is not None else "",
         "calls": s.calls, "us": s.median_ns / 1e3}
        for s in result.stats
    ]  # fmt: skip
    # Per instruction (asked for with --by-instruction): its time a run, summed over its calls
    # in that run (an instruction inside a loop runs several times), then the median over runs.
    instructions = []
    if shapes:
        runs = result.dump.runs
        per: dict[int, tuple[str, str, list[float]]] = {}
        for k, run in enumerate(runs):
            for e in run.events:
                shape = str(list(e.output_shapes[0])) if e.output_shapes else ""
                sums = per.setdefault(e.instruction, (e.name, shape, [0.0] * len(runs)))[2]
                sums[k] += (e.end_ns - e.start_ns) / 1e3
        instructions = [
            {"index": i, "name": name, "shape": shape, "us": float(np.median(sums))}
            for i, (name, shape, sums) in sorted(per.items())
        ]
    print(json.dumps({"run_us": result.median_run_ns / 1e3, "ops": rows,
                      "instructions": instructions}))  # fmt: skip
    return 0


def _inputs_for(program: Path, tmp: Path) -> list[Path]:
    """The inputs threads.py saved beside `program` as .npy files, or none (random inputs)."""
    npz = program.with_name(program.name.split(".")[0] + ".inputs.npz")
    if not npz.is_file():
        return []
    paths = []
    with np.load(npz) as z:
        for i in range(len(z.files)):
            path = tmp / f"{program.stem}.{i}.npy"
            np.save(path, z[f"arg{i}"])
            paths.append(path)
    return paths


def profile_at(
    program: Path, inputs: Sequence[Path], threads: int, runs: int, shapes: bool = False
) -> dict[str, object]:
    env = dict(os.environ, ETRT_NUM_THREADS=str(threads))
    cmd = [sys.executable, __file__, "--worker", str(program), "--runs", str(runs)]
    if shapes:
        cmd.append("--by-instruction")
    proc = subprocess.run(
        [*cmd, *(a for p in inputs for a in ("--input", str(p)))],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"error: profiling {program.name} at {threads} threads failed: "
                         f"{proc.stderr.strip().splitlines()[-1:]}")  # fmt: skip
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def amdahl_serial(t1: float, tn: float, n: int) -> float:
    """The serial fraction f with tn = t1 * (f + (1 - f) / n)."""
    if n <= 1:
        return 1.0
    return (tn / t1 - 1 / n) / (1 - 1 / n)


def report(
    program: Path, threads: Sequence[int], results: dict[int, dict[str, object]], top: int
) -> str:
    ops: dict[tuple[str, str], OpTimes] = {}
    for n, res in results.items():
        for row in res["ops"]:  # type: ignore[attr-defined]
            key = (row["name"], row["kind"])
            if key not in ops:
                ops[key] = OpTimes(row["name"], row["kind"], row["calls"], {})
            ops[key].us[n] = row["us"]
    lo, hi = threads[0], threads[-1]
    t1 = float(results[lo]["run_us"])  # type: ignore[arg-type]
    tn = float(results[hi]["run_us"])  # type: ignore[arg-type]
    lines = [
        f"{program.name}: run {t1 / 1e3:.2f} ms at {lo} thread(s), {tn / 1e3:.2f} ms at {hi}: "
        f"speed-up {t1 / tn:.2f}, efficiency {t1 / tn / (hi / lo):.2f}, "
        f"serial fraction (Amdahl) {amdahl_serial(t1, tn, hi // lo):.2f}"
    ]
    between = [o for o in ops.values() if o.kind == ""]
    ranked = sorted((o for o in ops.values() if o.kind != ""), key=lambda o: -o.us.get(hi, 0.0))
    flat_us = sum(o.us.get(hi, 0.0) for o in ops.values()
                  if o.us.get(lo, 0.0) / max(o.us.get(hi, 0.0), 1e-9) < FLAT)  # fmt: skip
    lines.append(f"time in operators under {FLAT}x (and between them) at {hi} threads: "
                 f"{flat_us / 1e3:.2f} ms of {tn / 1e3:.2f} ({flat_us / tn:.0%})")  # fmt: skip
    lines.append(
        f"| operator | kind | calls | {lo} thr us | {hi} thr us | speed-up | share at {hi} | |"
    )
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for o in [*ranked[:top], *between]:
        a, b = o.us.get(lo, 0.0), o.us.get(hi, 0.0)
        up = a / b if b > 0 else float("inf")
        flag = "flat" if up < FLAT else ""
        lines.append(f"| {o.name} | {o.kind} | {o.calls} | {a:.1f} | {b:.1f} | {up:.2f} | "
                     f"{b / tn:.1%} | {flag} |")  # fmt: skip
    return "\n".join(lines)


def instruction_report(
    threads: Sequence[int], results: dict[int, dict[str, object]], top: int
) -> str:
    """The instructions that lose the most time at the higher count against a perfect split."""
    lo, hi = threads[0], threads[-1]
    at_lo = {r["index"]: r for r in results[lo]["instructions"]}  # type: ignore[attr-defined]
    rows = []
    for r in results[hi]["instructions"]:  # type: ignore[attr-defined]
        a = at_lo.get(r["index"])
        if a is not None:
            rows.append((r["us"] - a["us"] * lo / hi, r, a["us"]))
    rows.sort(key=lambda row: -row[0])
    lost = sum(row[0] for row in rows)
    lines = [
        f"time lost at {hi} threads against a perfect split of each instruction: "
        f"{lost / 1e3:.2f} ms",
        f"| instruction | operator | output | {lo} thr us | {hi} thr us | speed-up | lost us |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for gone, r, a in rows[:top]:
        up = a / r["us"] if r["us"] > 0 else float("inf")
        lines.append(f"| {r['index']} | {r['name']} | {r['shape']} | {a:.1f} | {r['us']:.1f} | "
                     f"{up:.2f} | {gone:.1f} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("programs", nargs="*", type=Path)
    parser.add_argument("--threads", type=int, nargs=2, default=[1, 2], metavar=("LOW", "HIGH"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--by-instruction",
        action="store_true",
        help="also rank single instructions (with their output shapes) by the time they lose",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        return profile_worker(args.worker, args.input, args.runs, args.by_instruction)
    if args.runs < 1 or min(args.threads) < 1 or args.threads[0] >= args.threads[1]:
        parser.error("--runs must be at least 1 and --threads LOW HIGH with 1 <= LOW < HIGH")
    # Not the decoders: their runs are a generation of one-token calls, not one forward.
    programs = args.programs or sorted(
        p for p in (ROOT / "build" / "threads").glob("*.etrt")
        if not p.name.endswith((".xnn.etrt", "-decode.etrt"))
    )  # fmt: skip
    if not programs:
        parser.error(
            "no programs given and none in build/threads (benchmarks/threads.py --export-only)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        for program in programs:
            inputs = _inputs_for(program, Path(tmp))
            results = {
                n: profile_at(program, inputs, n, args.runs, args.by_instruction)
                for n in args.threads
            }
            print(report(program, args.threads, results, args.top), flush=True)
            if args.by_instruction:
                print(flush=True)
                print(instruction_report(args.threads, results, args.top), flush=True)
            print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

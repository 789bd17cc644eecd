"""Side by side at a fixed thread count: ONNX Runtime and one or more builds of etrt's libraries
(each under each instruction-set cap), the workers alive at once and measured in turn round by
round, so the machine's load falls on all of them alike. Prints, per (model, system), the
median over rounds of each round's median ms and each etrt column's ratio to ONNX Runtime
(lower is better); then the same for the fastest call of all rounds, which a loaded machine
disturbs least.

    build/bench-venv/bin/python benchmarks/parity.py --lib base=build/base \
        --lib new=build/runtime:build/threads-new [--isa avx512 avx2] [--threads 1] [--models ...]
        [--runs 20] [--rounds 5] [--xnn] [--env NAME:VAR=VALUE]

--lib NAME=LIBDIR[:PROGRAMS]: a directory of libetrt*.so and, optionally, one of programs
(default --dir, where `benchmarks/threads.py --export-only` wrote them and the ONNX files).
--env NAME:VAR=VALUE sets an environment variable for --lib NAME's workers only (one library
under two pool policies: `--lib run=build/runtime --lib sleep=build/runtime --env
sleep:ETRT_POOL_WAIT=sleep`). Several --threads run side by side too (each count its own
workers), and then each system's parallel efficiency t1 / (n tn) follows the figures.
--cpuid-cap SO (tools/cpuid_cap/cpuid_cap.c, built) shows every worker an AVX2 CPU, so ONNX
Runtime's MLAS takes its AVX2 kernels beside etrt's `--isa avx2` ones.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

import threads  # noqa: E402


def start(
    system: str, d: Path, n: int, env: dict[str, str], cpuid_cap: Path | None = None
) -> threads.Worker:
    argv = ["--worker", system, "--threads", str(n), "--dir", str(d)]
    full = dict(os.environ, OMP_NUM_THREADS=str(n), ETRT_NUM_THREADS=str(n), **env)
    if cpuid_cap is not None:
        full = threads.capped_env(full, cpuid_cap.resolve())
    proc = subprocess.Popen(
        [sys.executable, threads.__file__, *argv],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=full,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise threads.BenchError(f"the {system} worker did not start")
    return threads.Worker(proc, json.loads(line))


def parse_env(specs: list[str]) -> dict[str, dict[str, str]]:
    """--env NAME:VAR=VALUE, per --lib NAME."""
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        name, _, assign = spec.partition(":")
        var, eq, value = assign.partition("=")
        if not name or not var or not eq:
            raise SystemExit(f"parity.py: --env {spec!r}: expected NAME:VAR=VALUE")
        out.setdefault(name, {})[var] = value
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", action="append", required=True, help="NAME=LIBDIR[:PROGRAMS]")
    parser.add_argument(
        "--env", action="append", default=[], help="NAME:VAR=VALUE, for --lib NAME's workers"
    )
    parser.add_argument("--isa", nargs="+", default=["avx512", "avx2"], choices=threads.ISAS)
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--models", nargs="+", default=list(threads.VISION[:4]))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--xnn", action="store_true", help="also the XNNPACK programs")
    parser.add_argument(
        "--clock", choices=tuple(threads.CLOCKS), default="wall",
        help="thread: the calling thread's CPU time (one thread only)",
    )  # fmt: skip
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "threads")
    parser.add_argument(
        "--cpuid-cap", type=Path, metavar="SO",
        help="tools/cpuid_cap/cpuid_cap.c built: every worker, ONNX Runtime's too, sees AVX2",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.cpuid_cap is not None and not args.cpuid_cap.is_file():
        raise SystemExit(f"parity.py: --cpuid-cap {args.cpuid_cap}: no such file")
    if args.clock == "thread" and args.threads != [1]:
        raise SystemExit("parity.py: --clock thread times the calling thread: --threads 1 only")
    extra_env = parse_env(args.env)
    os.environ["ETRT_BENCH_CLOCK"] = args.clock
    several = len(args.threads) > 1
    workers: dict[tuple[str, int], threads.Worker] = {}
    for n in args.threads:
        workers[("ort", n)] = start("ort", args.dir, n, {}, args.cpuid_cap)
        for spec in args.lib:
            name, _, where = spec.partition("=")
            lib, _, programs = where.partition(":")
            for isa in args.isa:
                env = {"ETRT_LIBRARY_DIR": str(Path(lib).resolve()), "ETRT_MAX_ISA": isa}
                env.update(extra_env.get(name, {}))
                workers[(f"{name}/{isa}", n)] = start(
                    "etrt", Path(programs or args.dir), n, env, args.cpuid_cap
                )
    load = os.getloadavg()[0]
    print(f"{' '.join(map(str, args.threads))} thread(s), load {load:.1f} at start", flush=True)
    for model in args.models:
        calls = [(w, model) for w in workers]
        if args.xnn:
            calls += [(w, f"{model}:xnn") for w in workers if w[0] != "ort"]
        samples: dict[tuple[str, int], list[float]] = {}
        fastest: dict[tuple[str, int], float] = {}
        for r in range(args.rounds):
            for w, call in calls:
                key = w if call == model else (f"{w[0]}+xnn", w[1])
                warmup = max(3, args.runs // 5) if r == 0 else 2
                samples.setdefault(key, []).append(workers[w].median_ms(call, args.runs, warmup))
                fastest[key] = min(fastest.get(key, 1e30), workers[w].fastest_ms)
        medians = {k: statistics.median(v) for k, v in samples.items()}
        for n in args.threads:
            tag = f" {n}t" if several else ""
            ort = medians[("ort", n)]
            row = [(k, v) for (k, t), v in medians.items() if t == n and k != "ort"]
            cols = "  ".join(f"{k} {v:.2f} ({v / ort:.2f})" for k, v in row)
            print(f"{model}{tag}: ort {ort:.2f}  {cols}  load {os.getloadavg()[0]:.1f}", flush=True)
            best = fastest[("ort", n)]
            row = [(k, v) for (k, t), v in fastest.items() if t == n and k != "ort"]
            cols = "  ".join(f"{k} {v:.2f} ({v / best:.2f})" for k, v in row)
            print(f"  fastest: ort {best:.2f}  {cols}", flush=True)
        if several and 1 in args.threads:
            # Parallel efficiency t1 / (n tn) of each system's medians.
            for n in (t for t in args.threads if t > 1):
                cols = "  ".join(
                    f"{k} {medians[(k, 1)] / (n * v):.2f}"
                    for (k, t), v in medians.items() if t == n and (k, 1) in medians
                )  # fmt: skip
                print(f"  efficiency at {n}: {cols}", flush=True)
    for w in workers.values():
        w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

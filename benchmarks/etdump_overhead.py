"""What the profiler hook costs: median execute() time with no tracer, with a tracer that does
nothing, and with ETDumpGen recording, side by side.

    python benchmarks/etdump_overhead.py [--runs N]

Runs tools/etrt_profile --overhead, built against the Conan package (`conan create .` first) by
tests/apps/etdump; the three are measured interleaved in one process, so drift hits all alike.
With no tracer attached Method::execute takes the same instruction loop as before the hook
existed (the tracer is checked once per run, not per instruction).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

import etrt  # noqa: E402
from conan_consumer import build_consumer  # noqa: E402
from models import make  # noqa: E402

CASES = [("mlp", 1), ("mlp", 32), ("cnn", 1), ("cnn", 32), ("transformer", 1), ("transformer", 32)]
PATTERN = re.compile(r"no_tracer_us=([0-9.]+) null_tracer_us=([0-9.]+) etdump_us=([0-9.]+)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="executions per configuration")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print("building the profiler against the Conan package ...", file=sys.stderr)
        build = build_consumer(ROOT / "tests" / "apps" / "etdump", work / "build")
        profiler = build / "etrt_profile"
        print(
            f"{'model':<12} {'batch':>5} {'instrs':>6} {'no tracer us':>13} {'null us':>9} "
            f"{'ratio':>6} {'etdump us':>10} {'ratio':>6} {'ns/event':>9}"
        )
        for name, batch in CASES:
            model, inputs = make(name, batch)
            program = etrt.export(model, inputs)
            path = work / f"{name}{batch}.etrt"
            program.save(path)
            raw = work / f"{name}{batch}.bin"
            raw.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
            cmd = [str(profiler), str(path), "--inputs", str(raw), "--runs", str(args.runs)]
            proc = subprocess.run(
                [*cmd, "--overhead"],
                capture_output=True, text=True, check=True,
            )
            match = PATTERN.search(proc.stdout)
            if not match:
                raise SystemExit(f"no timings in: {proc.stdout}{proc.stderr}")
            none, null, gen = (float(g) for g in match.groups())
            count = len(program.info.plan.instructions)
            print(
                f"{name:<12} {batch:>5} {count:>6} {none:>13.2f} {null:>9.2f} {null / none:>6.3f} "
                f"{gen:>10.2f} {gen / none:>6.3f} {(gen - none) * 1e3 / count:>9.1f}"
            )


if __name__ == "__main__":
    main()

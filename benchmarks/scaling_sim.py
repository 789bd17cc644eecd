"""How etrt's work would spread over 2, 4, 8 and 16 threads, measured on one core (benchmarks/
scaling_sim.cpp): the kernels split each loop as they would at n threads, every chunk runs and
is timed on the calling thread, and the chunks are dealt to n virtual workers. For a machine
with fewer cores than the sweep needs: it names the operators whose split leaves threads idle
(too few parts, one thread's serial work), not what shared memory bandwidth or wake-ups cost.

    python benchmarks/scaling_sim.py [--models resnet18 ...] [--threads 2 4 8 16] [--runs 9]
        [--by-shape] [--top 10] [--dir build/threads] [--build-dir build/runtime]

Programs and inputs: benchmarks/threads.py --export-only's (plain etrt flavour; XNNPACK's
own pool is not simulated). Run it at real-time priority (`chrt -f 10`) on a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = (
    "resnet18",
    "mobilenet_v3_small",
    "efficientnet_b0",
    "squeezenet1_1",
    "vit_b_16",
    "bert",
    "gpt2",
    "llama",
)


def build(build_dir: Path, out: Path) -> Path:
    compiler = os.environ.get("CXX") or shutil.which("c++") or "g++"
    cmd = [compiler, "-std=c++17", "-O2", "-DETRT_API_VERSION=1", f"-I{ROOT / 'include'}",
           str(ROOT / "benchmarks" / "scaling_sim.cpp"), "-o", str(out), f"-L{build_dir}",
           "-Wl,--no-as-needed", "-letrt_kernels_optimized", "-letrt",
           f"-Wl,-rpath,{build_dir.resolve()}"]  # fmt: skip
    subprocess.run(cmd, check=True)
    return out


def inputs_bin(d: Path, name: str, out: Path) -> Path:
    """The inputs threads.py saved, as the raw bytes scaling_sim reads (input order)."""
    with np.load(d / f"{name}.inputs.npz") as z:
        out.write_bytes(b"".join(np.ascontiguousarray(z[k]).tobytes() for k in z.files))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--threads", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument(
        "--by-shape", action="store_true", help="one row per operator and output shape"
    )
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "threads")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build" / "runtime")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(args.build_dir, Path(tmp) / "scaling_sim")
        for name in args.models:
            program = args.dir / f"{name}.etrt"
            if not program.exists():
                print(
                    f"{program} is missing: run benchmarks/threads.py --export-only first",
                    file=sys.stderr,
                )
                return 1
            data = inputs_bin(args.dir, name, Path(tmp) / "in.bin")
            cmd = [str(exe), str(program), "--inputs", str(data), "--runs", str(args.runs)]
            cmd += ["--threads", ",".join(map(str, args.threads)), "--top", str(args.top)]
            if args.by_shape:
                cmd.append("--by-shape")
            print(f"== {name}", flush=True)
            subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

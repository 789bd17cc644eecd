"""Heavy kernels (addmm, mm, bmm, convolution, max pooling) against eager PyTorch, one thread.

Builds benchmarks/kernels_bench.cpp against an etrt build tree, runs it, times the same cases in
torch and prints the best of 15 timings in microseconds (the machine may be shared), GFLOP/s and
the etrt/torch time ratio (lower is better).

    python benchmarks/kernels_bench.py --build-dir build/kernels-heavy
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Timing:
    micros: float
    gflops: float


def build_bench(build_dir: Path) -> Path:
    exe = build_dir / "kernels_bench"
    compiler = os.environ.get("CXX") or shutil.which("c++") or "g++"
    cmd = [
        compiler,
        "-std=c++17",
        "-O2",
        "-DETRT_API_VERSION=1",
        f"-I{ROOT / 'include'}",
        str(ROOT / "benchmarks" / "kernels_bench.cpp"),
        "-o",
        str(exe),
        f"-L{build_dir}",
        "-Wl,--no-as-needed",
        "-letrt_kernels_optimized",
        "-letrt",
        f"-Wl,-rpath,{build_dir.resolve()}",
    ]
    subprocess.run(cmd, check=True)
    return exe


def run_etrt(exe: Path, only: str = "") -> dict[str, Timing]:
    cmd = [str(exe), only] if only else [str(exe)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    results: dict[str, Timing] = {}
    for line in out.splitlines():
        name, micros, gflops = line.split(maxsplit=2)
        try:
            results[name] = Timing(float(micros), float(gflops))
        except ValueError:
            print(f"etrt: {line}", file=sys.stderr)
    return results


def best_micros(fn: Callable[[], object]) -> float:
    fn()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        if time.perf_counter() - t0 > 2e-3 or reps > 1 << 20:
            break
        reps *= 2
    samples = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        samples.append((time.perf_counter() - t0) / reps)
    return min(samples) * 1e6


def rand(*sizes: int) -> torch.Tensor:
    return torch.rand(*sizes) - 0.5


def torch_cases() -> dict[str, tuple[Callable[[], object], float]]:
    cases: dict[str, tuple[Callable[[], object], float]] = {}

    def linear(name: str, m: int, k: int, n: int) -> None:
        x, w, b = rand(m, k), rand(n, k), rand(n)
        cases[name] = (lambda: torch.addmm(b, x, w.t()), 2.0 * m * n * k)

    def mm(name: str, m: int, k: int, n: int) -> None:
        a, b = rand(m, k), rand(k, n)
        cases[name] = (lambda: torch.mm(a, b), 2.0 * m * n * k)

    def bmm(name: str, batch: int, m: int, k: int, n: int, transposed: bool) -> None:
        a = rand(batch, m, k)
        b = rand(batch, n, k).transpose(1, 2) if transposed else rand(batch, k, n)
        cases[name] = (lambda: torch.bmm(a, b), 2.0 * batch * m * n * k)

    def attention() -> None:
        # The strides torch.export gives the transformer block's attention at batch 32.
        x = rand(32, 16, 64).transpose(0, 1)
        w = rand(192, 64).t().expand(16, 64, 192)
        cases["bmm_inproj_16x32x64x192"] = (lambda: torch.bmm(x, w), 2.0 * 16 * 32 * 64 * 192)
        q = rand(16, 128, 16).permute(1, 0, 2)
        k = rand(16, 128, 16).permute(1, 2, 0)
        cases["bmm_qkT_128x16x16x16"] = (lambda: torch.bmm(q, k), 2.0 * 128 * 16 * 16 * 16)
        a = rand(128, 16, 16)
        v = rand(16, 128, 16).permute(1, 0, 2)
        cases["bmm_av_128x16x16x16"] = (lambda: torch.bmm(a, v), 2.0 * 128 * 16 * 16 * 16)

    def conv(
        name: str, batch: int, cin: int, cout: int, hw: int, kk: int, pad: int,
        stride: int = 1, groups: int = 1,
    ) -> None:  # fmt: skip
        # Eager's own layout (NCHW), whatever layout etrt's case uses.
        x, w, b = rand(batch, cin, hw, hw), rand(cout, cin // groups, kk, kk), rand(cout)
        o = (hw + 2 * pad - kk) // stride + 1
        cases[name] = (
            lambda: F.conv2d(x, w, b, stride=stride, padding=pad, groups=groups),
            2.0 * batch * cout * o * o * (cin // groups) * kk * kk,
        )

    def pool(name: str, batch: int, c: int, hw: int) -> None:
        x = rand(batch, c, hw, hw)
        cases[name] = (lambda: F.max_pool2d(x, 2, return_indices=True), float(batch * c * hw * hw))

    def activation(name: str, fn: Callable[[torch.Tensor], torch.Tensor], c: int, hw: int) -> None:
        x = rand(1, c, hw, hw)
        cases[name] = (lambda: fn(x), float(c * hw * hw))

    linear("linear_1x784x256", 1, 784, 256)
    linear("linear_32x784x256", 32, 784, 256)
    linear("linear_1x256x10", 1, 256, 10)
    linear("linear_32x256x10", 32, 256, 10)
    linear("linear_32x3136x10", 32, 3136, 10)
    linear("linear_16x64x192", 16, 64, 192)
    linear("linear_512x64x192", 512, 64, 192)
    linear("linear_512x256x64", 512, 256, 64)
    mm("mm_32x784x256", 32, 784, 256)
    mm("mm_256x256x256", 256, 256, 256)
    bmm("bmm_16x64x64x64", 16, 64, 64, 64, False)
    bmm("bmm_4x16x16x16_qkT", 4, 16, 16, 16, True)
    attention()
    conv("conv_1x1x16_28_3x3", 1, 1, 16, 28, 3, 1)
    conv("conv_32x1x16_28_3x3", 32, 1, 16, 28, 3, 1)
    conv("conv_8x16x32_14_3x3", 8, 16, 32, 14, 3, 1)
    conv("nhwc_resnet_stem", 1, 3, 64, 224, 7, 3, 2)
    conv("nhwc_resnet_l1_3x3", 1, 64, 64, 56, 3, 1)
    conv("nhwc_resnet_l2_3x3", 1, 128, 128, 28, 3, 1)
    conv("nhwc_resnet_l3_3x3", 1, 256, 256, 14, 3, 1)
    conv("nhwc_resnet_l4_3x3", 1, 512, 512, 7, 3, 1)
    conv("nhwc_resnet_l4_down", 1, 256, 512, 14, 3, 1, 2)
    conv("nhwc_pointwise_96x576_7", 1, 96, 576, 7, 1, 0)
    conv("nhwc_pointwise_16x72_56", 1, 16, 72, 56, 1, 0)
    conv("nhwc_pointwise_144x24_56", 1, 144, 24, 56, 1, 0)
    conv("nhwc_dw3x3_72_56", 1, 72, 72, 56, 3, 1, 1, 72)
    conv("nhwc_dw5x5s2_144_56", 1, 144, 144, 56, 5, 2, 2, 144)
    conv("nhwc_dw3x3_32_112", 1, 32, 32, 112, 3, 1, 1, 32)
    pool("maxpool_1x16x28", 1, 16, 28)
    activation("silu_32_112", F.silu, 32, 112)
    activation("silu_240_28", F.silu, 240, 28)
    activation("sigmoid_240_28", torch.sigmoid, 240, 28)
    pool("maxpool_32x16x28", 32, 16, 28)
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--build-dir",
        type=Path,
        default=ROOT / "build" / "kernels-heavy",
        help="CMake build tree holding libetrt.so and libetrt_kernels_optimized.so",
    )
    parser.add_argument(
        "--only", default="", help="run only the cases whose name starts with this prefix"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="time etrt and torch in turn this many times per case, keep each one's best "
        "(a busy machine)",
    )
    args = parser.parse_args()
    if not (args.build_dir / "libetrt_kernels_optimized.so").exists():
        print(
            f"error: no libetrt_kernels_optimized.so in {args.build_dir}; build etrt first",
            file=sys.stderr,
        )
        return 2
    torch.set_num_threads(1)
    exe = build_bench(args.build_dir)
    columns = ("etrt us", "torch us", "etrt GF/s", "torch GF/s", "ratio")
    print(f"{'case':<24}" + "".join(f"{c:>11}" for c in columns))
    for name, (fn, flops) in torch_cases().items():
        if not name.startswith(args.only):
            continue
        e, t = None, float("inf")
        for _ in range(max(1, args.rounds)):  # in turn, so both see the same load
            got = run_etrt(exe, name).get(name)
            if got is not None and (e is None or got.micros < e.micros):
                e = got
            t = min(t, best_micros(fn))
        if e is None:
            print(f"{name:<24}{'-':>11}{t:>11.2f}")
            continue
        values = (e.micros, t, e.gflops, flops / t / 1e3, e.micros / t)
        print(f"{name:<24}" + "".join(f"{v:>11.2f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())

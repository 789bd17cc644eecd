"""Each int8 convolution of a PT2E MobileNetV2, timed on etrt's int8 kernels and as a delegate
call of its own on Debian's XNNPACK (qs8): the measurement behind the cost rule's int8 decision
(python/etrt/xnnpack/cost.py, QS8_DELEGATE; docs/quantization.md).

    ETRT_NUM_THREADS=1 python benchmarks/xnnpack_int8_layers.py [--runs N]
    ETRT_MAX_ISA=avx2 ETRT_NUM_THREADS=1 python benchmarks/xnnpack_int8_layers.py

Both programs run through the profiler (libetrt_etdump.so beside the runtime: the installed
wheel, or ETRT_LIBRARY_DIR); each layer's figure is its fastest run, in us. The delegate's
figure includes its boundary (an NCHW input is permuted, as etrt's first convolution does too).
ETRT_MAX_ISA caps etrt's kernels only: the 2022 XNNPACK picks its kernels from the CPU and has
no such knob, so under the cap it still runs its AVX-512 ones.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

import etrt  # noqa: E402
import vision  # noqa: E402
from etrt.etdump import EventKind  # noqa: E402
from etrt.ir import KernelCall  # noqa: E402
from etrt.profile import run_profile  # noqa: E402
from etrt.xnnpack import partition  # noqa: E402


def _fastest(path: Path, x: Path, runs: int, kind: EventKind, name: str) -> list[tuple[int, int]]:
    """(instruction, fastest ns) of each event of `kind` named `name`, in program order."""
    profile = run_profile(path, "forward", [x], runs, path.with_suffix(".etdump"), warmup=2)
    best: dict[int, int] = {}
    for run in profile.dump.runs:
        for e in run.events:
            if e.kind == kind and e.name == name:
                best[e.instruction] = min(best.get(e.instruction, 1 << 62), e.duration_ns)
    return sorted(best.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    model = vision.live(vision.model("mobilenet_v2"))
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    calibration = [(torch.randn(1, 3, 224, 224),) for _ in range(2)]
    converted = etrt.quantize(model, (x,), calibration=calibration)
    kernels = etrt.export(converted, (x,))
    # One partition per layer: no merging (the additions then stay with etrt's kernels).
    merge = partition._Merger.creates_cycle
    partition._Merger.creates_cycle = lambda self, group, step: True  # type: ignore[method-assign]
    try:
        layers = etrt.export(converted, (x,), backend="xnnpack-all")
    finally:
        partition._Merger.creates_cycle = merge  # type: ignore[method-assign]
    plan = kernels.info.plan
    convs = [
        instr for instr in plan.instructions
        if isinstance(instr, KernelCall) and plan.operators[instr.op_index] == "etrt_quant::conv2d"
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        np.save(work / "x.npy", x.numpy())
        a, b = kernels.save(work / "int8.etrt"), layers.save(work / "xnn.etrt")
        etrt_times = _fastest(
            a, work / "x.npy", args.runs, EventKind.OPERATOR, "etrt_quant::conv2d"
        )
        xnn_times = _fastest(b, work / "x.npy", args.runs, EventKind.DELEGATE, "XnnpackBackend")
    assert len(etrt_times) == len(xnn_times) == len(convs), (len(etrt_times), len(xnn_times))
    values = plan.values
    faster = 0
    total_e = total_x = 0.0
    print(f"{'layer':<44} {'etrt us':>8} {'xnn us':>8} {'xnn/etrt':>8}")
    for instr, (_, te), (_, tx) in zip(convs, etrt_times, xnn_times, strict=True):
        # Read from a loaded program, the call's arguments are the schema's then its output.
        x_in, w, out = (values[instr.args[i]] for i in (0, 1, -1))
        groups = values[instr.args[13]].val  # type: ignore[union-attr]
        o, _i, kh, kw = w.sizes  # type: ignore[union-attr]
        cin, cout = x_in.sizes[1], o  # type: ignore[union-attr]
        kind = "dw" if groups > 1 else "conv"
        s = getattr(values[instr.args[10]], "items", (1,))[0]
        oh, ow = out.sizes[2:]  # type: ignore[union-attr]
        label = f"{kind} {kh}x{kw} s{s} {cin}->{cout} {oh}x{ow}"
        faster += tx < te
        total_e += te / 1e3
        total_x += tx / 1e3
        print(f"{label:<44} {te / 1e3:8.1f} {tx / 1e3:8.1f} {tx / te:8.2f}")
    print(f"{'all ' + str(len(convs)) + ' convolutions':<44} {total_e:8.1f} {total_x:8.1f} "
          f"{total_x / total_e:8.2f}")  # fmt: skip
    print(f"XNNPACK faster on {faster} of {len(convs)} layers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

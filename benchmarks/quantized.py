"""int8 CNNs and a BERT encoder: etrt's int8 program (PT2E, etrt.quantize) against etrt float32,
and against ONNX Runtime running the model quantized by its own quantize_static (QDQ,
per-channel int8 weights) when onnxruntime and onnx are importable. Median latency at one
thread, batch 1, random weights with live activations (tests/vision.py; `bert` is
transformers' BertModel at hidden 256, 4 layers, 128 tokens: tests/transformer_models.py's
"bench" size), and the program sizes.

    python benchmarks/quantized.py [--models resnet18 mobilenet_v2 bert] [--runs N] [--rounds N]

etrt runs in this process through the Python binding (the installed wheel, or
ETRT_LIBRARY_DIR), on one thread as ONNX Runtime and torch do here unless ETRT_NUM_THREADS says
otherwise. The contenders are measured in turn `--rounds` times and each figure is the
median of its rounds' medians, so all see the same load: compare figures within one run. CPU
time is printed beside wall time: on a shared machine it is the steadier of the two.
ETRT_INT8_ISA=portable times the portable int8 kernels instead of AVX-512 VNNI; ETRT_MAX_ISA=avx2
caps etrt's kernels as on a CPU without AVX-512 (XNNPACK picks its own: preload
tools/xnnpack/avx2_cap.c to cap it too). `--xnnpack` adds the int8 program exported with
backend="xnnpack" (the cost rule: the int8 layers XNNPACK runs faster on this machine, as
ETRT_MAX_ISA sees it) and with "xnnpack-all" (every int8 convolution and addition it can run).

Targets (issue 27, one thread): int8 at most 0.5x etrt float32, and no slower than ONNX Runtime's
QDQ model.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]
os.environ.setdefault("ETRT_NUM_THREADS", "1")  # the targets' one thread, as ONNX Runtime's

import etrt  # noqa: E402
import transformer_models  # noqa: E402
import vision  # noqa: E402


def _median_ms(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """The median wall and CPU time of one call, in ms: on a machine other jobs share, the CPU
    time (all contenders run on one thread) is the steadier figure."""
    fn()
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu)


class _ByKeyword(torch.nn.Module):
    def __init__(self, bert: torch.nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        out = self.bert(input_ids=ids, attention_mask=mask, return_dict=False)
        return tuple(out[:2])


def _ort_session(
    model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], work: Path
) -> Callable[[], object] | str:
    """ONNX Runtime on the QDQ model from quantize_static, or why there is none."""
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import (
            CalibrationDataReader,
            QuantFormat,
            QuantType,
            quantize_static,
        )
    except ImportError as exc:
        return f"onnxruntime not importable ({exc.name})"
    ort.set_default_logger_severity(3)  # its notes on unused initializers are not figures
    logging.getLogger().setLevel(logging.ERROR)  # nor the quantizer's pre-processing advice
    fp32, int8 = work / "model.onnx", work / "model.int8.onnx"
    feed = {f"x{i}": t.numpy() for i, t in enumerate(inputs)}
    if len(inputs) == 2:  # BERT: the tracer passes inputs by keyword, outputs as a tuple
        model = _ByKeyword(model)
    try:
        torch.onnx.export(model, inputs, str(fp32), input_names=list(feed), dynamo=False)
    except Exception as exc:  # the exporter's many failure types
        return f"torch.onnx.export failed: {str(exc).splitlines()[0]}"

    class Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.items = iter([feed])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.items, None)

    quantize_static(
        str(fp32), str(int8), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
    )  # fmt: skip
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(int8), options, providers=["CPUExecutionProvider"])
    return lambda: session.run(None, feed)


def _case(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], list[Any]]:
    """The model, its inputs and two calibration batches."""
    if name == "bert":
        model = transformer_models.bert("bench")
        calibration = [transformer_models.inputs("bert", "bench", seed=s) for s in (1, 2)]
        return model, transformer_models.inputs("bert", "bench"), calibration
    model = vision.live(vision.model(name))
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    return model, (x,), [(torch.randn(1, 3, 224, 224),) for _ in range(2)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2", "bert"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--xnnpack", action="store_true", help="also int8 delegated to XNNPACK")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if os.environ["ETRT_NUM_THREADS"] != "1":
        print(f"note: etrt on {os.environ['ETRT_NUM_THREADS']} threads, ONNX Runtime on one")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in args.models:
            model, inputs, calibration = _case(name)
            converted = etrt.quantize(model, inputs, calibration=calibration)
            q_prog, f_prog = etrt.export(converted, inputs), etrt.export(model, inputs)
            q_mod = etrt.load(q_prog.save(work / f"{name}.int8.etrt"))
            f_mod = etrt.load(f_prog.save(work / f"{name}.etrt"))
            xn = [t.numpy() for t in inputs]
            contenders: dict[str, Callable[[], object]] = {
                "etrt int8": lambda m=q_mod, a=xn: m.forward(*a),  # type: ignore[misc]
                "etrt float32": lambda m=f_mod, a=xn: m.forward(*a),  # type: ignore[misc]
            }
            for backend in ("xnnpack", "xnnpack-all") if args.xnnpack else ():
                x_prog = etrt.export(converted, inputs, backend=backend)
                ops = x_prog.info.instruction_ops
                calls, left = ops.count("delegate:XnnpackBackend"), ops.count("etrt_quant::conv2d")
                print(f"{name}: int8 {backend}: {calls} delegate calls, {left} int8 convs left")
                x_mod = etrt.load(x_prog.save(work / f"{name}.int8-{backend}.etrt"))
                contenders[f"etrt int8 {backend}"] = lambda m=x_mod, a=xn: m.forward(*a)  # type: ignore[misc]
            ort_run = _ort_session(model, inputs, work)
            if isinstance(ort_run, str):
                print(f"{name}: ONNX Runtime left out: {ort_run}")
            else:
                contenders["onnxruntime int8 (QDQ)"] = ort_run
            medians: dict[str, list[tuple[float, float]]] = {k: [] for k in contenders}
            for _ in range(args.rounds):
                for label, fn in contenders.items():
                    medians[label].append(_median_ms(fn, args.runs))
            figures = {k: statistics.median(w for w, _ in v) for k, v in medians.items()}
            cpu = {k: statistics.median(c for _, c in v) for k, v in medians.items()}
            print(f"{name}: program int8 {len(q_prog) / 2**20:.1f} MiB, float32 "
                  f"{len(f_prog) / 2**20:.1f} MiB ({len(q_prog) / len(f_prog):.2f}x)")  # fmt: skip
            for label, ms in figures.items():
                ratio, cpu_ratio = ms / figures["etrt float32"], cpu[label] / cpu["etrt float32"]
                print(f"  {label:<24} {ms:9.2f} ms  {ratio:5.2f}x etrt float32   CPU "
                      f"{cpu[label]:9.2f} ms  {cpu_ratio:5.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

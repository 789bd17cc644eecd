"""torchvision's ResNet18, MobileNetV3-small, EfficientNet-B0 and SqueezeNet 1.1 (random weights,
batch norm statistics of a random batch: activations stay alive) exported with and without the
XNNPACK delegate, run by the in-tree etrt_runner and compared with eager PyTorch. With the
delegate each network must become one delegate call (the whole graph in NHWC), with at most its
batch-1 classifier left to etrt's kernels.
"""

from __future__ import annotations

from pathlib import Path

import etrt
import numpy as np
import pytest
import runtime_build
import torch
import torch.nn.functional as F
import vision
from etrt.channels_last import MIN_NHWC_DEPTH
from etrt.fuse_conv import FUSED
from etrt.ir import IntListValue, IntValue, KernelCall, TensorValue
from runtime_build import ExportedRun, ToolRunner
from suites import gate_subset
from torch import nn

pytestmark = [pytest.mark.slow, pytest.mark.models]

VISION_MODELS = ["resnet18", "mobilenet_v3_small", "efficientnet_b0", "squeezenet1_1"]
MAX_REL_ERROR = 1e-4
CONVOLUTIONS = ("aten::convolution", FUSED)  # the latter with its add / relu folded in
# What may stay outside the delegate at batch 1: the classifier's one-row linear layers (faster
# on etrt's kernels, docs/xnnpack.md) and what lies between them (MobileNetV3's hardswish, one
# kernel call there).
BATCH1_OUTSIDE = {"aten::view", "aten::permute", "aten::addmm", "aten::hardswish", "aten::clone"}


@pytest.fixture(scope="module")
def runner() -> ToolRunner:
    return runtime_build.tool_runner("release")


def max_rel_error(run: ExportedRun) -> float:
    got, want = run.got[0].astype(np.float64), run.expected[0].astype(np.float64)
    scale = float(np.max(np.abs(want)))
    assert scale > 1e-2, "the output is all but zero: the comparison would say nothing"
    return float(np.max(np.abs(got - want)) / scale)


def kernel_ops(run: ExportedRun) -> list[str]:
    plan = run.program.info.plan
    return [plan.operators[i.op_index] for i in plan.instructions if isinstance(i, KernelCall)]


# Batch 1 and 2 for every model, and one at a batch the benchmark runs (benchmarks/vision.py).
CASES = [(name, batch) for name in VISION_MODELS for batch in (1, 2)] + [("mobilenet_v3_small", 8)]


@pytest.mark.parametrize("backend", [None, "xnnpack"])
@pytest.mark.parametrize(("name", "batch"), gate_subset(CASES, {("resnet18", 1)}))
def test_vision_model_matches_eager(
    runner: ToolRunner, tmp_path: Path, name: str, batch: int, backend: str | None
) -> None:
    model = vision.live(vision.model(name))
    x = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(batch))
    run = runner.run_exported(tmp_path, model, (x,), backend=backend)
    error = max_rel_error(run)
    ops = kernel_ops(run)
    print(f"{name} batch {batch} {backend}: max rel error {error:.2g}, kernel calls {ops}")
    assert error <= MAX_REL_ERROR
    # Batch norm is folded into the convolutions at export, with or without the delegate.
    assert "aten::_native_batch_norm_legit_no_training" not in ops
    if backend is None:
        assert not run.program.info.plan.delegates
        # Every convolution runs channels-last, its weights stored for the NHWC kernels, but
        # for reductions shorter than MIN_NHWC_DEPTH (MobileNetV3's 8-channel squeeze layers).
        plan = run.program.info.plan
        convs = [i for i in plan.instructions if isinstance(i, KernelCall)
                 and plan.operators[i.op_index] in CONVOLUTIONS]  # fmt: skip
        for conv in convs:
            weight = plan.values[conv.args[1]]
            assert isinstance(weight, TensorValue)
            _, cin_g, kh, kw = weight.sizes
            depthwise = plan.values[conv.args[8]] != IntValue(1)
            short = not depthwise and cin_g * kh * kw < MIN_NHWC_DEPTH
            assert weight.dim_order == ((0, 1, 2, 3) if short else (2, 3, 1, 0)), weight.sizes
        return
    # The cost rule keeps the 3x3 convolutions etrt runs as Winograd (faster than Debian's
    # XNNPACK, docs/xnnpack.md) and what lies between them; everything else is delegated, in a
    # few calls (SqueezeNet: about one per fire module, whose 3x3 arm stays with etrt).
    plan = run.program.info.plan
    assert 1 <= len(plan.delegates) <= 10
    for call in plan.instructions:
        if isinstance(call, KernelCall) and plan.operators[call.op_index] in CONVOLUTIONS:
            weight = plan.values[call.args[1]]
            assert isinstance(weight, TensorValue) and weight.sizes[2:] == (3, 3)
            assert plan.values[call.args[3]] == IntListValue((1, 1))  # stride 1
    if name in ("mobilenet_v3_small", "efficientnet_b0"):  # nothing for Winograd there
        assert len(plan.delegates) == 1
        # A view of the delegate's output costs nothing outside it.
        assert set(ops) <= (BATCH1_OUTSIDE if batch == 1 else {"aten::view"}), ops


@pytest.mark.parametrize("name", gate_subset(VISION_MODELS, {"resnet18"}))
def test_vision_model_is_one_partition(name: str) -> None:
    # Delegating all XNNPACK runs (no cost rule): the whole network is one delegate call, with
    # only views of its input and output outside.
    model = vision.live(vision.model(name))
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    info = etrt.export(model, (x,), backend="xnnpack-all").info
    assert len(info.plan.delegates) == 1
    assert set(info.instruction_ops) <= {"delegate:XnnpackBackend", "aten::view", "aten::permute"}


class ConcatReaders(nn.Module):
    """Concatenations read by a convolution, through ceil-mode max pooling and a clamp, and
    (with `avg`) through average pooling too: every reader is distributed over the pieces."""

    def __init__(self, avg: bool) -> None:
        super().__init__()
        self.avg = avg
        self.s = nn.Conv2d(3, 4, 1)
        self.a, self.b = nn.Conv2d(4, 5, 1), nn.Conv2d(4, 7, 3, padding=1)
        self.c = nn.Conv2d(12, 6, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = F.relu(self.s(x))
        y = torch.cat([F.relu(self.a(s)), F.relu(self.b(s))], dim=1)
        y = F.max_pool2d(F.hardtanh(y, 0.0, 2.0), 3, stride=2, ceil_mode=True)
        if self.avg:
            y = F.avg_pool2d(y, 2)
        z = self.c(y)
        return F.hardswish(z) * torch.sigmoid(z.mean((2, 3), keepdim=True))


@pytest.mark.parametrize("avg", [False, True])
def test_concatenation_rewrites_match_eager(runner: ToolRunner, tmp_path: Path, avg: bool) -> None:
    model = ConcatReaders(avg).eval()
    x = torch.randn(2, 3, 13, 11, generator=torch.Generator().manual_seed(5))
    run = runner.run_exported(tmp_path, model, (x,), backend="xnnpack-all")
    print(f"avg={avg}: {run.program.info.instruction_ops}")
    assert max_rel_error(run) <= MAX_REL_ERROR
    # Everything in one delegate call, the concatenation distributed over its readers.
    assert run.program.info.instruction_ops == ["delegate:XnnpackBackend"]


class Pooled(nn.Module):
    """Average pooling inside a partition: a window of 2, one of 3 with stride 2, and adaptive
    pooling to a size that divides the input."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.avg_pool2d(F.relu(self.a(x)), 2)
        y = F.avg_pool2d(self.b(y), 3, stride=2)
        return F.adaptive_avg_pool2d(y, (2, 3))


def test_average_pooling_runs_in_the_delegate(runner: ToolRunner, tmp_path: Path) -> None:
    x = torch.randn(2, 3, 26, 26, generator=torch.Generator().manual_seed(6))
    run = runner.run_exported(tmp_path, Pooled().eval(), (x,), backend="xnnpack")
    assert max_rel_error(run) <= MAX_REL_ERROR
    assert run.program.info.instruction_ops == ["delegate:XnnpackBackend"]


class UnitWindow(nn.Module):
    """1x1 average pools (strided copies), which XNNPACK refuses, between convolutions."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.avg_pool2d(F.relu(self.a(x)), 1, stride=2)
        return F.adaptive_avg_pool2d(self.b(y), (5, 5))


def test_a_one_by_one_average_pool_stays_with_etrt(runner: ToolRunner, tmp_path: Path) -> None:
    x = torch.randn(2, 3, 10, 10, generator=torch.Generator().manual_seed(7))
    run = runner.run_exported(tmp_path, UnitWindow().eval(), (x,), backend="xnnpack-all")
    assert max_rel_error(run) <= MAX_REL_ERROR
    ops = run.program.info.instruction_ops
    assert "delegate:XnnpackBackend" in ops and len(ops) > 1, ops

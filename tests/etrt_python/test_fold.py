"""Batch norm folded into the convolution before it at export (etrt/fold.py), and every case it
must leave alone. Each program runs in the in-tree etrt_runner against eager PyTorch."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import etrt
import numpy as np
import pytest
import runtime_build
import torch
import torch.nn.functional as F
from etrt.ir import KernelCall
from runtime_build import ExportedRun, ToolRunner
from torch import nn

BATCH_NORM = "aten::_native_batch_norm_legit_no_training"


@pytest.fixture(scope="module")
def runner() -> ToolRunner:
    return runtime_build.tool_runner("release")


def ops(run: ExportedRun) -> Counter[str]:
    plan = run.program.info.plan
    return Counter(
        plan.operators[i.op_index] for i in plan.instructions if isinstance(i, KernelCall)
    )


def matches(run: ExportedRun) -> bool:
    for got, want in zip(run.got, run.expected, strict=True):
        scale = float(np.max(np.abs(want)))
        assert scale > 1e-3, "the output is all but zero: the comparison would say nothing"
        if float(np.max(np.abs(got.astype(np.float64) - want))) / scale > 1e-5:
            return False
    return True


def with_statistics(model: nn.Module) -> nn.Module:
    """Batch norms with non-trivial running statistics and affine parameters, in eval mode."""
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d) and m.track_running_stats:
                assert m.running_mean is not None and m.running_var is not None
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen))
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.randn(m.num_features, generator=gen))
                    m.bias.copy_(torch.randn(m.num_features, generator=gen))
    return model.eval()


def export_run(runner: ToolRunner, tmp_path: Path, model: nn.Module) -> ExportedRun:
    x = torch.randn(2, 3, 9, 9, generator=torch.Generator().manual_seed(4))
    return runner.run_exported(tmp_path, with_statistics(model), (x,))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_after_a_convolution_is_folded(
    runner: ToolRunner, tmp_path: Path, bias: bool, affine: bool
) -> None:
    model = nn.Sequential(nn.Conv2d(3, 6, 3, bias=bias), nn.BatchNorm2d(6, affine=affine))
    run = export_run(runner, tmp_path, model)
    assert matches(run)
    assert ops(run) == {"aten::convolution": 1}


def test_folding_leaves_the_original_weights_out_of_the_program(
    runner: ToolRunner, tmp_path: Path
) -> None:
    model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64))
    plain = export_run(runner, tmp_path, nn.Sequential(nn.Conv2d(3, 64, 3)))
    folded = export_run(runner, tmp_path, model)

    # One weight and one bias either way: the unfolded ones and the statistics are dropped.
    def constants(run: ExportedRun) -> list[tuple[int, ...]]:
        return sorted(t.sizes for _, t in run.program.info.constant_tensors())

    assert constants(folded) == constants(plain) == [(64,), (64, 3, 3, 3)]


def test_shared_weights_fold_into_each_convolution(runner: ToolRunner, tmp_path: Path) -> None:
    class Shared(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn1, self.bn2 = nn.BatchNorm2d(4), nn.BatchNorm2d(4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.bn1(self.conv(x)) + self.bn2(self.conv(x * 2.0))

    run = export_run(runner, tmp_path, Shared())
    assert matches(run)
    assert ops(run)["aten::convolution"] == 2 and BATCH_NORM not in ops(run)


class ReadTwice(nn.Module):
    """The convolution's output is read by the batch norm and by the add: folding would change
    what the add sees."""

    def __init__(self) -> None:
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 3, 3, padding=1), nn.BatchNorm2d(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        return self.bn(y) + y


class RuntimeWeight(nn.Module):
    """A weight computed when the program runs, not a constant of the file."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3, 3, 3))
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(F.conv2d(x, torch.tanh(x.mean()) * self.w))


class AfterActivation(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(F.relu(self.conv(x)))


@pytest.mark.parametrize("model", [ReadTwice, RuntimeWeight, AfterActivation])
def test_batch_norm_that_cannot_fold_stays(
    runner: ToolRunner, tmp_path: Path, model: type[nn.Module]
) -> None:
    run = export_run(runner, tmp_path, model())
    assert matches(run)
    assert ops(run)[BATCH_NORM] == 1


@pytest.mark.parametrize("cap", ["avx512", "avx2", "sse2"])
def test_batch_norm_that_stays_rounds_as_aten(runner: ToolRunner, tmp_path: Path, cap: str) -> None:
    """A batch norm that stays (DenseNet's, after each concatenation) gives ATen's bits: invstd in
    float, beta = b - mean * alpha and x * alpha + beta one fused multiply-add each where ATen's
    AVX2 and AVX-512 kernels contract them, two roundings as in its baseline kernel. A quantize
    after it rounds eager's values only then: int8 DenseNet121 at 96x96 left the folded graph's
    integers (one flip in its ninth dense layer, 17% of the values three layers on)."""
    capped = ToolRunner(runner.exe, {**(runner.env or os.environ), "ETRT_MAX_ISA": cap})
    model = with_statistics(nn.BatchNorm2d(256))
    x = torch.randn(2, 256, 5, 7, generator=torch.Generator().manual_seed(5))  # tails at each width
    run = capped.run_exported(tmp_path, model, (x,))
    assert ops(run)[BATCH_NORM] == 1
    (got,), (eager,) = run.got, run.expected
    if cap != "sse2" and torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"):
        want = eager  # torch's own kernel fuses them here too
    else:  # ATen's baseline kernel: a product, then a sum
        assert model.running_var is not None and model.running_mean is not None
        var, mean = model.running_var.numpy(), model.running_mean.numpy()
        invstd = np.float32(1) / np.sqrt(var + np.float32(model.eps))
        alpha = invstd * model.weight.detach().numpy()
        beta = model.bias.detach().numpy() - mean * alpha
        want = x.numpy() * alpha[:, None, None] + beta[:, None, None]
    assert want.dtype == np.float32
    assert np.array_equal(got, want), f"{int((got != want).sum())} of {got.size} values differ"


def test_batch_norm_after_a_transposed_convolution_is_not_folded(
    runner: ToolRunner, tmp_path: Path
) -> None:
    # Its weight is [Cin, Cout, kh, kw]: scaling the first dimension would scale the wrong one.
    model = nn.Sequential(nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1), nn.BatchNorm2d(4))
    run = export_run(runner, tmp_path, model)
    assert matches(run)
    assert ops(run)["aten::convolution"] == 1 and ops(run)[BATCH_NORM] == 1


def test_batch_norm_with_batch_statistics_is_not_folded(runner: ToolRunner, tmp_path: Path) -> None:
    # Without running statistics, eval mode normalises by the batch's own: nothing to fold.
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, track_running_stats=False))
    run = export_run(runner, tmp_path, model)
    assert matches(run)
    assert ops(run)["aten::convolution"] == 1 and len(ops(run)) > 1


def test_training_mode_batch_norm_is_never_folded() -> None:
    # It normalises by the batch's statistics and updates its running ones (program state).
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).train()
    program = etrt.export(model, (torch.randn(2, 3, 5, 5),))
    instruction_ops = program.info.instruction_ops
    assert "aten::convolution" in instruction_ops
    assert "aten::_native_batch_norm_legit_functional" in instruction_ops

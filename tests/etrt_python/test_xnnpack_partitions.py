"""The XNNPACK partitioner forms maximal partitions: branches that leave one partition (or the
program's input) and meet again end up in one delegate call, unless merging them would close a
cycle through an operator XNNPACK does not run. Programs run in the in-tree etrt_runner."""

from __future__ import annotations

from pathlib import Path

import etrt
import numpy as np
import pytest
import runtime_build
import torch
import torch.nn.functional as F
from etrt.ir import KernelCall, TensorValue
from etrt.xnnpack import BACKEND_ID
from runtime_build import ToolRunner
from torch import nn

DELEGATE = f"delegate:{BACKEND_ID}"


@pytest.fixture(scope="module")
def runner() -> ToolRunner:
    return runtime_build.tool_runner("release")


class Residual(nn.Module):
    """Two branches from the program's input (each starts a partition of its own), added."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)
        self.skip = nn.Conv2d(8, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.b(F.relu(self.a(x))) + self.skip(x))


class SqueezeExcitation(nn.Module):
    """A gate computed from the mean of a value, multiplied back into it."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1, self.fc2 = nn.Conv2d(16, 4, 1), nn.Conv2d(4, 16, 1)
        self.out = nn.Conv2d(16, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv(x))
        gate = torch.sigmoid(self.fc2(F.relu(self.fc1(y.mean((2, 3), keepdim=True)))))
        return self.out(y * gate)


class Inception(nn.Module):
    """Three arms from the input (1x1, 3x3 and pooling + 1x1), concatenated, then a 1x1."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(8, 6, 1), nn.Conv2d(8, 6, 3, padding=1)
        self.c = nn.Conv2d(8, 4, 1)
        self.mix = nn.Conv2d(16, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        arms = [F.relu(self.a(x)), F.relu(self.b(x)), F.relu(self.c(F.max_pool2d(x, 3, 1, 1)))]
        return self.mix(torch.cat(arms, dim=1))


def max_rel_error(got: np.ndarray, want: np.ndarray) -> float:
    scale = float(np.max(np.abs(want)))
    assert scale > 1e-3
    return float(np.max(np.abs(got.astype(np.float64) - want))) / scale


@pytest.mark.parametrize("cls", [Residual, SqueezeExcitation, Inception])
def test_branches_that_meet_again_form_one_partition(
    runner: ToolRunner, tmp_path: Path, cls: type[nn.Module]
) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 8, 10, 9)
    run = runner.run_exported(tmp_path, cls().eval(), (x,), backend="xnnpack")
    assert run.program.info.instruction_ops == [DELEGATE]
    assert max_rel_error(run.got[0], run.expected[0]) <= 1e-4


class ThroughTanh(nn.Module):
    """y feeds the add directly and through tanh (which XNNPACK does not run): one partition
    holding both convolutions and the add would need tanh's result inside it while tanh needs
    the partition's output, a cycle. The add joins one of them; the other stays apart."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.c = (nn.Conv2d(4, 4, 3, padding=1) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x)
        return self.b(y) + self.c(torch.tanh(y))


def test_a_merge_that_would_close_a_cycle_is_not_made(runner: ToolRunner, tmp_path: Path) -> None:
    torch.manual_seed(1)
    run = runner.run_exported(tmp_path, ThroughTanh().eval(), (torch.randn(1, 4, 6, 6),),
                              backend="xnnpack")  # fmt: skip
    ops = run.program.info.instruction_ops
    assert ops.count(DELEGATE) == 2 and "aten::tanh" in ops
    assert max_rel_error(run.got[0], run.expected[0]) <= 1e-4


class AroundTanh(nn.Module):
    """The add reads two partitions: one holding a and c, and one holding b, which reads a's
    output through tanh. Merging them would close the cycle through b, a member, not through
    the add (ResNet's downsampling blocks have this shape when a convolution stays with etrt)."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.c = (nn.Conv2d(4, 4, 3, padding=1) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.a(x))
        return F.relu(self.b(torch.tanh(y))) + self.c(y)


def test_a_cycle_through_a_member_of_another_partition_is_not_made(
    runner: ToolRunner, tmp_path: Path
) -> None:
    torch.manual_seed(3)
    run = runner.run_exported(tmp_path, AroundTanh().eval(), (torch.randn(1, 4, 6, 6),),
                              backend="xnnpack")  # fmt: skip
    ops = run.program.info.instruction_ops
    assert ops.count(DELEGATE) == 2 and "aten::tanh" in ops
    assert max_rel_error(run.got[0], run.expected[0]) <= 1e-4


def test_delegates_and_kernels_hand_over_channels_last(runner: ToolRunner, tmp_path: Path) -> None:
    # ThroughTanh's first delegate call writes y NHWC straight into its tensor, tanh (etrt's
    # kernel) reads and writes NHWC, and the second call takes that tensor as it is: no permute
    # at either boundary, and the same results.
    torch.manual_seed(2)
    run = runner.run_exported(tmp_path, ThroughTanh().eval(), (torch.randn(2, 4, 7, 5),),
                              backend="xnnpack")  # fmt: skip
    plan = run.program.info.plan
    calls = [i for i in plan.instructions if isinstance(i, KernelCall)]
    (tanh,) = [i for i in calls if plan.operators[i.op_index] == "aten::tanh"]
    for v in (tanh.args[0], tanh.args[-1]):
        t = plan.values[v]
        assert isinstance(t, TensorValue) and t.dim_order == (0, 2, 3, 1)
    assert max_rel_error(run.got[0], run.expected[0]) <= 1e-4


@pytest.mark.parametrize(("batch", "size"), [(2, (7, 5)), (1, (4, 4)), (3, (1, 3))])
def test_three_channel_inputs_are_interleaved_into_nhwc(
    runner: ToolRunner, tmp_path: Path, batch: int, size: tuple[int, int]
) -> None:
    # An RGB program input is permuted to NHWC by its own vectorised path: 35 pixels leave a
    # tail of three after blocks of four, 16 none, 3 only a tail.
    torch.manual_seed(5)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()).eval()
    x = torch.randn(batch, 3, *size)
    run = runner.run_exported(tmp_path, model, (x,), backend="xnnpack-all")
    assert run.program.info.instruction_ops == [DELEGATE]
    assert max_rel_error(run.got[0], run.expected[0]) <= 1e-5


@pytest.mark.parametrize(
    ("cin", "cout", "size", "batch", "kept"),
    [
        (64, 64, 56, 1, True),  # 196 tiles: Winograd
        (256, 256, 14, 1, True),  # 16 tiles over 256 x 256 channels (ResNet18's stage 3)
        (64, 256, 13, 1, False),  # 16 tiles but narrow (SqueezeNet's 13x13 expand layers)
        (384, 384, 14, 1, False),  # 16 tiles, transformed weights too big: direct in etrt
        (256, 256, 7, 1, False),  # 4 tiles
        (256, 256, 7, 4, True),  # 16 tiles over four images
    ],
)
def test_cost_rule_keeps_the_convolutions_etrt_runs_as_winograd(
    cin: int, cout: int, size: int, batch: int, kept: bool
) -> None:
    model = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()).eval()
    x = torch.randn(batch, cin, size, size)
    info = etrt.export(model, (x,), backend="xnnpack").info
    assert ("aten::convolution" in info.instruction_ops) == kept, info.instruction_ops
    assert (DELEGATE in info.instruction_ops) != kept, info.instruction_ops

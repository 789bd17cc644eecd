"""Planned outputs keep the memory layout torch traced them in: later views may depend on it.

Each model is exported and run by the in-tree etrt_runner (release, then ASan and UBSan) and
compared with eager PyTorch.
"""

from __future__ import annotations

from pathlib import Path

import etrt
import pytest
import torch
import torch.nn.functional as F
from etrt.ir import KernelCall, TensorValue
from runtime_build import ToolRunner
from torch import nn

pytestmark = pytest.mark.slow


class TransposedChain(nn.Module):
    # torch traces mul and relu in the transposed layout of their input, so transposing back
    # is contiguous and reshape becomes a plain view: etrt must plan the same layout.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x.transpose(1, 2) * 2.0)
        return y.transpose(1, 2).reshape(x.shape[0], -1) + 1


class ChannelsLastUpsample(nn.Module):
    # etrt's upsampling writes contiguous outputs; torch traced a channels-last one, which the
    # view after the permute needs: the exporter copies it into that layout. (Convolution and
    # max pooling write channels-last themselves.)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.interpolate(x.contiguous(memory_format=torch.channels_last), scale_factor=2.0)
        return y.permute(0, 2, 3, 1).reshape(x.shape[0], -1)


def output_layouts(program: etrt.Program) -> list[tuple[str, tuple[int, ...]]]:
    """(operator, output dim_order) of each kernel call, in order."""
    plan = program.info.plan
    layouts = []
    for ins in plan.instructions:
        out = plan.values[ins.args[-1]]
        assert isinstance(ins, KernelCall) and isinstance(out, TensorValue)
        layouts.append((plan.operators[ins.op_index], out.dim_order))
    return layouts


def test_elementwise_outputs_keep_the_traced_layout(
    tool_runner: ToolRunner, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    run = tool_runner.run_exported(tmp_path, TransposedChain(), (torch.randn(2, 3, 4),))
    layouts = output_layouts(run.program)
    assert ("aten::mul.Tensor", (0, 2, 1)) in layouts
    assert ("aten::relu", (0, 2, 1)) in layouts
    assert run.max_abs_diff() <= 1e-6


def test_contiguous_kernel_output_is_copied_into_the_traced_layout(
    tool_runner: ToolRunner, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    run = tool_runner.run_exported(tmp_path, ChannelsLastUpsample(), (torch.randn(2, 3, 5, 6),))
    channels_last = (0, 2, 3, 1)
    assert output_layouts(run.program)[:3] == [
        ("aten::clone", channels_last),  # .contiguous(memory_format=channels_last)
        ("aten::upsample_nearest2d.vec", (0, 1, 2, 3)),  # a contiguous temporary...
        ("aten::clone", channels_last),  # ...copied into the layout torch traced
    ]
    assert run.max_abs_diff() <= 1e-5

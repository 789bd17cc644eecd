"""Channel concatenations of convolutions written in place (concat_in_place.py): each
convolution writes its channels of the concatenation, the copy goes away, and the program
computes the same bits as with the copy, on every kernel, under each instruction-set cap, at
one thread and at two. Concatenations the rewrite does not cover keep their copy."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from etrt.fuse_conv import FUSED
from etrt.ir import KernelCall
from etrt.program import ProgramInfo
from program_bits import assert_same_bits
from torch import nn


class Branches(nn.Module):
    """SqueezeNet's fire module, an Inception-like block of four kinds of kernel (1x1, a
    Winograd 3x3 with a clamp, a depthwise 3x3 with hardswish, a 5x5), two first layers over
    the NCHW input and a squeeze-excitation-like pair at one pixel, each joined along channels
    and read by a convolution; then four concatenations the rewrite leaves alone."""

    def __init__(self) -> None:
        super().__init__()
        self.stem_a = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.stem_b = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.squeeze = nn.Conv2d(24, 16, 1)
        self.e1, self.e3 = nn.Conv2d(16, 24, 1), nn.Conv2d(16, 24, 3, padding=1)
        self.b1, self.b3 = nn.Conv2d(48, 16, 1), nn.Conv2d(48, 32, 3, padding=1)
        self.dw = nn.Conv2d(48, 48, 3, padding=1, groups=48)
        self.b5 = nn.Conv2d(48, 8, 5, padding=2)
        self.p1, self.p2 = nn.Conv2d(104, 12, 1), nn.Conv2d(104, 20, 1)
        self.mix = nn.Conv2d(32, 32, 1)
        self.l1, self.l2 = nn.Conv2d(32, 16, 3, padding=1), nn.Conv2d(32, 16, 1)
        self.h16, self.h32, self.h48 = nn.Conv2d(16, 8, 1), nn.Conv2d(32, 8, 1), nn.Conv2d(48, 8, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = torch.cat([F.relu(self.stem_a(x)), self.stem_b(x)], 1)
        q = F.relu(self.squeeze(y))
        y = torch.cat([F.relu(self.e1(q)), F.relu(self.e3(q))], 1)
        y = torch.cat([self.b1(y), F.relu6(self.b3(y)), F.hardswish(self.dw(y)), self.b5(y)], 1)
        g = y.mean((2, 3), keepdim=True)
        y = y * torch.sigmoid(torch.cat([self.p1(g), self.p2(g)], 1)).mean(1, keepdim=True)
        y = F.relu(self.mix(torch.cat([self.p1(y), self.p2(y)], 1)))
        # Left alone: a joined tensor that is not a convolution's (max pooling) ...
        a = torch.cat([self.l1(y), F.max_pool2d(y[:, :16], 3, 1, 1)], 1)
        # ... a convolution's output read again after the concatenation ...
        first = self.l1(y)
        b = torch.cat([first, self.l2(y)], 1) + first.mean()
        # ... a concatenation along height, and a convolution with a residual addition.
        c = torch.cat([self.l1(y), self.l2(y)], 2)
        d = torch.cat([self.mix(y) + y, self.l2(y)], 1)
        return self.h32(a), self.h32(b), self.h16(c), self.h48(d)


def _slice_writes(info: ProgramInfo) -> int:
    """Calls writing a slice of a wider output (etrt_fused::conv2d with out_channel)."""
    plan = info.plan
    return sum(
        1
        for i in plan.instructions
        if isinstance(i, KernelCall) and plan.operators[i.op_index] == FUSED and len(i.args) == 15
    )


def test_concatenated_convolutions_write_in_place_with_the_copys_bits(
    inprocess_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import etrt
    import etrt.concat_in_place

    torch.manual_seed(5)
    model = Branches().eval()
    x = torch.randn(2, 3, 30, 34)
    etrt.export(model, (x,)).save(tmp_path / "in_place.etrt")
    with monkeypatch.context() as m:
        m.setattr(etrt.concat_in_place, "CAT", "none")
        etrt.export(model, (x,)).save(tmp_path / "copied.etrt")
    in_place = etrt.load_program_info(tmp_path / "in_place.etrt")
    copied = etrt.load_program_info(tmp_path / "copied.etrt")
    # 5 of the 9 concatenations go: 2 + 2 + 4 + 2 + 2 convolutions write their slices.
    assert copied.instruction_ops.count("aten::cat") == 9, copied.instruction_ops
    assert in_place.instruction_ops.count("aten::cat") == 4, in_place.instruction_ops
    assert _slice_writes(in_place) == 12
    assert _slice_writes(copied) == 0
    with torch.no_grad():
        want = [t.numpy() for t in model(x)]
    assert_same_bits(tmp_path, ("in_place", "copied"), x.numpy(), want, 1e-4)

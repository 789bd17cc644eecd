"""What the exporter does for etrt's own kernels after delegation: activations stored
channels-last around convolutions (channels_last.py), decomposed activations merged back
into one kernel call (fuse.py), and residual additions and clamps folded into the convolution
before them (fuse_conv.py). Each program runs in the in-tree etrt_runner against eager."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import runtime_build
import torch
import torch.nn.functional as F
from etrt.channels_last import HWIO, NHWC
from etrt.fuse_conv import FUSED
from etrt.ir import KernelCall, NullValue, StorageKind, TensorValue
from etrt.lower import dim_order_of
from etrt.program import Program
from program_bits import assert_same_bits
from runtime_build import ExportedRun, ToolRunner
from torch import nn

MAX_REL_ERROR = 1e-4


@pytest.fixture(scope="module")
def runner() -> ToolRunner:
    return runtime_build.tool_runner("release")


def rel_error(run: ExportedRun) -> float:
    worst = 0.0
    for got, want in zip(run.got, run.expected, strict=True):
        scale = float(np.max(np.abs(want)))
        assert scale > 1e-3, "the output is all but zero: the comparison would say nothing"
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))) / scale)
    return worst


def calls(run: ExportedRun, op: str) -> list[KernelCall]:
    """The program's calls of `op` (read back from the file: args are its arguments, then its
    outputs)."""
    plan = run.program.info.plan
    return [
        i
        for i in plan.instructions
        if isinstance(i, KernelCall) and plan.operators[i.op_index] == op
    ]


def convolutions(run: ExportedRun) -> list[KernelCall]:
    """aten::convolution and etrt_fused::conv2d calls (the same arguments first, the output
    last), in program order."""
    plan = run.program.info.plan
    ops = ("aten::convolution", FUSED)
    return [
        i
        for i in plan.instructions
        if isinstance(i, KernelCall) and plan.operators[i.op_index] in ops
    ]


def tensor(run: ExportedRun, index: int) -> TensorValue:
    v = run.program.info.plan.values[index]
    assert isinstance(v, TensorValue)
    return v


class Blocks(nn.Module):
    """A stem over the NCHW input, a residual block, a depthwise and squeeze-excitation block,
    ceil-mode pooling, a fire-like concatenation, a grouped convolution and two heads: a flatten
    of NHWC memory (needs a copy) and ViT's patch tokens (a free view)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.a = nn.Conv2d(16, 16, 3, padding=1)
        self.b = nn.Conv2d(16, 16, 3, padding=1)
        self.dw = nn.Conv2d(16, 16, 5, padding=2, groups=16)
        self.se1, self.se2 = nn.Conv2d(16, 8, 1), nn.Conv2d(8, 16, 1)
        self.e1, self.e3 = nn.Conv2d(16, 12, 1), nn.Conv2d(16, 12, 3, padding=1)
        self.grouped = nn.Conv2d(24, 24, 3, padding=1, groups=2)
        self.head = nn.Linear(24 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = F.relu(self.stem(x))
        r = F.relu(s + self.b(F.relu(self.a(s))))
        d = F.silu(self.dw(r))
        g = F.hardsigmoid(self.se2(F.relu(self.se1(d.mean((2, 3), keepdim=True)))))
        y = F.max_pool2d(F.hardswish(d * g), 3, stride=2, ceil_mode=True)
        y = torch.cat([F.relu(self.e1(y)), F.relu(self.e3(y))], dim=1)
        z = self.grouped(y)
        flat = self.head(torch.flatten(F.adaptive_avg_pool2d(z, 4), 1))
        tokens = y.reshape(y.shape[0], y.shape[1], -1).permute(0, 2, 1)
        return flat, tokens * 2.0


def test_convolutions_run_channels_last_and_match_eager(runner: ToolRunner, tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = Blocks().eval()
    x = torch.randn(2, 3, 31, 29)
    run = runner.run_exported(tmp_path, model, (x,))
    assert rel_error(run) <= MAX_REL_ERROR
    convs = convolutions(run)
    assert len(convs) == 9
    nhwc, nchw = [], []
    for conv in convs:
        out, weight = tensor(run, conv.args[-1]), tensor(run, conv.args[1])
        (nhwc if weight.dim_order == HWIO else nchw).append(out)
        if weight.dim_order == HWIO:  # read in place by the NHWC kernels
            assert weight.storage == StorageKind.CONSTANT
            assert out.dim_order == NHWC or out.sizes[2] * out.sizes[3] == 1
    # The gate's second one-pixel convolution keeps NCHW (8 input channels, a reduction too short
    # for the NHWC tiles; one pixel is both layouts). The grouped one runs NHWC per group.
    assert len(nhwc) == 8 and [t.dim_order for t in nchw] == [(0, 1, 2, 3)]
    # The stem reads the program's NCHW input; the outputs keep the layouts torch traced.
    plan = run.program.info.plan
    assert tensor(run, plan.inputs[0]).dim_order == (0, 1, 2, 3)
    with torch.no_grad():
        traced = [dim_order_of(t) for t in model(x)]
    assert [tensor(run, v).dim_order for v in plan.outputs] == traced
    # The residual add and its relu ride in the block's second convolution, NHWC.
    plan = run.program.info.plan
    (block,) = [c for c in calls(run, FUSED) if not isinstance(plan.values[c.args[9]], NullValue)]
    assert tensor(run, block.args[9]).dim_order == tensor(run, block.args[-1]).dim_order == NHWC
    assert not calls(run, "aten::add.Tensor")
    # The depthwise layer's silu rides in its convolution (part L), NHWC.
    assert not calls(run, "aten::silu")
    (dw,) = [c for c in calls(run, FUSED) if tensor(run, c.args[1]).sizes[1] == 1]
    assert tensor(run, dw.args[-1]).dim_order == NHWC
    # The gates and the pooling stay NHWC; the concatenation is written in place, NHWC, by its
    # two convolutions (concat_in_place.py).
    for op in ("aten::hardswish", "aten::max_pool2d"):
        (call,) = calls(run, op)
        assert tensor(run, call.args[-1]).dim_order == NHWC, op
    assert not calls(run, "aten::cat")
    slices = [c for c in calls(run, FUSED) if len(c.args) == 15]
    assert len(slices) == 2 and slices[0].args[-1] == slices[1].args[-1]
    cat_out = slices[0].args[-1]
    assert tensor(run, cat_out).dim_order == NHWC
    # ViT's patch tokens view NHWC memory directly; nothing copies y back to NCHW.
    assert not [c for c in calls(run, "aten::clone") if c.args[0] == cat_out]


def test_views_that_cannot_see_nhwc_memory_read_a_copy(runner: ToolRunner, tmp_path: Path) -> None:
    class Flatten(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(4, 6, 3, padding=1)
            self.fc = nn.Linear(6 * 5 * 5, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(torch.flatten(F.relu(self.conv(x)), 1))

    torch.manual_seed(1)
    run = runner.run_exported(tmp_path, Flatten().eval(), (torch.randn(2, 4, 5, 5),))
    assert rel_error(run) <= MAX_REL_ERROR
    (relu,) = calls(run, FUSED)  # the convolution, its relu folded in
    assert tensor(run, relu.args[-1]).dim_order == NHWC
    (copy,) = [c for c in calls(run, "aten::clone") if c.args[0] == relu.args[-1]]
    assert tensor(run, copy.args[-1]).dim_order == (0, 1, 2, 3)
    (view,) = calls(run, "aten::view")
    assert view.args[0] == copy.args[-1]


def test_a_view_of_a_view_of_nhwc_memory_reads_a_planned_copy(
    runner: ToolRunner, tmp_path: Path
) -> None:
    """timm's EfficientFormerV2 attention: a convolution's NHWC output reshaped into heads,
    permuted and multiplied (expand, then a view the NHWC strides cannot express). The copy
    before that view is of a view: it must get memory of its own, not inherit the view's
    storage (at batch 2 the runner failed: aten::clone output 'out' has no memory)."""

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Conv2d(16, 64, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            q = self.qkv(x).reshape(2, 8, -1, 9).permute(0, 1, 3, 2)  # [2, 8, 9, 8]
            return q @ q.transpose(-2, -1)

    torch.manual_seed(1)
    run = runner.run_exported(tmp_path, Attention().eval(), (torch.randn(2, 16, 3, 3),))
    assert rel_error(run) <= MAX_REL_ERROR
    plan = run.program.info.plan
    for copy in calls(run, "aten::clone"):
        assert tensor(run, copy.args[-1]).storage == StorageKind.PLANNED, plan.values[copy.args[0]]


class Heads(nn.Module):
    """A trunk, then convolutions whose results the program returns: 3x3 and 1x1 heads wide
    enough for the NHWC kernels, a narrow one, and a 1x1 layer over the program's input."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Conv2d(20, 24, 3, padding=1)
        self.wide3, self.wide1 = nn.Conv2d(24, 21, 3, padding=1), nn.Conv2d(24, 32, 1)
        self.narrow = nn.Conv2d(24, 8, 3, padding=1)
        self.direct = nn.Conv2d(20, 16, 1)
        self.dw = nn.Conv2d(20, 20, 3, padding=1, groups=20)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        t = F.relu(self.trunk(x))
        return self.wide3(t), self.wide1(t), self.narrow(t), self.direct(x), self.dw(x)


def test_returned_convolutions_run_channels_last_and_are_copied_out(
    runner: ToolRunner, tmp_path: Path
) -> None:
    torch.manual_seed(4)
    # Two images of 9 x 11 pixels: transposes with 16 x 16 tiles and edges both ways.
    run = runner.run_exported(tmp_path, Heads().eval(), (torch.randn(2, 20, 9, 11),))
    assert rel_error(run) <= MAX_REL_ERROR
    plan = run.program.info.plan
    assert [tensor(run, v).dim_order for v in plan.outputs] == [(0, 1, 2, 3)] * 5
    copies = {c.args[-1]: c.args[0] for c in calls(run, "aten::clone")}
    convs = {c.args[-1]: c for c in calls(run, "aten::convolution")}
    # The two wide heads and the depthwise one write NHWC tensors of their own, copied into the
    # outputs, with weights stored for the NHWC kernels (the 3x3 ones even over the NCHW input).
    for out in (plan.outputs[0], plan.outputs[1], plan.outputs[4]):
        conv = convs[copies[out]]
        assert tensor(run, conv.args[-1]).dim_order == NHWC
        assert tensor(run, conv.args[1]).dim_order == HWIO
    # Eight output channels, and a 1x1 layer whose NCHW input is its column matrix: NCHW.
    for out in (plan.outputs[2], plan.outputs[3]):
        assert out not in copies and out in convs
        assert tensor(run, convs[out].args[1]).dim_order == (0, 1, 2, 3)


def test_weights_outside_the_program_keep_their_layout(runner: ToolRunner, tmp_path: Path) -> None:
    torch.manual_seed(2)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 1)).eval()
    run = runner.run_exported(tmp_path, model, (torch.randn(1, 3, 9, 9),), external_constants=True)
    assert rel_error(run) <= MAX_REL_ERROR
    first = convolutions(run)[0]
    assert tensor(run, first.args[-1]).dim_order == NHWC  # the kernel repacks the weight
    assert tensor(run, first.args[1]).storage == StorageKind.EXTERNAL


class Activations(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = x * 0.5
        gate = torch.sigmoid(y)
        return (
            F.hardswish(x),
            F.hardsigmoid(y),
            F.silu(y),
            x * gate,  # a gate over another value: not SiLU
            F.relu6(x + 3.0),  # its x + 3 is read again below: not hardsigmoid
            (x + 3.0) * 2.0,
        )


def test_decomposed_activations_become_one_call(runner: ToolRunner, tmp_path: Path) -> None:
    x = torch.linspace(-6.0, 6.0, 2 * 3 * 16).reshape(2, 3, 16)
    run = runner.run_exported(tmp_path, Activations(), (x,))
    assert rel_error(run) <= MAX_REL_ERROR
    plan = run.program.info.plan
    ops = Counter(
        plan.operators[i.op_index] for i in plan.instructions if isinstance(i, KernelCall)
    )
    assert ops["aten::hardswish"] == ops["aten::hardsigmoid"] == ops["aten::silu"] == 1
    assert ops["aten::sigmoid"] == 1 and ops["aten::div.Tensor"] == 0
    # relu6(x + 3) stays a clamp of an add the last output reads too.
    assert ops["aten::hardtanh"] + ops["aten::clamp"] >= 1


class _Clones(nn.Module):
    """Dropout in evaluation (a clone of an intermediate, read by the next layer), a transposing
    copy, a clone of the input and a clone returned as it is."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = self.drop(torch.relu(self.lin(x)))
        t = h.t().clone(memory_format=torch.contiguous_format)
        return h * 2.0, t, x.clone(), self.drop(h + 1.0)


def test_identity_clones_are_not_copied(runner: ToolRunner, tmp_path: Path) -> None:
    # Only the dropout between two layers goes: its reader takes the source (same layout, an
    # intermediate nothing writes). The transpose, the input's snapshot and the returned clone
    # stay copies.
    run = runner.run_exported(tmp_path, _Clones().eval(), (torch.randn(4, 8),))
    for got, want in zip(run.got, run.expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # the linear's sum order
    assert len(calls(run, "aten::clone")) == 3
    mul = calls(run, "aten::mul.Tensor")[0]
    relu = calls(run, "aten::relu")[0]
    assert mul.args[0] == relu.args[-1]


def test_unread_pooling_indices_are_not_computed(runner: ToolRunner, tmp_path: Path) -> None:
    class Pools(nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            values, indices = F.max_pool2d(x, 2, return_indices=True)
            return F.max_pool2d(x, 3, stride=2, ceil_mode=True), values + indices.float()

    x = torch.randn(1, 4, 9, 9)
    run = runner.run_exported(tmp_path, Pools(), (x,))
    assert rel_error(run) <= MAX_REL_ERROR
    assert len(calls(run, "aten::max_pool2d")) == 1  # the one whose indices nothing reads
    assert len(calls(run, "aten::max_pool2d_with_indices")) == 1


class ConvActivations(nn.Module):
    """MobileNetV3's convolution -> hardswish (EfficientNet-B0's -> silu) on each NHWC kernel:
    the stem over the NCHW input, a 1x1 layer (igemm), depthwise 3x3 and 5x5/2, a Winograd 3x3
    layer, a residual addition before the activation, and a squeeze-excitation gate whose 1x1
    layers see one pixel."""

    def __init__(self, act: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.act = act
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.expand = nn.Conv2d(16, 40, 1)
        self.dw3 = nn.Conv2d(40, 40, 3, padding=1, groups=40)
        self.dw5 = nn.Conv2d(40, 40, 5, stride=2, padding=2, groups=40)
        self.se1, self.se2 = nn.Conv2d(40, 16, 1), nn.Conv2d(16, 40, 1)
        self.wino = nn.Conv2d(40, 40, 3, padding=1)
        self.project = nn.Conv2d(40, 40, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        act = self.act
        y = act(self.stem(x))
        y = act(self.dw3(act(self.expand(y))))
        y = act(self.dw5(y))
        y = y * F.hardsigmoid(self.se2(F.relu(self.se1(y.mean((2, 3), keepdim=True)))))
        y = act(self.wino(y))
        # A returned value keeps torch's layout (NCHW): the scaling makes that copy.
        return act(self.project(y) + y) * 2.0


def _leaky_relu(x: torch.Tensor) -> torch.Tensor:
    return F.leaky_relu(x, 0.1)


ACTIVATION_FUNCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "hardswish": F.hardswish,
    "silu": F.silu,
    "sigmoid": torch.sigmoid,
    "leaky_relu": _leaky_relu,
}


@pytest.mark.parametrize("name", list(ACTIVATION_FUNCTIONS))
def test_activation_in_the_convolution_equals_the_separate_op_bit_for_bit(
    name: str, inprocess_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hardswish, SiLU, sigmoid or leaky ReLU applied by the convolution to each output tile gives
    the bits the separate aten:: call gives (the same steps), on every kernel, under each
    instruction-set cap, at one thread and at two; and the program calls it no more."""
    import etrt
    import etrt.fuse_conv

    torch.manual_seed(3)
    model = ConvActivations(ACTIVATION_FUNCTIONS[name]).eval()
    # Inputs wide enough that hardswish's both bends (-3 and 3) and its flat parts are hit; the
    # gate's mul (33 x 35 pixels of 40 channels) big enough to split by image rows at two threads.
    x = torch.randn(1, 3, 130, 140) * 4.0
    # And a band of rows 25x larger: pre-activations past |86|, where SiLU and sigmoid redo lanes
    # from their input, which the fused call overwrites in place (they came out NaN).
    x[:, :, 40:56] *= 25.0
    etrt.export(model, (x,)).save(tmp_path / "fused.etrt")
    with monkeypatch.context() as m:
        m.setattr(etrt.fuse_conv, "ACTIVATIONS", {})
        etrt.export(model, (x,)).save(tmp_path / "unfused.etrt")
    fused_ops = etrt.load_program_info(tmp_path / "fused.etrt").instruction_ops
    unfused_ops = etrt.load_program_info(tmp_path / "unfused.etrt").instruction_ops
    assert f"aten::{name}" not in fused_ops and unfused_ops.count(f"aten::{name}") == 6
    assert fused_ops.count(FUSED) == 7, fused_ops
    with torch.no_grad():
        want = [model(x).numpy()]
    assert_same_bits(tmp_path, ("fused", "unfused"), x.numpy(), want, 1e-4)


class AveragePools(nn.Module):
    """Average pooling between channels-last convolutions, in each of ATen's window modes:
    Inception's 3x3 / 1 / 1 branch (padding counted), DenseNet's 2x2 / 2 transition, 3x3 / 2
    padding not counted with ceil mode (windows cut by the edge and one past it), and a divisor
    override; DenseNet's batch norm after a concatenation (no convolution to fold it into); and
    resampling: nearest (HRNet's), bilinear with and without aligned corners (segmentation
    heads)."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 24, 3, padding=1), nn.Conv2d(24, 20, 1)
        self.c = nn.Conv2d(24, 12, 3, padding=1)
        self.norm = nn.BatchNorm2d(32)
        self.heads = nn.ModuleList(nn.Conv2d(20, 4, 1) for _ in range(7))
        self.dense = nn.Conv2d(32, 4, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = self.a(x)
        y = self.b(F.relu(F.avg_pool2d(a, 3, 1, 1)))
        pools = (
            F.avg_pool2d(y, 2, 2),
            F.avg_pool2d(y, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            F.avg_pool2d(y, 3, 2, 1, ceil_mode=True),
            F.avg_pool2d(y, (3, 2), 1, (1, 0), divisor_override=5),
            F.interpolate(y, scale_factor=2.0, mode="nearest"),
            F.interpolate(y, size=(31, 40), mode="bilinear", align_corners=False),
            F.interpolate(y, size=(17, 29), mode="bilinear", align_corners=True),
        )
        dense = self.dense(F.relu(self.norm(torch.cat([y, self.c(a)], 1))))
        return (*(head(p) for head, p in zip(self.heads, pools, strict=True)), dense)


def test_pooling_norm_and_resampling_run_channels_last_with_the_plane_kernels_bits(
    inprocess_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Average pooling, batch norm and resampling of a channels-last input write channels-last
    (all channels of a pixel at once) and give, bit for bit, what the per-plane kernels gave
    over the same values, at every cap and at one and two threads: the same sums in the same
    order, the same divisors, weights and per-element multiply-adds."""
    import etrt
    import etrt.channels_last

    torch.manual_seed(4)
    model = AveragePools()
    with torch.no_grad():  # statistics of its own, not the identity
        model.norm.running_mean.uniform_(-1.0, 1.0)
        model.norm.running_var.uniform_(0.5, 2.0)
        model.norm.weight.uniform_(0.5, 1.5)
        model.norm.bias.uniform_(-0.5, 0.5)
    model.eval()
    x = torch.randn(2, 3, 23, 19)
    program = etrt.export(model, (x,))
    program.save(tmp_path / "nhwc.etrt")
    plan = program.info.plan
    kept = {  # the output's argument
        "aten::avg_pool2d": 7,
        "aten::_native_batch_norm_legit_no_training": 7,
        "aten::upsample_nearest2d.vec": 3,
        "aten::upsample_bilinear2d.vec": 4,
    }
    outs = [
        plan.values[i.args[kept[plan.operators[i.op_index]]]]
        for i in plan.instructions
        if plan.operators[i.op_index] in kept
    ]
    assert len(outs) == 9 and all(t.dim_order == NHWC for t in outs)
    with monkeypatch.context() as m:
        m.setattr(etrt.channels_last, "KEEPS_INPUT_LAYOUT", ())
        planes = etrt.export(model, (x,))
    planes.save(tmp_path / "planes.etrt")
    plan = planes.info.plan
    assert all(
        plan.values[i.args[kept[plan.operators[i.op_index]]]].dim_order == (0, 1, 2, 3)
        for i in plan.instructions
        if plan.operators[i.op_index] in kept
    )
    with torch.no_grad():
        want = [t.numpy() for t in model(x)]
    assert_same_bits(tmp_path, ("nhwc", "planes"), x.numpy(), want, 1e-5)


class SamePadding(nn.Module):
    """TensorFlow's "same" padding as timm's ports write it (constant_pad_nd, then a convolution
    without padding): even pads on the NCHW input, before a depthwise 3x5 and before a layer
    with padding of its own; an uneven pad before a stride-2 layer; a pad of another value; a
    padded tensor two convolutions read."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 24, 3)
        self.dw = nn.Conv2d(24, 24, (3, 5), groups=24)
        self.s2 = nn.Conv2d(24, 32, 3, stride=2)
        self.p = nn.Conv2d(32, 32, 3, padding=1)
        self.q, self.r, self.r2 = nn.Conv2d(32, 16, 3), nn.Conv2d(32, 16, 3), nn.Conv2d(32, 16, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = F.relu(self.a(F.pad(x, [1, 1, 1, 1])))
        s = self.s2(F.pad(self.dw(F.pad(y, [2, 2, 1, 1])), [0, 1, 0, 1]))
        t = self.p(F.pad(s, [1, 1, 1, 1]))
        u = self.q(F.pad(s, [1, 1, 1, 1], value=0.5))
        p = F.pad(t, [1, 1, 1, 1])
        return u, self.r(p) + self.r2(p), t


def test_same_padding_folds_into_the_convolution_or_stays_channels_last(
    inprocess_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even zero padding that one convolution alone reads becomes that convolution's padding
    (fold_pad.py); the rest is padded channels-last where its input is. Either way the outputs
    are, bit for bit, those of the padded copies in torch's layout, at every cap and at one and
    two threads."""
    import etrt
    import etrt.channels_last
    import etrt.fold_pad

    torch.manual_seed(6)
    model = SamePadding().eval()
    x = torch.randn(2, 3, 24, 22)
    program = etrt.export(model, (x,))
    program.save(tmp_path / "folded.etrt")
    plan = program.info.plan
    pads = [i for i in plan.instructions if plan.operators[i.op_index] == "aten::constant_pad_nd"]
    assert len(pads) == 3  # uneven, of 0.5, read twice
    # Each keeps its input's layout: channels-last but for the one of the returned (NCHW) t.
    layouts = [(plan.values[i.args[0]].dim_order, plan.values[i.args[-1]].dim_order) for i in pads]
    assert layouts == [(NHWC, NHWC), (NHWC, NHWC), ((0, 1, 2, 3), (0, 1, 2, 3))], layouts
    with monkeypatch.context() as m:
        m.setattr(etrt.fold_pad, "PAD", "none")
        kept = etrt.channels_last.KEEPS_INPUT_LAYOUT
        m.setattr(etrt.channels_last, "KEEPS_INPUT_LAYOUT", kept[1:])  # no constant_pad_nd
        copies = etrt.export(model, (x,))
    copies.save(tmp_path / "copies.etrt")
    assert copies.info.instruction_ops.count("aten::constant_pad_nd") == 6
    with torch.no_grad():
        want = [t.numpy() for t in model(x)]
    assert_same_bits(tmp_path, ("folded", "copies"), x.numpy(), want, 1e-4)


class CrossStage(nn.Module):
    """CSPDarknet's stage (YOLO's C3 alike): a convolution whose channels split in two, residual
    blocks `x + act(conv(act(conv(x))))` on one half, the halves joined for the last one."""

    def __init__(self, act: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.act = act
        self.down = nn.Conv2d(8, 48, 3, stride=2, padding=1)
        self.blocks = nn.ModuleList(nn.Conv2d(24, 24, k, padding=k // 2) for k in (1, 3, 1, 3))
        self.transition_b = nn.Conv2d(24, 24, 1)
        self.transition = nn.Conv2d(48, 40, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        act, b = self.act, self.blocks
        x = act(self.down(x))
        xs, xb = x.split(24, dim=1)
        xb = xb + act(b[1](act(b[0](xb))))  # the residual is a view: an addition of its own
        xb = xb + act(b[3](act(b[2](xb))))
        xb = act(self.transition_b(xb))
        return act(self.transition(torch.cat([xs, xb], 1))) * 2.0


def _joined_and_apart(
    model: nn.Module, x: torch.Tensor, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Program, Program]:
    """The model exported as is (folder/joined.etrt) and without split views as NHWC operands or
    residuals after the activation (folder/apart.etrt)."""
    import etrt
    import etrt.channels_last
    import etrt.fuse_conv

    joined = etrt.export(model, (x,))
    joined.save(folder / "joined.etrt")
    with monkeypatch.context() as m:
        m.setattr(etrt.channels_last._Laid, "nhwc_view", lambda *args: False)
        m.setattr(etrt.fuse_conv, "RESIDUAL_LAST", False)
        apart = etrt.export(model, (x,))
    apart.save(folder / "apart.etrt")
    return joined, apart


@pytest.mark.parametrize("name", ["leaky_relu", "silu"])
def test_channel_splits_stay_channels_last_and_residuals_join_after_the_activation(
    name: str, inprocess_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A channel split of a channels-last tensor is a channels-last view: the addition and the
    concatenation that read it write channels-last (they wrote NCHW, which every convolution
    after them gathered back), and a residual added after a convolution's activation joins the
    call (`residual_last`). Bit for bit what the program without either computes, at every cap
    and at one and two threads."""
    import etrt

    torch.manual_seed(5)
    model = CrossStage(ACTIVATION_FUNCTIONS[name]).eval()
    x = torch.randn(2, 8, 30, 26)
    program, apart = _joined_and_apart(model, x, tmp_path, monkeypatch)
    plan = program.info.plan
    ops = program.info.instruction_ops
    assert (
        ops.count("aten::add.Tensor") == 1
        and apart.info.instruction_ops.count("aten::add.Tensor") == 2
    )
    assert ops.count(FUSED) == 7 and f"aten::{name}" not in ops, ops
    written = {
        plan.operators[i.op_index]: plan.values[i.args[-1]]
        for i in plan.instructions
        if plan.operators[i.op_index] in ("aten::add.Tensor", "aten::cat")
    }
    assert {op: v.dim_order for op, v in written.items()} == {
        "aten::add.Tensor": NHWC,
        "aten::cat": NHWC,
    }
    last = [
        i for i in plan.instructions if plan.operators[i.op_index] == FUSED and len(i.args) == 16
    ]
    assert len(last) == 1 and plan.values[last[0].args[14]] == etrt.ir.BoolValue(True)
    with torch.no_grad():
        want = [model(x).numpy()]
    assert_same_bits(tmp_path, ("joined", "apart"), x.numpy(), want, 1e-4)


class ShuffleUnits(nn.Module):
    """ShuffleNetV2's units: the first (stride 2) joins two branches, the next split the channels,
    run one half through 1x1, depthwise 3x3 and 1x1, join the halves and shuffle the channels
    (view [N, 2, C/2, H, W], transpose, contiguous, view back)."""

    def __init__(self) -> None:
        super().__init__()
        self.left = nn.Sequential(nn.Conv2d(24, 24, 3, 2, 1, groups=24), nn.Conv2d(24, 29, 1))
        self.right = nn.Sequential(
            nn.Conv2d(24, 29, 1),
            nn.ReLU(),
            nn.Conv2d(29, 29, 3, 2, 1, groups=29),
            nn.Conv2d(29, 29, 1),
        )
        self.units = nn.ModuleList(
            nn.Sequential(
                nn.Conv2d(29, 29, 1),
                nn.ReLU(),
                nn.Conv2d(29, 29, 3, 1, 1, groups=29),
                nn.Conv2d(29, 29, 1),
            )
            for _ in range(2)
        )
        self.head = nn.Conv2d(58, 32, 1)

    @staticmethod
    def shuffle(x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        return x.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous().view(n, c, h, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.shuffle(torch.cat([self.left(x), self.right(x)], 1))
        for unit in self.units:
            a, b = x.chunk(2, dim=1)
            x = self.shuffle(torch.cat([a, unit(b)], 1))
        return F.relu(self.head(x)) * 2.0


def test_channel_shuffles_copy_into_channels_last_memory(
    inprocess_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The channel shuffle's copy of an NHWC tensor is laid out with the channel dimensions
    innermost (dim order (0, 3, 4, 1, 2)), so the view after it is NHWC, its halves are NHWC
    views, and the concatenations write NHWC: no NCHW tensor between the first convolution and
    the last. Bit for bit what the program with NCHW copies computes, at every cap and at one
    and two threads."""
    import etrt
    import etrt.channels_last

    torch.manual_seed(6)
    model = ShuffleUnits().eval()
    x = torch.randn(2, 24, 21, 17)
    program = etrt.export(model, (x,))
    program.save(tmp_path / "shuffled.etrt")
    with monkeypatch.context() as m:
        m.setattr(etrt.channels_last, "_channels_inner_copy", lambda *args: None)
        m.setattr(etrt.channels_last._Laid, "nhwc_view", lambda *args: False)
        copies = etrt.export(model, (x,))
    copies.save(tmp_path / "copies.etrt")
    plan = program.info.plan
    written = [
        (plan.operators[i.op_index], plan.values[i.args[-1]])
        for i in plan.instructions
        if plan.operators[i.op_index] in ("aten::clone", "aten::cat")
    ]
    # The first unit's two branches write their concatenation in place (concat_in_place.py).
    assert [op for op, _ in written] == ["aten::clone"] + ["aten::cat", "aten::clone"] * 2
    assert all(
        v.dim_order == ((0, 3, 4, 1, 2) if op == "aten::clone" else NHWC) for op, v in written
    )
    old = copies.info.plan
    assert all(
        old.values[i.args[-1]].dim_order in ((), (0, 1, 2, 3), (0, 1, 2, 3, 4))
        for i in old.instructions
        if old.operators[i.op_index] in ("aten::clone", "aten::cat")
    )
    with torch.no_grad():
        want = [model(x).numpy()]
    assert_same_bits(tmp_path, ("shuffled", "copies"), x.numpy(), want, 1e-4)


def test_a_yolov8_shaped_detector_runs_channels_last_between_its_convolutions(
    inprocess_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """YOLOv8's blocks (C2f's split halves and late residuals, SPPF's poolings, the neck's
    upsampling) keep every 4-D concatenation and addition channels-last and the residuals that
    follow a bottleneck's own output in its convolution; bit for bit the program without the
    split views and late residuals, at every cap and at one and two threads, and near eager."""
    import detectors

    torch.manual_seed(7)
    model = detectors.live(detectors.YoloV8Shaped(width=8, outputs=24))
    x = torch.randn(1, 3, 64, 96)
    program, apart = _joined_and_apart(model, x, tmp_path, monkeypatch)
    plan = program.info.plan
    written = [
        plan.values[i.args[-1]]
        for i in plan.instructions
        if plan.operators[i.op_index] in ("aten::cat", "aten::add.Tensor")
    ]
    four_d = [v for v in written if len(v.sizes) == 4]
    # 13 concatenations (eight C2f, SPPF, four in the neck) and the four additions below.
    assert len(four_d) == 13 + 4 and all(v.dim_order == NHWC for v in four_d), four_d
    # Six bottlenecks with residuals: the four whose residual is a split half stay additions.
    assert program.info.instruction_ops.count("aten::add.Tensor") == 4
    assert apart.info.instruction_ops.count("aten::add.Tensor") == 6
    with torch.no_grad():
        want = [model(x).numpy()]
    assert_same_bits(tmp_path, ("joined", "apart"), x.numpy(), want, 1e-4)


class GroupedBlocks(nn.Module):
    """ResNeXt's bottleneck (32 groups of 4 channels, then one at stride 2 with a downsampling
    shortcut), RegNetY's (groups of 8 with squeeze-excitation) and ShuffleNet v1's grouped 1x1
    layers around a channel shuffle."""

    def __init__(self) -> None:
        super().__init__()

        def bottleneck(cin: int, width: int, cout: int, groups: int, stride: int) -> nn.Module:
            return nn.Sequential(
                nn.Conv2d(cin, width, 1), nn.ReLU(),
                nn.Conv2d(width, width, 3, stride, 1, groups=groups), nn.ReLU(),
                nn.Conv2d(width, cout, 1),
            )  # fmt: skip

        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.x1 = bottleneck(32, 128, 32, 32, 1)
        self.x2 = bottleneck(32, 128, 64, 32, 2)
        self.down = nn.Conv2d(32, 64, 1, stride=2)
        self.y1 = bottleneck(64, 64, 64, 8, 1)
        self.se1, self.se2 = nn.Conv2d(64, 16, 1), nn.Conv2d(16, 64, 1)
        self.g1, self.g2 = nn.Conv2d(64, 48, 1, groups=4), nn.Conv2d(48, 64, 1, groups=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = F.relu(self.stem(x))
        s = F.relu(s + self.x1(s))
        s = F.relu(self.down(s) + self.x2(s))
        y = self.y1(s)
        y = y * torch.sigmoid(self.se2(F.relu(self.se1(y.mean((2, 3), keepdim=True)))))
        s = F.relu(s + y)
        g = F.relu(self.g1(s))
        n, c, h, w = g.shape
        g = g.view(n, 4, c // 4, h, w).transpose(1, 2).reshape(n, c, h, w)
        s = F.relu(s + self.g2(g))
        return s * 2.0


def test_grouped_convolutions_run_channels_last_per_group(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """Every grouped convolution (groups of 4 channels, joined into vectors of output channels;
    of 8; grouped 1x1s of 12 and 32 outputs a group) runs on the NHWC kernels with its weight
    stored HWIO and its output channels-last, its ReLU and residual folded in, and the program
    matches eager at every cap and at one and two threads."""
    import etrt
    from program_bits import outputs_everywhere

    torch.manual_seed(3)
    model = GroupedBlocks().eval()
    x = torch.randn(1, 3, 20, 18)
    program = etrt.export(model, (x,))
    program.save(tmp_path / "grouped.etrt")
    plan = program.info.plan
    grouped = [
        i
        for i in plan.instructions
        if isinstance(i, KernelCall)
        and plan.operators[i.op_index] in ("aten::convolution", FUSED)
        and plan.values[i.args[8]].val > 1
    ]
    assert len(grouped) == 5
    for conv in grouped:
        weight, out = plan.values[conv.args[1]], plan.values[conv.args[-1]]
        assert weight.dim_order == HWIO and out.dim_order == NHWC, (weight, out)
    # The ReLUs after the grouped 3x3s and the first grouped 1x1 ride in their calls, as do the
    # shuffle unit's residual and ReLU.
    assert all(plan.operators[c.op_index] == FUSED for c in grouped)
    # One ReLU is left: the one after the gated sum (a multiplication's result, not a call's).
    assert program.info.instruction_ops.count("aten::relu") == 1
    with torch.no_grad():
        want = model(x).numpy()
    for tag, outs in outputs_everywhere(tmp_path, ["grouped"], x.numpy()):
        (got,) = outs["grouped"]
        scale = float(np.max(np.abs(want)))
        assert scale > 1e-2
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale, err_msg=tag)

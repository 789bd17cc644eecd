"""PT2E static int8 programs (docs/quantization.md): convert_pt2e's reference modules export, fold
into integer kernels and run, matching the reference module; unfolded quantize/dequantize ops
run as kernels; other schemes are refused by name."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import etrt
import numpy as np
import pytest
import torch
from etrt.exporter import _decomposition_table
from etrt.quantization import QuantizeError
from etrt.quantized import DEQUANTIZE, fold_quantized
from etrt.xnnpack import cost
from etrt_fixtures import smallest_memory_budget
from torch import nn

REPO = Path(__file__).resolve().parents[2]


class SmallNet(nn.Module):
    """What PT2E quantizes in CNNs: conv + batch norm + ReLU, depthwise conv + hardswish, a
    residual add, max pooling, cat, conv + batch norm + ReLU6 (MobileNetV2's),
    average pooling and a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = nn.Conv2d(32, 24, 1, stride=2)
        self.pw_bn = nn.BatchNorm2d(24)
        self.relu6 = nn.ReLU6()
        self.pw2 = nn.Conv2d(24, 24, 1)
        self.fc = nn.Linear(24, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        z = nn.functional.hardswish(self.dw(y)) + y
        z = nn.functional.max_pool2d(torch.cat([z, y], 1), 2)
        z = self.pw2(self.relu6(self.pw_bn(self.pw(z))))
        return self.fc(nn.functional.adaptive_avg_pool2d(z, 1).flatten(1))


def _inputs(seed: int) -> torch.Tensor:
    return torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def converted() -> nn.Module:
    torch.manual_seed(0)
    calibration = [(_inputs(100 + i),) for i in range(4)]
    return etrt.quantize(SmallNet().eval(), (_inputs(0),), calibration=calibration)


def _run(program: etrt.Program, path: Path, x: torch.Tensor) -> torch.Tensor:
    program.save(path)
    out = etrt.load(path).forward(x.numpy())
    return torch.from_numpy(np.asarray(out[0]))


def _output_scale(module: nn.Module) -> float:
    """The scale of the dequantize producing the module's output."""
    graph: Any = module.graph  # a GraphModule
    (out,) = graph.output_node().args[0]
    assert out.target == DEQUANTIZE
    return float(out.args[1])


def test_int8_conv_net_folds_into_integer_kernels_and_matches_pt2e(
    inprocess_runtime: Path, converted: nn.Module, tmp_path: Path
) -> None:
    program = etrt.export(converted, (_inputs(0),))
    ops = program.info.instruction_ops
    assert ops.count("etrt_quant::conv2d") == 4 and ops.count("etrt_quant::linear") == 1
    # the residual add is an integer kernel; the ReLU6 is the range of the conv before it
    assert ops.count("etrt_quant::add") == 1
    assert not {"aten::convolution", "aten::addmm", "aten::mm", "aten::hardtanh"} & set(ops)
    lsb = _output_scale(converted)
    path = tmp_path / "small.etrt"
    for seed in range(3):
        x = _inputs(seed)
        got, want = _run(program, path, x), converted(x)
        # The reference sums dequantized floats; the kernels sum integers exactly. A layer's
        # integers differ only where float rounding crosses a rounding boundary (1 LSB, rare);
        # through the layers after it such a flip moves the output by at most a few LSBs.
        assert (got - want).abs().max().item() <= 2 * lsb + 1e-6
        assert (got == want).float().mean().item() >= 0.75


def test_integer_kernels_equal_the_folded_graph_run_by_torch(
    inprocess_runtime: Path, converted: nn.Module, tmp_path: Path
) -> None:
    """etrt_quant::* have torch implementations (exact integer sums); etrt's kernels must give
    the same integers."""
    x = _inputs(7)
    core = torch.export.export(converted, (x,)).run_decompositions(_decomposition_table())
    report = fold_quantized(core)
    assert (report.conv2d, report.linear, report.clamp, report.add) == (4, 1, 1, 1)
    want = core.module()(x)
    got = _run(etrt.export(converted, (x,)), tmp_path / "small.etrt", x)
    assert torch.equal(got, want)


def test_portable_int8_path_gives_the_same_integers(
    inprocess_runtime: Path,
    converted: nn.Module,
    block: Block,
    squeeze_excite: SE,
    tmp_path: Path,
) -> None:
    """ETRT_INT8_ISA=portable (every hand-written int8 path off: VNNI, the depthwise register
    blocks, the VBMI tables, the AVX-512 SE product) against this process's kernels: the same
    integers, whichever path this machine picks; on the small conv net, the MobileNetV2 block
    (depthwise) and the squeeze-excite net."""
    x = _inputs(11)
    small = etrt.export(converted, (x,)).save(tmp_path / "small.etrt")
    cases = [(small, x), (block.program, block.x), (squeeze_excite.program, squeeze_excite.x)]
    for i, (_, inputs) in enumerate(cases):
        np.save(tmp_path / f"x{i}.npy", inputs.numpy())
    script = (
        "import sys, numpy as np, etrt\n"
        "for i, path in enumerate(sys.argv[2:]):\n"
        "    out = etrt.load(path).forward(np.load(f'{sys.argv[1]}/x{i}.npy'))\n"
        "    np.save(f'{sys.argv[1]}/y{i}.npy', np.asarray(out[0]))\n"
    )
    env = {**os.environ, "ETRT_LIBRARY_DIR": str(inprocess_runtime), "ETRT_INT8_ISA": "portable"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), *(str(path) for path, _ in cases)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for i, (path, inputs) in enumerate(cases):
        portable = torch.from_numpy(np.load(tmp_path / f"y{i}.npy"))
        here = torch.from_numpy(np.asarray(etrt.load(path).forward(inputs.numpy())[0]))
        assert torch.equal(portable, here), path.name
    assert torch.equal(portable, squeeze_excite.want)


class InvertedResidual(nn.Module):
    """MobileNetV2's blocks, wide enough for the channels-last kernels' whole blocks: 3x3 conv,
    then depthwise convolutions of 80 (a block of 64 channels and one of 16; stride 2), 96 (64
    and 32), 48 and 24 channels (AVX2 vectors of 8: 24 is three), each between 1x1 convs, with
    batch norm and ReLU6 but the last; its output is the program's (NHWC computed, NCHW
    returned)."""

    def __init__(self) -> None:
        super().__init__()

        def unit(conv: nn.Conv2d, act: bool) -> nn.Sequential:
            layers = [conv, nn.BatchNorm2d(conv.out_channels)]
            return nn.Sequential(*layers, nn.ReLU6()) if act else nn.Sequential(*layers)

        self.body = nn.Sequential(
            unit(nn.Conv2d(8, 80, 3, padding=1), True),
            unit(nn.Conv2d(80, 80, 3, stride=2, padding=1, groups=80), True),
            unit(nn.Conv2d(80, 96, 1), True),
            unit(nn.Conv2d(96, 96, 3, padding=1, groups=96), True),
            unit(nn.Conv2d(96, 48, 1), True),
            unit(nn.Conv2d(48, 48, 3, padding=1, groups=48), True),
            unit(nn.Conv2d(48, 24, 1), True),
            unit(nn.Conv2d(24, 24, 3, padding=1, groups=24), True),
            unit(nn.Conv2d(24, 16, 1), False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


@dataclass(frozen=True)
class Block:
    program: Path
    x: torch.Tensor
    want: torch.Tensor  # the folded graph run by torch


@pytest.fixture(scope="module")
def block(inprocess_runtime: Path, tmp_path_factory: pytest.TempPathFactory) -> Block:
    torch.manual_seed(0)
    model = InvertedResidual().eval()
    for m in model.modules():  # live batch norm statistics, as a trained model has
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    x = torch.randn(1, 8, 15, 15, generator=torch.Generator().manual_seed(3))
    converted = etrt.quantize(model, (x,), calibration=[(torch.randn(1, 8, 15, 15),)])
    core = torch.export.export(converted, (x,)).run_decompositions(_decomposition_table())
    assert fold_quantized(core).clamp == 8  # every ReLU6 is an output range
    path = etrt.export(converted, (x,)).save(tmp_path_factory.mktemp("block") / "block.etrt")
    return Block(path, x, core.module()(x))


def test_channels_last_kernels_equal_the_folded_graph_at_every_instruction_set(
    block: Block,
) -> None:
    module = etrt.load(block.program)
    # VNNI (where the CPU has it), then capped: the AVX2 vpmaddwd product, then the baseline's
    try:
        for cap in ("avx512", "avx2", "sse2"):
            etrt.set_max_isa(cap)
            got = torch.from_numpy(np.asarray(module.forward(block.x.numpy())[0]))
            assert torch.equal(got, block.want), cap
    finally:
        etrt.set_max_isa("avx512")


class DepthwiseZoo(nn.Module):
    """The channels-last paths of a first convolution and of depthwise layers (docs/quantization.md,
    "The kernels"), batch 2: a 3 -> 24 stem at 3x3 stride 2 (its tiles read a padded copy: 16
    output channels and 8 more); 3x3 and 5x5 window-row kernels at stride 1 and 2 on planes
    widened to float32, rows of 29, 15, 8 and 4 pixels (whole groups and every kind of rest),
    borders from zero-point bands; 24 and 40 channels (AVX-512 vectors and an AVX2 tail of 8);
    7x7 and dilated windows on a 4x4 plane (per-tap kernels, every pixel a border one) and 12
    channels (per pixel). Planes too large for float32 (int8 bands): tests/cpp/test_quantized."""

    def __init__(self) -> None:
        super().__init__()

        def dw(c: int, k: int, s: int, p: int, d: int = 1) -> nn.Conv2d:
            return nn.Conv2d(c, c, k, stride=s, padding=p, dilation=d, groups=c)

        self.body = nn.Sequential(
            nn.Conv2d(3, 24, 3, stride=2, padding=1), nn.ReLU(),  # 57 -> 29
            dw(24, 3, 1, 1), dw(24, 5, 2, 2), dw(24, 3, 2, 1), dw(24, 5, 1, 2),  # 29, 15, 8, 8
            nn.Conv2d(24, 40, 1), dw(40, 5, 2, 2), dw(40, 5, 1, 2),  # -> 4, 4
            dw(40, 7, 1, 3), dw(40, 3, 1, 2, 2),  # per-tap kernels, all border
            nn.Conv2d(40, 12, 1), dw(12, 3, 1, 1),  # per pixel
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


@pytest.fixture(scope="module")
def zoo(inprocess_runtime: Path, tmp_path_factory: pytest.TempPathFactory) -> Block:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 57, 57, generator=torch.Generator().manual_seed(11))
    converted = etrt.quantize(
        DepthwiseZoo().eval(), (x,), calibration=[(torch.randn(2, 3, 57, 57),)]
    )
    core = torch.export.export(converted, (x,)).run_decompositions(_decomposition_table())
    assert fold_quantized(core).conv2d == 12
    path = etrt.export(converted, (x,)).save(tmp_path_factory.mktemp("zoo") / "zoo.etrt")
    return Block(path, x, core.module()(x))


def test_first_conv_and_depthwise_paths_equal_the_folded_graph_at_every_instruction_set(
    zoo: Block,
) -> None:
    """Runs repeated and caps changed between runs of one loaded program: the packed weights an
    instruction keeps from its first run are reused, then packed again for another cap."""
    module = etrt.load(zoo.program)
    try:
        for cap in ("avx512", "avx512", "avx2", "avx2", "sse2", "avx512"):
            etrt.set_max_isa(cap)
            got = torch.from_numpy(np.asarray(module.forward(zoo.x.numpy())[0]))
            assert torch.equal(got, zoo.want), cap
    finally:
        etrt.set_max_isa("avx512")


class GroupedBetween1x1(nn.Module):
    """RegNet's and ResNeXt's bottleneck: grouped 3x3 convolutions (groups 4, then a channel
    multiplier of 2 per group of one) between channels-last 1x1 layers, so their input and output
    arrive channels-last though their own kernels run NCHW."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(8, 32, 1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1, groups=4), nn.ReLU(),
            nn.Conv2d(32, 16, 1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=16), nn.ReLU(),
            nn.Conv2d(32, 8, 1),
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def test_grouped_convolutions_between_channels_last_layers_equal_the_folded_graph(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 8, 13, 13, generator=torch.Generator().manual_seed(5))
    converted = etrt.quantize(
        GroupedBetween1x1().eval(), (x,), calibration=[(torch.randn(2, 8, 13, 13),)]
    )
    core = torch.export.export(converted, (x,)).run_decompositions(_decomposition_table())
    assert fold_quantized(core).conv2d == 5
    want = core.module()(x)
    module = etrt.load(etrt.export(converted, (x,)).save(tmp_path / "grouped.etrt"))
    try:
        for cap in ("avx512", "avx2", "sse2"):
            etrt.set_max_isa(cap)
            got = torch.from_numpy(np.asarray(module.forward(x.numpy())[0]))
            assert torch.equal(got, want), cap
    finally:
        etrt.set_max_isa("avx512")


def test_kept_packed_weights_give_way_to_scratch_memory_within_a_tight_budget(zoo: Block) -> None:
    """The packed weights instructions keep share the method's memory budget with the scratch
    memory of every call: at the smallest budget the program runs in at all, runs repeated
    still succeed with the folded graph's integers (kept blocks are dropped for the scratch
    memory a later call needs, and weights are packed per call)."""
    x = zoo.x.numpy()

    hi = smallest_memory_budget(zoo.program, [x], 1 << 26)
    for budget in (hi, hi + (hi >> 4), hi + (hi >> 2)):
        module = etrt.load(zoo.program, max_memory_bytes=budget)
        for _ in range(3):
            got = torch.from_numpy(np.asarray(module.forward(x)[0]))
            assert torch.equal(got, zoo.want), budget


class SqueezeExcite(nn.Module):
    """What MobileNetV3 holds between its integer products: conv + hardswish, a squeeze-excite
    (spatial mean, 1x1 convs, ReLU, hardsigmoid, the channel scale), a cat of two branches of
    other parameters (XNNPACKQuantizer leaves cat unannotated: it reads their dequantized
    values), max pooling and average pooling. 24 channels: channels-last rows that the SE product
    joins three at a time (16 x 16 pixels: one left over)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 24, 3, padding=1)
        self.bn = nn.BatchNorm2d(24)
        self.dw = nn.Conv2d(24, 24, 3, padding=1, groups=24)
        self.fc1 = nn.Conv2d(24, 8, 1)
        self.fc2 = nn.Conv2d(8, 24, 1)
        self.pw = nn.Conv2d(48, 16, 1)
        self.head = nn.Conv2d(16, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.hardswish(self.bn(self.conv(x)))
        z = self.dw(y)
        gate = nn.functional.adaptive_avg_pool2d(z, 1)
        gate = nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(gate))))
        # cat's inputs: the product's and the depthwise conv's values, of other parameters
        z = nn.functional.max_pool2d(torch.cat([z * gate, z], 1), 3, 2, 1)
        # 8x8 -> 5x5: ceil mode's last window reaches past the padding (ATen's divisor rule)
        return self.head(nn.functional.avg_pool2d(self.pw(z), 3, 2, 1, ceil_mode=True))


@dataclass(frozen=True)
class SE:
    converted: nn.Module
    program: Path
    x: torch.Tensor
    want: torch.Tensor  # the folded graph run by torch


@pytest.fixture(scope="module")
def squeeze_excite(inprocess_runtime: Path, tmp_path_factory: pytest.TempPathFactory) -> SE:
    torch.manual_seed(0)
    model = SqueezeExcite().eval()
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 2.0)
    calibration = [(_inputs(200 + i),) for i in range(2)]
    converted = etrt.quantize(model, (_inputs(0),), calibration=calibration)
    x = _inputs(5)
    core = torch.export.export(converted, (x,)).run_decompositions(_decomposition_table())
    report = fold_quantized(core)
    # hardswish, hardsigmoid and the requantization of the cat's inputs are tables
    assert (report.conv2d, report.mean, report.mul, report.max_pool) == (6, 1, 1, 1)
    assert report.avg_pool == 1
    assert report.lookup == 2 and report.clamp == 0
    path = etrt.export(converted, (x,)).save(tmp_path_factory.mktemp("se") / "se.etrt")
    return SE(converted, path, x, core.module()(x))


def test_pooling_cat_hardswish_means_and_se_products_fold_into_int8_kernels(
    squeeze_excite: SE,
) -> None:
    """No float op and no dequantize/quantize pair is left between the integer kernels (only the
    program's own input quantize and output dequantize), and etrt's integers are the folded
    graph's at every instruction set (the VBMI table, the AVX-512 SE product, their portable
    loops)."""
    ops = etrt.load_program_info(squeeze_excite.program).instruction_ops
    assert {"etrt_quant::lookup", "etrt_quant::mul", "etrt_quant::mean"} <= set(ops)
    assert {"etrt_quant::max_pool2d", "etrt_quant::avg_pool2d", "aten::cat"} <= set(ops)
    assert ops.count("quantized_decomposed::quantize_per_tensor") == 1
    assert ops.count("quantized_decomposed::dequantize_per_tensor") == 1
    assert not [op for op in ops if op.startswith("aten::") and op != "aten::cat"]
    module = etrt.load(squeeze_excite.program)
    try:
        for cap in ("avx512", "avx2", "sse2"):
            etrt.set_max_isa(cap)
            got = torch.from_numpy(np.asarray(module.forward(squeeze_excite.x.numpy())[0]))
            assert torch.equal(got, squeeze_excite.want), cap
    finally:
        etrt.set_max_isa("avx512")
    # Against the PT2E reference: the tables, products, max pooling and cat compute its own
    # float32 steps; the mean and average pooling sum exactly where torch sums floats, and the
    # convolutions differ by the usual rare 1-LSB flips (docs/quantization.md).
    lsb = _output_scale(squeeze_excite.converted)
    for seed in (20, 21):
        x = _inputs(seed)
        got = torch.from_numpy(np.asarray(module.forward(x.numpy())[0]))
        want = squeeze_excite.converted(x)
        assert (got - want).abs().max().item() <= 2 * lsb + 1e-6
        assert (got == want).float().mean().item() >= 0.9


class Mlp(nn.Module):
    """Linears of 6 rows: the AVX2 product's tiles of 4 rows and a row left over, 16 + 4
    output channels, 40 and 20 taps (whole blocks of 16 and a rest)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(40, 20), nn.ReLU(), nn.Linear(20, 20))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class Conv3x3(nn.Module):
    """3x3 stride-1 convolutions of 16 and 32 channels (ResNet's): the AVX2 path's integer
    Winograd F(2x2, 3x3), on an odd 9x11 plane (tiles half outside) and with ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 16, 3, padding=1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def test_avx2_int8_kernels_equal_the_folded_graph(
    inprocess_runtime: Path, converted: nn.Module, block: Block, tmp_path: Path
) -> None:
    """ETRT_MAX_ISA=avx2 (a process of its own, as a machine without AVX-512 runs it): the
    vpmaddwd conv and linear tiles (requantized in registers, weights packed by transposes,
    partial channel blocks), the batch-2 classifier's gemv, a first convolution's odd 27 taps,
    the depthwise blocks and the 3x3 convolutions' Winograd give the folded graph's integers."""
    torch.manual_seed(0)
    mlp_x = torch.randn(6, 40, generator=torch.Generator().manual_seed(5))
    mlp = etrt.quantize(Mlp().eval(), (mlp_x,), calibration=[(torch.randn(6, 40),)])
    small_x = _inputs(13)
    conv_x = torch.randn(1, 16, 9, 11, generator=torch.Generator().manual_seed(6))
    conv = etrt.quantize(Conv3x3().eval(), (conv_x,), calibration=[(torch.randn(1, 16, 9, 11),)])
    cases = [(converted, small_x), (mlp, mlp_x), (conv, conv_x)]
    paths, inputs, wants = [block.program], [block.x], [block.want]
    for i, (model, x) in enumerate(cases):
        core = torch.export.export(model, (x,)).run_decompositions(_decomposition_table())
        fold_quantized(core)
        program = etrt.export(model, (x,))
        assert program.info.instruction_ops.count("etrt_quant::linear") == (1, 2, 0)[i]
        paths.append(program.save(tmp_path / f"case{i}.etrt"))
        inputs.append(x)
        wants.append(core.module()(x))
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"x{i}.npy", x.numpy())
    script = (
        "import sys, numpy as np, etrt\n"
        "assert etrt.isa_info().kernels == 'avx2', etrt.isa_info()\n"
        "for i, path in enumerate(sys.argv[2:]):\n"
        "    out = etrt.load(path).forward(np.load(f'{sys.argv[1]}/x{i}.npy'))\n"
        "    np.save(f'{sys.argv[1]}/y{i}.npy', np.asarray(out[0]))\n"
    )
    env = {**os.environ, "ETRT_LIBRARY_DIR": str(inprocess_runtime), "ETRT_MAX_ISA": "avx2"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), *(str(p) for p in paths)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for i, (path, want) in enumerate(zip(paths, wants, strict=True)):
        got = torch.from_numpy(np.load(tmp_path / f"y{i}.npy"))
        assert torch.equal(got, want), path.name


def test_unfolded_per_tensor_weights_run_as_quantize_dequantize_kernels(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """Per-tensor weights are not folded: the program keeps the q/dq ops around float
    convolutions (whose float sums round differently from torch's: the same LSB rule)."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    torch.manual_seed(0)
    x = _inputs(0)
    traced = torch.export.export(SmallNet().eval(), (x,)).module()
    config = get_symmetric_quantization_config(is_per_channel=False)
    quantizer = XNNPACKQuantizer().set_global(config)
    prepared = prepare_pt2e(traced, quantizer)
    prepared(x)
    reference = convert_pt2e(prepared)
    program = etrt.export(reference, (x,))
    ops = set(program.info.instruction_ops)
    assert "aten::convolution" in ops and "etrt_quant::conv2d" not in ops
    # dq -> ReLU6 -> q of one scale: a clamp of the int8 values
    assert "aten::clamp" in ops and "aten::hardtanh" not in ops
    assert {
        "quantized_decomposed::quantize_per_tensor",
        "quantized_decomposed::dequantize_per_tensor",
    } <= ops
    got = _run(program, tmp_path / "pt.etrt", _inputs(3))
    want = reference(_inputs(3))
    assert (got - want).abs().max().item() <= 2 * _output_scale(reference) + 1e-6
    assert (got == want).float().mean().item() >= 0.75


class ChannelRoundTrip(nn.Module):
    """Per-channel and uint8 quantize/dequantize on activations, as hand-written PT2E graphs
    hold them, and a per-tensor quantize of a transposed view (attention heads in a
    transformer)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scales", torch.tensor([0.02, 0.05, 0.1]))
        self.register_buffer("zero_points", torch.tensor([0, -3, 7]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        qd = torch.ops.quantized_decomposed
        q = qd.quantize_per_channel(x, self.scales, self.zero_points, 1, -128, 127, torch.int8)
        d = qd.dequantize_per_channel(q, self.scales, self.zero_points, 1, -128, 127, torch.int8)
        u = qd.quantize_per_tensor(x, 0.25, 128, 0, 255, torch.uint8)
        t = qd.quantize_per_tensor(torch.relu(x).transpose(0, 2), 0.05, -3, -128, 127, torch.int8)
        return q, d, qd.dequantize_per_tensor(u, 0.25, 128, 0, 255, torch.uint8), t


def test_per_channel_and_uint8_quantize_dequantize_match_torch(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    model = ChannelRoundTrip()
    # ties for the uint8 scale (x / 0.25 = k + 0.5) check round-half-to-even, and values
    # beyond the range check the clamps
    ties = torch.tensor([0.125, 0.375, -0.625, 40.0, -40.0]).expand(2, 3, 5)
    x = torch.cat([torch.randn(2, 3, 5) * 4, ties], 2)
    path = etrt.export(model, (x,)).save(tmp_path / "rt.etrt")
    got = etrt.load(path).forward(x.numpy())
    for g, w in zip(got, model(x), strict=True):
        assert torch.equal(torch.from_numpy(np.asarray(g)), w)


class Requantize(nn.Module):
    """Hand-written q/dq chains: a requantization to other parameters and a narrower range, and
    elementwise float ops of one int8 value (IEEE-exact ones: torch's eager result is the
    table's, element for element)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        qd = torch.ops.quantized_decomposed
        q = qd.quantize_per_tensor(x, 0.05, 3, -128, 127, torch.int8)
        d = qd.dequantize_per_tensor(q, 0.05, 3, -128, 127, torch.int8)
        r = qd.quantize_per_tensor(d, 0.1, -7, -100, 100, torch.int8)
        f = torch.clamp(d * 3 - 1, -2, 2) / 4 + nn.functional.hardsigmoid(d) * d
        s = qd.quantize_per_tensor(f, 0.02, 5, -128, 127, torch.int8)
        return (
            qd.dequantize_per_tensor(r, 0.1, -7, -100, 100, torch.int8),
            qd.dequantize_per_tensor(s, 0.02, 5, -128, 127, torch.int8),
        )


def test_requantization_and_elementwise_chains_become_tables(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    model = Requantize()
    x = torch.linspace(-8, 8, 2 * 3 * 100).reshape(2, 3, 100)  # every int8 value and beyond
    program = etrt.export(model, (x,))
    ops = program.info.instruction_ops
    assert ops.count("etrt_quant::lookup") == 2
    assert not [op for op in ops if op.startswith("aten::")]
    got = etrt.load(program.save(tmp_path / "rq.etrt")).forward(x.numpy())
    for g, w in zip(got, model(x), strict=True):
        assert torch.equal(torch.from_numpy(np.asarray(g)), w)


class DynamicQuant(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        qd = torch.ops.quantized_decomposed
        scale, zp = qd.choose_qparams.tensor(x, -128, 127, 1e-5, torch.int8)
        return qd.quantize_per_tensor.tensor(x, scale, zp, -128, 127, torch.int8)


def test_other_schemes_are_refused_naming_the_op_and_the_scheme() -> None:
    with pytest.raises(etrt.ExportError) as exc:
        etrt.export(DynamicQuant(), (torch.randn(4, 8),))
    message = str(exc.value)
    assert "quantized_decomposed::choose_qparams.tensor" in message
    assert "PT2E static int8" in message and "dynamic" in message
    with pytest.raises(QuantizeError, match=r"'int4'.*'int8'"):
        etrt.quantize(SmallNet(), (_inputs(0),), scheme="int4")


def test_cli_exports_int8_and_the_profiler_names_the_integer_kernels(
    inprocess_runtime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import runtime_build
    from etrt import cli

    out = tmp_path / "cnn.etrt"
    assert cli.main(["export", "etrt.examples:cnn", "--quantize", "int8", "-o", str(out)]) == 0
    assert f"wrote {out} (" in capsys.readouterr().out
    assert "etrt_quant::conv2d" in etrt.load_program_info(out).instruction_ops
    with pytest.raises(SystemExit) as usage:
        cli.main(["export", str(tmp_path / "m.pt2"), "--quantize", "int8", "-o", str(out)])
    assert usage.value.code == 2 and "--quantize" in capsys.readouterr().err
    runtime_build.build_tools("runtime", ["etrt_etdump"])
    env = {**os.environ, "ETRT_LIBRARY_DIR": str(inprocess_runtime)}
    proc = subprocess.run(
        [sys.executable, "-m", "etrt", "profile", str(out), "--runs", "2"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "etrt_quant::conv2d" in proc.stdout and "etrt_quant::linear" in proc.stdout


def test_int8_bert_encoder_runs_integer_linears_and_matches_pt2e(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """A transformers BERT encoder through PT2E (tiny: hidden 32, one layer, 8 tokens, batch 2
    with padding; the `models` suite runs two layers at hidden 128): every linear an integer
    kernel, layer norm and softmax float between dequantize and quantize, GELU a table, the
    output close to the reference module's."""
    import transformer_models as tm

    config = tm.transformers().BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    model = tm.transformers().BertModel(config).eval()
    inputs = tm.inputs("bert", "test", batch=2)
    calibration = [tm.inputs("bert", "test", batch=2, seed=1)]
    converted = etrt.quantize(model, inputs, calibration=calibration)
    program = etrt.export(converted, inputs)
    ops = program.info.instruction_ops
    # q, k, v, attention out, intermediate, output, and the pooler's
    assert ops.count("etrt_quant::linear") == 7
    assert not {"aten::addmm", "aten::mm"} & set(ops)
    float_ops = {"aten::native_layer_norm", "aten::scaled_dot_product_attention"}
    assert float_ops <= set(ops)
    # GELU between a dequantize and a quantize: a table of torch's own GELU of the 256 values
    assert "aten::gelu" not in ops and ops.count("etrt_quant::lookup") == 1
    module = etrt.load(program.save(tmp_path / "bert.etrt"))
    x = tm.inputs("bert", "test", batch=2, seed=3)
    got = [torch.from_numpy(np.asarray(t)) for t in module.forward(*(t.numpy() for t in x))]
    want = converted(*x)
    assert bert_int8_error(got[0], want[0]) <= BERT_TOLERANCE
    assert bert_int8_error(got[1], want[1]) <= BERT_TOLERANCE


# The reference module sums dequantized floats and runs torch's float layer norm / softmax /
# GELU; etrt sums integers exactly and runs its own float kernels. Where a float difference
# crosses a quantize boundary, that activation moves by one LSB and the layers after it carry it
# on. Measured (hidden 32 and 128, 2 layers): no such flip, every int8 activation identical, the
# outputs within float rounding (mean error 5e-8 of their magnitude, the last layer norm's).
# The bound leaves room for a few flips yet is a fiftieth of what int8 itself costs (2-5% of
# the magnitude between the reference and the float model), which one wrong rounding rule in
# every activation would reach.
BERT_TOLERANCE = 1e-3


def bert_int8_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """The mean absolute error as a fraction of the outputs' mean magnitude."""
    assert got.shape == want.shape
    return float((got - want).abs().mean() / want.abs().mean())


class ResidualOutputs(nn.Module):
    """A stem, MobileNetV2's inverted residual (1x1 expand, depthwise 3x3, 1x1 project with
    batch norm, ReLU6 on the first two) added back to the stem's output, and a strided conv.
    The stem's output and a depthwise convolution of the input are outputs too: each is one int8
    layer from the quantized input."""

    def __init__(self) -> None:
        super().__init__()

        def unit(conv: nn.Conv2d, act: nn.Module | None) -> nn.Sequential:
            layers = [conv, nn.BatchNorm2d(conv.out_channels)]
            return nn.Sequential(*layers, act) if act is not None else nn.Sequential(*layers)

        self.stem = unit(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.side = nn.Conv2d(3, 3, 3, padding=1, groups=3)
        self.residual = nn.Sequential(
            unit(nn.Conv2d(16, 48, 1), nn.ReLU6()),
            unit(nn.Conv2d(48, 48, 3, padding=1, groups=48), nn.ReLU6()),
            unit(nn.Conv2d(48, 16, 1), None),
        )
        self.head = nn.Conv2d(16, 8, 3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = self.stem(x)
        return y, self.side(x), self.head(self.residual(y) + y)


def _residual_input(seed: int) -> torch.Tensor:
    return torch.randn(1, 3, 12, 12, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def residual() -> nn.Module:
    torch.manual_seed(0)
    model = ResidualOutputs().eval()
    for m in model.modules():  # live batch norm statistics, as a trained model has
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    calibration = [(_residual_input(100 + i),) for i in range(4)]
    return etrt.quantize(model, (_residual_input(0),), calibration=calibration)


def _output_scales(module: nn.Module) -> list[float]:
    graph: Any = module.graph
    outs = graph.output_node().args[0]
    assert all(out.target == DEQUANTIZE for out in outs)
    return [float(out.args[1]) for out in outs]


def test_xnnpack_delegate_runs_int8_convolutions_and_additions(
    inprocess_runtime: Path, residual: nn.Module, tmp_path: Path
) -> None:
    """backend="xnnpack-all": every int8 convolution (depthwise too) and the residual addition
    run in delegate calls on qs8 values (two: the side convolution shares only the input).
    XNNPACK adds the bias as an int32 quantized to input_scale * weight_scale[c] and requantizes
    once, where the reference adds the float bias after scaling (and its addition rounds its own
    way): each layer's integers may differ from etrt's kernels (equal to the reference's) by
    1 LSB; the outputs one layer from the input must be within 1 LSB, the last, four layers
    deep, within 2."""
    x0 = _residual_input(0)
    program = etrt.export(residual, (x0,), backend="xnnpack-all")
    ops = program.info.instruction_ops
    assert ops.count("delegate:XnnpackBackend") == 2, ops
    assert not {"etrt_quant::conv2d", "etrt_quant::add"} & set(ops), ops
    delegated = etrt.load(program.save(tmp_path / "xnn.etrt"))
    kernels = etrt.load(etrt.export(residual, (x0,)).save(tmp_path / "int8.etrt"))
    lsbs = _output_scales(residual)
    flips = 0
    for seed in range(3):
        x = _residual_input(seed)
        got = [torch.from_numpy(np.asarray(t)) for t in delegated.forward(x.numpy())]
        own = [torch.from_numpy(np.asarray(t)) for t in kernels.forward(x.numpy())]
        want = residual(x)
        for i, (g, o, w, lsb) in enumerate(zip(got, own, want, lsbs, strict=True)):
            limit = (1 if i < 2 else 2) * lsb * (1 + 1e-5)
            assert (g - o).abs().max().item() <= limit, (seed, i)
            assert (g - w).abs().max().item() <= limit + (o - w).abs().max().item(), (seed, i)
            assert (g == o).float().mean().item() >= 0.9, (seed, i)
            flips += int((g != o).sum().item())
    assert flips > 0  # the two requantizations do differ: the delegate really ran these layers


def test_cost_rule_delegates_the_int8_layers_xnnpack_runs_faster(
    inprocess_runtime: Path, residual: nn.Module, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """backend="xnnpack" (docs/quantization.md's per-layer measurement): where etrt's int8
    kernels have AVX-512 VNNI, only depthwise layers of 576 channels or more at 7x7 go to
    XNNPACK; without VNNI depthwise layers of 384 channels or more; so none of this net's
    either way. ETRT_MAX_ISA tells the rule which machine the program is for. With the AVX2
    threshold at this net's 48 channels, its inverted residual's depthwise layer goes alone:
    the split program hands int8 values between the delegate and etrt's kernels channels-last
    both ways."""
    x = _residual_input(0)
    for vnni, calls, convs in ((True, 0, 6), (False, 0, 6)):
        monkeypatch.setattr(cost, "int8_vnni", lambda v=vnni: v)
        program = etrt.export(residual, (x,), backend="xnnpack")
        ops = program.info.instruction_ops
        assert ops.count("delegate:XnnpackBackend") == calls, (vnni, ops)
        assert ops.count("etrt_quant::conv2d") == convs, (vnni, ops)
    monkeypatch.setattr(cost, "QS8_AVX2_DEPTHWISE_MIN_CHANNELS", 48)
    program = etrt.export(residual, (x,), backend="xnnpack")
    ops = program.info.instruction_ops
    assert ops.count("delegate:XnnpackBackend") == 1 and ops.count("etrt_quant::conv2d") == 5, ops
    split = etrt.load(program.save(tmp_path / "split.etrt")).forward(x.numpy())
    own = etrt.load(etrt.export(residual, (x,)).save(tmp_path / "own.etrt")).forward(x.numpy())
    for i, (g, o, lsb) in enumerate(zip(split, own, _output_scales(residual), strict=True)):
        diff = np.abs(np.asarray(g) - np.asarray(o)).max()
        assert diff <= (1 if i < 2 else 2) * lsb * (1 + 1e-5), (i, diff / lsb)
    monkeypatch.undo()
    monkeypatch.setenv("ETRT_MAX_ISA", "avx2")
    assert not cost.int8_vnni()

"""Weight-only and dynamic-activation schemes from torchao's quantize_: the exporter folds each
dequantize -> linear / embedding into etrt_quant::weight_only_* kernels, and a KV-cache decoder
quantized with them generates the tokens torchao's eager model generates.

The weight-only kernels compute what torchao's eager model computes, (q - zero) * scale for every
weight, but sum in another order and take each group's scale out of its sum: outputs agree to
float rounding (a relative 1e-5 of the output's magnitude), and embeddings exactly. int8_mm's
integer sums are exact, but a dynamic scheme rounds every activation to int8 at run time, and
a float difference of one ulp upstream (a layer norm summed in another order) flips such a
rounding: torchao's own model with one layer norm weight changed by one ulp moves the decoder's
logits by about 1% of their range. There the test feeds etrt torchao's tokens and allows 3%.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import decoders
import etrt
import numpy as np
import pytest
import torch
from etrt.errors import ExportError
from etrt.runtime import ISA_NAMES
from etrt.weight_only import (
    DOT_TILE,
    TILE,
    dequantize_weight,
    pack,
    pack_int4,
    tile_channels,
    tile_int4,
    tile_int4_dot,
    unpack_int4,
    untile_int4,
    untile_int4_dot,
)
from torch import nn

PROMPT = [3, 14, 15, 92, 65]
NEW_TOKENS = 8


def _quiet() -> None:
    warnings.filterwarnings("ignore", module="torchao")
    warnings.filterwarnings("ignore", message=".*Enum subclass.*")


def _generate(
    step: decoders.Step, forced: list[int] | None = None
) -> tuple[list[int], list[np.ndarray]]:
    """Greedy tokens (or the `forced` ones) and every call's last-position logits."""
    tokens = list(PROMPT)
    logits = step(np.array([tokens], np.int64), np.arange(len(tokens), dtype=np.int64))
    seen = [logits[0, -1]]
    out: list[int] = []
    for i in range(NEW_TOKENS):
        nxt = int(np.argmax(logits[0, -1])) if forced is None else forced[i]
        out.append(nxt)
        logits = step(np.array([[nxt]], np.int64), np.array([len(tokens)], np.int64))
        tokens.append(nxt)
        seen.append(logits[0, -1])
    return out, seen


def _torchao_config(name: str) -> Any:
    from torchao.quantization import Int8WeightOnlyConfig, IntxWeightOnlyConfig
    from torchao.quantization.granularity import PerGroup
    from torchao.quantization.quant_primitives import MappingType

    if name == "Int8WeightOnlyConfig":
        return Int8WeightOnlyConfig()
    return IntxWeightOnlyConfig(
        weight_dtype=torch.int4, granularity=PerGroup(64), mapping_type=MappingType.ASYMMETRIC
    )


# (how the decoder is quantized, the kernels its program must hold)
CASES = {
    "int4-weight": {"etrt_quant::weight_only_linear", "etrt_quant::weight_only_embedding"},
    "int8-weight": {"etrt_quant::weight_only_linear", "etrt_quant::weight_only_embedding"},
    "int8-dynamic-int4-weight": {"etrt_quant::dynamic_int4_linear", "etrt_quant::quantize_rows"},
    "int8-dynamic": {"etrt_quant::int8_mm", "etrt_quant::weight_only_embedding"},
    "Int8WeightOnlyConfig": {"etrt_quant::weight_only_linear"},
    "IntxWeightOnlyConfig-int4-asymmetric-64": {"etrt_quant::weight_only_linear"},
}


# The gate decodes with the int4 helper's program (the other patterns have one-layer tests
# below); every scheme's decoder is part of the long `models` suite.
_LONG = pytest.mark.long, pytest.mark.models
GATE_CASES = ("int4-weight",)


@pytest.mark.parametrize(
    "case",
    [c if c in GATE_CASES else pytest.param(c, marks=_LONG) for c in sorted(CASES)],
)
def test_quantized_decoder_generates_torchaos_tokens(
    case: str, inprocess_runtime: Path, tmp_path: Path
) -> None:
    _quiet()
    model, _ = decoders.make("handwritten")
    if case in ("Int8WeightOnlyConfig", "IntxWeightOnlyConfig-int4-asymmetric-64"):
        from torchao.quantization import quantize_

        quantize_(model, _torchao_config(case.split("-")[0]))
        quantized = model
    else:
        quantized = etrt.quantize(model, None, scheme=case)
    program = decoders.export(quantized, "handwritten")
    ops = set(program.operator_names)
    assert CASES[case] <= ops, sorted(ops)
    # No float weight is rebuilt at run time: every linear is a weight-only kernel.
    assert not ops & {"aten::mm", "aten::addmm", "aten::_int_mm"}, sorted(ops)
    path = program.save(tmp_path / "decoder.etrt")
    method = etrt.load(path).method("forward")

    def etrt_step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return np.asarray(method(tokens, positions)[0])

    want_tokens, want = _generate(decoders.eager_step(quantized))
    dynamic = case == "int8-dynamic"
    got_tokens, got = _generate(etrt_step, want_tokens if dynamic else None)
    assert got_tokens == want_tokens
    for g, w in zip(got, want, strict=True):
        bound = (0.03 if dynamic else 1e-5) * float(np.abs(w).max())
        np.testing.assert_allclose(g, w, rtol=0, atol=bound)


def test_the_helper_keeps_the_callers_model_and_quantizes_embeddings() -> None:
    _quiet()
    model, _ = decoders.make("handwritten")
    before = model.head.weight.detach().clone()
    quantized = etrt.quantize(model, None, scheme="int4-weight", group_size=64)
    assert type(model.head.weight) is nn.Parameter and torch.equal(model.head.weight, before)
    assert type(quantized.head.weight).__name__ == "IntxUnpackedToInt8Tensor"
    assert type(quantized.tok.weight).__name__ == "IntxUnpackedToInt8Tensor"
    kept = etrt.quantize(model, None, scheme="int4-weight", embeddings=False)
    assert type(kept.tok.weight) is nn.Parameter


@pytest.mark.parametrize(
    ("scheme", "group_size", "message"),
    [
        ("int4-weight", 48, "group_size 48 is not one of 32, 64, 128, 256"),
        (
            "int4-weight",
            128,
            "linear attn.0.qkv has 64 input features, not a multiple of group_size 128",
        ),
        ("int8-weight", 32, "scheme 'int8-weight' is per channel: it takes no group_size"),
        ("int2-weight", None, "unknown quantization scheme 'int2-weight'"),
    ],
)
def test_bad_helper_arguments_are_refused_by_name(
    scheme: str, group_size: int | None, message: str
) -> None:
    model, _ = decoders.make("handwritten")
    with pytest.raises(ExportError, match=message.replace("(", r"\(").replace(")", r"\)")):
        etrt.quantize(model, None, scheme=scheme, group_size=group_size)


def test_dynamic_int8_linears_give_torchaos_exact_results(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """Without float ops before them, the per-token activation quantization rounds as torchao
    does and the integer sums are exact: identical outputs."""
    _quiet()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(96, 80), nn.ReLU(), nn.Linear(80, 40)).eval()
    quantized = etrt.quantize(model, None, scheme="int8-dynamic")
    x = torch.randn(7, 96)
    program = etrt.export(quantized, (x,))
    assert "etrt_quant::int8_mm" in program.operator_names
    assert "aten::_int_mm" not in program.operator_names
    path = program.save(tmp_path / "mlp.etrt")
    with torch.no_grad():
        want = quantized(x).numpy()
    try:
        for isa in ("sse2", "avx512"):  # the portable path and, where the CPU has it, VNNI
            etrt.set_max_isa(isa)
            np.testing.assert_array_equal(np.asarray(etrt.load(path).forward(x.numpy())[0]), want)
    finally:
        etrt.set_max_isa("avx512")


def test_torchaos_int8_weight_only_config_folds(inprocess_runtime: Path, tmp_path: Path) -> None:
    """torchao's Int8Tensor scales after the product: mul(mm(x, float(q)), scale)."""
    _quiet()
    from torchao.quantization import Int8WeightOnlyConfig, quantize_

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(96, 80), nn.ReLU(), nn.Linear(80, 40)).eval()
    quantize_(model, Int8WeightOnlyConfig())
    x = torch.randn(7, 96)
    program = etrt.export(model, (x,))
    assert "etrt_quant::weight_only_linear" in program.operator_names
    assert "aten::mm" not in program.operator_names
    with torch.no_grad():
        want = model(x).numpy()
    got = np.asarray(etrt.load(program.save(tmp_path / "mlp.etrt")).forward(x.numpy())[0])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * float(np.abs(want).max()))


class _IntMM(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch._int_mm(a, b)


def test_an_int8_product_without_a_constant_weight_is_refused_naming_the_scheme() -> None:
    a = torch.randint(-128, 128, (32, 64), dtype=torch.int8)
    b = torch.randint(-128, 128, (64, 32), dtype=torch.int8)
    with pytest.raises(
        ExportError,
        match=r"node _int_mm: etrt does not run aten::_int_mm: .*"
        r"Int8DynamicActivationInt8WeightConfig.*no constant int8 weight",
    ):
        etrt.export(_IntMM(), (a, b))


def test_int4_packing_round_trips_and_falls_back_to_int8() -> None:
    q = torch.randint(-8, 8, (5, 64), dtype=torch.int8)
    packed = pack_int4(q, 32)
    assert packed.shape == (5, 32) and packed.dtype == torch.uint8
    assert torch.equal(unpack_int4(packed, 32), q)
    # Byte j of a group holds values j and j + 16: the kernel's unpacking order.
    assert int(packed[0, 0]) == (int(q[0, 0]) + 8) | ((int(q[0, 16]) + 8) << 4)
    scales = torch.rand(5, 2)
    p4 = pack(q, scales, torch.zeros(5, 2, dtype=torch.int8))
    assert p4 is not None and p4.bits == 4 and p4.zero_points is None and p4.group_size == 32
    wide = q.clone()
    wide[2, 3] = 9
    p8 = pack(wide, scales, None)
    assert p8 is not None and p8.bits == 8 and torch.equal(p8.weight, wide)


class _OneLinear(nn.Module):
    """etrt_quant::weight_only_linear called directly, with shapes that leave vector tails."""

    def __init__(self, bits: int, n: int, k: int, group_size: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(bits * 1000 + k)
        lo, hi = (-8, 8) if bits == 4 else (-128, 128)
        self.q = torch.randint(lo, hi, (n, k), dtype=torch.int8, generator=g)
        self.scales = torch.rand(n, k // group_size, generator=g) / 16
        self.zeros = torch.randint(-3, 4, (n, k // group_size), dtype=torch.int8, generator=g)
        packed = pack(self.q, self.scales, self.zeros)
        assert packed is not None and packed.bits == bits
        tiled = packed.tiled()  # the layout the exporter writes: int4 in blocks of 16 channels
        assert tiled.zero_points is not None
        self.register_buffer("w", tiled.weight)
        self.register_buffer("s", tiled.scales)
        self.register_buffer("z", tiled.zero_points)
        self.register_buffer("b", torch.randn(n, generator=g))
        self.bits, self.group_size = bits, group_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = torch.ops.etrt_quant.weight_only_linear(
            x, self.w, self.s, self.z, self.b, self.bits, self.group_size, TILE
        )
        return out

    def reference(self, x: torch.Tensor) -> torch.Tensor:
        """torchao's arithmetic on the untouched values: (q - zero) * scale, then a linear."""
        n, k = self.q.shape
        q = self.q.view(n, -1, self.group_size).to(torch.float32)
        w = (q - self.zeros.unsqueeze(2).to(torch.float32)) * self.scales.unsqueeze(2)
        return torch.nn.functional.linear(x, w.view(n, k), self.b)


@pytest.mark.parametrize(
    ("bits", "n", "k", "group_size"),
    [(4, 37, 120, 40), (4, 19, 64, 64), (4, 85, 96, 32), (8, 23, 100, 50), (8, 85, 63, 63)],
)
def test_kernel_matches_the_reference_at_every_instruction_set(
    bits: int, n: int, k: int, group_size: int, inprocess_runtime: Path, tmp_path: Path
) -> None:
    """One row, 13 (tiles of 8 rows, with AVX-512, and 4 sharing each unpacked weight, and one
    more) and 40 (a prompt: five tiles of 8 or ten of 4). 85 channels cover every part of the
    tiled kernel at each vector width: 4-vector strips, a whole block of 16 and a narrow last
    block of 5; groups of 40 leave vector tails, int8 groups of 63 an odd last column."""
    module = _OneLinear(bits, n, k, group_size).eval()
    x = torch.randn(40, k)
    rows = torch.export.Dim("rows", min=1, max=40)
    program = etrt.export(module, (x,), dynamic_shapes=({0: rows},))
    path = program.save(tmp_path / "linear.etrt")
    try:
        for isa in ISA_NAMES:
            etrt.set_max_isa(isa)
            method = etrt.load(path).method("forward")
            for count in (1, 13, 40):
                xs = x[:count]
                want = module.reference(xs).numpy()
                np.testing.assert_allclose(module(xs).numpy(), want, rtol=0, atol=1e-5)
                got = np.asarray(method(xs.numpy())[0])
                bound = 2e-5 * float(np.abs(want).max())
                np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=f"{isa} {count}")
    finally:
        etrt.set_max_isa("avx512")


def test_int4_tiling_puts_sixteen_channels_of_a_column_pair_side_by_side() -> None:
    q = torch.randint(-8, 8, (20, 6), dtype=torch.int8)
    tiled = tile_int4(q)
    assert tiled.shape == (20, 3) and tiled.dtype == torch.uint8
    assert torch.equal(untile_int4(tiled), q)
    flat = tiled.reshape(-1)

    def byte(c: int, j: int) -> int:
        return (int(q[c, 2 * j]) + 8) | ((int(q[c, 2 * j + 1]) + 8) << 4)

    assert int(flat[16 * 1 + 5]) == byte(5, 1)  # block 0: 16 bytes per column pair
    assert int(flat[16 * 3 + 4 * 2 + 3]) == byte(19, 2)  # the last block: 4 channels wide


def test_dynamic_int4_tiling_puts_four_columns_of_a_channel_in_one_lane() -> None:
    q = torch.randint(-8, 8, (13, 24), dtype=torch.int8)
    tiled = tile_int4_dot(q)
    assert tiled.shape == (13, 12) and tiled.dtype == torch.uint8
    assert torch.equal(untile_int4_dot(tiled), q)
    flat = tiled.reshape(-1)

    def byte(c: int, col: int) -> int:  # col in the low four of its 8 columns
        return (int(q[c, col]) + 8) | ((int(q[c, col + 4]) + 8) << 4)

    # block 0: per 8 columns, 8 channels x 4 bytes
    assert int(flat[32 * 1 + 4 * 6 + 2]) == byte(6, 8 + 2)
    # the last block, 5 channels wide, starts after 8 channels' 12 bytes
    assert int(flat[8 * 12 + 20 * 2 + 4 * 3 + 1]) == byte(11, 16 + 1)


class _OneDynamic(nn.Module):
    """etrt_quant::dynamic_int4_linear called directly: int8 activations with a scale and a zero
    point per row, int4 weights with zero points, scales in `scale_dtype`."""

    def __init__(self, n: int, k: int, group_size: int, scale_dtype: torch.dtype) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(n * 1000 + k)
        groups = k // group_size
        q = torch.randint(-8, 8, (n, k), dtype=torch.int8, generator=g)
        q[0] = 7  # the int16 sums' extremes: 15 x -128 over every column
        q[1] = -8
        scales = (torch.rand(n, groups, generator=g) / 16 + 1e-3).to(scale_dtype)
        zeros = torch.randint(-3, 4, (n, groups), dtype=torch.int8, generator=g)
        self.dense = dequantize_weight(pack_int4(q, group_size), scales, zeros, 4, group_size)
        self.register_buffer("w", tile_int4_dot(q))
        self.register_buffer("s", tile_channels(scales, DOT_TILE))
        self.register_buffer("z", tile_channels(zeros, DOT_TILE))
        self.register_buffer("sums", self.dense.to(torch.float64).sum(1).to(torch.float32))
        self.register_buffer("b", torch.randn(n, generator=g))
        self.group_size = group_size

    def forward(self, xq: torch.Tensor, xs: torch.Tensor, xz: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = torch.ops.etrt_quant.dynamic_int4_linear(
            xq, xs, xz, self.w, self.s, self.z, self.sums, self.b, self.group_size, DOT_TILE
        )
        return out

    def reference(self, xq: torch.Tensor, xs: torch.Tensor, xz: torch.Tensor) -> np.ndarray:
        """(x - xz) * xs times torchao's dequantized weight, in float64."""
        x = (xq.to(torch.float64) - xz.to(torch.float64)) * xs.to(torch.float64)
        out = x @ self.dense.to(torch.float64).t() + self.b.to(torch.float64)
        return out.numpy()


@pytest.mark.parametrize(
    ("n", "k", "group_size", "scale_dtype"),
    [
        (37, 64, 32, torch.float32),
        (29, 512, 256, torch.bfloat16),
        (16, 128, 64, torch.float16),
        (5, 48, 8, torch.float32),
        (21, 80, 40, torch.float32),
    ],
)
def test_dynamic_int4_kernel_matches_float64_at_every_instruction_set(
    n: int,
    k: int,
    group_size: int,
    scale_dtype: torch.dtype,
    inprocess_runtime: Path,
    tmp_path: Path,
) -> None:
    """Rows 1 and 2 (pairs of 8-channel blocks), 3, 4, 7 and 9 (tiles of three or four rows and
    what is left); 37, 29 and 21 channels end in a narrow block of 5, after an even and an odd
    count of whole ones; groups of 256 sum eight 32-column int16 runs, groups of 8 one step and
    of 40 five (VNNI's two-step loads end in a single one). Rows at -128 and 127 against
    weights at 7 and -8 reach the int16 sums' bounds. AVX2 and AVX-512 (VNNI where the CPU
    has it) give the same bits: exact integer group sums, the same float steps after them."""
    module = _OneDynamic(n, k, group_size, scale_dtype).eval()
    g = torch.Generator().manual_seed(k)
    xq = torch.randint(-128, 128, (9, k), dtype=torch.int8, generator=g)
    xq[0], xq[1] = -128, 127
    xs = torch.rand(9, 1, generator=g) / 10 + 1e-3
    xz = torch.randint(-128, 128, (9, 1), dtype=torch.int8, generator=g)
    rows = torch.export.Dim("rows", min=1, max=9)
    program = etrt.export(module, (xq, xs, xz), dynamic_shapes=({0: rows}, {0: rows}, {0: rows}))
    path = program.save(tmp_path / "linear.etrt")
    first: dict[int, np.ndarray] = {}
    try:
        for isa in ISA_NAMES:
            etrt.set_max_isa(isa)
            method = etrt.load(path).method("forward")
            for count in (1, 2, 3, 4, 7, 9):
                args = (xq[:count], xs[:count], xz[:count])
                want = module.reference(*args)
                bound = 1e-5 * float(np.abs(want).max())
                np.testing.assert_allclose(module(*args).numpy(), want, rtol=0, atol=bound)
                got = np.asarray(method(*(a.numpy() for a in args))[0])
                np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=f"{isa} {count}")
                if isa != "sse2":  # the portable loops scale in another order
                    np.testing.assert_array_equal(got, first.setdefault(count, got), err_msg=isa)
    finally:
        etrt.set_max_isa("avx512")


def test_8da4w_linears_run_on_int8_activations(inprocess_runtime: Path, tmp_path: Path) -> None:
    """torchao's 8da4w quantizes each row of activations to int8 and dequantizes it before the
    linear: the exporter hands the int8 rows, their scales and zero points to
    dynamic_int4_linear, whose outputs are torchao's to float rounding."""
    _quiet()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(96, 64), nn.ReLU(), nn.Linear(64, 37)).eval()
    quantized = etrt.quantize(model, None, scheme="int8-dynamic-int4-weight", group_size=32)
    # [batch, rows, features]: torchao quantizes [2, rows, 96] and the linear reads it as
    # [2 * rows, 96], so the int8 values are viewed as the linear's input
    x = torch.randn(2, 7, 96)
    rows = torch.export.Dim("rows", min=1, max=7)
    program = etrt.export(quantized, (x,), dynamic_shapes=({1: rows},))
    ops = set(program.operator_names)
    assert "etrt_quant::dynamic_int4_linear" in ops
    assert not ops & {"etrt_quant::weight_only_linear", "aten::mm", "aten::addmm"}, sorted(ops)
    path = program.save(tmp_path / "mlp.etrt")
    try:
        for isa in ISA_NAMES:
            etrt.set_max_isa(isa)
            method = etrt.load(path).method("forward")
            for count in (1, 7):
                with torch.no_grad():
                    want = quantized(x[:, :count]).numpy()
                got = np.asarray(method(x[:, :count].numpy())[0])
                bound = 1e-5 * float(np.abs(want).max())
                np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=isa)
    finally:
        etrt.set_max_isa("avx512")


class _EmbedLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(50, 64)
        self.head = nn.Linear(64, 85)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(self.tok(idx))
        return out


class _StridedLookups(nn.Module):
    """Position ids as transformers keeps them (a buffer sliced, then expanded with stride 0)
    and a transposed index view."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(50, 64)
        self.pos = nn.Embedding(16, 64)
        self.head = nn.Linear(64, 85)
        self.register_buffer("position_ids", torch.arange(16).expand((1, -1)), persistent=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        positions = self.position_ids[:, : idx.shape[1]].expand(idx.shape)
        hidden = self.tok(idx) + self.pos(positions) + self.tok(idx.t()).transpose(0, 1)
        out: torch.Tensor = self.head(hidden)
        return out


@pytest.mark.parametrize("scheme", ["int4-weight", "int8-weight"])
def test_quantized_lookups_take_index_views(
    scheme: str, inprocess_runtime: Path, tmp_path: Path
) -> None:
    _quiet()
    torch.manual_seed(0)
    quantized = etrt.quantize(_StridedLookups().eval(), None, scheme=scheme)
    idx = torch.randint(0, 16, (3, 5))
    program = etrt.export(quantized, (idx,))
    assert "etrt_quant::weight_only_embedding" in program.operator_names
    got = np.asarray(etrt.load(program.save(tmp_path / "lookups.etrt")).forward(idx.numpy())[0])
    with torch.no_grad():
        want = quantized(idx).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * float(np.abs(want).max()))


@pytest.mark.parametrize(
    ("scheme", "linear"),
    [
        ("int4-weight", "etrt_quant::weight_only_linear"),
        ("int8-dynamic-int4-weight", "etrt_quant::dynamic_int4_linear"),
    ],
)
@pytest.mark.parametrize("scale_dtype", ["bfloat16", "float16"])
def test_sixteen_bit_scales_are_stored_as_torchao_rounds_them(
    scale_dtype: str, scheme: str, linear: str, inprocess_runtime: Path, tmp_path: Path
) -> None:
    """torchao's scale_dtype (8da4w: weight_scale_dtype): the program keeps the 16-bit scales
    (half the bytes) and the kernels widen them exactly, at every instruction set (vector and
    scalar widening; VNNI's own where the CPU has it)."""
    _quiet()
    from etrt.program_size import size_breakdown

    torch.manual_seed(0)
    model = _EmbedLinear().eval()
    quantized = etrt.quantize(model, None, scheme=scheme, scale_dtype=scale_dtype)
    idx = torch.randint(0, 50, (3, 5))
    program = etrt.export(quantized, (idx,))
    assert {linear, "etrt_quant::weight_only_embedding"} <= set(program.operator_names)
    kinds = dict(size_breakdown(program.info).parts)
    assert kinds[f"scales ({scale_dtype})"] == (85 + 50) * 2 * 2, kinds  # 2 groups of 32
    assert "scales (float32)" not in kinds
    with torch.no_grad():
        want = quantized(idx).numpy()
    path = program.save(tmp_path / "lm.etrt")
    try:
        for isa in ISA_NAMES:
            etrt.set_max_isa(isa)
            got = np.asarray(etrt.load(path).forward(idx.numpy())[0])
            bound = 1e-5 * float(np.abs(want).max())
            np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=isa)
    finally:
        etrt.set_max_isa("avx512")
    with pytest.raises(ExportError, match="scale_dtype applies to the schemes with int weights"):
        etrt.quantize(model, None, scheme="int8-dynamic", scale_dtype=scale_dtype)


def test_cli_exports_int4_weights_and_prints_the_smaller_size(
    inprocess_runtime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _quiet()
    from etrt import cli

    sizes = {}
    for name, flags in (("float32", []), ("int4", ["--quantize", "int4-weight"])):
        out = tmp_path / f"{name}.etrt"
        assert cli.main(["export", "etrt.examples:decoder", *flags, "-o", str(out)]) == 0
        printed = capsys.readouterr().out
        assert f"wrote {out} (" in printed
        sizes[name] = int(printed.split(f"wrote {out} (")[1].split(" bytes")[0])
        assert sizes[name] == out.stat().st_size
        if flags:  # what the bytes are: the breakdown adds up to the file
            lines = printed.split("size by kind of constant:\n")[1].splitlines()
            parts = {line[:36].strip(): float(line[36:].split(" MB")[0]) for line in lines}
            assert {"int4 linear weights", "scales (float32)", "int4 embedding tables"} <= set(
                parts
            ), parts
            assert parts["int4 linear weights"] > parts["scales (float32)"] > 0
            assert abs(sum(parts.values()) * 1e6 - sizes[name]) < 0.01e6 * len(parts)
    assert "etrt_quant::weight_only_linear" in etrt.load_program_info(out).instruction_ops
    assert sizes["int4"] < sizes["float32"] / 4, sizes
    assert cli.main(["export", "etrt.examples:decoder", "--quantize", "int4-weight",
                     "--group-size", "48", "-o", str(out)]) == 1  # fmt: skip
    assert "error: group_size 48 is not one of 32, 64, 128, 256" in capsys.readouterr().err

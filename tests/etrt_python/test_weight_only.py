"""Weight-only and dynamic-activation schemes from torchao's quantize_: the exporter folds each
dequantize -> linear / embedding into etrt_quant::weight_only_* kernels, and a KV-cache decoder
quantized with them generates the tokens torchao's eager model generates.

The kernels compute what torchao's eager model computes, (q - zero) * scale for every weight,
but sum in another order and take each group's scale out of its sum: outputs agree to float
rounding (a relative 1e-5 of the output's magnitude), and embeddings exactly.
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
from etrt.weight_only import pack, pack_int4, unpack_int4
from torch import nn

PROMPT = [3, 14, 15, 92, 65]
NEW_TOKENS = 8


def _quiet() -> None:
    warnings.filterwarnings("ignore", module="torchao")
    warnings.filterwarnings("ignore", message=".*Enum subclass.*")


def _generate(step: decoders.Step) -> tuple[list[int], list[np.ndarray]]:
    """Greedy tokens and every call's last-position logits."""
    tokens = list(PROMPT)
    logits = step(np.array([tokens], np.int64), np.arange(len(tokens), dtype=np.int64))
    seen = [logits[0, -1]]
    out: list[int] = []
    for _ in range(NEW_TOKENS):
        nxt = int(np.argmax(logits[0, -1]))
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
    "int8-dynamic-int4-weight": {"etrt_quant::weight_only_linear", "aten::round"},
    "Int8WeightOnlyConfig": {"etrt_quant::weight_only_linear"},
    "IntxWeightOnlyConfig-int4-asymmetric-64": {"etrt_quant::weight_only_linear"},
}


@pytest.mark.parametrize("case", sorted(CASES))
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
    assert "aten::mm" not in ops and "aten::addmm" not in ops, sorted(ops)
    path = program.save(tmp_path / "decoder.etrt")
    method = etrt.load(path).method("forward")

    def etrt_step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return np.asarray(method(tokens, positions)[0])

    want_tokens, want = _generate(decoders.eager_step(quantized))
    got_tokens, got = _generate(etrt_step)
    assert got_tokens == want_tokens
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-5 * float(np.abs(w).max()))


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
        ("int4-weight", 128, "linear attn.0.qkv has 64 input features, not a multiple of group_size 128"),
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


def test_dynamic_int8_activations_with_int8_weights_are_refused_naming_the_scheme() -> None:
    _quiet()
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_

    model = nn.Sequential(nn.Linear(64, 32)).eval()
    quantize_(model, Int8DynamicActivationInt8WeightConfig())
    with pytest.raises(ExportError, match=r"aten::_int_mm"):
        etrt.export(model, (torch.randn(2, 64),))


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
        self.register_buffer("w", pack_int4(self.q, group_size) if bits == 4 else self.q)
        self.register_buffer("s", torch.rand(n, k // group_size, generator=g) / 16)
        self.register_buffer("z", torch.randint(-3, 4, (n, k // group_size), dtype=torch.int8))
        self.register_buffer("b", torch.randn(n, generator=g))
        self.bits, self.group_size = bits, group_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = torch.ops.etrt_quant.weight_only_linear(
            x, self.w, self.s, self.z, self.b, self.bits, self.group_size
        )
        return out


@pytest.mark.parametrize(
    ("bits", "n", "k", "group_size"), [(4, 37, 120, 40), (4, 19, 64, 64), (8, 23, 100, 50)]
)
def test_kernel_matches_the_reference_at_every_instruction_set(
    bits: int, n: int, k: int, group_size: int, inprocess_runtime: Path, tmp_path: Path
) -> None:
    module = _OneLinear(bits, n, k, group_size).eval()
    x = torch.randn(3, 5, k)
    path = etrt.export(module, (x,)).save(tmp_path / "linear.etrt")
    want = module(x).numpy()
    try:
        for isa in etrt.runtime.ISA_NAMES:
            etrt.set_max_isa(isa)
            got = np.asarray(etrt.load(path).forward(x.numpy())[0])
            np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * float(np.abs(want).max()))
    finally:
        etrt.set_max_isa("avx512")

"""The issue's language-model target as a test (long, `models` suite): a Llama-shaped decoder
from a transformers LlamaConfig (8 layers, hidden 1024, vocab 32000, random weights) quantized
with int4 weights in groups of 32 generates the greedy tokens torchao's eager model generates,
and its program is about 1/7 of the float32 weights with bfloat16 scales (1/6.4 with float32
ones). Speed: benchmarks/quantized_decode.py."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import etrt
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import quantized_decode

pytestmark = [pytest.mark.long, pytest.mark.models]


# int4 + a float32 scale per 32 weights is 5 bits a weight: 1/6.4 of float32; a bfloat16 scale
# makes it 4.5 bits, 1/7.1. Plus the norms and the program's own bytes.
@pytest.mark.parametrize(
    ("scale_dtype", "fraction"),
    [pytest.param(None, 1 / 6, id="float32-scales"), pytest.param("bfloat16", 1 / 7, id="bf16")],
)
def test_int4_llama_generates_torchaos_tokens_in_a_seventh_of_the_size(
    scale_dtype: str | None, fraction: float, inprocess_runtime: Path, tmp_path: Path
) -> None:
    warnings.filterwarnings("ignore")
    model = quantized_decode.llama(8)
    float_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    quantized = etrt.quantize(
        model, None, scheme="int4-weight", group_size=32, scale_dtype=scale_dtype
    )
    program = quantized_decode.decoders.export(quantized, "llama")
    ops = program.operator_names
    assert "etrt_quant::weight_only_linear" in ops and "etrt_quant::weight_only_embedding" in ops
    assert "aten::mm" not in ops and "aten::addmm" not in ops
    assert len(program) < float_bytes * fraction
    step, reset = quantized_decode.etrt_engine(program, tmp_path / "llama.etrt")
    reset()
    got = quantized_decode.generate(step)[2]
    with torch.no_grad():
        want = quantized_decode.generate(quantized_decode.decoders.eager_step(quantized))[2]
    assert got == want
    assert len(set(want)) > 3, want  # the weights are lively enough to wander the vocabulary

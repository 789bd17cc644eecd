"""scaled_dot_product_attention runs as one fused kernel and matches eager PyTorch.

Each case is exported and run by the in-tree etrt_runner, once in a release build and once under
AddressSanitizer and UBSan (the kernel's tail, mask and stride paths must never read out of
bounds).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import etrt
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from etrt.errors import ExportError
from models import MaskedSoftmax, make
from runtime_build import ToolRunner
from torch import nn

pytestmark = pytest.mark.slow

SDPA = "aten::scaled_dot_product_attention"


class Attention(nn.Module):
    """F.scaled_dot_product_attention with fixed keyword arguments; q, k, v (and a mask) are
    inputs, optionally transposed from [B, L, H, E] first."""

    def __init__(self, transposed: bool = False, **kwargs: object) -> None:
        super().__init__()
        self.transposed = transposed
        self.kwargs = kwargs

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *mask: torch.Tensor
    ) -> torch.Tensor:
        if self.transposed:
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        attn_mask = mask[0] if mask else None
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, **self.kwargs)  # type: ignore[arg-type]


def qkv(*shapes: tuple[int, ...], seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=gen) for s in shapes)


def padding_mask(b: int, s: int, valid: list[int]) -> torch.Tensor:
    """[B, 1, 1, S] bool: key j of batch i takes part when j < valid[i] (0: every key masked)."""
    return (torch.arange(s)[None, :] < torch.tensor(valid)[:, None]).reshape(b, 1, 1, s)


def scattered_mask(b: int, q: int, s: int, hidden: float) -> torch.Tensor:
    """[B, 1, L, S] float: random values, -inf at about `hidden` of the places (drawn per query)."""
    return torch.where(torch.rand(b, 1, q, s) > hidden, torch.randn(b, 1, q, s), -torch.inf)


def float_padding_mask(
    s: int, valid: list[int], values: torch.Tensor | None = None
) -> torch.Tensor:
    """[B, 1, 1, S] float: `values` (zeros when None) where j < valid[i], -inf after."""
    shown = torch.arange(s) < torch.tensor(valid)[:, None]
    return torch.where(shown, 0.0 if values is None else values, -torch.inf)[:, None, None, :]


CASES: dict[str, Callable[[], tuple[nn.Module, tuple[torch.Tensor, ...]]]] = {
    # One block of 16 queries x 16 keys, head size 16: the transformer's shape.
    "square16": lambda: (Attention(), qkv((2, 4, 16, 16), (2, 4, 16, 16), (2, 4, 16, 16))),
    # Tails everywhere: queries, keys and both head sizes not multiples of 16.
    "tails": lambda: (Attention(), qkv((2, 3, 5, 24), (2, 3, 37, 24), (2, 3, 37, 40))),
    # Several query and key blocks; the running max and sum are rescaled between key blocks.
    "long": lambda: (Attention(), qkv((1, 2, 40, 64), (1, 2, 70, 64), (1, 2, 70, 64))),
    "rank3": lambda: (Attention(), qkv((3, 9, 8), (3, 11, 8), (3, 11, 12))),
    "scale": lambda: (Attention(scale=0.3), qkv((2, 2, 7, 16), (2, 2, 9, 16), (2, 2, 9, 16))),
    "causal_square": lambda: (
        Attention(is_causal=True),
        qkv((2, 2, 33, 16), (2, 2, 33, 16), (2, 2, 33, 16)),
    ),
    # L != S: torch aligns the causal mask top-left.
    "causal_wide": lambda: (
        Attention(is_causal=True),
        qkv((1, 3, 7, 16), (1, 3, 20, 16), (1, 3, 20, 16)),
    ),
    # Batch 1 has no valid key: its queries get zeros, as in eager.
    "bool_mask_fully_masked": lambda: (
        Attention(),
        (*qkv((3, 2, 6, 16), (3, 2, 19, 16), (3, 2, 19, 16)), padding_mask(3, 19, [19, 0, 4])),
    ),
    "bool_mask_2d": lambda: (
        Attention(),
        (*qkv((2, 2, 6, 8), (2, 2, 5, 8), (2, 2, 5, 8)), torch.rand(6, 5) > 0.3),
    ),
    "float_mask": lambda: (
        Attention(),
        (*qkv((2, 2, 18, 16), (2, 2, 21, 16), (2, 2, 21, 16)), scattered_mask(2, 18, 21, 0.2)),
    ),
    # A causal mask given as a tensor (as transformers builds it): blocks of keys it hides from
    # every query are skipped, blocks it shows to all need no mask, the diagonal ones do.
    "bool_causal_mask": lambda: (
        Attention(),
        (
            *qkv((1, 2, 40, 16), (1, 2, 40, 16), (1, 2, 40, 16)),
            torch.ones(40, 40, dtype=torch.bool).tril()[None, None],
        ),
    ),
    # A float padding mask broadcast over the queries, hiding the last block of keys.
    "float_padding_mask": lambda: (
        Attention(),
        (*qkv((2, 2, 20, 16), (2, 2, 48, 16), (2, 2, 48, 16)), float_padding_mask(48, [40, 16])),
    ),
    "gqa": lambda: (
        Attention(enable_gqa=True),
        qkv((2, 8, 10, 16), (2, 2, 12, 16), (2, 2, 12, 16)),
    ),
    "broadcast_batch": lambda: (Attention(), qkv((3, 2, 6, 16), (1, 2, 9, 16), (1, 2, 9, 8))),
    # q, k, v as [B, L, H, E] memory: rows of a head are not adjacent.
    "transposed_inputs": lambda: (
        Attention(transposed=True),
        qkv((2, 17, 3, 16), (2, 20, 3, 16), (2, 20, 3, 16)),
    ),
    # Columns strided too (no contiguous head dimension): the kernel's general path.
    "strided_columns": lambda: (
        Attention(transposed=True),
        qkv((2, 16, 3, 5), (2, 16, 3, 5), (2, 16, 3, 7)),
    ),
    # 64 or more queries and keys with heads of 32 or more take two SGEMM products around a row
    # softmax: query blocks with a tail, grouped heads, broadcast batches, padding masks that
    # shorten the products (a batch with no key: zeros). Blocks whose rows see different keys
    # (a causal or scattered mask given as a tensor) go back to the lanes kernel, and so does
    # is_causal.
    "gemm_blocks": lambda: (Attention(), qkv((2, 3, 70, 64), (2, 3, 90, 64), (2, 3, 90, 48))),
    "gemm_gqa": lambda: (
        Attention(enable_gqa=True),
        qkv((2, 8, 64, 32), (2, 2, 70, 32), (2, 2, 70, 32)),
    ),
    "gemm_broadcast_batch": lambda: (
        Attention(),
        qkv((3, 2, 65, 32), (1, 2, 67, 32), (1, 2, 67, 40)),
    ),
    "gemm_bool_padding_fully_masked": lambda: (
        Attention(),
        (*qkv((3, 2, 66, 32), (3, 2, 64, 32), (3, 2, 64, 32)), padding_mask(3, 64, [64, 0, 5])),
    ),
    "gemm_float_padding": lambda: (
        Attention(scale=0.2),
        (
            *qkv((2, 2, 70, 32), (2, 2, 96, 32), (2, 2, 96, 32)),
            float_padding_mask(96, [90, 17], torch.randn(2, 96)),
        ),
    ),
    "gemm_float_mask_scattered": lambda: (
        Attention(),
        (*qkv((2, 2, 72, 32), (2, 2, 80, 32), (2, 2, 80, 32)), scattered_mask(2, 72, 80, 0.2)),
    ),
    "gemm_bool_causal_mask": lambda: (
        Attention(),
        (
            *qkv((1, 2, 80, 64), (1, 2, 80, 64), (1, 2, 80, 64)),
            torch.ones(80, 80, dtype=torch.bool).tril()[None, None],
        ),
    ),
    "gemm_size_causal": lambda: (
        Attention(is_causal=True),
        qkv((1, 2, 100, 32), (1, 2, 120, 32), (1, 2, 120, 32)),
    ),
}

# Decoding: a few queries per head take the kernel's decode path (queries one at a time, vectors
# along the keys' head dimension and the value columns, each instruction set's own width). Key
# counts and head sizes leave tails at 16, 8 and 4 lanes.
DECODE_CASES: dict[str, Callable[[], tuple[nn.Module, tuple[torch.Tensor, ...]]]] = {
    "decode_one_query_long_keys": lambda: (
        Attention(),
        qkv((2, 4, 1, 64), (2, 4, 333, 64), (2, 4, 333, 64), seed=1),
    ),
    # L != S under is_causal: query i sees keys 0..i (top-left), so most keys are hidden.
    "decode_causal_tails": lambda: (
        Attention(is_causal=True),
        qkv((1, 3, 3, 24), (1, 3, 41, 24), (1, 3, 41, 44), seed=2),
    ),
    # Batch 1 has no valid key (zeros); batch 2 sees 17 of 300.
    "decode_bool_padding_fully_masked": lambda: (
        Attention(),
        (
            *qkv((3, 2, 1, 16), (3, 2, 300, 16), (3, 2, 300, 16), seed=3),
            padding_mask(3, 300, [300, 0, 17]),
        ),
    ),
    "decode_float_mask": lambda: (
        Attention(),
        (*qkv((2, 2, 2, 36), (2, 2, 50, 36), (2, 2, 50, 8), seed=4), scattered_mask(2, 2, 50, 0.3)),
    ),
    # Llama's decode step: 4 query heads per key head, an explicit scale.
    "decode_gqa_scale": lambda: (
        Attention(enable_gqa=True, scale=0.3),
        qkv((1, 8, 1, 64), (1, 2, 130, 64), (1, 2, 130, 64), seed=5),
    ),
}
CASES.update(DECODE_CASES)
FULLY_MASKED = (
    "bool_mask_fully_masked",
    "decode_bool_padding_fully_masked",
    "gemm_bool_padding_fully_masked",
)


def strided_columns(case: str, inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """The query of "strided_columns" with a column stride other than 1."""
    if case != "strided_columns":
        return inputs
    q, k, v = inputs
    return (q.transpose(-1, -2).contiguous().transpose(-1, -2), k, v)


@pytest.mark.parametrize("cap", ["avx2", "sse2"])
def test_attention_matches_eager_under_each_isa_cap(
    tool_runner: ToolRunner, tmp_path: Path, cap: str
) -> None:
    """Below AVX-512 the query blocks are 8 (AVX2) or 4 (SSE2) lanes wide, so query counts of
    5, 7, 17, 33 and 40 leave tails at each width, and the decode cases take the per-query path
    at the clone's width. AVX-512 (16 lanes) runs below, uncapped."""
    capped = ToolRunner(tool_runner.exe, {**(tool_runner.env or os.environ), "ETRT_MAX_ISA": cap})
    for case in sorted(CASES):
        module, inputs = CASES[case]()
        run = capped.run_exported(tmp_path, module, strided_columns(case, inputs))
        print(f"{cap} {case}: max abs diff {run.max_abs_diff():.3g}")
        assert run.max_abs_diff() <= 2e-6, case
        if case in FULLY_MASKED:
            assert np.all(run.got[0][1] == 0.0), case


@pytest.mark.parametrize("case", sorted(CASES))
def test_attention_matches_eager(tool_runner: ToolRunner, tmp_path: Path, case: str) -> None:
    module, inputs = CASES[case]()
    run = tool_runner.run_exported(tmp_path, module, strided_columns(case, inputs))
    assert run.program.info.instruction_ops.count(SDPA) == 1
    assert "aten::_softmax" not in run.program.info.instruction_ops
    print(f"{case}: max abs diff {run.max_abs_diff():.3g}")
    assert run.max_abs_diff() <= 2e-6
    if case in FULLY_MASKED:
        assert np.all(run.got[0][1] == 0.0)


def test_transformer_attention_is_one_instruction() -> None:
    model, inputs = make("transformer", 2)
    ops = etrt.export(model, inputs).info.instruction_ops
    assert ops.count(SDPA) == 1
    for gone in ("aten::_softmax", "aten::mul.Scalar", "aten::where.self", "aten::any.dim"):
        assert gone not in ops, ops
    assert ops.count("aten::bmm") == 1  # the input projection: none is left in attention


def test_attention_with_dropout_is_refused_at_export() -> None:
    with pytest.raises(ExportError, match=r"dropout_p=0\.1; etrt runs inference only"):
        etrt.export(Attention(dropout_p=0.1), qkv((1, 1, 4, 8), (1, 1, 4, 8), (1, 1, 4, 8)))


def test_masked_softmax_ops_match_eager(tool_runner: ToolRunner, tmp_path: Path) -> None:
    # eq, logical_not, any, full_like, where and softmax: row 1 is all -inf and gives zeros.
    x = torch.randn(2, 3, 16)
    x[0, 1] = -torch.inf
    x[1, 2, :5] = -torch.inf
    run = tool_runner.run_exported(tmp_path, MaskedSoftmax(), (x,))
    assert np.all(run.got[0][0, 1] == 0.0)
    assert run.max_abs_diff() <= 1e-6

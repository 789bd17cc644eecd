"""Identical calls are computed once (python/etrt/dedupe.py): pure ATen calls on the same
arguments merge, random ones and calls differing in any argument (0.0 against -0.0) do not."""

from __future__ import annotations

import collections
import warnings
from pathlib import Path

import etrt
import numpy as np
import torch
from etrt.dedupe import merge_identical_calls
from torch import nn


class _Twice(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = x.abs() + 1
        b = x.abs() + 1  # the same two calls again
        noise = torch.rand_like(x) - torch.rand_like(x)  # two draws: never one
        return a * b, noise, x * 0.0, x * -0.0


def _counts(program: etrt.Program) -> collections.Counter[str]:
    return collections.Counter(program.info.instruction_ops)


def test_identical_calls_run_once_random_and_signed_zero_ones_do_not(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    x = torch.randn(4, 8)
    ep = torch.export.export(_Twice(), (x,)).run_decompositions()
    assert merge_identical_calls(ep) == 2  # the second abs and add
    ops = collections.Counter(
        str(n.target) for n in ep.graph.nodes if n.op == "call_function"
    )
    assert ops["aten.abs.default"] == 1 and ops["aten.add.Tensor"] == 1, ops
    # a * b, x * 0.0 and x * -0.0: scalars are compared by their bits
    assert ops["aten.rand_like.default"] == 2 and ops["aten.mul.Tensor"] == 3, ops
    want = ep.module()(x)
    np.testing.assert_allclose(want[0].numpy(), ((x.abs() + 1) ** 2).numpy(), rtol=1e-6)
    # Without run-time quantization the exporter leaves the graph as it is; -0.0 reaches the
    # kernel (FlatBuffers would leave it out as the default, 0.0).
    program = etrt.export(_Twice(), (x,))
    assert _counts(program)["aten::abs"] == 2
    product, noise, plus, minus = etrt.load(program.save(tmp_path / "twice.etrt")).forward(
        x.numpy()
    )
    np.testing.assert_allclose(np.asarray(product), ((x.abs() + 1) ** 2).numpy(), rtol=1e-6)
    assert np.abs(np.asarray(noise)).max() > 0
    np.testing.assert_array_equal(np.signbit(plus), np.signbit(x * 0.0))
    np.testing.assert_array_equal(np.signbit(minus), np.signbit(x * -0.0))


class _Attention(nn.Module):
    """q, k and v of one input: 8da4w quantizes it in each of the three linears."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(64, 32), nn.Linear(64, 32), nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.q(x) * self.k(x) + self.v(x)
        return out


def test_8da4w_quantizes_a_shared_input_once(inprocess_runtime: Path, tmp_path: Path) -> None:
    warnings.filterwarnings("ignore", module="torchao")
    torch.manual_seed(0)
    quantized = etrt.quantize(_Attention().eval(), None, scheme="int8-dynamic-int4-weight")
    x = torch.randn(5, 64)
    program = etrt.export(quantized, (x,))
    ops = _counts(program)
    assert ops["etrt_quant::dynamic_int4_linear"] == 3, ops
    # the three chains merged into one, then folded into one call (row_quant.py)
    assert ops["etrt_quant::quantize_rows"] == 1 and "aten::amin" not in ops, ops
    with torch.no_grad():
        want = quantized(x).numpy()
    got = np.asarray(etrt.load(program.save(tmp_path / "qkv.etrt")).forward(x.numpy())[0])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * float(np.abs(want).max()))

"""Constant chains through float64 and complex dtypes computed at export (etrt/fold_constants.py),
what must stay refused, and the model asserts lowering drops with what feeds them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import etrt
import numpy as np
import pytest
import torch
from etrt.ir import KernelCall
from torch import nn


def _sine_table(height: int, width: int, dim: int) -> torch.Tensor:
    # RT-DETR's 2-D sine position embedding: float64 on purpose, then the model's dtype.
    omega = 1.0 / 10000 ** (torch.arange(dim // 4, dtype=torch.float64) / (dim // 4))
    h, w = torch.meshgrid(
        torch.arange(height, dtype=torch.float64),
        torch.arange(width, dtype=torch.float64),
        indexing="ij",
    )
    eh, ew = h.flatten().outer(omega), w.flatten().outer(omega)
    return torch.cat([eh.sin(), eh.cos(), ew.sin(), ew.cos()], dim=1).to(torch.float32)


class SineEmbedded(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, 6 * 4, 16)
        return self.proj(x + _sine_table(6, 4, 16))


class RotaryTable(nn.Module):
    """Rotary factors through torch.polar (complex64), taken apart before meeting the input."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, 8, 2) / 8.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, 5, 4)
        freqs = torch.outer(torch.arange(x.shape[1], dtype=torch.float32), self.inv_freq)
        cis = torch.view_as_real(torch.polar(torch.ones_like(freqs), freqs))
        return x * cis[..., 0] + x.flip(-1) * cis[..., 1]


def _ops(program: etrt.Program) -> Counter[str]:
    """Each kernel's op, without its overload."""
    plan = program.info.plan
    return Counter(
        plan.operators[i.op_index].split(".")[0]
        for i in plan.instructions
        if isinstance(i, KernelCall)
    )


def _run(model: nn.Module, x: torch.Tensor, tmp_path: Path) -> tuple[etrt.Program, np.ndarray]:
    program = etrt.export(model, (torch.randn(x.shape),))
    path = program.save(tmp_path / "program.etrt")
    return program, np.asarray(etrt.load(path).method()(x.numpy())[0])


@pytest.mark.parametrize(
    ("model", "shape", "gone"),
    [
        (SineEmbedded(), (2, 24, 16), {"aten::sin", "aten::cos", "aten::arange"}),
        (RotaryTable(), (2, 5, 4), {"aten::sin", "aten::cos", "aten::arange"}),
    ],
)
def test_a_constant_chain_through_an_unsupported_dtype_becomes_its_value(
    model: nn.Module, shape: tuple[int, ...], gone: set[str], tmp_path: Path
) -> None:
    model.eval()
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    program, got = _run(model, x, tmp_path)
    with torch.no_grad():
        want = model(x).numpy()
    # The table is torch's own float64 computation: the same bits as eager's.
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert not gone & set(_ops(program)), _ops(program)


def test_float64_that_reads_an_input_stays_refused() -> None:
    class Wide(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (x.double() * 3).sin().float()

    with pytest.raises(etrt.ExportError, match="float64"):
        etrt.export(Wide(), (torch.randn(3),))


def test_float64_from_a_dynamic_size_stays_refused() -> None:
    class Positions(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            pos = torch.arange(x.shape[0], dtype=torch.float64).sin().float()
            return x + pos[:, None]

    n = torch.export.Dim("n", min=2, max=64)
    with pytest.raises(etrt.ExportError, match="float64"):
        etrt.export(Positions(), (torch.randn(4, 3),), dynamic_shapes=({0: n},))


def test_random_float64_is_not_computed_at_export() -> None:
    class Noisy(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.rand(3, dtype=torch.float64).float()

    with pytest.raises(etrt.ExportError, match="float64"):
        etrt.export(Noisy(), (torch.randn(3),))


def test_a_models_own_tensor_asserts_are_dropped_with_what_feeds_them(tmp_path: Path) -> None:
    class Checked(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            torch._assert_async((x > -1e9).all(), "finite inputs")  # aten::all, no kernel
            torch._check_tensor_all(x == x, lambda: "no NaN")  # aten::_is_all_true
            return x * 2

    x = torch.randn(2, 3)
    program, got = _run(Checked(), x, tmp_path)
    np.testing.assert_array_equal(got, x.numpy() * 2)
    assert set(_ops(program)) == {"aten::mul"}, _ops(program)

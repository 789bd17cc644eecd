"""Complex values run as float32 pairs (etrt/complex_pairs.py): rotary embeddings written with
view_as_complex / torch.polar / view_as_real, as Meta's reference Llama and DeepSeek-V2 write
them, at static and dynamic lengths; the ops it refuses, by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import etrt
import numpy as np
import pytest
import torch
from torch import nn


class ComplexRotary(nn.Module):
    """Queries (batch, heads, seq, 8) rotated by factors of positions given as an input."""

    def __init__(self, extra: bool = False) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, 8, 2) / 8.0))
        self.extra = extra

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        freqs = positions[..., None].float() * self.inv_freq
        cis = torch.polar(torch.ones_like(freqs), freqs) * 0.5  # a real factor too
        xq = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        out = xq * cis.unsqueeze(1)
        if self.extra:  # sums, a cat and a transpose of complex values
            out = torch.cat([out + xq, out - xq], dim=-1).transpose(1, 2)
        return torch.view_as_real(out).flatten(-2)


def _run(model: nn.Module, args: tuple[torch.Tensor, ...], tmp_path: Path, **kw: object) -> Any:
    program = etrt.export(model, args, **kw)  # type: ignore[arg-type]
    assert not any("complex" in name for name in program.operator_names)
    return etrt.load(program.save(tmp_path / "program.etrt")).method()


@pytest.mark.parametrize("extra", [False, True])
def test_rotary_through_complex_values_matches_eager(extra: bool, tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(0)
    model = ComplexRotary(extra).eval()
    x, pos = torch.randn(2, 3, 5, 8, generator=gen), torch.randint(0, 512, (2, 5), generator=gen)
    method = _run(model, (x, pos), tmp_path)
    got = np.asarray(method(x.numpy(), pos.numpy())[0])
    np.testing.assert_allclose(got, model(x, pos).numpy(), rtol=1e-5, atol=1e-5)


def test_complex_values_take_dynamic_lengths(tmp_path: Path) -> None:
    model = ComplexRotary().eval()
    seq = torch.export.Dim("seq", min=2, max=64)
    example = (torch.randn(1, 2, 4, 8), torch.arange(4)[None])
    method = _run(model, example, tmp_path, dynamic_shapes=({2: seq}, {1: seq}))
    for n in (3, 17, 64):
        x, pos = torch.randn(1, 2, n, 8), torch.arange(n)[None]
        got = np.asarray(method(x.numpy(), pos.numpy())[0])
        np.testing.assert_allclose(got, model(x, pos).numpy(), rtol=1e-5, atol=1e-5)


def test_other_ops_on_complex_values_are_refused_by_name() -> None:
    class Magnitude(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.view_as_complex(x.reshape(4, 2)).abs()

    with pytest.raises(etrt.ExportError, match=r"etrt does not run aten\.abs\.default on complex"):
        etrt.export(Magnitude(), (torch.randn(8),))


def test_a_complex_output_is_refused() -> None:
    class Out(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.view_as_complex(x.reshape(4, 2)) * 2

    with pytest.raises(etrt.ExportError, match="complex64"):
        etrt.export(Out(), (torch.randn(8),))

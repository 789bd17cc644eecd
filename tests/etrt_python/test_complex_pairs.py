"""Complex values run as float32 pairs (etrt/complex_pairs.py): rotary embeddings written with
view_as_complex / torch.polar / view_as_real, as Meta's reference Llama and DeepSeek-V2 write
them, and FFTs as products with cosine and sine tables (torch.fft, spectrograms through
torch.stft), at static and dynamic lengths; the ops it refuses, by name."""

from __future__ import annotations

from collections.abc import Callable
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


class Fn(nn.Module):
    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


def _spectrogram(x: torch.Tensor) -> torch.Tensor:
    window = torch.hann_window(64)
    spec = torch.stft(x, n_fft=64, hop_length=16, window=window, return_complex=True)
    return spec.abs().pow(2).log1p()


FFTS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], tuple[int, ...]]] = {
    # FNet's token mixing: the real part of a 2-D FFT over sequence and hidden
    "fftn_real": (lambda x: torch.fft.fftn(x, dim=(1, 2)).real, (2, 12, 64)),
    "rfft": (lambda x: torch.view_as_real(torch.fft.rfft(x)), (3, 10)),
    "rfft_ortho_middle": (
        lambda x: torch.view_as_real(torch.fft.rfft(x, dim=1, norm="ortho")),
        (3, 9, 4),
    ),
    "irfft_even": (lambda x: torch.fft.irfft(torch.fft.rfft(x) * 2, n=10), (3, 10)),
    "irfft_odd_cropped": (lambda x: torch.fft.irfft(torch.fft.rfft(x), n=7), (3, 9)),
    "ifft_of_fft": (lambda x: torch.view_as_real(torch.fft.ifft(torch.fft.fft(x) * 1.5)), (4, 8)),
    "spectrogram": (_spectrogram, (2, 400)),
}


@pytest.mark.parametrize("name", sorted(FFTS))
def test_ffts_match_eager(name: str, tmp_path: Path) -> None:
    fn, shape = FFTS[name]
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    method = _run(Fn(fn), (x,), tmp_path)
    got, want = np.asarray(method(x.numpy())[0]), fn(x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * float(np.abs(want).max()))


def test_a_spectrogram_takes_dynamic_lengths(tmp_path: Path) -> None:
    samples = torch.export.Dim("samples", min=33, max=4096)  # torch.export's own lower bound
    method = _run(Fn(_spectrogram), (torch.randn(1, 400),), tmp_path,
                  dynamic_shapes=({1: samples},))  # fmt: skip
    for n in (130, 1000, 4096):
        x = torch.randn(1, n)
        got, want = np.asarray(method(x.numpy())[0]), _spectrogram(x).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * float(np.abs(want).max()))


def test_other_ops_on_complex_values_are_refused_by_name() -> None:
    phase = Fn(lambda x: torch.angle(torch.fft.rfft(x)))
    with pytest.raises(etrt.ExportError, match="etrt does not run aten::angle on complex values"):
        etrt.export(phase, (torch.randn(8),))


def test_an_fft_over_a_dynamic_dimension_is_refused() -> None:
    n = torch.export.Dim("n", min=4, max=64)
    with pytest.raises(etrt.ExportError, match="an FFT over dimension 1, whose size is dynamic"):
        etrt.export(Fn(lambda x: torch.fft.rfft(x).abs()), (torch.randn(2, 8),),
                    dynamic_shapes=({1: n},))  # fmt: skip


def test_a_complex_output_is_refused() -> None:
    class Out(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.view_as_complex(x.reshape(4, 2)) * 2

    with pytest.raises(etrt.ExportError, match="complex64"):
        etrt.export(Out(), (torch.randn(8),))


def _rotary_factors(dim: int, end: int) -> torch.Tensor:
    freqs = 1.0 / (10000.0 ** (torch.arange(0, dim, 2).float() / dim))
    angles = torch.outer(torch.arange(end, dtype=torch.float32), freqs)
    return torch.polar(torch.ones_like(angles), angles)


class ReferenceLlamaRotary(nn.Module):
    """Meta's reference Llama: complex rotary factors computed once and kept on the module (a
    buffer, or a plain attribute torch.export lifts as a constant), sliced from a position."""

    def __init__(self, as_buffer: bool) -> None:
        super().__init__()
        self.wq = nn.Linear(16, 16)
        if as_buffer:
            self.register_buffer("freqs_cis", _rotary_factors(8, 64), persistent=False)
        else:
            self.freqs_cis = _rotary_factors(8, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        xq = self.wq(x).view(batch, length, 2, 8)
        factors = self.freqs_cis[3 : 3 + length].view(1, length, 1, 4)
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        return torch.view_as_real(xq_ * factors).flatten(3).type_as(xq)


@pytest.mark.parametrize("as_buffer", [True, False], ids=["buffer", "attribute"])
def test_complex_constants_become_pairs(as_buffer: bool, tmp_path: Path) -> None:
    model = ReferenceLlamaRotary(as_buffer).eval()
    seq = torch.export.Dim("seq", min=2, max=32)
    method = _run(model, (torch.randn(2, 5, 16),), tmp_path, dynamic_shapes=({1: seq},))
    for n in (5, 17, 32):
        x = torch.randn(2, n, 16)
        with torch.no_grad():
            want = model(x).numpy()
        np.testing.assert_allclose(np.asarray(method(x.numpy())[0]), want, rtol=1e-5, atol=1e-5)

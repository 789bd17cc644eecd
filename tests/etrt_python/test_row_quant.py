"""torchao's per-row activation quantization as one call (python/etrt/row_quant.py): the kernel
gives the bits of the ATen steps it replaces, ties, NaN, infinities and signed zeros included,
at every instruction set; 8da4w's chains become one call each, and only chains whose every step
is torchao's."""

from __future__ import annotations

import collections
import math
import warnings
from pathlib import Path

import etrt
import numpy as np
import pytest
import torch
from etrt.row_quant import QUANTIZE_ROWS, fuse_row_quantization
from etrt.runtime import ISA_NAMES, EtrtRuntimeError
from torch import nn

EPS = torch.finfo(torch.float32).tiny


def _quiet() -> None:
    warnings.filterwarnings("ignore", module="torchao")
    warnings.filterwarnings("ignore", message=".*Enum subclass.*")


def _rows() -> torch.Tensor:
    """Rows of 40 that reach every branch: .5 ties (scale 1: min -128, max 127), NaN, both
    infinities, all zeros (the scale clamps to eps), -0.0, one sign only, denormals, 1e30."""
    g = torch.Generator().manual_seed(0)
    rows = torch.randn(12, 40, generator=g) * 3
    rows[0, :4] = torch.tensor([-128.0, 127.0, 0.5, 1.5])
    rows[0, 4:] = torch.arange(36) - 17.5  # every value a tie
    rows[1, 7] = math.nan
    rows[2, 3] = math.inf
    rows[3, 9] = -math.inf
    rows[4] = 0.0
    rows[5] = -0.0
    rows[6] = rows[6].abs() + 1  # no negative value: min widens to 0
    rows[7] = -rows[7].abs() - 1
    rows[8] = 1e-42  # denormal: (max - min) / 255 is below eps
    rows[9, 0] = 1e30
    rows[10] = 2.5
    rows[11, ::2] = -0.0
    return rows


class _Rows(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, s, z = torch.ops.etrt_quant.quantize_rows(x, EPS, -128, 127)
        return q, s, z


class _TorchaoSteps(nn.Module):
    """The ATen steps torchao's 8da4w takes on an activation [rows, K] (as torch.export writes
    them), returning what the integer product reads; `step` changes one of them."""

    def __init__(self, step: str = "") -> None:
        super().__init__()
        self.step = step

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        lo, hi = x.amin(-1), x.amax(-1)
        lo, hi = (
            torch.minimum(lo, torch.full_like(lo, 0)),
            torch.maximum(hi, torch.full_like(hi, 0)),
        )
        scale = ((hi - lo) / (254.0 if self.step == "divisor" else 255.0)).clamp(min=EPS)
        zero = (-128 - torch.round(lo / scale)).clamp(-128, 127).to(torch.int8)
        inv = torch.reciprocal(scale.view(-1, 1)) * 1.0
        shifted = torch.round(x * inv) + zero.view(-1, 1)
        high = 126 if self.step == "bound" else 127
        return shifted.clamp(-128, high).to(torch.int8), scale.view(-1, 1), zero.view(-1, 1)


def _run_every_isa(path: Path, x: np.ndarray) -> dict[str, list[np.ndarray]]:
    out = {}
    try:
        for isa in ISA_NAMES:
            etrt.set_max_isa(isa)
            out[isa] = [np.asarray(t) for t in etrt.load(path).method("forward")(x)]
    finally:
        etrt.set_max_isa("avx512")
    return out


def _same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape)
    assert got.tobytes() == want.tobytes(), f"{what}:\n{got}\n{want}"


def test_quantize_rows_gives_the_bits_of_atens_steps_at_every_instruction_set(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    x = _rows()
    want = [t.numpy() for t in _TorchaoSteps()(x)]
    ref = [t.numpy() for t in _Rows()(x)]  # the op's own reference, as torch runs it
    for name, r, w in zip(("values", "scales", "zeros"), ref, want, strict=True):
        _same_bits(r, w.reshape(r.shape), f"reference {name}")
    assert want[0][0, 4:].tolist() == [round(v) for v in np.arange(36) - 17.5]  # half to even
    path = etrt.export(_Rows(), (x,)).save(tmp_path / "rows.etrt")
    for isa, got in _run_every_isa(path, x.numpy()).items():
        for name, g, w in zip(("values", "scales", "zeros"), got, want, strict=True):
            _same_bits(g, w.reshape(g.shape), f"{isa} {name}")
    # any leading dimensions: [2, 3, 40] is six rows
    x3 = x[:6].reshape(2, 3, 40)
    path = etrt.export(_Rows(), (x3,)).save(tmp_path / "rows3.etrt")
    got = etrt.load(path).method("forward")(x3.numpy())
    _same_bits(np.asarray(got[0]), want[0][:6].reshape(2, 3, 40), "values [2, 3, 40]")
    _same_bits(np.asarray(got[1]), want[1][:6].reshape(2, 3), "scales [2, 3]")


def test_torchaos_steps_fold_into_one_call_and_altered_ones_do_not(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    x = _rows()
    ep = torch.export.export(_TorchaoSteps(), (x,)).run_decompositions()
    assert fuse_row_quantization(ep) == 1
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert QUANTIZE_ROWS in targets
    assert not {torch.ops.aten.amin.default, torch.ops.aten.round.default} & set(targets)
    program = etrt.export(_TorchaoSteps(), (x,))
    ops = collections.Counter(program.info.instruction_ops)
    assert ops["etrt_quant::quantize_rows"] == 1 and "aten::amin" not in ops, ops
    want = [t.numpy() for t in _TorchaoSteps()(x)]
    got = _run_every_isa(program.save(tmp_path / "steps.etrt"), x.numpy())
    for isa, outs in got.items():
        for g, w in zip(outs, want, strict=True):
            _same_bits(g, w, isa)
    for step in ("divisor", "bound"):  # one constant off: the chain stays as it is
        ep = torch.export.export(_TorchaoSteps(step), (x,)).run_decompositions()
        assert fuse_row_quantization(ep) == 0, step


def test_8da4w_linears_quantize_each_input_in_one_call(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """q, k and v read one input, quantized once (merged, then folded); the MLP's own input is
    the other call. Outputs equal eager torchao's to float rounding, ties included."""
    _quiet()
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q, self.k, self.v = nn.Linear(64, 32), nn.Linear(64, 16), nn.Linear(64, 16)
            self.up = nn.Linear(64, 24)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = torch.cat([self.q(x), self.k(x), self.v(x)], -1)
            return self.up(torch.relu(h))

    quantized = etrt.quantize(
        Block().eval(), None, scheme="int8-dynamic-int4-weight", group_size=32
    )
    x = _rows()[torch.tensor([0, 4, 5, 6, 9, 10])]  # finite rows: a finite output
    x = torch.cat([x, x[:, :24]], 1)  # 64 features
    # rows of any count: the views between carry symbolic sizes, computed outside the chain
    rows = torch.export.Dim("rows", min=1, max=8)
    program = etrt.export(quantized, (x,), dynamic_shapes=({0: rows},))
    ops = collections.Counter(program.info.instruction_ops)
    assert ops["etrt_quant::quantize_rows"] == 2, ops
    assert ops["etrt_quant::dynamic_int4_linear"] == 4, ops
    assert not {"aten::amin", "aten::amax", "aten::round", "aten::reciprocal"} & set(ops), ops
    with torch.no_grad():
        want = quantized(x).numpy()
    for isa, (got,) in _run_every_isa(program.save(tmp_path / "block.etrt"), x.numpy()).items():
        bound = 1e-5 * float(np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=isa)


class _Range(nn.Module):
    def __init__(self, qmin: int, qmax: int) -> None:
        super().__init__()
        self.qmin, self.qmax = qmin, qmax

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, s, z = torch.ops.etrt_quant.quantize_rows(x, EPS, self.qmin, self.qmax)
        return q, s, z


@pytest.mark.parametrize(("qmin", "qmax"), [(-129, 127), (0, 0), (5, 3), (0, 128)])
def test_quantize_rows_refuses_a_range_that_is_not_int8(
    qmin: int, qmax: int, inprocess_runtime: Path, tmp_path: Path
) -> None:
    x = torch.randn(2, 8)
    path = etrt.export(_Range(qmin, qmax), (x,)).save(tmp_path / "range.etrt")
    with pytest.raises(EtrtRuntimeError, match="must be an int8 range"):
        etrt.load(path).method("forward")(x.numpy())

"""The float32 and byte fast paths of elementwise ops and row reductions agree with eager
PyTorch on the inputs that reach them: contiguous runs with vector tails, broadcasts, transposed
views, and the special values (NaN, infinities, signed zeros, halves for rounding). Programs run
in this process on the in-tree build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import etrt
import etrt.runtime
import models
import numpy as np
import pytest
import torch


def _run(tmp_path: Path, fn: Callable[..., torch.Tensor], *inputs: torch.Tensor) -> np.ndarray:
    path = etrt.export(models.Fn(fn), inputs).save(tmp_path / "m.etrt")
    with etrt.runtime.load(path) as loaded:
        (out,) = loaded.forward(*inputs)
    return np.asarray(out)


def _floats(*shape: int, seed: int = 0) -> torch.Tensor:
    """Random values with the specials sprinkled in (a tail that is not a multiple of 16)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=gen) * 4
    flat = x.view(-1)
    specials = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 2.5, -0.5, 1e30])
    idx = torch.randint(0, flat.numel(), (specials.numel() * 3,), generator=gen)
    flat[idx] = specials.repeat(3)
    return x


SHAPES = [(3, 1037), (2, 8, 33), (1, 16)]

UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "silu": torch.nn.functional.silu,
    "cos": torch.cos,
    "sin": torch.sin,
    "tan": torch.tan,
    "erf": torch.erf,
    "expm1": torch.expm1,
    "log2": torch.log2,
    "log1p": torch.log1p,
    "atan": torch.atan,
    "sinh": torch.sinh,
    "reciprocal": torch.reciprocal,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "trunc": torch.trunc,
    "round": torch.round,
}
EXACT = {"floor", "ceil", "trunc", "round", "reciprocal"}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_float_unary_ops_match_eager(
    inprocess_runtime: Path, tmp_path: Path, name: str, shape: tuple[int, ...]
) -> None:
    fn = UNARY[name]
    x = _floats(*shape)
    x.view(-1)[:4] = torch.tensor([0.5, 1.5, -2.5, 3.5])  # halves: rounding goes to even
    got = _run(tmp_path, fn, x)
    want = fn(x).numpy()
    if name in EXACT:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, equal_nan=True)


# Ops whose kernels compute W lanes at a time, W the register width of the instruction set the
# kernels dispatch to (vec_math.h, Lanes): each width is its own code.
LANE_OPS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "silu": torch.nn.functional.silu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "exp": torch.exp,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
}


def test_vector_math_matches_eager_under_each_isa_cap(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """The ops above on the special values; on finite ones softmax (also per width) over rows of
    1037 and of 16 (attention's) and erf GELU (its rational form below 3, erfc above; etrt's
    gelu(-inf) is 0 where torch's is NaN)."""
    x, rows = _floats(3, 1037), torch.randn(3, 1037, generator=torch.Generator().manual_seed(1))
    ops = list(LANE_OPS.values())
    fn = models.Fn(
        lambda t, u: (
            torch.stack([op(t) for op in ops]),
            torch.softmax(u * 4, -1),
            torch.softmax(u[:, :1024].reshape(-1, 16), -1),
            torch.nn.functional.gelu(u * 4),
        )
    )
    path = etrt.export(fn, (x, rows)).save(tmp_path / "m.etrt")
    want = [w.numpy() for w in fn(x, rows)]
    before = etrt.isa_info()
    try:
        for cap in ("avx512", "avx2", "sse2"):
            etrt.set_max_isa(cap)
            with etrt.runtime.load(path) as loaded:
                got = loaded.forward(x, rows)
            for i, name in enumerate(LANE_OPS):
                np.testing.assert_allclose(
                    got[0][i],
                    want[0][i],
                    rtol=2e-6,
                    atol=1e-6,
                    equal_nan=True,
                    err_msg=f"{name}, {cap}",
                )
            for name, g, w in zip(("softmax", "softmax16", "gelu"), got[1:], want[1:], strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{name}, {cap}")
    finally:
        etrt.set_max_isa(before.cap)


def test_unary_ops_on_a_transposed_view(inprocess_runtime: Path, tmp_path: Path) -> None:
    x = _floats(37, 29)

    def fn(t: torch.Tensor) -> torch.Tensor:
        return torch.cos(t.t()) + torch.floor(t.t()) + torch.nn.functional.silu(t.t())

    got, want = _run(tmp_path, fn, x), fn(x).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_float_comparisons_match_eager(inprocess_runtime: Path, tmp_path: Path, op: str) -> None:
    a = _floats(4, 131, seed=1)
    b = a.clone()
    b.view(-1)[::3] = _floats(4, 131, seed=2).view(-1)[::3]  # equal, unequal, NaN against NaN
    for fn in (
        lambda x, y: getattr(torch, op)(x, y),
        lambda x, y: getattr(torch, op)(x, y[:1]),  # broadcast
        lambda x, y: getattr(torch, op)(x.t(), y.t()),  # strided
    ):
        np.testing.assert_array_equal(_run(tmp_path, fn, a, b), fn(a, b).numpy())


def test_int64_comparisons_match_eager_under_each_isa_cap(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """int64 operands by contiguous runs or one value (the vector path: an attention mask's
    position ids [1, n] against [n, 1]), and strided ones and int32 (the element loop)."""
    gen = torch.Generator().manual_seed(5)
    a = torch.randint(-3, 3, (37, 1), generator=gen)
    b = torch.randint(-3, 3, (1, 41), generator=gen) * (1 << 40)
    c = torch.randint(-3, 3, (37, 41), generator=gen)
    names = ["eq", "ne", "lt", "le", "gt", "ge"]

    def fn(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        strided = z.t().contiguous().t()
        pairs = [(x, y), (y, x), (x, z), (z, y), (z, z.flip(0)), (strided, z), (x.int(), z)]
        return torch.stack([getattr(torch, op)(p, q) for op in names for p, q in pairs])

    path = etrt.export(models.Fn(fn), (a, b, c)).save(tmp_path / "m.etrt")
    want = fn(a, b, c).numpy()
    assert want.any() and not want.all()
    before = etrt.isa_info()
    try:
        for cap in ("avx512", "avx2", "sse2"):
            etrt.set_max_isa(cap)
            with etrt.runtime.load(path) as loaded:
                (got,) = loaded.forward(a, b, c)
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=cap)
    finally:
        etrt.set_max_isa(before.cap)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8], ids=str)
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_byte_bitwise_ops_match_eager(
    inprocess_runtime: Path, tmp_path: Path, op: str, dtype: torch.dtype
) -> None:
    gen = torch.Generator().manual_seed(3)
    hi = 2 if dtype == torch.bool else 256
    a, b = (torch.randint(0, hi, (3, 1029), generator=gen).to(dtype) for _ in range(2))
    for fn in (
        lambda x, y: getattr(torch, op)(x, y),
        lambda x, y: getattr(torch, op)(x, y[1:2]),
        lambda x, y: getattr(torch, op)(x.t(), y.t()),
    ):
        np.testing.assert_array_equal(_run(tmp_path, fn, a, b), fn(a, b).numpy())


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_sum_mean_amax_amin_match_eager(
    inprocess_runtime: Path, tmp_path: Path, dim: int
) -> None:
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(6, 7, 1031, generator=gen) * 100
    for fn in (
        lambda t: t.sum(dim),
        lambda t: t.mean(dim, keepdim=True),
        lambda t: t.amax(dim),
        lambda t: t.amin(dim, keepdim=True),
        lambda t: t.transpose(1, 2).sum(-1),
    ):
        np.testing.assert_allclose(_run(tmp_path, fn, x), fn(x).numpy(), rtol=1e-5, atol=1e-3)
    with_nan = x.clone()
    with_nan[2, 3, 1000] = float("nan")
    with_nan[4, 1, 5] = float("inf")
    with_nan[5, 2, 9] = -float("inf")
    for fn in (lambda t: t.amax(-1), lambda t: t.amin(-1)):
        np.testing.assert_array_equal(_run(tmp_path, fn, with_nan), fn(with_nan).numpy())


def test_log_softmax_rows_match_eager(inprocess_runtime: Path, tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(6, 1000, generator=gen) * 30
    x[1, 7] = float("nan")  # a NaN row
    x[2] = -float("inf")  # nothing possible
    x[3, 3] = float("inf")
    x[4, :990] = -float("inf")  # a short live tail
    got = _run(tmp_path, lambda t: torch.log_softmax(t, -1), x)
    want = torch.log_softmax(x, -1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    small = torch.randn(3, 5, 7, generator=gen)  # a middle axis: the column route
    small[0, 2, 1], small[1, :, 2], small[2, 4, 6] = float("inf"), -float("inf"), float("nan")
    got = _run(tmp_path, lambda t: torch.log_softmax(t, 1), small)
    want = torch.log_softmax(small, 1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)

"""float16 and bfloat16: conversions round exactly as torch's, models in half precision match
eager PyTorch, and the Python binding passes both types in and out (numpy has no bfloat16:
float32 arrays come back). Programs run in this process on the in-tree build."""

from __future__ import annotations

from pathlib import Path

import etrt
import etrt.data_map
import etrt.runtime
import models
import numpy as np
import pytest
import torch
from torch import nn

HALF_TYPES = (torch.float16, torch.bfloat16)
# Agreement of two float32 computations rounded to the type: a few units in the last place.
TOLERANCE = {torch.float16: (4e-3, 1e-3), torch.bfloat16: (3e-2, 1e-2)}



def _run(tmp_path: Path, module: nn.Module, inputs: tuple[torch.Tensor, ...], **kw: object) -> list:
    program = etrt.export(module, inputs, **kw)  # type: ignore[arg-type]
    path = program.save(tmp_path / "m.etrt")
    data = program.save_data(tmp_path / "m.ptd") if kw.get("external_constants") else None
    with etrt.runtime.load(path, data=data) as loaded:
        return loaded.forward(*inputs)


def _bits(values: np.ndarray | torch.Tensor) -> np.ndarray:
    """float16 bits of an array, or bfloat16 bits of float32 values / a bfloat16 tensor."""
    if isinstance(values, torch.Tensor):
        if values.dtype == torch.bfloat16:
            return values.view(torch.int16).numpy().view(np.uint16)
        return values.numpy().view(np.uint16)
    if values.dtype == np.float32:
        return (values.view(np.uint32) >> 16).astype(np.uint16)
    return values.view(np.uint16)


def _hard_floats() -> torch.Tensor:
    """float32 values that test rounding: ties either way, subnormal and overflow boundaries,
    every exponent, signed zeros, infinities, NaN."""
    gen = torch.Generator().manual_seed(0)
    exps = torch.randint(-150, 130, (20000,), generator=gen).float()
    random = torch.randn(20000, generator=gen).sign() * torch.rand(20000, generator=gen) * 2**exps
    bits = torch.arange(0, 1 << 16, dtype=torch.int64)
    # exact ties and their neighbours for both types: float16 midpoints, bfloat16 midpoints
    f16_ties = (
        bits.to(torch.int16).view(torch.float16).float().view(torch.int32) + (1 << 12)
    ).view(torch.float32)
    bf16_ties = ((bits << 16) + (1 << 15)).to(torch.int32).view(torch.float32)
    specials = torch.tensor(
        [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 65504.0, 65519.99, 65520.0,
         2.0**-24, 2.0**-25, 2.0**-25 * 1.0001, 2.0**-14, 3.4e38, 1e-45]
    )  # fmt: skip
    return torch.cat(
        [random, f16_ties, f16_ties.nextafter(torch.tensor(0.0)), bf16_ties, specials]
    ).contiguous()


def test_rounding_to_float16_and_bfloat16_is_torchs(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    x = _hard_floats()
    got_half, got_bf16 = _run(tmp_path, models.Fn(lambda t: (t.half(), t.bfloat16())), (x,))
    assert got_half.dtype == np.float16 and got_bf16.dtype == np.float32
    want_half, want_bf16 = x.half(), x.bfloat16()
    nan = torch.isnan(x).numpy()
    np.testing.assert_array_equal(_bits(got_half)[~nan], _bits(want_half)[~nan])
    np.testing.assert_array_equal(_bits(got_bf16)[~nan], _bits(want_bf16)[~nan])
    assert np.isnan(got_half[nan]).all() and np.isnan(got_bf16[nan]).all()


@pytest.mark.parametrize("dtype", HALF_TYPES, ids=str)
def test_every_half_value_widens_exactly(
    dtype: torch.dtype, inprocess_runtime: Path, tmp_path: Path
) -> None:
    every = torch.arange(-(1 << 15), 1 << 15, dtype=torch.int32).to(torch.int16).view(dtype)
    (got,) = _run(tmp_path, models.Fn(lambda t: t.float()), (every,))
    want = every.float().numpy()
    nan = np.isnan(want)
    np.testing.assert_array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan])
    assert np.isnan(got[nan]).all()


@pytest.mark.parametrize("dtype", HALF_TYPES, ids=str)
@pytest.mark.parametrize("name", models.MODEL_NAMES)
def test_models_in_half_precision_match_eager(
    name: str, dtype: torch.dtype, inprocess_runtime: Path, tmp_path: Path
) -> None:
    model, inputs = models.make(name, 2)
    model = model.to(dtype)
    inputs = tuple(t.to(dtype) for t in inputs)
    (got,) = _run(tmp_path, model, inputs)
    with torch.no_grad():
        want = model(*inputs).float().numpy()
    rtol, atol = TOLERANCE[dtype]
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=rtol, atol=atol)
    # not vacuous: the program computed in half precision, float32 would differ
    with torch.no_grad():
        full = model.float()(*(t.float() for t in inputs)).numpy()
    assert not np.array_equal(want, full)


def test_half_weights_in_a_data_map(inprocess_runtime: Path, tmp_path: Path) -> None:
    model = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.Linear(16, 3)).to(torch.bfloat16).eval()
    x = torch.randn(4, 8, dtype=torch.bfloat16)
    (got,) = _run(tmp_path, model, (x,), external_constants=True)
    with torch.no_grad():
        want = model(x).float().numpy()
    np.testing.assert_allclose(got, want, *TOLERANCE[torch.bfloat16])
    stored = etrt.data_map.load(tmp_path / "m.ptd")
    weight = model[0].weight.detach()
    assert stored["0.weight"].dtype == np.float32  # numpy has no bfloat16
    np.testing.assert_array_equal(stored["0.weight"], weight.float().numpy())


def test_bfloat16_inputs_take_torch_tensors_and_float_arrays(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    ones = (torch.ones(5, dtype=torch.bfloat16), torch.ones(5, dtype=torch.bfloat16))
    program = etrt.export(models.Fn(lambda a, b: a * b), ones)
    path = program.save(tmp_path / "m.etrt")
    a = torch.tensor([1.0, 2.5, -3.0, 1e-3, 7.0], dtype=torch.bfloat16)
    b32 = np.array([1.00390625, 3.14159, 2.0, 1000.0, 1.0 / 3.0], dtype=np.float32)  # rounded
    with etrt.runtime.load(path) as loaded:
        method = loaded.method()
        assert str(method.inputs[0]) == "bfloat16[5]" and method.inputs[0].element == "bfloat16"
        (got,) = method(a, b32)
        (from_f64,) = method(a.float().numpy().astype(np.float64), torch.from_numpy(b32))
        with pytest.raises(etrt.EtrtError, match=r"input 1: expected sizes \[5\], got \[4\]"):
            method(a, np.ones(4, np.float32))
        with pytest.raises(etrt.EtrtError, match=r"input 0: expected sizes \[5\], got \[2\]"):
            method(a[:2], b32)
        with pytest.raises(etrt.EtrtError, match="input 1: expected float32, got complex64"):
            method(a, b32.astype(np.complex64))
    want = (a * torch.from_numpy(b32).bfloat16()).float().numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(from_f64, want)


def test_float16_program_runs_from_cpp(tmp_path: Path) -> None:
    import runtime_build

    model, inputs = models.make("transformer", 1)
    model, inputs = model.half(), tuple(t.half() for t in inputs)
    run = runtime_build.tool_runner("release").run_exported(tmp_path, model, inputs)
    assert run.got[0].dtype == np.float16
    np.testing.assert_allclose(run.got[0], run.expected[0], *TOLERANCE[torch.float16])


@pytest.mark.parametrize("dtype", HALF_TYPES, ids=str)
def test_half_precision_program_with_a_dynamic_batch_runs_at_any_size_in_bounds(
    dtype: torch.dtype, inprocess_runtime: Path, tmp_path: Path
) -> None:
    # the float32 copies around each kernel take the run's sizes, not the upper bound's
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16)).to(dtype).eval()
    batch = torch.export.Dim("batch", min=1, max=16)
    program = etrt.export(model, (torch.randn(4, 8, dtype=dtype),), dynamic_shapes=({0: batch},))
    path = program.save(tmp_path / "m.etrt")
    with etrt.runtime.load(path) as loaded:
        for n in (1, 5, 16):
            x = torch.randn(n, 8, dtype=dtype)
            (got,) = loaded.forward(x)
            with torch.no_grad():
                want = model(x).float().numpy()
            assert got.shape == (n, 16)
            np.testing.assert_allclose(got.astype(np.float32), want, *TOLERANCE[dtype])

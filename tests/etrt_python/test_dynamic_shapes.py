"""Programs exported with torch.export.Dim ranges: one program runs at any size inside the
bounds (memory planned for the upper bound, outputs at their actual sizes) from Python (the C
ABI) and from C++ (etrt_runner: Module and Method), a size outside them is an error naming the
input and the dimension, the file records the bounds, malformed bounds fail to load, and files
without dynamic shapes stay version 1."""

from __future__ import annotations

import ctypes
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import etrt
import models
import numpy as np
import pytest
import runtime_build
import torch
from etrt.ir import StorageKind, TensorValue
from etrt.reader import read_program
from etrt.serialize import serialize
from torch import nn
from torch.export import Dim

F = nn.functional
Inputs = tuple[torch.Tensor, ...]


@pytest.fixture(scope="module")
def tools() -> runtime_build.Tools:
    return runtime_build.python_runtime()


def fn1(fn: Callable[[torch.Tensor], object]) -> nn.Module:
    class One(nn.Module):
        def forward(self, x: torch.Tensor) -> object:
            return fn(x)

    return One()


def fn2(fn: Callable[[torch.Tensor, torch.Tensor], object]) -> nn.Module:
    class Two(nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> object:
            return fn(x, y)

    return Two()


BATCH = Dim("batch", min=1, max=8)
SEQ = Dim("seq", min=1, max=16)


def _transformer() -> nn.Module:
    model, _ = models.make("transformer")
    return model


# name -> (model factory, example inputs, dynamic_shapes)
CASES: dict[str, tuple[Callable[[], nn.Module], Inputs, object]] = {
    "mlp_batch": (lambda: models.make("mlp")[0], (torch.randn(2, 784),), ({0: BATCH},)),
    "cnn_batch": (lambda: models.make("cnn")[0], (torch.randn(2, 1, 28, 28),), ({0: BATCH},)),
    "transformer_seq": (
        _transformer,
        (torch.randn(2, 5, models.D_MODEL),),
        ({0: BATCH, 1: SEQ},),
    ),
    "conv_spatial": (
        lambda: fn2(lambda x, w: F.max_pool2d(F.conv2d(x, w, stride=2), 2)),
        (torch.randn(2, 3, 9, 12), torch.randn(4, 3, 3, 3)),
        ({0: BATCH, 2: Dim("h", min=9, max=32), 3: Dim("w", min=9, max=32)}, None),
    ),
    "size_arithmetic": (
        lambda: fn1(
            lambda x: (
                x.reshape(x.shape[0] * x.shape[1] // 2, 2) * (x.shape[1] / 2),
                torch.arange(x.shape[1]) * 2 + torch.sym_max(x.shape[0], 3),
                torch.full((x.shape[0], 3), 1.5),
                x.transpose(0, 1).contiguous().view(-1)[1:],
            )
        ),
        (torch.randn(3, 6),),
        ({0: BATCH, 1: Dim("half", min=1, max=6) * 2},),
    ),
    "cat_index_reduce": (
        lambda: fn2(
            lambda x, y: (
                torch.cat([x, y, x], 1).softmax(-1),
                x.index_select(1, torch.tensor([0, 2])).sum(0),
                torch.where(x > 0, x, y[:, :1]).cumsum(1),
                x.amax(1, keepdim=True) - F.layer_norm(x, (x.shape[1],)),
            )
        ),
        (torch.randn(2, 5), torch.randn(2, 3)),
        ({0: BATCH, 1: Dim("n", min=3, max=12)}, {0: BATCH}),
    ),
    "embedding_attention": (
        lambda: fn2(
            lambda ids, k: F.scaled_dot_product_attention(
                F.embedding(ids, torch.linspace(-1, 1, 80).view(10, 8))[:, None],
                k,
                k,
                is_causal=False,
            )
        ),
        (torch.randint(0, 10, (1, 5)), torch.randn(1, 1, 7, 8)),
        ({1: SEQ}, {2: Dim("keys", min=1, max=20)}),
    ),
    "upsample": (
        lambda: fn1(lambda x: (F.interpolate(x, scale_factor=2.0), F.interpolate(x, size=(5, 7)))),
        (torch.randn(2, 2, 4, 6),),
        ({0: BATCH, 2: Dim("uh", min=2, max=12), 3: Dim("uw", min=2, max=12)},),
    ),
}


def _draw(spec: etrt.IOSpec, rng: random.Random, like: torch.Tensor) -> torch.Tensor:
    """A tensor of a random shape within the input's bounds, valued like the example."""
    assert spec.min_shape is not None and spec.max_shape is not None
    shape = tuple(
        rng.randint(lo, hi) for lo, hi in zip(spec.min_shape, spec.max_shape, strict=True)
    )
    if like.dtype == torch.int64:
        return torch.randint(0, int(like.max()) + 1, shape)
    return torch.randn(shape)


def _inputs_in_range(name: str, method: etrt.Method, example: Inputs, rng: random.Random) -> Inputs:
    xs = [_draw(spec, rng, ex) for spec, ex in zip(method.inputs, example, strict=True)]
    if name == "size_arithmetic":  # an even number of columns
        xs[0] = xs[0][:, : xs[0].shape[1] - xs[0].shape[1] % 2 or 2]
    if name == "cat_index_reduce":  # one batch size for both
        xs[1] = xs[1][:1].expand(xs[0].shape[0], -1).contiguous()
    return tuple(xs)


def _flat(out: object) -> list[np.ndarray]:
    items = out if isinstance(out, (tuple, list)) else (out,)
    return [t.numpy() for t in items]  # type: ignore[union-attr]


@pytest.mark.parametrize("name", list(CASES))
def test_one_program_runs_every_size_within_its_bounds(
    name: str, tools: runtime_build.Tools, tmp_path: Path
) -> None:
    make, example, dynamic = CASES[name]
    torch.manual_seed(0)
    model = make().eval()
    program = etrt.export(model, example, dynamic_shapes=dynamic)
    method = etrt.load(program.save(tmp_path / f"{name}.etrt")).method()
    assert any(spec.dynamic for spec in method.inputs)
    rng = random.Random(7)
    shapes = set()
    for _ in range(6):
        xs = _inputs_in_range(name, method, example, rng)
        got = method(*xs)
        with torch.no_grad():
            want = _flat(model(*xs))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert isinstance(g, np.ndarray)
            assert g.shape == w.shape, (name, [tuple(x.shape) for x in xs])
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
        shapes.add(tuple(tuple(x.shape) for x in xs))
    assert len(shapes) > 3  # the sizes did vary


def _runner(tools: runtime_build.Tools, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tools.runner), *map(str, args)], capture_output=True, text=True, timeout=300
    )


def test_size_outside_the_bounds_names_input_and_dimension(
    tools: runtime_build.Tools, tmp_path: Path
) -> None:
    model = models.make("transformer")[0]
    x = torch.randn(2, 5, models.D_MODEL)
    program = etrt.export(model, (x,), dynamic_shapes=({1: Dim("seq", min=2, max=32)},))
    path = program.save(tmp_path / "t.etrt")
    method = etrt.load(path).method()
    assert str(method.inputs[0]) == "float32[2, 2..32, 64]"
    # Refused by the runtime's own check before any copy: its code and its words.
    refused = r"^InvalidArgument: input 0 dim 1: size 33 is outside \[2, 32\]$"
    with pytest.raises(etrt.EtrtRuntimeError, match=refused) as info:
        method(torch.randn(2, 33, models.D_MODEL))
    assert info.value.code == "InvalidArgument"
    refused = r"^InvalidArgument: input 0 dim 0: size 3 is outside \[2, 2\]$"
    with pytest.raises(etrt.EtrtRuntimeError, match=refused):
        method(torch.randn(3, 8, models.D_MODEL))
    with pytest.raises(etrt.EtrtRuntimeError, match="input 0: expected 3 dimensions, got 2"):
        method(torch.randn(2, 8))
    # The runtime's own check (C++ Method::set_input), through etrt_runner: one error line.
    proc = _runner(tools, path, "--shape", "0=2x1x64")
    assert proc.returncode == 1
    assert proc.stderr == "error: InvalidArgument: input 0 dim 1: size 1 is outside [2, 32]\n"
    proc = _runner(tools, path, "--shape", "0=2x40")
    assert proc.stderr.startswith("error: InvalidArgument: input 0: expected 3 dimensions, got 2")


def test_c_abi_takes_dynamic_inputs_and_reports_actual_sizes(
    tools: runtime_build.Tools, tmp_path: Path
) -> None:
    """The C ABI itself (through ctypes, past the Python binding's own checks)."""
    model = models.make("mlp")[0]
    program = etrt.export(model, (torch.randn(2, 784),), dynamic_shapes=({0: BATCH},))
    method = etrt.load(program.save(tmp_path / "m.etrt")).method()
    lib = etrt._native.libraries().runtime
    handle = method._handle
    dynamic, ndim = ctypes.c_int32(), ctypes.c_size_t()
    lo, hi = ctypes.POINTER(ctypes.c_int64)(), ctypes.POINTER(ctypes.c_int64)()
    status = lib.etrt_method_input_bounds(
        handle, 0, ctypes.byref(dynamic), ctypes.byref(ndim), ctypes.byref(lo), ctypes.byref(hi)
    )
    assert status == 0 and dynamic.value == 1 and ndim.value == 2
    assert (lo[0], lo[1], hi[0], hi[1]) == (1, 784, 8, 784)
    x = np.random.default_rng(0).standard_normal((9, 784)).astype(np.float32)
    sizes = (ctypes.c_int64 * 2)(9, 784)
    status = lib.etrt_method_set_input_tensor(handle, 0, x.ctypes.data, 0, 2, sizes)
    assert lib.etrt_status_name(status) == b"InvalidArgument"
    assert lib.etrt_last_error() == b"InvalidArgument: input 0 dim 0: size 9 is outside [1, 8]"
    sizes[0] = 3
    assert lib.etrt_method_set_input_tensor(handle, 0, x.ctypes.data, 0, 2, sizes) == 0
    assert lib.etrt_method_execute(handle) == 0
    dtype = ctypes.c_int32()
    out_sizes, strides = ctypes.POINTER(ctypes.c_int64)(), ctypes.POINTER(ctypes.c_int64)()
    data = ctypes.c_void_p()
    status = lib.etrt_method_output_tensor(
        handle, 0, ctypes.byref(dtype), ctypes.byref(ndim), ctypes.byref(out_sizes),
        ctypes.byref(strides), ctypes.byref(data),
    )  # fmt: skip
    assert status == 0 and (ndim.value, out_sizes[0], out_sizes[1]) == (2, 3, 10)
    assert lib.etrt_method_output_dynamic(handle, 0, ctypes.byref(dynamic)) == 0 and dynamic.value
    got = np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_float)), (3, 10))
    with torch.no_grad():
        want = model(torch.from_numpy(x[:3])).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("flavor", ["release", "asan"])
def test_cpp_module_runs_dynamic_sizes(flavor: str, tmp_path: Path) -> None:
    """etrt_runner (Module, Method::set_input with the run's sizes, execute, outputs at their
    actual sizes), under AddressSanitizer and UBSan too."""
    runner = runtime_build.tool_runner(flavor)
    model = models.make("transformer")[0]
    program = etrt.export(
        model, (torch.randn(2, 5, models.D_MODEL),), dynamic_shapes=({0: BATCH, 1: SEQ},)
    )
    path = program.save(tmp_path / "t.etrt")
    for batch, seq in [(1, 1), (3, 16), (2, 7), (8, 3)]:
        x = torch.randn(batch, seq, models.D_MODEL)
        (tmp_path / "in.bin").write_bytes(x.numpy().tobytes())
        proc = subprocess.run(
            [str(runner.exe), str(path), "--shape", f"0={batch}x{seq}x{models.D_MODEL}",
             "--inputs", str(tmp_path / "in.bin"), "--outputs", str(tmp_path / "out.bin")],
            capture_output=True, text=True, timeout=300, env=runner.env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert f"output 0: Float [{batch}, {seq}, {models.D_MODEL}]" in proc.stdout
        with torch.no_grad():
            want = model(x).numpy()
        got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_unbounded_dimension_is_refused_at_export() -> None:
    with pytest.raises(etrt.ExportError, match=r"input x dim 0 has no upper bound .*give its "):
        etrt.export(models.make("mlp")[0], (torch.randn(2, 784),), dynamic_shapes=({0: Dim("b")},))


def test_file_records_the_bounds_and_plans_the_upper_bound() -> None:
    program = etrt.export(
        models.make("mlp")[0], (torch.randn(2, 784),), dynamic_shapes=({0: Dim("b", max=64)},)
    )
    info = program.info
    assert info.version == 2
    x = info.plan.values[info.plan.inputs[0]]
    assert isinstance(x, TensorValue) and x.dynamic
    assert (x.sizes, x.min_sizes, x.max_sizes) == ((64, 784), (0, 784), (64, 784))
    out = info.plan.values[info.plan.outputs[0]]
    assert isinstance(out, TensorValue) and out.dynamic and out.sizes == (64, 10)
    # Memory for the largest batch: the 64 x 256 hidden layer alone is 64 KiB.
    assert info.arena_size >= 64 * 256 * 4


def test_static_programs_stay_version_1_and_old_files_load(
    tools: runtime_build.Tools, repo_root: Path
) -> None:
    program = etrt.export(models.make("mlp")[0], (torch.randn(2, 784),))
    assert program.info.version == 1
    assert not any(isinstance(v, TensorValue) and v.dynamic for v in program.info.plan.values)
    old = repo_root / "test_package" / "linear_relu.etrt"  # written before format 2 existed
    assert etrt.load_program_info(old).version == 1
    method = etrt.load(old).method()
    spec = method.inputs[0]
    assert not spec.dynamic and spec.min_shape == spec.max_shape == spec.shape
    (out,) = method(np.ones(spec.shape or (), np.float32))
    assert isinstance(out, np.ndarray) and out.shape == method.outputs[0].shape


def _with_input_bounds(data: bytes, **changes: object) -> bytes:
    """`data` with the first input tensor's fields changed."""
    program, _, _ = read_program(data)
    plan = program.plans[0]
    index = plan.inputs[0]
    tensor = plan.values[index]
    assert isinstance(tensor, TensorValue)
    plan.values[index] = replace(tensor, **changes)  # type: ignore[arg-type]
    return serialize(program)


def _input_value(data: bytes) -> int:
    program, _, _ = read_program(data)
    return program.plans[0].inputs[0]


@pytest.fixture(scope="module")
def dynamic_program() -> bytes:
    program = etrt.export(
        models.make("mlp")[0], (torch.randn(2, 784),), dynamic_shapes=({0: Dim("b", max=16)},)
    )
    return bytes(program)


MALFORMED = {
    "min_above_max": (
        {"min_sizes": (9, 784), "max_sizes": (4, 784)},
        " dim 0: bounds [9, 4] are empty (min > max)",
    ),
    "max_beyond_capacity": (
        {"max_sizes": (17, 784)},
        " dim 0: bounds [0, 17] exceed the planned size 16",
    ),
    "negative_min": ({"min_sizes": (-1, 784)}, " dim 0: bounds [-1, 16] start below 0"),
    "missing_dimension": (
        {"min_sizes": (1,)},
        ": size bounds need a min and a max for each of its 2",
    ),
    "bounds_on_a_static_input": ({"dynamic": False}, ": size bounds on a tensor that is not"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_bounds_are_rejected_at_load(
    case: str, dynamic_program: bytes, tools: runtime_build.Tools, tmp_path: Path
) -> None:
    changes, message = MALFORMED[case]
    path = tmp_path / f"{case}.etrt"
    path.write_bytes(_with_input_bounds(dynamic_program, **changes))
    with pytest.raises(etrt.EtrtRuntimeError) as err:
        etrt.load(path)
    assert err.value.code == "InvalidProgram"
    assert message in str(err.value) and "\n" not in str(err.value)
    proc = _runner(tools, path)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: InvalidProgram: ")
    assert f"method 'forward': value {_input_value(dynamic_program)}{message}" in proc.stderr


def test_malformed_bounds_never_crash_under_sanitizers(
    dynamic_program: bytes, tmp_path: Path
) -> None:
    asan = runtime_build.asan_build(["etrt_load_check"])
    files = []
    for case, (changes, _) in MALFORMED.items():
        files.append(tmp_path / f"{case}.etrt")
        files[-1].write_bytes(_with_input_bounds(dynamic_program, **changes))
    files.append(tmp_path / "dynamic_constant.etrt")
    program, _, _ = read_program(dynamic_program)
    plan = program.plans[0]
    const = next(
        i for i, v in enumerate(plan.values)
        if isinstance(v, TensorValue) and v.storage == StorageKind.CONSTANT
    )  # fmt: skip
    plan.values[const] = replace(plan.values[const], dynamic=True)  # type: ignore[type-var]
    files[-1].write_bytes(serialize(program))
    proc = subprocess.run(
        [str(asan.load_check), *map(str, files)], capture_output=True, text=True, timeout=300,
        env=runtime_build.sanitizer_env(),
    )  # fmt: skip
    assert proc.returncode == 0 and "Sanitizer" not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(files)
    assert all(line.split("\t")[1] == "InvalidProgram" for line in lines), lines
    assert "only computed tensors and inputs can have a dynamic shape" in lines[-1]


def test_xnnpack_delegates_the_static_part_only(tools: runtime_build.Tools, tmp_path: Path) -> None:
    """Debian's XNNPACK cannot reshape: dynamic tensors stay on etrt's kernels."""
    torch.manual_seed(0)

    class TwoBranches(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(32, 64), nn.Linear(32, 64)

        def forward(self, fixed: torch.Tensor, varying: torch.Tensor) -> tuple[torch.Tensor, ...]:
            return self.a(fixed).relu(), self.b(varying).relu()

    model = TwoBranches().eval()
    xs = (torch.randn(4, 32), torch.randn(3, 32))
    program = etrt.export(model, xs, dynamic_shapes=(None, {0: BATCH}), backend="xnnpack-all")
    ops = program.info.instruction_ops
    assert ops.count("delegate:XnnpackBackend") == 1 and "aten::addmm" in ops
    method = etrt.load(program.save(tmp_path / "x.etrt")).method()
    for batch in (1, 8):
        ys = (xs[0], torch.randn(batch, 32))
        got = method(*ys)
        with torch.no_grad():
            want = _flat(model(*ys))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)  # type: ignore[arg-type]


def test_cli_exports_dynamic_shapes_from_a_factory_and_a_pt2(tmp_path: Path) -> None:
    """`python -m etrt export`: a factory's third item is dynamic_shapes; a .pt2 keeps its own."""
    (tmp_path / "factory.py").write_text(
        "import torch\n"
        "from torch.export import Dim\n\n"
        "def make():\n"
        "    model = torch.nn.Sequential(torch.nn.Linear(16, 4), torch.nn.Softmax(dim=-1))\n"
        "    return model.eval(), (torch.randn(2, 16),), ({0: Dim('batch', min=1, max=32)},)\n"
    )
    model = nn.Sequential(nn.Linear(16, 4), nn.ReLU()).eval()
    ep = torch.export.export(
        model, (torch.randn(2, 16),), dynamic_shapes=({0: Dim("n", min=2, max=9)},)
    )
    torch.export.save(ep, str(tmp_path / "model.pt2"))
    for spec, bounds in [(f"{tmp_path / 'factory.py'}:make", (1, 32)), ("model.pt2", (2, 9))]:
        out = tmp_path / "out.etrt"
        proc = subprocess.run(
            [sys.executable, "-m", "etrt", "export", spec, "-o", str(out)],
            capture_output=True, text=True, cwd=tmp_path, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        info = etrt.load_program_info(out)
        x = info.plan.values[info.plan.inputs[0]]
        assert isinstance(x, TensorValue) and x.dynamic
        assert (x.min_sizes[0], x.max_sizes[0]) == bounds

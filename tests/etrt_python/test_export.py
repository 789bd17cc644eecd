"""The etrt exporter: program contents, constants, memory plan, determinism, errors, CLI."""

from __future__ import annotations

import filecmp
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import etrt
import flatbuffers
import models
import pytest
import torch
from etrt import _ops
from etrt.cli import main as cli_main
from etrt.ir import (
    ARENA_ALIGNMENT,
    SEGMENT_ALIGNMENT,
    BoolValue,
    DoubleValue,
    IntListValue,
    IntValue,
    KernelCall,
    NullValue,
    ScalarType,
    StorageKind,
    StringValue,
    TensorListValue,
    TensorValue,
)
from etrt.memory_plan import Buffer, assign_offsets
from etrt.program import ProgramInfo
from torch import nn

BATCHES = (1, 32)

# What run_decompositions() yields in torch 2.13 (the kernel library must cover these).
EXPECTED_OPS = {
    "mlp": {"aten::addmm", "aten::permute", "aten::relu"},
    # Its pooling's indices are never read: the exporter calls the values-only overload.
    "cnn": {
        "aten::addmm",
        "aten::convolution",
        "aten::max_pool2d",
        "aten::permute",
        "aten::relu",
        "aten::view",
    },
    # Attention stays one fused call (the exporter keeps scaled_dot_product_attention whole).
    "transformer": {
        "aten::add.Tensor",
        "aten::addmm",
        "aten::clone",
        "aten::gelu",
        "aten::native_layer_norm",
        "aten::permute",
        "aten::scaled_dot_product_attention",
        "aten::select.int",
        "aten::squeeze.dims",
        "aten::unsqueeze",
        "aten::view",
    },
}
# At batch > 1 torch traces the attention's input projection as a batched matmul.
EXPECTED_EXTRA_OPS = {("transformer", 32): {"aten::bmm", "aten::expand"}}

TORCH_DTYPE = {
    ScalarType.FLOAT: torch.float32,
    ScalarType.LONG: torch.int64,
    ScalarType.INT: torch.int32,
    ScalarType.BOOL: torch.bool,
}

ExportFn = Callable[[str, int], etrt.Program]


def _tensor(info: ProgramInfo, index: int) -> TensorValue:
    v = info.plan.values[index]
    assert isinstance(v, TensorValue), f"value {index} is {v!r}"
    return v


def _find(info: ProgramInfo, op: str) -> KernelCall:
    """The first instruction calling `op`."""
    return next(i for i in info.plan.instructions if info.plan.operators[i.op_index] == op)


def _tensors_of(info: ProgramInfo, index: int) -> list[int]:
    v = info.plan.values[index]
    if isinstance(v, TensorValue):
        return [index]
    if isinstance(v, TensorListValue):
        return list(v.items)
    return []


def check_memory_plan(info: ProgramInfo) -> None:
    """Re-derive buffer lifetimes from the file alone and check no two live buffers overlap."""
    plan = info.plan
    values = plan.values
    producer: dict[int, int] = {}
    base: dict[int, int] = {}
    for step, ins in enumerate(plan.instructions):
        for arg in ins.args:
            for t in _tensors_of(info, arg):
                tv = _tensor(info, t)
                if tv.storage in (StorageKind.PLANNED, StorageKind.VIEW) and t not in producer:
                    producer[t] = step
                    if tv.storage == StorageKind.VIEW:
                        base[t] = ins.args[0]  # every view op aliases its first argument

    def root(t: int) -> int:
        while t in base:
            t = base[t]
        return t

    first: dict[int, int] = {}
    last: dict[int, int] = {}
    uses = [(step, arg) for step, ins in enumerate(plan.instructions) for arg in ins.args]
    uses += [(len(plan.instructions), out) for out in plan.outputs]
    for step, arg in uses:
        for t in _tensors_of(info, arg):
            r = root(t)
            if _tensor(info, r).storage == StorageKind.PLANNED:
                first[r] = min(first.get(r, step), step)
                last[r] = max(last.get(r, step), step)

    planned = [
        i
        for i, v in enumerate(values)
        if isinstance(v, TensorValue) and v.storage == StorageKind.PLANNED
    ]
    assert set(planned) == set(first), "every planned tensor is produced and used"
    for i in planned:
        tv = _tensor(info, i)
        assert tv.mem_offset % ARENA_ALIGNMENT == 0, f"value {i} offset {tv.mem_offset} unaligned"
        assert tv.mem_offset + tv.nbytes <= plan.arena_size, f"value {i} outside the arena"
        assert sorted(tv.dim_order) == list(range(len(tv.sizes)))  # a layout torch traced
    live = [i for i in planned if _tensor(info, i).nbytes > 0]
    for a_pos, a in enumerate(live):
        ta = _tensor(info, a)
        for b in live[a_pos + 1 :]:
            tb = _tensor(info, b)
            in_time = first[a] <= last[b] and first[b] <= last[a]
            in_space = (
                ta.mem_offset < tb.mem_offset + tb.nbytes
                and tb.mem_offset < ta.mem_offset + ta.nbytes
            )
            assert not (in_time and in_space), (
                f"values {a} [{first[a]},{last[a]}] and {b} [{first[b]},{last[b]}] share memory"
            )


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("name", models.MODEL_NAMES)
def test_operators_are_supported(exported_program: ExportFn, name: str, batch: int) -> None:
    program = exported_program(name, batch)
    ops = set(program.operator_names)
    print(f"{name} batch {batch}: {sorted(ops)}")
    print(f"{name} batch {batch} instructions: {program.info.instruction_ops}")
    assert ops <= _ops.SUPPORTED_OPS, f"unsupported: {sorted(ops - _ops.SUPPORTED_OPS)}"
    assert ops == EXPECTED_OPS[name] | EXPECTED_EXTRA_OPS.get((name, batch), set())
    assert program.missing_ops == ()
    assert program.num_inputs == 1 and program.num_outputs == 1


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("name", models.MODEL_NAMES)
def test_constants_round_trip_exactly(exported_program: ExportFn, name: str, batch: int) -> None:
    program = exported_program(name, batch)
    model, inputs = models.make(name, batch)
    ep = torch.export.export(model, inputs).run_decompositions()
    kinds = {s.arg.name: s for s in ep.graph_signature.input_specs}
    expected = []
    for node in ep.graph.nodes:
        spec = kinds.get(node.name)
        if node.op == "placeholder" and spec is not None and spec.target is not None:
            expected.append(ep.state_dict.get(spec.target, ep.constants.get(spec.target)))
    info = program.info
    constants = info.constant_tensors()
    assert len(constants) == len(expected) == len(list(model.parameters()))
    data = program.to_bytes()
    assert info.segment_base_offset % SEGMENT_ALIGNMENT == 0
    for seg_index, ((_, tv), want) in enumerate(zip(constants, expected, strict=True)):
        seg = info.segment_table[tv.constant_segment]
        assert seg.offset % SEGMENT_ALIGNMENT == 0
        assert tv.constant_segment == seg_index
        start = info.segment_base_offset + seg.offset
        raw = data[start : start + seg.size]
        assert raw == info.constant_bytes(tv)
        got = torch.frombuffer(bytearray(raw), dtype=TORCH_DTYPE[tv.scalar_type]).reshape(tv.sizes)
        if want.dim() == 2 and tv.sizes == tuple(want.shape)[::-1]:
            want = want.t()  # a linear layer's weight, stored as its matmul reads it (weights.py)
        assert tv.sizes == tuple(want.shape) and tv.dim_order == tuple(range(want.dim()))
        assert torch.equal(got, want.detach())


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("name", models.MODEL_NAMES)
def test_memory_plan_is_valid(exported_program: ExportFn, name: str, batch: int) -> None:
    info = exported_program(name, batch).info
    check_memory_plan(info)
    plan = info.plan
    (inp,) = plan.inputs
    model, inputs = models.make(name, batch)
    assert _tensor(info, inp).storage == StorageKind.INPUT
    assert _tensor(info, inp).sizes == tuple(inputs[0].shape)
    (out,) = plan.outputs
    assert _tensor(info, out).sizes == tuple(model(*inputs).shape)
    # Memory is reused: the arena is smaller than the sum of the planned buffers.
    planned = [
        v for v in plan.values if isinstance(v, TensorValue) and v.storage == StorageKind.PLANNED
    ]
    assert plan.arena_size < sum(math.ceil(v.nbytes / 64) * 64 for v in planned)


def test_memory_plan_check_catches_overlap(exported_program: ExportFn) -> None:
    info = etrt.load_program_info(exported_program("mlp", 1).to_bytes())  # a private copy
    for v in info.plan.values:
        if isinstance(v, TensorValue) and v.storage == StorageKind.PLANNED:
            v.mem_offset = 0
    with pytest.raises(AssertionError, match="share memory"):
        check_memory_plan(info)


def test_assign_offsets_never_overlaps_live_buffers() -> None:
    rng = random.Random(7)
    for _ in range(200):
        buffers = []
        for value in range(rng.randint(1, 25)):
            start = rng.randint(0, 20)
            buffers.append(
                Buffer(
                    value,
                    rng.choice([0, 1, 40, 64, 100, 4096, rng.randint(1, 9000)]),
                    start,
                    start + rng.randint(0, 6),
                )
            )
        plan = assign_offsets(buffers)
        for b in buffers:
            off = plan.offsets[b.value]
            assert off % ARENA_ALIGNMENT == 0 and off + b.size <= plan.arena_size
        for i, a in enumerate(buffers):
            for b in buffers[i + 1 :]:
                oa, ob = plan.offsets[a.value], plan.offsets[b.value]
                if a.size and b.size and a.overlaps_in_time(b):
                    assert oa + a.size <= ob or ob + b.size <= oa


def test_assign_offsets_reuses_dead_memory() -> None:
    # A chain a -> b -> c: c may reuse a's memory once a is dead.
    plan = assign_offsets([Buffer(0, 1000, 0, 1), Buffer(1, 1000, 1, 2), Buffer(2, 1000, 2, 3)])
    assert plan.offsets[0] == plan.offsets[2]
    assert plan.arena_size == 2 * 1024


@pytest.mark.parametrize("name", models.MODEL_NAMES)
def test_export_is_deterministic(exported_program: ExportFn, name: str) -> None:
    model, inputs = models.make(name, 1)
    assert etrt.export(model, inputs).to_bytes() == exported_program(name, 1).to_bytes()


def test_program_header_and_arguments(exported_program: ExportFn) -> None:
    program = exported_program("cnn", 1)
    data = bytes(program)
    assert data[4:8] == b"ETRT"
    info = program.info
    assert info.version == 1 and info.plan.name == "forward"
    values = info.plan.values
    conv = _find(info, "aten::convolution")
    args = [values[a] for a in conv.args]
    assert [type(a) for a in args[:3]] == [TensorValue] * 3
    assert args[3:9] == [
        IntListValue((1, 1)),
        IntListValue((1, 1)),
        IntListValue((1, 1)),
        BoolValue(False),
        IntListValue((0, 0)),
        IntValue(1),
    ]
    out = args[9]
    assert (
        isinstance(out, TensorValue)
        and out.storage == StorageKind.PLANNED
        and out.sizes == (1, 16, 28, 28)
    )
    # max_pool2d_with_indices, whose indices nothing reads: the values-only overload.
    assert "aten::max_pool2d_with_indices" not in info.plan.operators
    pool = _find(info, "aten::max_pool2d")
    pargs = [values[a] for a in pool.args]
    # self, kernel_size, stride, then defaults: padding, dilation, ceil_mode | out
    assert pargs[1:6] == [
        IntListValue((2, 2)),
        IntListValue((2, 2)),
        IntListValue((0, 0)),
        IntListValue((1, 1)),
        BoolValue(False),
    ]
    assert len(pargs) == 7
    assert isinstance(pargs[6], TensorValue) and pargs[6].scalar_type == ScalarType.FLOAT
    view = _find(info, "aten::view")
    vout = values[view.args[-1]]
    assert isinstance(vout, TensorValue) and vout.storage == StorageKind.VIEW
    assert view.args[0] == pool.args[6]  # the view reads max_pool's first output (getitem resolved)


def _args_of(info: ProgramInfo, op: str) -> list[object]:
    """The argument values of the first call of `op`."""
    ins = next(i for i in info.plan.instructions if info.plan.operators[i.op_index] == op)
    return [info.plan.values[a] for a in ins.args]


def test_transformer_scalar_arguments(exported_program: ExportFn) -> None:
    info = exported_program("transformer", 1).info
    add = _args_of(info, "aten::add.Tensor")
    assert add[2] == IntValue(1) and len(add) == 4  # alpha default filled
    assert _args_of(info, "aten::gelu")[1] == StringValue("none")
    ln = _args_of(info, "aten::native_layer_norm")
    assert len(ln) == 5 + 3 and ln[1] == IntListValue((64,)) and ln[4] == DoubleValue(1e-5)
    # query, key, value, then every default: attn_mask, dropout_p, is_causal, scale, enable_gqa
    sdpa = _args_of(info, "aten::scaled_dot_product_attention")
    defaults = [NullValue(), DoubleValue(0.0), BoolValue(False), NullValue(), BoolValue(False)]
    assert sdpa[3:8] == defaults
    assert len(sdpa) == 8 + 1


def test_masked_softmax_scalar_arguments() -> None:
    info = etrt.export(models.MaskedSoftmax(), (torch.randn(2, 3, 16),)).info
    eq = _args_of(info, "aten::eq.Scalar")
    assert isinstance(eq[1], DoubleValue) and eq[1].val == -math.inf
    assert isinstance(eq[2], TensorValue) and eq[2].scalar_type == ScalarType.BOOL
    full = _args_of(info, "aten::full_like")
    assert full[1:7] == [
        IntValue(0),
        NullValue(),
        NullValue(),
        NullValue(),
        BoolValue(False),
        NullValue(),
    ]
    assert _args_of(info, "aten::_softmax")[1:3] == [IntValue(-1), BoolValue(False)]
    assert _args_of(info, "aten::any.dim")[1:3] == [IntValue(-1), BoolValue(True)]


class _Split(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = torch.split(x, [3, 3], dim=1)
        return a * b


def test_tensor_list_returns_become_one_list_of_views() -> None:
    program = etrt.export(_Split(), (torch.randn(2, 6),))
    info = program.info
    assert "aten::split_with_sizes" in info.operator_names
    ins = _find(info, "aten::split_with_sizes")
    out = info.plan.values[ins.args[-1]]
    assert isinstance(out, TensorListValue) and len(out.items) == 2
    assert all(_tensor(info, i).storage == StorageKind.VIEW for i in out.items)
    mul = _find(info, "aten::mul.Tensor")
    assert mul.args[:2] == out.items
    check_memory_plan(info)


class _DtypeArg(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, torch.full_like(x, 2, dtype=torch.int32), 0).to(torch.int64)


def test_dtype_arguments_use_etrt_codes() -> None:
    info = etrt.export(_DtypeArg(), (torch.randn(4),), allow_missing_ops=True).info
    full = _find(info, "aten::full_like")
    assert info.plan.values[full.args[2]] == IntValue(int(ScalarType.INT))
    assert _tensor(info, full.args[-1]).scalar_type == ScalarType.INT


# An operator outside ATen that etrt has no kernel for (etrt covers the core ATen opset).
_SINE_OP = (
    "import torch\n"
    "@torch.library.custom_op('etrt_test::sine', mutates_args=())\n"
    "def sine(x: torch.Tensor) -> torch.Tensor:\n"
    "    return torch.sin(x)\n"
    "@sine.register_fake\n"
    "def _(x):\n"
    "    return torch.empty_like(x)\n"
)
exec(_SINE_OP)


class _Sine(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.etrt_test.sine(self.fc(x))


def test_missing_operator_is_an_error_naming_op_and_node() -> None:
    with pytest.raises(etrt.ExportError) as err:
        etrt.export(_Sine(), (torch.randn(2, 8),))
    msg = str(err.value)
    assert "no etrt kernel for etrt_test::sine (node sine)" in msg
    assert "allow_missing_ops=True" in msg


class _Inverse(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.inv(x)


def test_effectful_decomposition_is_refused_naming_op_stage_and_line() -> None:
    # linalg.inv's decomposition checks its input through an effect token etrt cannot hold.
    with pytest.raises(etrt.ExportError) as err:
        etrt.export(_Inverse(), (torch.randn(4, 4),))
    msg = str(err.value)
    assert msg.startswith("lowering to etrt failed: aten::linalg_inv at test_export.py:"), msg
    assert "return torch.linalg.inv(x)" in msg and "aten._linalg_check_errors" in msg, msg


def test_allow_missing_ops_exports_anyway() -> None:
    program = etrt.export(_Sine(), (torch.randn(2, 8),), allow_missing_ops=True)
    assert program.missing_ops == ("etrt_test::sine",)
    assert program.operator_names == ["aten::permute", "aten::addmm", "etrt_test::sine"]
    check_memory_plan(program.info)


def test_refused_core_op_is_an_export_error_with_its_reason() -> None:
    class Spectrum(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.fft.rfft(x).angle()

    with pytest.raises(etrt.ExportError) as err:
        etrt.export(Spectrum(), (torch.randn(2, 8),))
    assert "etrt does not run aten::angle on complex values" in str(err.value)


def test_unsupported_dtype_is_an_error() -> None:
    with pytest.raises(etrt.ExportError, match="float64"):
        etrt.export(nn.ReLU(), (torch.randn(3, dtype=torch.float64),))


def test_save_is_atomic_and_loads_back(exported_program: ExportFn, tmp_path: Path) -> None:
    program = exported_program("mlp", 1)
    target = tmp_path / "mlp.etrt"
    target.write_bytes(b"old")
    program.save(target)
    assert target.read_bytes() == program.to_bytes()
    assert os.listdir(tmp_path) == ["mlp.etrt"]  # no temporary left behind
    info = etrt.load_program_info(target)
    assert info.plan == program.info.plan
    assert info.operator_names == ["aten::permute", "aten::addmm", "aten::relu"]
    assert etrt.load_program_info(bytes(program)).arena_size == program.arena_size > 0
    with pytest.raises(etrt.ProgramFormatError, match="magic"):
        etrt.load_program_info(b"\0" * 64)


def test_generated_schema_code_matches_flatc(repo_root: Path, tmp_path: Path) -> None:
    flatc = shutil.which("flatc") or "/usr/bin/flatc"
    version = subprocess.run(
        [flatc, "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert "2.0.8" in version, f"expected Debian's flatc 2.0.8, got {version!r}"
    subprocess.run(
        [
            flatc,
            "--python",
            "--gen-onefile",
            "-o",
            str(tmp_path),
            str(repo_root / "schema/program.fbs"),
            str(repo_root / "schema/data_map.fbs"),
        ],
        check=True,
    )
    checked_in = repo_root / "python/etrt/_schema"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["__init__.py", "data_map_generated.py", "program_generated.py"]
    assert sorted(p.name for p in checked_in.glob("*.py")) == names
    _, mismatch, errors = filecmp.cmpfiles(tmp_path, checked_in, names, shallow=False)
    assert not mismatch and not errors, (
        f"regenerate python/etrt/_schema: {mismatch or errors} differ"
    )
    assert flatbuffers.__version__ == "25.12.19"  # the runtime the generated code is used with


def test_version_matches_repo(repo_root: Path) -> None:
    assert etrt.__version__ == (repo_root / "VERSION").read_text().strip()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(cwd / "python"), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "etrt", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def test_cli_exports_factory_and_pt2(
    exported_program: ExportFn, repo_root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mlp.etrt"
    r = _cli("export", "tests/models.py:mlp", "-o", str(out), cwd=repo_root)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == exported_program("mlp", 1).to_bytes()

    model, inputs = models.make("cnn", 1)
    pt2 = tmp_path / "cnn.pt2"
    torch.export.save(torch.export.export(model, inputs), str(pt2))
    out2 = tmp_path / "cnn.etrt"
    r = _cli("export", str(pt2), "-o", str(out2), cwd=repo_root)
    assert r.returncode == 0, r.stderr
    assert out2.read_bytes() == exported_program("cnn", 1).to_bytes()


def _cli_in_process(
    capsys: pytest.CaptureFixture[str], *args: str
) -> subprocess.CompletedProcess[str]:
    """The CLI's main() in this process (no interpreter and torch import per call); the
    subprocess cases above and below check the process around it."""
    capsys.readouterr()
    code = cli_main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["etrt", *args], code, out, err)


def test_cli_errors_are_one_line(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "sig.py"
    spec.write_text(
        _SINE_OP + "class Sine(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.ops.etrt_test.sine(x)\n"
        "def make():\n"
        "    return Sine(), (torch.randn(2, 8),)\n"
    )
    out = tmp_path / "sig.etrt"
    r = _cli("export", f"{spec}:make", "-o", str(out), cwd=repo_root)
    assert r.returncode == 1 and not out.exists()
    assert r.stderr.startswith("error: no etrt kernel for etrt_test::sine")
    assert r.stderr.count("\n") == 1
    # The CLI's advice names its flag; the Python API's, its argument.
    assert "pass --allow-missing-ops to export anyway" in r.stderr, r.stderr
    r = _cli("export", f"{spec}:make", "-o", str(out), "--allow-missing-ops", cwd=repo_root)
    assert r.returncode == 0 and out.exists(), r.stderr

    plain = tmp_path / "plain_spec.py"
    plain.write_text(
        "import torch\ndef make():\n    return torch.nn.ReLU(), (torch.randn(2, 8),)\n"
    )
    bad_args = (f"{plain}:nope", str(tmp_path / "missing.pt2"), "no_such_module_xyz:make", "plain")
    for bad in bad_args:
        r = _cli_in_process(capsys, "export", bad, "-o", str(out))
        assert r.returncode == 1 and r.stderr.startswith("error: "), (bad, r.stderr)
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, (bad, r.stderr)

    r = _cli_in_process(capsys, "export", f"{plain}:make", "-o", str(tmp_path / "no/such/x.etrt"))
    assert r.returncode == 1 and r.stderr.startswith("error: cannot write"), r.stderr

    r = _cli("--cmake-prefix-path", cwd=repo_root)
    assert r.returncode == 1 and "only available from an installed wheel" in r.stderr

    r = _cli("--version", cwd=repo_root)
    assert r.returncode == 0 and r.stdout.strip() == f"etrt {etrt.__version__}"


def test_flatc_decodes_the_program_like_our_reader(
    exported_program: ExportFn, repo_root: Path, tmp_path: Path
) -> None:
    program = exported_program("transformer", 1)
    path = program.save(tmp_path / "transformer.etrt")
    schema = str(repo_root / "schema/program.fbs")
    subprocess.run(
        ["flatc", "--json", "--strict-json", "-o", str(tmp_path), schema, "--", str(path)],
        check=True,
    )
    text = (tmp_path / "transformer.json").read_text()
    # flatc prints non-finite doubles bare (eq.Scalar's -inf); make them Python-JSON tokens.
    text = re.sub(r"(:\s*)(-?)inf\b", r"\1\2Infinity", text).replace(": nan", ": NaN")
    doc = json.loads(text)
    info = program.info
    assert doc["version"] == 1 and doc["segment_base_offset"] == info.segment_base_offset
    assert [(s["offset"], s["size"]) for s in doc["segments"]] == [
        (s.offset, s.size) for s in info.segment_table
    ]
    (plan,) = doc["execution_plans"]
    assert [op["name"] for op in plan["operators"]] == info.operator_names
    assert plan["arena_size"] == info.arena_size
    assert len(plan["values"]) == len(info.plan.values)
    assert [i["call"]["args"] for i in plan["instructions"]] == [
        list(i.args) for i in info.plan.instructions
    ]


def test_importing_etrt_needs_neither_torch_nor_numpy(repo_root: Path) -> None:
    # Entry-point consumers (scikit-build-core, pkgconf) import etrt in environments
    # without torch; block both and import the package and its CLI.
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'numpy'):\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import etrt, etrt.cli\n"
        "print(etrt.__version__)\n"
    )
    root = repo_root
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(root / "python"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()

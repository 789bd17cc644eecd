"""The XNNPACK delegate: export with backend="xnnpack", run from C++ against the Conan package.

Proves that delegated programs match eager PyTorch, that etrt::backend_xnnpack is what registers
the backend, that a process has one registry whatever it links, that changing the thread count
after loading is safe, and that corrupt delegate blobs are rejected without crashing.
"""

from __future__ import annotations

import filecmp
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import etrt
import numpy as np
import pytest
import torch
from conan_consumer import ROOT, build_consumer, etrt_version, run
from etrt.ir import DelegateCall, KernelCall
from etrt.xnnpack import BACKEND_ID
from etrt.xnnpack.blob import xfb
from models import MODEL_NAMES, make
from torch import nn

MODELS = list(MODEL_NAMES)
# What the MLP and CNN compute with: all of it must run inside the delegate.
HEAVY_OPS = {"aten::addmm", "aten::convolution", "aten::max_pool2d_with_indices", "aten::relu"}


@pytest.fixture(scope="session")
def runners(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_consumer(ROOT / "tests" / "apps" / "runner", tmp_path_factory.mktemp("runners"))


@pytest.fixture(scope="session")
def thread_switch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = build_consumer(
        ROOT / "tests" / "apps" / "xnnpack_threads", tmp_path_factory.mktemp("xnnpack_threads")
    )
    return build / "etrt_thread_switch"


@pytest.fixture(scope="session")
def package_lib_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lib/ of the etrt Conan package, for the Python (ctypes) runtime."""
    out = tmp_path_factory.mktemp("etrt-pkg")
    proc = run(
        ["conan", "install", f"--requires=etrt/{etrt_version()}", "-s", "build_type=Release",
         "--output-folder", out, "--format=json"]
    )  # fmt: skip
    nodes = json.loads(proc.stdout)["graph"]["nodes"].values()
    return Path(next(n["package_folder"] for n in nodes if n.get("name") == "etrt")) / "lib"


def write_inputs(inputs: tuple[torch.Tensor, ...], path: Path) -> Path:
    path.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    return path


def run_program(
    runner: Path, program: Path, inputs: tuple[torch.Tensor, ...], workdir: Path
) -> subprocess.CompletedProcess[str]:
    in_path = write_inputs(inputs, workdir / "inputs.bin")
    out_path = workdir / "out.bin"
    return subprocess.run(
        [str(runner), str(program), "--inputs", str(in_path), "--outputs", str(out_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def max_diff_to_eager(model: nn.Module, inputs: tuple[torch.Tensor, ...], out: Path) -> float:
    with torch.no_grad():
        expected = model(*inputs).numpy()
    got = np.fromfile(out, dtype=np.float32)
    assert got.size == expected.size
    return float(np.max(np.abs(got.reshape(expected.shape) - expected)))


def list_registered(runner: Path, what: str) -> list[str]:
    proc = subprocess.run([str(runner), what], capture_output=True, text=True, check=True)
    return proc.stdout.split()


# --- exporter ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_mlp_and_cnn_compute_runs_in_delegates(name: str) -> None:
    model, inputs = make(name, 1)
    info = etrt.export(model, inputs, backend="xnnpack-all").info
    kernel_ops = {
        info.plan.operators[i.op_index] for i in info.plan.instructions if isinstance(i, KernelCall)
    }
    assert not kernel_ops & HEAVY_OPS, f"left to kernels: {kernel_ops & HEAVY_OPS}"
    assert info.plan.delegates and all(d.id == BACKEND_ID for d in info.plan.delegates)
    # The CNN's flatten stays inside too (NHWC order, the linear layer's weights permuted).
    assert info.instruction_ops == [f"delegate:{BACKEND_ID}"]


def test_cost_rule_delegates_the_cnn_whole_at_batch_32() -> None:
    model, inputs = make("cnn", 32)
    info = etrt.export(model, inputs, backend="xnnpack").info
    # Convolution, pooling and the linear layer reading the NHWC flatten: one delegate call.
    assert info.instruction_ops == [f"delegate:{BACKEND_ID}"]


def test_cost_rule_keeps_gemv_and_long_k_linears_on_etrt_kernels() -> None:
    # The batch-1 CNN: convolution and pooling delegated, its one-row linear layer is not.
    model, inputs = make("cnn", 1)
    ops = etrt.export(model, inputs, backend="xnnpack").info.instruction_ops
    assert ops.count(f"delegate:{BACKEND_ID}") == 1
    assert "aten::convolution" not in ops and "aten::addmm" in ops
    # The MLP (K = 784 and 256) runs faster on etrt's dot-product GEMM at batch 1 and 32.
    for batch in (1, 32):
        model, inputs = make("mlp", batch)
        ops = etrt.export(model, inputs, backend="xnnpack").info.instruction_ops
        assert ops == etrt.export(model, inputs).info.instruction_ops


def test_transformer_linear_layers_are_delegated() -> None:
    model, inputs = make("transformer", 1)
    plain = etrt.export(model, inputs).info
    info = etrt.export(model, inputs, backend="xnnpack-all").info
    assert plain.instruction_ops.count("aten::addmm") == 4
    assert "aten::addmm" not in info.instruction_ops
    calls = [i for i in info.plan.instructions if isinstance(i, DelegateCall)]
    assert len(calls) >= 4
    # Weights live in the blobs now, not twice in the file.
    delegated_size = len(etrt.export(model, inputs, backend="xnnpack-all"))
    assert delegated_size < len(etrt.export(model, inputs)) * 1.2
    # The cost rule: the three short-K (64) linear layers of 16 rows go to XNNPACK, the K = 256
    # one stays; at batch 32 (512 rows) none does.
    ruled = etrt.export(model, inputs, backend="xnnpack").info.instruction_ops
    assert ruled.count("aten::addmm") == 1
    assert ruled.count(f"delegate:{BACKEND_ID}") == 3


@pytest.mark.slow
def test_cost_rule_delegates_linears_whose_weights_pass_the_cache(
    runners: Path, tmp_path: Path
) -> None:
    # 768 x 768 weights (2.25 MiB, a ViT-B layer): delegated over 32 rows, kept over 8.
    torch.manual_seed(0)
    model = nn.Linear(768, 768).eval()
    assert (
        "aten::addmm"
        in etrt.export(model, (torch.randn(8, 768),), backend="xnnpack").info.instruction_ops
    )
    inputs = (torch.randn(32, 768),)
    program = etrt.export(model, inputs, backend="xnnpack")
    assert program.info.instruction_ops == [f"delegate:{BACKEND_ID}"]
    proc = run_program(
        runners / "etrt_runner_xnnpack", program.save(tmp_path / "fc.etrt"), inputs, tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert max_diff_to_eager(model, inputs, tmp_path / "out.bin") <= 1e-4
    model, inputs = make("transformer", 32)
    assert BACKEND_ID not in str(etrt.export(model, inputs, backend="xnnpack").info.instruction_ops)


def test_used_max_pool_indices_stay_with_kernels() -> None:
    class PoolWithIndices(nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            values, indices = nn.functional.max_pool2d(x, 2, return_indices=True)
            return torch.relu(values), indices

    info = etrt.export(PoolWithIndices(), (torch.randn(1, 2, 4, 4),), backend="xnnpack").info
    assert "aten::max_pool2d_with_indices" in info.instruction_ops


def test_unknown_backend_is_an_error() -> None:
    with pytest.raises(etrt.ExportError, match="unknown backend 'tpu'"):
        etrt.export(nn.ReLU(), (torch.randn(2),), backend="tpu")


def test_cli_exports_with_backend(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    out = tmp_path / "mlp.etrt"
    proc = subprocess.run(
        [sys.executable, "-m", "etrt", "export", "tests/models.py:mlp", "-o", str(out),
         "--backend", "xnnpack-all"],
        capture_output=True, text=True, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert etrt.load_program_info(out).instruction_ops == [f"delegate:{BACKEND_ID}"]


def test_generated_blob_schema_code_matches_flatc(tmp_path: Path) -> None:
    flatc = shutil.which("flatc") or "/usr/bin/flatc"
    schema = ROOT / "schema" / "xnnpack_delegate.fbs"
    cmd = [flatc, "--python", "--gen-onefile", "-o", str(tmp_path), str(schema)]
    subprocess.run(cmd, check=True)
    checked_in = ROOT / "python" / "etrt" / "xnnpack" / "_schema"
    names = ["__init__.py", "xnnpack_delegate_generated.py"]
    _, mismatch, errors = filecmp.cmpfiles(tmp_path, checked_in, names, shallow=False)
    assert not mismatch and not errors, f"regenerate {checked_in}: {mismatch or errors} differ"


# --- C++ ---------------------------------------------------------------------------------------


# Which (model, batch) programs the cost rule delegates (docs/xnnpack.md).
RULE_DELEGATES = {("cnn", 1), ("cnn", 32), ("transformer", 1)}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["xnnpack-all", "xnnpack"])
@pytest.mark.parametrize("batch", [1, 32])
@pytest.mark.parametrize("name", MODELS)
def test_delegated_model_matches_eager_pytorch(
    runners: Path, tmp_path: Path, name: str, batch: int, backend: str
) -> None:
    model, inputs = make(name, batch)
    program = etrt.export(model, inputs, backend=backend)
    delegated = any(isinstance(i, DelegateCall) for i in program.info.plan.instructions)
    assert delegated == (backend == "xnnpack-all" or (name, batch) in RULE_DELEGATES)
    path = program.save(tmp_path / f"{name}.etrt")
    proc = run_program(runners / "etrt_runner_xnnpack", path, inputs, tmp_path)
    assert proc.returncode == 0, proc.stderr
    diff = max_diff_to_eager(model, inputs, tmp_path / "out.bin")
    print(f"{name} batch {batch} ({backend}): max abs diff {diff:.3g}")
    assert diff <= 1e-5


class FlattenThenRelu(nn.Module):
    """The flatten feeds a relu, not a linear layer: it must leave XNNPACK in NCHW order."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = self.fc(torch.relu(torch.flatten(self.conv(x), 1)))
        return y


class FlattenTwice(nn.Module):
    """The flatten is also a program output; the pool output also feeds an add."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1, groups=3)
        self.fc = nn.Linear(6 * 4 * 4, 7)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        p = nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        flat = torch.flatten(p, 1)
        return self.fc(flat), flat, p + p


@pytest.mark.slow
@pytest.mark.parametrize("cls", [FlattenThenRelu, FlattenTwice])
def test_layout_boundaries_match_eager(runners: Path, tmp_path: Path, cls: type[nn.Module]) -> None:
    torch.manual_seed(0)
    model = cls().eval()
    inputs = (torch.randn(2, 3, 8, 8),)
    program = etrt.export(model, inputs, backend="xnnpack")
    assert any(isinstance(i, DelegateCall) for i in program.info.plan.instructions)
    path = program.save(tmp_path / "model.etrt")
    proc = run_program(runners / "etrt_runner_xnnpack", path, inputs, tmp_path)
    assert proc.returncode == 0, proc.stderr
    with torch.no_grad():
        expected = model(*inputs)
    flat = np.concatenate(
        [t.numpy().ravel() for t in (expected if isinstance(expected, tuple) else (expected,))]
    )
    got = np.fromfile(tmp_path / "out.bin", dtype=np.float32)
    assert got.size == flat.size
    assert float(np.max(np.abs(got - flat))) <= 1e-5


@pytest.mark.slow
def test_delegated_program_fails_without_the_backend(runners: Path, tmp_path: Path) -> None:
    model, inputs = make("cnn", 1)
    path = etrt.export(model, inputs, backend="xnnpack").save(tmp_path / "cnn.etrt")
    # Same program, same runner source: only the link line differs.
    assert run_program(runners / "etrt_runner_xnnpack", path, inputs, tmp_path).returncode == 0
    proc = run_program(runners / "etrt_runner", path, inputs, tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "BackendMissing" in proc.stderr
    assert BACKEND_ID in proc.stderr


@pytest.mark.slow
def test_one_registry_per_process(runners: Path) -> None:
    base, every = runners / "etrt_runner", runners / "etrt_runner_all"
    base_backends = list_registered(base, "--list-backends")
    all_backends = list_registered(every, "--list-backends")
    assert len(all_backends) == len(base_backends) + 1
    assert sorted(set(all_backends) - set(base_backends)) == [BACKEND_ID]
    assert len(set(all_backends)) == len(all_backends)
    base_kernels = list_registered(base, "--list-kernels")
    all_kernels = list_registered(every, "--list-kernels")
    assert len(set(all_kernels)) == len(all_kernels), "an operator is registered twice"
    assert sorted(all_kernels) == sorted(base_kernels)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_thread_count_changes_after_load_are_safe(
    thread_switch: Path, tmp_path: Path, name: str
) -> None:
    model, inputs = make(name, 4)
    program = etrt.export(model, inputs, backend="xnnpack-all")
    path = program.save(tmp_path / f"{name}.etrt")
    in_path = write_inputs(inputs, tmp_path / "inputs.bin")
    out = tmp_path / "out.bin"
    proc = subprocess.run(
        [str(thread_switch), str(path), str(in_path), str(out), "2", "1", "3", "1", "2"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "ETRT_NUM_THREADS": "2"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Weights are packed when the method loads (one XNNPACK runtime per delegate call), never
    # by a run on the same pool; a new thread count repacks each delegate once, the same count
    # not at all (the app checks every step; these lines are what it saw).
    delegates = len(program.info.plan.delegates)
    assert f"runtimes created at load: {delegates}\n" in proc.stdout
    assert "runs on the same pool repacked nothing" in proc.stdout
    assert "threads 2: max diff 0, runtimes created 0\n" in proc.stdout
    assert f"threads 3: max diff 0, runtimes created {delegates}\n" in proc.stdout
    assert "concurrent changes" in proc.stdout
    assert max_diff_to_eager(model, inputs, out) <= 1e-5


def _blob_span(program: etrt.Program) -> tuple[int, int]:
    info = program.info
    seg = info.segment_table[info.plan.delegates[0].segment]
    start = info.segment_base_offset + seg.offset
    return start, start + seg.size


@pytest.mark.slow
# mobile: a vision block whose delegate holds every node type (hardswish, sigmoid, global
# average pool, clamp, reshape, softmax besides cnn's convolution, pooling and linear).
@pytest.mark.parametrize("name", ["cnn", "mobile"])
def test_corrupt_blobs_are_rejected_without_crashing(
    runners: Path, tmp_path: Path, name: str
) -> None:
    model, inputs = make(name, 1)
    program = etrt.export(model, inputs, backend="xnnpack")
    data = bytearray(program.to_bytes())
    start, end = _blob_span(program)
    # Only the FlatBuffer part of the blob: its data area is weights, any bytes are valid there.
    fb_end = start + xfb.Graph.GetRootAs(bytes(data[start:end]), 0).DataOffset()
    rng = random.Random(4)
    rejected = 0
    for trial in range(40):
        bad = bytearray(data)
        for _ in range(1 + trial % 4):
            pos = rng.randrange(start, min(fb_end, end))
            bad[pos] = rng.randrange(256)
        path = tmp_path / "bad.etrt"
        path.write_bytes(bytes(bad))
        proc = run_program(runners / "etrt_runner_xnnpack", path, inputs, tmp_path)
        assert proc.returncode in (0, 1), f"trial {trial}: exit {proc.returncode}\n{proc.stderr}"
        if proc.returncode == 1:
            assert "XNNPACK" in proc.stderr or "delegate" in proc.stderr, proc.stderr
            rejected += 1
    assert rejected > 0
    # A truncated identifier is the simplest corruption: named as a bad blob.
    bad = bytearray(data)
    bad[start + 4 : start + 8] = b"XXXX"
    (tmp_path / "bad.etrt").write_bytes(bytes(bad))
    proc = run_program(runners / "etrt_runner_xnnpack", tmp_path / "bad.etrt", inputs, tmp_path)
    assert proc.returncode == 1
    assert "not an XNNPACK delegate blob" in proc.stderr


PYTHON_RUN = """
import sys
import numpy as np, torch, etrt
from models import make
assert etrt.registered_backends().count("XnnpackBackend") == 1, etrt.registered_backends()
model, inputs = make(sys.argv[1], 3)
etrt.export(model, inputs, backend="xnnpack-all").save(sys.argv[2])
(out,) = etrt.load(sys.argv[2]).forward(inputs[0].numpy())
with torch.no_grad():
    print(float(np.max(np.abs(out - model(*inputs).numpy()))))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_python_runtime_runs_delegated_programs(
    package_lib_dir: Path, tmp_path: Path, name: str
) -> None:
    env = dict(os.environ, ETRT_LIBRARY_DIR=str(package_lib_dir), ETRT_NUM_THREADS="2")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT / "tests")])
    proc = subprocess.run(
        [sys.executable, "-c", PYTHON_RUN, name, str(tmp_path / "p.etrt")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert float(proc.stdout.split()[-1]) <= 1e-5

"""The three test models, exported and run from C++ against the Conan package, match eager."""

from __future__ import annotations

import subprocess
from pathlib import Path

import etrt
import numpy as np
import pytest
import torch
from conan_consumer import ROOT, build_consumer
from etrt import _ops
from models import MODEL_NAMES, make

MODELS = list(MODEL_NAMES)


@pytest.fixture(scope="session")
def runner_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_consumer(ROOT / "tests" / "apps" / "runner", tmp_path_factory.mktemp("runner"))


def run_program(
    runner: Path, program: Path, inputs: tuple[torch.Tensor, ...], workdir: Path
) -> subprocess.CompletedProcess[str]:
    in_path, out_path = workdir / "inputs.bin", workdir / "outputs.bin"
    in_path.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    return subprocess.run(
        [str(runner), str(program), "--inputs", str(in_path), "--outputs", str(out_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.mark.parametrize("batch", [1, 32])
@pytest.mark.parametrize("name", MODELS)
def test_model_matches_eager_pytorch(
    runner_build: Path, tmp_path: Path, name: str, batch: int
) -> None:
    model, inputs = make(name, batch)
    program = tmp_path / f"{name}.etrt"
    etrt.export(model, inputs).save(program)

    proc = run_program(runner_build / "etrt_runner", program, inputs, tmp_path)
    assert proc.returncode == 0, proc.stderr

    with torch.no_grad():
        expected = model(*inputs).numpy()
    got = np.fromfile(tmp_path / "outputs.bin", dtype=np.float32)
    assert got.size == expected.size
    diff = float(np.max(np.abs(got.reshape(expected.shape) - expected)))
    print(f"{name} batch {batch}: max abs diff {diff:.3g}")
    assert diff <= 1e-5


def test_runtime_only_consumer_reports_every_missing_operator(
    runner_build: Path, tmp_path: Path
) -> None:
    model, inputs = make("mlp", 1)
    exported = etrt.export(model, inputs)
    program = tmp_path / "mlp.etrt"
    exported.save(program)

    proc = run_program(runner_build / "etrt_runner_runtime_only", program, inputs, tmp_path)
    assert proc.returncode != 0
    assert "OperatorMissing" in proc.stderr
    missing = sorted(set(exported.operator_names))
    assert missing, "the MLP calls operators"
    for op in missing:
        assert op in proc.stderr, f"{op} not reported in: {proc.stderr}"


def test_exporter_and_kernel_library_agree_on_supported_operators(runner_build: Path) -> None:
    proc = subprocess.run(
        [str(runner_build / "etrt_runner"), "--list-kernels"],
        capture_output=True, text=True, check=True,
    )
    registered = set(proc.stdout.split())
    assert registered == set(_ops.SUPPORTED_OPS)


def test_runtime_only_consumer_registers_no_kernels(runner_build: Path) -> None:
    proc = subprocess.run(
        [str(runner_build / "etrt_runner_runtime_only"), "--list-kernels"],
        capture_output=True, text=True, check=True,
    )
    assert proc.stdout.split() == []


class ScalarArithmetic(torch.nn.Module):
    # Python numbers reach add/sub/mul/div.Tensor as scalars in a tensor slot.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.5 + 1 - x / 4


def test_python_numbers_in_tensor_arguments(runner_build: Path, tmp_path: Path) -> None:
    model, inputs = ScalarArithmetic(), (torch.randn(3, 5),)
    exported = etrt.export(model, inputs)
    assert {"aten::mul.Tensor", "aten::add.Tensor"} <= set(exported.operator_names)
    program = tmp_path / "arith.etrt"
    exported.save(program)
    proc = run_program(runner_build / "etrt_runner", program, inputs, tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = np.fromfile(tmp_path / "outputs.bin", dtype=np.float32).reshape(3, 5)
    assert float(np.max(np.abs(got - model(*inputs).numpy()))) <= 1e-6


def test_external_constants_run_from_a_conan_consumer(runner_build: Path, tmp_path: Path) -> None:
    # The installed headers and libraries carry named data maps: the weights come from a .ptd.
    model, inputs = make("transformer", 2)
    exported = etrt.export(model, inputs, external_constants=True)
    program = exported.save(tmp_path / "t.etrt")
    data = exported.save_data(tmp_path / "t.ptd")
    in_path, out_path = tmp_path / "inputs.bin", tmp_path / "outputs.bin"
    in_path.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    proc = subprocess.run(
        [str(runner_build / "etrt_runner"), str(program), "--data", str(data),
         "--inputs", str(in_path), "--outputs", str(out_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with torch.no_grad():
        expected = model(*inputs).numpy()
    got = np.fromfile(out_path, dtype=np.float32).reshape(expected.shape)
    assert float(np.max(np.abs(got - expected))) <= 1e-5

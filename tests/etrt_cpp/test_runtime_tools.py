"""etrt_runner, built in-tree with the kernel library: runs programs, writes raw outputs,
and reports every failure as one "error: <Code>: <message>" line with exit status 1."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import runtime_programs as rp
from runtime_build import Tools, build_tools

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tools() -> Tools:
    return build_tools("runtime", ["etrt_runner"])


def run(tools: Tools, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tools.runner), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def test_runner_writes_outputs(tools: Tools, tmp_path: Path) -> None:
    program = tmp_path / "add_mul.etrt"
    program.write_bytes(rp.program(rp.add_mul_plan()))
    x = [0.5, -1.0, 2.0, 0.0, 1.0, 3.0]
    (tmp_path / "in.bin").write_bytes(struct.pack("<6f", *x))
    result = run(
        tools,
        program,
        "--inputs",
        tmp_path / "in.bin",
        "--outputs",
        tmp_path / "out.bin",
        "--repeat",
        "3",
    )
    assert result.returncode == 0, result.stderr
    assert "output 0: Float [2, 3]" in result.stdout
    assert "forward: 3 runs" in result.stdout
    got = struct.unpack("<6f", (tmp_path / "out.bin").read_bytes())
    want = [(a + c) * c for a, c in zip(x, rp.CONSTANT_VALUES, strict=True)]
    assert got == pytest.approx(want)


def test_runner_runs_views(tools: Tools, tmp_path: Path) -> None:
    program = tmp_path / "alias.etrt"
    program.write_bytes(rp.program())
    result = run(tools, program, "--outputs", tmp_path / "out.bin")
    assert result.returncode == 0, result.stderr
    got = struct.unpack("<6f", (tmp_path / "out.bin").read_bytes())
    assert got == pytest.approx([c * c for c in rp.CONSTANT_VALUES])


def test_runner_lists_kernels(tools: Tools) -> None:
    result = run(tools, "--list-kernels")
    assert result.returncode == 0
    assert "aten::add.Tensor" in result.stdout.split()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "error: IoError: cannot open"),
        (b"ETRX" * 16, "error: InvalidProgram: "),
        (rp.program(version=3), "error: UnsupportedVersion: "),
    ],
)
def test_runner_reports_one_error_line(
    tools: Tools, tmp_path: Path, content: bytes | None, expected: str
) -> None:
    program = tmp_path / "p.etrt"
    if content is not None:
        program.write_bytes(content)
    result = run(tools, program)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), result.stderr


def test_runner_rejects_wrong_input_size(tools: Tools, tmp_path: Path) -> None:
    program = tmp_path / "p.etrt"
    program.write_bytes(rp.program(rp.add_mul_plan()))
    (tmp_path / "in.bin").write_bytes(b"\0" * 8)
    result = run(tools, program, "--inputs", tmp_path / "in.bin")
    assert result.returncode == 1
    assert result.stderr.startswith("error: InvalidArgument: ")
    assert "take 24" in result.stderr


def test_runner_matches_torch_on_exported_mlp(tools: Tools, tmp_path: Path) -> None:
    import etrt
    import models
    import torch

    model, inputs = models.make("mlp", 2)
    (tmp_path / "mlp.etrt").write_bytes(etrt.export(model, inputs).to_bytes())
    inputs[0].numpy().astype(np.float32).tofile(tmp_path / "in.bin")
    result = run(
        tools,
        tmp_path / "mlp.etrt",
        "--inputs",
        tmp_path / "in.bin",
        "--outputs",
        tmp_path / "out.bin",
    )
    assert result.returncode == 0, result.stderr
    with torch.no_grad():
        want = model(*inputs).numpy().ravel()
    got = np.fromfile(tmp_path / "out.bin", dtype=np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

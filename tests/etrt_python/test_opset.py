"""The core ATen opset, read from the installed torch: every op has an etrt kernel or is refused
at export with a reason, the kernel library registers exactly what the exporter claims, and
docs/operators.md is the table `python -m etrt ops --markdown` prints today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import etrt
import pytest
import runtime_build
import torch
from etrt import _ops, opset
from torch import nn


def test_every_core_op_has_a_kernel_or_a_refusal() -> None:
    core = opset.core_ops()
    assert len(core) > 150  # the opset, not an empty read
    unclaimed = [n for n in core if not _ops.is_supported(n) and _ops.refusal(n) is None]
    assert not unclaimed, f"core ops with neither a kernel nor a refusal: {unclaimed}"
    assert not set(_ops.REFUSED_OPS) & _ops.SUPPORTED_OPS
    assert all(reason.strip() for reason in _ops.REFUSED_OPS.values())


def test_kernel_library_registers_what_the_exporter_claims() -> None:
    runner = runtime_build.tool_runner("release").exe
    proc = subprocess.run(
        [str(runner), "--list-kernels"], capture_output=True, text=True, check=True
    )
    assert set(proc.stdout.split()) == set(_ops.SUPPORTED_OPS)


def test_operators_table_is_current(repo_root: Path) -> None:
    table = (repo_root / "docs" / "operators.md").read_text()
    assert table == opset.markdown(), (
        "regenerate: python -m etrt ops --markdown > docs/operators.md"
    )
    for name in opset.core_ops():
        assert f"| `{name}` |" in table


def test_ops_command_prints_the_table(repo_root: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "etrt", "ops", "--markdown"],
        capture_output=True, text=True, check=True, cwd=repo_root,
    )  # fmt: skip
    assert proc.stdout == opset.markdown()


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda x: x + torch.rand(x.shape), "etrt does not run aten::rand: draws random numbers"),
        (lambda x: torch.nonzero(x), "etrt does not run aten::nonzero: its result's shape"),
        (
            lambda x: nn.functional.conv2d(x.to(torch.int64), torch.ones(1, 1, 1, 1).long()),
            "etrt does not run aten::convolution: its kernel computes float32 only",
        ),
        (
            lambda x: nn.functional.conv3d(x[None], torch.ones(1, 1, 1, 1, 1)),
            "etrt does not run aten::convolution: 3-D convolution",
        ),
        (lambda x: x.half() * 2, "dtype torch.float16"),
    ],
    ids=["random", "data-dependent-shape", "int-convolution", "conv3d", "float16"],
)
def test_refusals_are_export_errors_with_a_reason(fn: object, message: str) -> None:
    class Model(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return fn(x)  # type: ignore[operator,no-any-return]

    with pytest.raises(etrt.ExportError, match=message.replace("(", r"\(").replace(".", r"\.")):
        etrt.export(Model(), (torch.randn(1, 1, 4, 4),))

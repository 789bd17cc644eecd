"""The core ATen opset, read from the installed torch: every op has an etrt kernel, is rewritten
by torch.export into ops that have one, or is refused at export with a reason; the kernel
library registers exactly what the exporter claims, and docs/operators.md is the table
`python -m etrt ops --markdown` prints today, whatever the process imported first."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import etrt
import models
import numpy as np
import pytest
import runtime_build
import torch
from etrt import _ops, opset
from torch import nn


def test_every_core_op_has_a_kernel_or_a_refusal() -> None:
    core = opset.core_ops()
    assert len(core) > 150  # the opset, not an empty read
    unclaimed = [
        n for n in core
        if not _ops.is_supported(n) and _ops.refusal(n) is None and _ops.decomposition(n) is None
    ]  # fmt: skip
    assert not unclaimed, f"core ops with neither a kernel nor a refusal: {unclaimed}"
    assert not set(_ops.REFUSED_OPS) & _ops.SUPPORTED_OPS
    assert not set(_ops.DECOMPOSED_OPS) & (_ops.SUPPORTED_OPS | set(_ops.REFUSED_OPS))
    assert all(reason.strip() for reason in _ops.REFUSED_OPS.values())


_CORE_OPS_SCRIPT = """
import sys
from etrt import opset
before = opset.core_ops()
opset.core_ops.cache_clear()
if sys.argv[1] == "op_db":
    from torch.testing._internal.common_methods_invocations import op_db  # looks up many ops
    assert len(op_db) > 100
print("\\n".join(opset.core_ops()))
assert before == opset.core_ops(), "the opset changed while the process ran"
"""


def test_core_opset_does_not_depend_on_what_was_imported_first() -> None:
    listings = {}
    for first in ("fresh", "op_db"):
        proc = subprocess.run(
            [sys.executable, "-c", _CORE_OPS_SCRIPT, first],
            capture_output=True, text=True, check=True, timeout=600,
        )  # fmt: skip
        listings[first] = proc.stdout.split()
    assert listings["fresh"] == listings["op_db"]
    # ops torch only looks up lazily are in both
    for name in ("aten::avg_pool1d", "aten::adaptive_avg_pool1d", "aten::resize_"):
        assert name in listings["fresh"]


def _atan2_out(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    torch.atan2(x, y, out=out)
    return out


def _batch_norm_training(x: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    mean, var = mean.clone(), var.clone()  # updated in place: the program's own copies
    out = torch.ops.aten._native_batch_norm_legit(x, None, None, mean, var, True, 0.1, 1e-5)[0]
    return out + mean.sum() + var.sum()


def _resize(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.resize_(5)
    return y * 2


# A use of each op of _ops.DECOMPOSED_OPS, and the op it must become.
DECOMPOSED_USES: dict[str, tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...], str]] = {
    "aten::atan2.out": (_atan2_out, (torch.randn(3, 4), torch.randn(3, 4)), "aten::atan2"),
    "aten::avg_pool1d": (
        lambda x: nn.functional.avg_pool1d(x, 3, 2, 1),
        (torch.randn(2, 3, 9),),
        "aten::avg_pool2d",
    ),
    "aten::adaptive_avg_pool1d": (
        lambda x: nn.functional.adaptive_avg_pool1d(x, 4),
        (torch.randn(2, 3, 9),),
        "aten::_adaptive_avg_pool2d",
    ),
    "aten::resize_": (_resize, (torch.randn(2, 3),), "aten::as_strided"),
    "aten::_fft_r2c": (lambda x: torch.fft.rfft(x).abs(), (torch.randn(3, 16),), "aten::mm"),
    "aten::_fft_c2r": (
        lambda x: torch.fft.irfft(torch.view_as_complex(x), n=10),
        (torch.randn(3, 6, 2),),
        "aten::mm",
    ),
    "aten::_native_batch_norm_legit": (
        _batch_norm_training,
        (torch.randn(4, 3, 5), torch.randn(3), torch.rand(3)),
        "aten::_native_batch_norm_legit_functional",
    ),
}


@pytest.mark.parametrize("name", sorted(DECOMPOSED_USES))
def test_decomposed_core_ops_become_ops_with_kernels(name: str, tmp_path: Path) -> None:
    assert set(DECOMPOSED_USES) == set(_ops.DECOMPOSED_OPS)
    fn, inputs, becomes = DECOMPOSED_USES[name]
    run = runtime_build.tool_runner("release").run_exported(tmp_path, models.Fn(fn), inputs)
    operators = run.program.operator_names
    assert name not in operators and becomes in operators, operators
    np.testing.assert_allclose(run.got[0], run.expected[0], rtol=1e-5, atol=1e-5)


# Ops outside the core set that torch.export keeps and etrt decomposes with torch's (or its own)
# decompositions (exporter.EXTRA_DECOMPOSITIONS), each as models use it.
KEPT_OPS_USES: dict[str, tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...], str]] = {
    "normalize": (
        lambda x: nn.functional.normalize(x, dim=-1),
        (torch.randn(2, 5, 16),),
        "aten::linalg_vector_norm",
    ),
    "cosine_similarity": (
        lambda a, b: nn.functional.cosine_similarity(a, b, dim=-1),
        (torch.randn(2, 5, 16), torch.randn(2, 5, 16)),
        "aten::linalg_vector_norm",
    ),
    "norm_p1_keepdim": (
        lambda x: torch.norm(x, p=1, dim=1, keepdim=True),
        (torch.randn(6, 16),),
        "aten::linalg_vector_norm",
    ),
    "vector_norm_inf": (
        lambda x: torch.linalg.vector_norm(x, ord=float("inf"), dim=(0, 2)),
        (torch.randn(3, 4, 5),),
        "aten::linalg_vector_norm",
    ),
    "var_mean": (
        lambda x: torch.var_mean(x, 1, correction=0)[0] + torch.var_mean(x, 1)[1],
        (torch.randn(6, 16),),
        "aten::var_mean.correction",
    ),
    "std_mean_all": (
        lambda x: torch.std_mean(x)[0] * torch.std_mean(x, (0, 1), keepdim=True)[1],
        (torch.randn(2, 3, 4),),
        "aten::std_mean.correction",
    ),
    "bucketize": (
        lambda x, b: torch.bucketize(x, b),
        (torch.randn(4, 5), torch.linspace(-2, 2, 9)),
        "aten::bucketize.Tensor",
    ),
    "cross": (
        lambda a, b: torch.linalg.cross(a, b, dim=0),
        (torch.randn(3, 4), torch.randn(3, 4)),
        "aten::linalg_cross",
    ),
    # Values, and the input gathered at the indices (which of equal values is unspecified);
    # a row holding NaN gives NaN.
    "median_dim": (
        lambda x: torch.median(x, 1).values + x.gather(1, torch.median(x, 1, True).indices)[:, 0],
        (torch.tensor([[1.0, float("nan"), 3.0], [2.0, 2.0, 1.0], [4.0, 0.0, -1.0]]),),
        "aten::median.dim",
    ),
    "median_all": (lambda x: torch.median(x), (torch.randn(4, 5),), "aten::median"),
    "kthvalue": (
        lambda x: (
            torch.kthvalue(x, 2, 0).values * x.gather(0, torch.kthvalue(x, 2, 0, True).indices)
        ),
        (torch.tensor([[3.0, 1.0], [2.0, 5.0], [2.0, 0.0]]),),
        "aten::kthvalue",
    ),
    "adaptive_max_pool2d": (
        lambda x: nn.functional.adaptive_max_pool2d(x, (5, 3)),
        (torch.randn(2, 3, 10, 12),),
        "aten::adaptive_max_pool2d",
    ),
}


@pytest.mark.parametrize("name", sorted(KEPT_OPS_USES))
def test_kept_ops_with_decompositions_export_and_match_eager(name: str, tmp_path: Path) -> None:
    fn, inputs, kept = KEPT_OPS_USES[name]
    run = runtime_build.tool_runner("release").run_exported(tmp_path, models.Fn(fn), inputs)
    assert kept not in run.program.operator_names
    np.testing.assert_allclose(run.got[0], run.expected[0], rtol=1e-5, atol=1e-5)


class _Unfold(nn.Module):
    """Tensor.unfold as timm's HaloNet uses it (overlapping blocks along H, then W, of a padded
    NCHW map), over a permuted input, with step > size (gaps), and on integers."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, ...]:
        halo = nn.functional.pad(x, [1, 1, 1, 1]).unfold(2, 4, 2).unfold(3, 4, 2)
        return (
            halo.reshape(2, 3, -1, 16),
            x.transpose(1, 3).unfold(1, 3, 1) * 2,
            x.unfold(-1, 2, 3),
            n.unfold(0, 3, 2),
        )


def test_unfold_has_a_kernel_and_matches_eager(tmp_path: Path) -> None:
    """aten::unfold stays in torch.export's graphs (not core ATen, no decomposition): timm's
    HaloNet was refused with 'no etrt kernel for aten::unfold'."""
    inputs = (torch.randn(2, 3, 6, 8), torch.arange(7))
    run = runtime_build.tool_runner("release").run_exported(tmp_path, _Unfold(), inputs)
    assert "aten::unfold" in run.program.operator_names
    for got, want in zip(run.got, run.expected, strict=True):
        np.testing.assert_array_equal(got, want)


class _Item(nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, ...]:
        scale = x[0, 0].item()  # a float
        shift = n[1].item()  # an int
        # arithmetic on an item() (torch gives it a symbol) runs as a symbolic-size kernel
        return x * scale + shift, torch.full((2,), scale), n.sum() + shift * 2


def test_item_values_feed_later_ops(tmp_path: Path) -> None:
    inputs = (torch.randn(3, 4), torch.tensor([5, -7]))
    run = runtime_build.tool_runner("release").run_exported(tmp_path, _Item(), inputs)
    assert "aten::_local_scalar_dense" in run.program.operator_names
    assert "etrt_prim::mul" in run.program.operator_names
    for got, want in zip(run.got, run.expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


class _BatchNormTraining(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.randn(3)), nn.Parameter(torch.randn(3))

    def forward(self, x: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> object:
        return torch.ops.aten._native_batch_norm_legit_functional(
            x, self.weight, self.bias, mean, var, True, 0.1, 1e-5
        )


def test_batch_norm_in_training_mode_gives_batch_statistics_and_their_updates(
    tmp_path: Path,
) -> None:
    inputs = (torch.randn(4, 3, 2, 5) * 3 + 1, torch.randn(3), torch.rand(3) + 0.5)
    run = runtime_build.tool_runner("release").run_exported(tmp_path, _BatchNormTraining(), inputs)
    assert len(run.got) == 5
    for got, want in zip(run.got, run.expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


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
        (
            lambda x: torch.fft.rfft(x).angle(),
            "etrt does not run aten::angle on complex values",
        ),
        (lambda x: torch.nonzero(x), "etrt does not run aten::nonzero: its result's shape"),
        (
            lambda x: nn.functional.conv2d(x.to(torch.int64), torch.ones(1, 1, 1, 1).long()),
            "etrt does not run aten::convolution: its kernel computes floating-point types only",
        ),
        (
            lambda x: nn.functional.conv_transpose3d(x[None], torch.ones(1, 1, 1, 1, 1)),
            "etrt does not run aten::convolution: 3-D transposed convolution",
        ),
        (lambda x: x.double() * 2, "dtype torch.float64"),
    ],
    ids=["complex", "data-dependent-shape", "int-convolution", "conv-transpose3d", "float64"],
)
def test_refusals_are_export_errors_with_a_reason(fn: object, message: str) -> None:
    class Model(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return fn(x)  # type: ignore[operator,no-any-return]

    with pytest.raises(etrt.ExportError, match=message.replace("(", r"\(").replace(".", r"\.")):
        etrt.export(Model(), (torch.randn(1, 1, 4, 4),))

"""Weights stored in the layout their kernels read: a linear layer's transposed weight is kept
transposed in the program (no permute runs), while a weight something else reads too (tied
embeddings) or one in a named data map stays as it was. Every variant matches eager."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import runtime_build
import torch
from torch import nn


class _Tied(nn.Module):
    """An embedding whose table is also the output projection (GPT-2's lm_head)."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.fc = nn.Linear(16, 16)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc(self.emb(ids)))
        return h @ self.emb.weight.t()


def test_linear_weights_are_stored_transposed(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)).eval()
    run = runtime_build.tool_runner("release").run_exported(tmp_path, model, (torch.randn(5, 32),))
    ops = run.program.info.instruction_ops
    assert "aten::permute" not in ops and ops.count("aten::addmm") == 2, ops
    weights = sorted(v.sizes for _, v in run.program.info.constant_tensors() if len(v.sizes) == 2)
    assert weights == [(32, 64), (64, 8)]  # [in, out]: W^T, contiguous
    np.testing.assert_allclose(run.got[0], run.expected[0], rtol=1e-5, atol=1e-6)


def test_a_weight_read_twice_keeps_its_layout(tmp_path: Path) -> None:
    torch.manual_seed(0)
    ids = torch.randint(0, 50, (2, 7))
    run = runtime_build.tool_runner("release").run_exported(tmp_path, _Tied().eval(), (ids,))
    ops = run.program.info.instruction_ops
    assert ops.count("aten::permute") == 1, ops  # the tied table's; fc's weight was folded
    assert (50, 16) in [v.sizes for _, v in run.program.info.constant_tensors()]
    np.testing.assert_allclose(run.got[0], run.expected[0], rtol=1e-5, atol=1e-5)


def test_external_weights_keep_their_layout(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Linear(12, 4).eval()
    runner = runtime_build.tool_runner("release")
    run = runner.run_exported(tmp_path, model, (torch.randn(3, 12),), external_constants=True)
    assert "aten::permute" in run.program.info.instruction_ops  # the .ptd holds W as torch has it
    np.testing.assert_allclose(run.got[0], run.expected[0], rtol=1e-5, atol=1e-6)

"""The tanh GELU written out by hand (transformers' NewGELU and FastGELU, GPT-2's gelu_new, other
groupings) exports as one aten::gelu(approximate="tanh") call and matches eager; a chain whose
intermediate something else reads stays as written (python/etrt/fuse_gelu.py)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import etrt
import etrt.runtime
import models
import numpy as np
import torch
import torch.nn.functional as F
from etrt.ir import KernelCall, StringValue
from transformers.activations import FastGELUActivation, NewGELUActivation

C = math.sqrt(2.0 / math.pi)

# Written-out forms that must fold, each on its own slice of the input.
FOLDED: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "NewGELU": NewGELUActivation(),
    "FastGELU": FastGELUActivation(),
    "cube as products, 10 digits": lambda x: (
        x * 0.5 * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    ),
    "regrouped": lambda x: 0.5 * (x * (torch.tanh((x * (0.044715 * x) * x + x) * C) + 1.0)),
}


def _tanh_returned(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    t = torch.tanh(C * (x + 0.044715 * torch.pow(x, 3.0)))
    return 0.5 * x * (1.0 + t), t


def _half_x_read_again(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = 0.5 * x
    return h * (1.0 + torch.tanh(C * (x + 0.044715 * torch.pow(x, 3.0)))), h + 1.0


def _not_gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(C * (x + 0.04 * torch.pow(x, 3.0))))  # not 0.044715


def _module(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    parts = x.unbind(0)
    folded = tuple(fn(p) for fn, p in zip(FOLDED.values(), parts, strict=False))
    rest = parts[len(FOLDED) :]
    return (*folded, *_tanh_returned(rest[0]), *_half_x_read_again(rest[1]), _not_gelu(rest[2]))


def test_written_out_tanh_gelu_becomes_one_call(inprocess_runtime: Path, tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(len(FOLDED) + 3, 3, 1037, generator=gen) * 4
    x[:, 0, :8] = torch.tensor([0.0, -0.0, 1e-6, -1e-6, 12.0, -12.0, 1e30, -1e30])
    program = etrt.export(models.Fn(_module), (x,))
    plan = program.info.plan
    calls = [i for i in plan.instructions if isinstance(i, KernelCall)]
    ops = Counter(plan.operators[i.op_index] for i in calls)
    gelus = [i for i in calls if plan.operators[i.op_index] == "aten::gelu"]
    assert len(gelus) == len(FOLDED), ops
    assert all(plan.values[g.args[1]] == StringValue("tanh") for g in gelus)
    # The three chains left alone keep their tanh (and their pow: none of them folds partly).
    assert ops["aten::tanh"] == 3 and ops["aten::pow.Tensor_Scalar"] == 3, ops
    path = program.save(tmp_path / "m.etrt")
    with etrt.runtime.load(path) as loaded:
        got = loaded.forward(x)
    want = _module(x)
    assert len(got) == len(want)
    names = [*FOLDED, "gelu with tanh returned", "its tanh", "gelu with 0.5x read again", "0.5x+1"]
    for name, g, w in zip([*names, "not gelu"], got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=2e-6, atol=1e-6, err_msg=name)
    for i, name in enumerate(FOLDED):  # and the folded ones give torch's own tanh GELU
        ref = F.gelu(x[i], approximate="tanh").numpy()
        np.testing.assert_allclose(np.asarray(got[i]), ref, rtol=2e-6, atol=1e-6, err_msg=name)

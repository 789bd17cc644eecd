"""Ops that draw random numbers (aten::rand, randn, randperm, randint, uniform, normal, ...):
their distributions are torch's, a seed gives the same draws again (whatever the thread count),
and successive calls draw new numbers. The values themselves differ from torch's generator."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import etrt
import etrt.runtime
import models
import numpy as np
import pytest
import torch

N = 200_000  # draws per distribution check: 5-sigma bounds below are a few 0.1%



def _load(tmp_path: Path, fn: Callable[..., object], x: torch.Tensor) -> etrt.runtime.Module:
    program = etrt.export(models.Fn(fn), (x,))
    return etrt.runtime.load(program.save(tmp_path / "random.etrt"))


def _five_sigma(sample: np.ndarray, mean: float, var: float) -> None:
    se_mean = np.sqrt(var / sample.size)
    assert abs(sample.mean() - mean) < 5 * se_mean, (sample.mean(), mean)
    assert abs(sample.var() - var) < 0.02 * var, (sample.var(), var)


DISTRIBUTIONS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], float, float]] = {
    # name: (draw, mean, variance)
    "rand": (lambda x: torch.rand(N), 0.5, 1 / 12),
    "randn": (lambda x: torch.randn(N), 0.0, 1.0),
    "rand_like": (lambda x: torch.rand_like(x), 0.5, 1 / 12),
    "randn_like": (lambda x: torch.randn_like(x) * 2 + 1, 1.0, 4.0),
    "uniform": (lambda x: torch.empty(N).uniform_(-2.0, 4.0), 1.0, 3.0),
    "normal": (lambda x: torch.normal(x + 3.0, 0.5), 3.0, 0.25),
    "exponential": (lambda x: torch.empty(N).exponential_(2.0), 0.5, 0.25),
    "randint": (lambda x: torch.randint(-5, 5, (N,)).float(), -0.5, (10**2 - 1) / 12),
    "rand_float16": (lambda x: torch.rand(N, dtype=torch.float16).float(), 0.5, 1 / 12),
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_draws_follow_torchs_distribution(
    name: str, inprocess_runtime: Path, tmp_path: Path
) -> None:
    fn, mean, var = DISTRIBUTIONS[name]
    x = torch.zeros(N)
    with _load(tmp_path, fn, x) as module:
        (got,) = module.forward(x)
    assert got.shape == (N,)
    _five_sigma(got.astype(np.float64), mean, var)
    if name in ("rand", "rand_like", "rand_float16"):
        assert got.min() >= 0.0 and got.max() < 1.0
    if name == "randint":
        assert set(np.unique(got)) == set(range(-5, 5))
    if name == "exponential":
        assert got.min() > 0.0


def test_randperm_is_a_permutation(inprocess_runtime: Path, tmp_path: Path) -> None:
    x = torch.zeros(1)
    with _load(
        tmp_path, lambda x: (torch.randperm(1000), torch.randperm(7, dtype=torch.int32)), x
    ) as m:
        first, small = m.forward(x)
        second, _ = m.forward(x)
    assert first.dtype == np.int64 and small.dtype == np.int32
    assert sorted(first) == list(range(1000)) and sorted(small) == list(range(7))
    assert not np.array_equal(first, second)
    assert not np.array_equal(first, np.arange(1000))


def test_a_seed_gives_the_same_draws_and_each_call_new_ones(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    x = torch.zeros(4, 5)
    with _load(tmp_path, lambda x: (torch.randn_like(x), torch.randint(0, 100, (6,))), x) as m:
        etrt.runtime.set_random_seed(7)
        a = m.forward(x)
        b = m.forward(x)
        etrt.runtime.set_random_seed(7)
        again = m.forward(x)
        etrt.runtime.set_random_seed(8)
        other = m.forward(x)
    for i in range(2):
        np.testing.assert_array_equal(a[i], again[i])
        assert not np.array_equal(a[i], b[i])
        assert not np.array_equal(a[i], other[i])


_DRAW_SCRIPT = """
import sys
import etrt.runtime
import numpy as np
etrt.runtime.set_random_seed(3)
with etrt.runtime.load(sys.argv[1]) as m:
    (out,) = m.forward(np.zeros(1, np.float32))
sys.stdout.write(out.tobytes().hex())
"""


def test_draws_do_not_depend_on_the_thread_count(inprocess_runtime: Path, tmp_path: Path) -> None:
    path = etrt.export(models.Fn(lambda x: torch.randn(300_000) + x), (torch.zeros(1),)).save(
        tmp_path / "r.etrt"
    )
    draws = {}
    for threads in ("1", "2"):
        env = {"ETRT_NUM_THREADS": threads, "ETRT_LIBRARY_DIR": str(inprocess_runtime)}
        proc = subprocess.run(
            [sys.executable, "-c", _DRAW_SCRIPT, str(path)],
            capture_output=True, text=True, check=True, env={**os.environ, **env},
        )  # fmt: skip
        draws[threads] = proc.stdout
    assert draws["1"] == draws["2"] and len(draws["1"]) == 300_000 * 8


def _base_env() -> dict[str, str]:
    import os

    return dict(os.environ)

"""ETRT_WINOGRAD=off: 3x3 convolutions leave Winograd F(4x4, 3x3) for the direct kernels and
round as eager's do; the default takes Winograd; a mistyped value is a warning naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import etrt
import numpy as np
import pytest
import torch

_RUN = """
import sys
import numpy as np
import etrt.runtime
with etrt.runtime.load(sys.argv[1]) as m:
    (got,) = m.forward(np.load(sys.argv[2]))
np.save(sys.argv[3], got)
"""


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """A 128-channel 3x3 layer at 28x28 (49 output tiles: Winograd's shape) and its exact output."""
    out = tmp_path_factory.mktemp("winograd")
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(128, 128, 3, padding=1).eval()
    x = torch.randn(1, 128, 28, 28)
    etrt.export(conv, (x,)).save(out / "conv.etrt")
    np.save(out / "in.npy", x.numpy())
    with torch.no_grad():
        exact = conv.double()(x.double()).numpy()
    return out, exact


def _relative_error(
    runtime: Path, out: Path, exact: np.ndarray, value: str | None
) -> tuple[float, str]:
    env = dict(os.environ, ETRT_LIBRARY_DIR=str(runtime))
    env.pop("ETRT_WINOGRAD", None)
    if value is not None:
        env["ETRT_WINOGRAD"] = value
    files = [str(out / "conv.etrt"), str(out / "in.npy"), str(out / "out.npy")]
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *files],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = np.load(out / "out.npy")
    return float(np.abs(got - exact).max() / np.abs(exact).max()), proc.stderr


def test_winograd_off_rounds_like_a_direct_sum(
    inprocess_runtime: Path, layer: tuple[Path, np.ndarray]
) -> None:
    out, exact = layer
    default, _ = _relative_error(inprocess_runtime, out, exact, None)
    off, stderr = _relative_error(inprocess_runtime, out, exact, "off")
    print(f"largest error of the largest output: Winograd {default:.2e}, off {off:.2e}")
    assert off < 1e-6 and "ETRT_WINOGRAD" not in stderr
    assert default > 3 * off  # Winograd's rounding (about 7x), not the direct kernel's


def test_a_mistyped_winograd_value_is_a_warning(
    inprocess_runtime: Path, layer: tuple[Path, np.ndarray]
) -> None:
    out, exact = layer
    err, stderr = _relative_error(inprocess_runtime, out, exact, "no")
    assert "ignoring ETRT_WINOGRAD='no': expected 'on' or 'off'" in stderr
    assert err < 1e-4

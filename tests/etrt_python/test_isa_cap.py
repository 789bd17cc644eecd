"""ETRT_MAX_ISA and etrt.set_max_isa: models run with the kernels capped at AVX2 and at the
x86-64 baseline match eager, the cap is reported, and a mistyped value is a one-line error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import etrt
import etrt.runtime
import models
import numpy as np
import pytest
import torch
from etrt_fixtures import smallest_memory_budget

LEVELS = {"sse2": 0, "avx2": 1, "avx512": 2}
# A conv net, a MobileNet-style block (depthwise, hardswish, pooling), a residual block whose
# convolutions carry their additions and clamps (igemm, Winograd, depthwise, 1x1: each kernel's
# epilogue) and a transformer block (layer norm, attention, softmax, GELU): every family of
# dispatched loops.
MODELS = ("cnn", "mobile", "resblock", "transformer")

_RUN_SCRIPT = """
import json, sys
from pathlib import Path
import numpy as np
import etrt.runtime
out_dir = Path(sys.argv[1])
for name in sys.argv[2:]:
    with etrt.runtime.load(str(out_dir / f"{name}.etrt")) as m:
        (got,) = m.forward(np.load(out_dir / f"{name}.in.npy"))
    np.save(out_dir / f"{name}.out.npy", got)
info = etrt.runtime.isa_info()
print(json.dumps({"cpu": info.cpu, "cap": info.cap, "kernels": info.kernels}))
"""


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    """The programs saved beside their inputs, and eager's outputs."""
    out = tmp_path_factory.mktemp("isa_cap")
    expected: dict[str, np.ndarray] = {}
    for name in MODELS:
        model, inputs = models.make(name, 2)
        etrt.export(model, inputs).save(out / f"{name}.etrt")
        np.save(out / f"{name}.in.npy", inputs[0].numpy())
        with torch.no_grad():
            expected[name] = model(*inputs).numpy()
    return out, expected


def _env(runtime: Path, cap: str) -> dict[str, str]:
    return dict(os.environ, ETRT_LIBRARY_DIR=str(runtime), ETRT_MAX_ISA=cap)


@pytest.mark.parametrize("cap", ["avx512", "avx2", "sse2"])
def test_models_match_eager_under_each_cap(
    inprocess_runtime: Path, saved_models: tuple[Path, dict[str, np.ndarray]], cap: str
) -> None:
    out, expected = saved_models
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_SCRIPT, str(out), *MODELS],
        env=_env(inprocess_runtime, cap),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    info: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["cap"] == cap
    assert info["kernels"] == min(cap, info["cpu"], key=LEVELS.__getitem__)
    for name in MODELS:
        got = np.load(out / f"{name}.out.npy")
        np.testing.assert_allclose(got, expected[name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_resblock_runs_its_epilogues_inside_the_convolutions(
    saved_models: tuple[Path, dict[str, np.ndarray]],
) -> None:
    """What the caps run above is the fused form: every addition and clamp after a convolution
    went into an etrt_fused::conv2d call (the 1x1 skip layer has none of its own), and so did
    the silu after one (part L)."""
    ops = etrt.load_program_info(saved_models[0] / "resblock.etrt").instruction_ops
    assert ops.count("etrt_fused::conv2d") == 8, ops
    assert ops.count("aten::convolution") == 1 and ops.count("aten::silu") == 0, ops
    assert not {"aten::relu", "aten::add.Tensor", "aten::hardtanh", "aten::clamp"} & set(ops), ops


def test_a_mistyped_cap_is_a_one_line_error(
    inprocess_runtime: Path, saved_models: tuple[Path, dict[str, np.ndarray]]
) -> None:
    out, _ = saved_models
    proc = subprocess.run(
        [sys.executable, "-m", "etrt", "run", str(out / "cnn.etrt")],
        env=_env(inprocess_runtime, "avx3"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert (
        "ETRT_MAX_ISA='avx3' is not an instruction set: expected sse2, avx2 or avx512" in lines[0]
    )


def test_cli_run_names_the_capped_level(
    inprocess_runtime: Path, saved_models: tuple[Path, dict[str, np.ndarray]]
) -> None:
    out, _ = saved_models
    proc = subprocess.run(
        [sys.executable, "-m", "etrt", "run", str(out / "cnn.etrt")],
        env=_env(inprocess_runtime, "sse2"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "kernels dispatch to sse2 (capped at sse2); the CPU has " in proc.stdout, proc.stdout


def test_set_max_isa_replaces_the_cap_and_rejects_unknown_names(inprocess_runtime: Path) -> None:
    before = etrt.isa_info()
    try:
        info = etrt.set_max_isa("sse2")
        assert (info.cap, info.kernels) == ("sse2", "sse2")
        assert etrt.set_max_isa("avx512").kernels == info.cpu  # no cap: the CPU's level
        with pytest.raises(etrt.runtime.EtrtRuntimeError, match="expected sse2, avx2 or avx512"):
            etrt.set_max_isa("neon")
        assert etrt.isa_info().kernels == info.cpu  # a rejected name changes nothing
    finally:
        etrt.set_max_isa(before.cap)


def test_info_says_when_the_cap_is_above_the_cpu() -> None:
    info = etrt.runtime.IsaInfo
    assert str(info("avx512", "avx512", "avx512")) == (
        "kernels dispatch to avx512; the CPU has avx512"
    )
    assert str(info("avx512", "avx2", "avx2")) == (
        "kernels dispatch to avx2 (capped at avx2); the CPU has avx512"
    )
    assert str(info("sse2", "avx2", "sse2")) == (
        "kernels dispatch to sse2 (cap avx2 is above what the CPU has); the CPU has sse2"
    )


class _BlockedConvs(torch.nn.Module):
    """Convolutions whose constant weights the channels-last kernel splits into panels of output
    channels (over 512 KiB, 16+ pixel tiles at every cap), kept packed by the instruction: a 1x1
    512 -> 400 at 14x14 (a narrower last block) and a 3x3 stride-2 128 -> 160 from 28x28 (48-
    channel blocks at AVX-512, 32 below: a stale packing would mix channels); and a 3x3 stride-1
    96 -> 112 at 16x16, which takes Winograd and keeps its transformed weights (1.5 MiB: split
    by output channels between threads where there are several)."""

    def __init__(self) -> None:
        super().__init__()
        self.pointwise = torch.nn.Conv2d(512, 400, 1)
        self.strided = torch.nn.Conv2d(128, 160, 3, stride=2, padding=1)
        self.winograd = torch.nn.Conv2d(96, 112, 3, padding=1)

    def forward(
        self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.pointwise(x), self.strided(y), self.winograd(z)


def test_kept_weight_panels_follow_the_cap(inprocess_runtime: Path, tmp_path: Path) -> None:
    """One loaded program run twice at each cap (the panels and Winograd's transformed weights
    made at the first run, reused by the second) and across caps (made again for the new level):
    every run matches eager, and a run that reuses them equals the one that made them, bit for
    bit. tests/cpp/test_conv_pool checks both against per-call packing, at one and two threads."""
    torch.manual_seed(0)
    model = _BlockedConvs().eval()
    inputs = (torch.randn(1, 512, 14, 14), torch.randn(1, 128, 28, 28), torch.randn(1, 96, 16, 16))
    with torch.no_grad():
        etrt.export(model, inputs).save(tmp_path / "blocked.etrt")
        want = [t.numpy() for t in model(*inputs)]
    arrays = [t.numpy() for t in inputs]
    module = etrt.load(tmp_path / "blocked.etrt")
    before = etrt.isa_info().cap
    try:
        for cap in ("avx512", "avx2", "sse2", "avx512"):
            etrt.set_max_isa(cap)
            first = [np.asarray(t) for t in module.forward(*arrays)]
            again = [np.asarray(t) for t in module.forward(*arrays)]
            for f, a, w in zip(first, again, want, strict=True):
                assert np.array_equal(f, a), cap
                np.testing.assert_allclose(f, w, rtol=1e-4, atol=1e-4, err_msg=cap)
    finally:
        etrt.set_max_isa(before)


def test_winograd_rounds_less_than_at_the_usual_points(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """Winograd F(4x4, 3x3) interpolates at 0, -1, 1, 1/2, -2 (src/kernels/conv_isa.inc): against
    float64, a 128 -> 64 layer at 28x28 and a 256 -> 64 one at 14x14 after a ReLU (98 and 32
    tiles: both take Winograd) stay within 5e-6 of their largest output at every cap (measured
    2.7-3.7e-6). The usual 0, +-1, +-2 gave 6.2-9.7e-6 here, and through Inception-V3 and
    Wide-ResNet-50 at 96x96 1.0-1.5e-4 of eager's logits (now 5-7e-5; eager's own error 3e-5)."""
    torch.manual_seed(0)
    before = etrt.isa_info().cap
    try:
        for cin, size, relu in ((128, 28, False), (256, 14, True)):
            conv = torch.nn.Conv2d(cin, 64, 3, padding=1).eval()
            x = torch.randn(2, cin, size, size, generator=torch.Generator().manual_seed(1))
            x = x.relu() if relu else x
            module = etrt.load(etrt.export(conv, (x,)).save(tmp_path / f"conv{cin}.etrt"))
            with torch.no_grad():
                want = torch.nn.functional.conv2d(
                    x.double(), conv.weight.double(), conv.bias.double(), padding=1
                ).numpy()
            for cap in ("avx512", "avx2", "sse2"):
                etrt.set_max_isa(cap)
                (got,) = module.forward(x.numpy())
                err = float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())
                print(f"{cin} channels at {size}x{size} {cap}: {err:.2e}")
                assert err <= 5e-6, f"{cin} channels at {size}x{size} {cap}: {err:.2e}"
    finally:
        etrt.set_max_isa(before)


def test_kept_weights_give_way_to_scratch_memory_within_a_tight_budget(
    inprocess_runtime: Path, tmp_path: Path
) -> None:
    """The panels and Winograd's transformed weights the convolutions keep share the method's
    budget with every call's scratch memory: at the smallest budget the program runs in at all
    and a little above it, runs repeated still succeed with the output of an unbounded run (kept
    blocks are refused or dropped for the scratch memory, and that call packs or transforms its
    weights itself)."""
    torch.manual_seed(0)
    model = _BlockedConvs().eval()
    inputs = (torch.randn(1, 512, 14, 14), torch.randn(1, 128, 28, 28), torch.randn(1, 96, 16, 16))
    with torch.no_grad():
        etrt.export(model, inputs).save(tmp_path / "blocked.etrt")
    arrays = [t.numpy() for t in inputs]
    want = [np.asarray(t) for t in etrt.load(tmp_path / "blocked.etrt").forward(*arrays)]

    hi = smallest_memory_budget(tmp_path / "blocked.etrt", arrays, 1 << 28)
    for budget in (hi, hi + (hi >> 4), hi + (hi >> 2)):
        module = etrt.load(tmp_path / "blocked.etrt", max_memory_bytes=budget)
        for _ in range(3):
            got = [np.asarray(t) for t in module.forward(*arrays)]
            for g, w in zip(got, want, strict=True):
                assert np.array_equal(g, w), budget

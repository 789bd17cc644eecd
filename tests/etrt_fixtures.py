"""Fixtures shared by the etrt suites (etrt_cpp, etrt_python, consumers). Each of those
folders' conftest.py imports them, so that the etpkg suite never imports etrt or torch."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import etrt
import models
import pytest
import runtime_build
from etpkg_fixtures import REPO_ROOT, env, run_etpkg


@pytest.fixture(scope="session")
def exported_program() -> Callable[[str, int], etrt.Program]:
    """exported_program(name, batch) -> etrt.Program of a tests/models.py model (cached)."""
    cache: dict[tuple[str, int], etrt.Program] = {}

    def get(name: str, batch: int) -> etrt.Program:
        if (name, batch) not in cache:
            model, inputs = models.make(name, batch)
            cache[(name, batch)] = etrt.export(model, inputs)
        return cache[(name, batch)]

    return get


@pytest.fixture(scope="session")
def soak_programs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The soak's programs: an MLP and a transformer block (portable kernels), a CNN through
    the XNNPACK delegate, and a step cache with state and a dynamic sequence length."""
    import torch

    out = tmp_path_factory.mktemp("soak_programs")
    paths = []
    for name, backend in (("mlp", None), ("transformer", None), ("cnn", "xnnpack")):
        model, inputs = models.make(name, 2)
        program = etrt.export(model, inputs, backend=backend)
        if backend is not None:
            assert "delegate:XnnpackBackend" in program.info.instruction_ops
        paths.append(program.save(out / f"{name}_{backend or 'portable'}.etrt"))
    torch.manual_seed(0)
    seq = torch.export.Dim("seq", min=1, max=7)
    step_cache = etrt.export(
        models.StepCache().eval(),
        (torch.randn(3, 4), torch.arange(3)),
        dynamic_shapes=({0: seq}, {0: seq}),
    )
    paths.append(step_cache.save(out / "step_cache.etrt"))
    return paths


@pytest.fixture(scope="module", params=["release", "asan"])
def tool_runner(request: pytest.FixtureRequest) -> runtime_build.ToolRunner:
    """The in-tree etrt_runner, once per build: release, then AddressSanitizer and UBSan."""
    return runtime_build.tool_runner(request.param)


def _etrt_in_cache() -> bool:
    proc = subprocess.run(
        ["conan", "list", "etrt/*:*", "--format=json"],
        env=env(),
        capture_output=True,
        text=True,
        check=False,
    )
    return '"packages"' in proc.stdout


@pytest.fixture(scope="session")
def etrt_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """$ETRT_WHEEL if set, else dist/etrt-*.whl when ci/build.sh made one, else wheelify of the
    etrt package in the Conan cache, which `conan create .` builds first when the cache has none
    (a failure, never a skip)."""
    if os.environ.get("ETRT_WHEEL"):
        return Path(os.environ["ETRT_WHEEL"])
    built = sorted((REPO_ROOT / "dist").glob("etrt-*.whl"))
    if built:
        return built[-1]
    if not _etrt_in_cache():
        proc = subprocess.run(
            ["conan", "create", str(REPO_ROOT), "--build=missing", "-c", "tools.build:jobs=2"],
            env=env(),
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, f"conan create . failed:\n{proc.stderr[-4000:]}"
    dist = tmp_path_factory.mktemp("etrt-dist")
    proc = run_etpkg("wheelify", REPO_ROOT, "-o", dist)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def smallest_memory_budget(program: Path, arrays: Sequence[Any], upper: int) -> int:
    """The smallest max_memory_bytes (within 1/256, or 1 KiB) with which `program` loads and runs
    its forward method on `arrays`; it must fail at 1 byte and run at `upper`."""

    def runs(budget: int) -> bool:
        try:
            etrt.load(program, max_memory_bytes=budget).forward(*arrays)
        except etrt.EtrtError:
            return False
        return True

    lo, hi = 1, upper  # fails at lo, runs at hi
    assert runs(hi) and not runs(lo)
    while hi - lo > max(1024, hi // 256):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if runs(mid) else (mid, hi)
    return hi

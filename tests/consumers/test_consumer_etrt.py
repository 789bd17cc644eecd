"""The consumer suite against the etrt wheel, plus the etrt model checks.

The wheel comes from the `etrt_wheel` fixture (conftest.py).
"""

from __future__ import annotations

import re
import shutil
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import etrt
import numpy as np
import pytest
import torch
from etpkg import testing
from etpkg_fixtures import REPO_ROOT
from models import make
from suites import GATE_CMAKE, REST_CMAKE, gate_subset

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
APP = REPO_ROOT / "tests" / "consumer" / "etrt_app"
EXEMPT = REPO_ROOT / "tests" / "consumer" / "etrt_exempt_headers.txt"
OLD, MODERN = testing.OLD_CMAKE_VERSIONS[0], testing.MODERN[0]
# program, inputs.bin, eager PyTorch's output, the operators the program calls
Mlp = tuple[Path, Path, "np.ndarray[Any, Any]", list[str]]


@dataclass(frozen=True)
class Verified:
    """The etrt wheel installed, and the consumer suite's report on that install."""

    ws: testing.Workspace
    report: testing.Report


def _verify(etrt_wheel: Path, root: Path, versions: tuple[str, ...]) -> Verified:
    ws = testing.prepare(etrt_wheel, root, CMAKE_CACHE)
    start = time.monotonic()
    # Strict: etrt keeps every public header self-contained (the exempt file may be empty).
    report = testing.verify_installed(
        ws,
        cmake_versions=versions,
        exempt_headers=testing.read_exempt(EXEMPT),
        strict_headers=True,
    )
    print(f"\netrt consumer suite {versions}: {time.monotonic() - start:.1f} s", file=sys.stderr)
    return Verified(ws, report)


@pytest.fixture(scope="session")
def etrt_suite(etrt_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Verified:
    return _verify(etrt_wheel, tmp_path_factory.mktemp("etrt-consumers"), GATE_CMAKE)


@pytest.fixture(scope="session")
def etrt_suite_rest(etrt_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Verified:
    """The same suite on the matrix's other CMake versions (long: `ci/long.sh matrix`)."""
    return _verify(etrt_wheel, tmp_path_factory.mktemp("etrt-consumers-rest"), REST_CMAKE)


_MATRIX = [f"targets {v} {g}" for v in testing.CMAKE_VERSIONS for g in testing.GENERATORS]
_VARIABLES = [f"variables {v}" for v in testing.OLD_CMAKE_VERSIONS]
_GATE_MATRIX = [n for n in _MATRIX + _VARIABLES if n.split()[1] in GATE_CMAKE]


@pytest.mark.parametrize(
    "name",
    [
        "SBOM (every file with its SHA-256)",
        "install: python -m <pkg> --cmake-prefix-path",
        "discovery entry points (cmake.root, cmake.prefix, pkg_config)",
        "versions",
        "unknown component",
        "shadow control (DT_RPATH)",
        "each component alone",
        "package-wide target",
        "executables and data",
        "headers",
        "good citizen",
        "pkg-config",
        "relocation (wheel uninstalled)",
        "no python while configuring",
    ],
)
def test_generic_consumer_property(etrt_suite: Verified, name: str) -> None:
    _assert_passed(etrt_suite, name)


@pytest.mark.matrix
@pytest.mark.parametrize("name", gate_subset(_MATRIX + _VARIABLES, _GATE_MATRIX))
def test_consumer_on_each_cmake(request: pytest.FixtureRequest, name: str) -> None:
    gate = name.split()[1] in GATE_CMAKE
    _assert_passed(request.getfixturevalue("etrt_suite" if gate else "etrt_suite_rest"), name)


def _assert_passed(suite: Verified, name: str) -> None:
    matches = [r for r in suite.report.results if r.name == name]
    assert matches and matches[0].ok, matches[0].detail if matches else f"{name} did not run"


@pytest.fixture(scope="session")
def mlp(tmp_path_factory: pytest.TempPathFactory) -> Mlp:
    """The MLP program, its inputs.bin, eager PyTorch's output and the operators it calls."""
    root = tmp_path_factory.mktemp("mlp")
    model, inputs = make("mlp", 4)
    exported = etrt.export(model, inputs)
    program = root / "mlp.etrt"
    exported.save(program)
    in_path = root / "inputs.bin"
    in_path.write_bytes(b"".join(t.detach().numpy().tobytes() for t in inputs))
    with torch.no_grad():
        expected = model(*inputs).numpy()
    return program, in_path, expected, sorted(set(exported.operator_names))


def build_app(suite: Verified, name: str, version: str, generator: str, *args: str) -> Path:
    ws = suite.ws
    tool = ws.tool(version)
    build = ws.root / "etrt-app" / name
    ws.configure(tool, generator, APP, build, *args)
    ws.build(tool, build)
    return build


def run_mlp(suite: Verified, app: Path, mlp: Mlp, out: Path) -> tuple[int, str, float]:
    program, inputs, expected, _ = mlp
    proc = testing.run(
        [app, program, "--inputs", inputs, "--outputs", out],
        env=suite.ws.env(suite.ws.tool(MODERN)),
        check=False,
    )
    if proc.returncode != 0:
        return proc.returncode, proc.stderr, float("inf")
    got = np.fromfile(out, dtype=np.float32).reshape(expected.shape)
    return 0, proc.stderr, float(np.max(np.abs(got - expected)))


def test_runtime_only_app_reports_every_missing_operator(
    etrt_suite: Verified, mlp: Mlp
) -> None:
    build = build_app(etrt_suite, "runtime-only", MODERN, "Ninja", "-DETRT_LINK=runtime")
    rc, err, _ = run_mlp(etrt_suite, build / "app", mlp, build / "out.bin")
    assert rc != 0 and "OperatorMissing" in err
    for op in mlp[3]:
        assert op in err, f"{op} not reported: {err}"


@pytest.mark.parametrize("generator", testing.GENERATORS)
@pytest.mark.parametrize("version", [OLD, MODERN])
def test_kernels_app_matches_eager_and_runs_moved(
    etrt_suite: Verified, mlp: Mlp, version: str, generator: str
) -> None:
    build = build_app(
        etrt_suite,
        f"kernels-{version}-{generator}",
        version,
        generator,
        "-DETRT_LINK=runtime;kernels_optimized",
    )
    rc, err, diff = run_mlp(etrt_suite, build / "app", mlp, build / "out.bin")
    assert rc == 0, err
    assert diff <= 1e-5
    # Installed, moved elsewhere: still runs from its own bin/ + lib/ ($ORIGIN/../lib).
    inst = build / "inst"
    testing.run([etrt_suite.ws.tool(version).cmake, "--install", build, "--prefix", inst])
    moved = build / "moved elsewhere"
    shutil.copytree(inst, moved)
    rc, err, diff = run_mlp(etrt_suite, moved / "bin" / "app", mlp, build / "out2.bin")
    assert rc == 0 and diff <= 1e-5, err


@pytest.mark.matrix
@pytest.mark.parametrize("version", gate_subset(testing.OLD_CMAKE_VERSIONS, [OLD]))
def test_variables_route_runs_the_mlp_with_retention(
    etrt_suite: Verified, mlp: Mlp, version: str
) -> None:
    build = build_app(
        etrt_suite, f"variables-{version}", version, "Ninja", "-DETRT_ROUTE=variables"
    )
    rc, err, diff = run_mlp(etrt_suite, build / "app", mlp, build / "out.bin")
    assert rc == 0 and "OperatorMissing" not in err, err
    assert diff <= 1e-5


def test_the_wheel_carries_etrts_licence_and_the_grafted_libraries_copyrights(
    etrt_wheel: Path,
) -> None:
    """PEP 639: etrt's LICENSE and the licence of XNNPACK, pthreadpool and cpuinfo, which
    auditwheel grafts into etrt.libs, each named by a License-File line: Debian's copyright
    file for Debian's binaries (the default wheel), the source package's LICENSE for those
    built from source (the manylinux_2_28 wheel, ci/build-manylinux_2_28.sh)."""
    with zipfile.ZipFile(etrt_wheel) as zf:
        names = zf.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        listed = re.findall(r"^License-File: (.+)$", zf.read(meta).decode(), re.M | re.I)
        shipped = sorted(n.split("/licenses/", 1)[1] for n in names if "/licenses/" in n)
        licence = zf.read(meta.replace("METADATA", "licenses/LICENSE")).decode()
    assert sorted(listed) == shipped
    assert "LICENSE" in shipped
    for lib in ("xnnpack", "pthreadpool", "cpuinfo"):
        found = {f"lib{lib}0/copyright", f"{lib}/LICENSE"} & set(shipped)
        assert len(found) == 1, (lib, shipped)
    assert "Apache License" in licence and "Version 2.0" in licence

"""The standalone C++ unit tests (tests/cpp/test_*.cpp): built with CMake and Ninja into
build/cpp-tests (and an AddressSanitizer + UBSan twin), then run one program at a time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from runtime_build import SANITIZER_ENV

REPO_ROOT = Path(__file__).resolve().parents[2]
CPP_TESTS = sorted(p.stem for p in (REPO_ROOT / "tests" / "cpp").glob("test_*.cpp"))


def _tool(name: str) -> str:
    """A build tool from PATH or from this interpreter's venv; a missing one fails the test."""
    found = shutil.which(name)
    if found is None:
        candidate = Path(sys.executable).parent / name
        found = str(candidate) if candidate.exists() else None
    assert found is not None, f"{name} not found: run ci/setup.sh to create the venv"
    return found


def _build(name: str, build_type: str, sanitize: str = "") -> Path:
    build_dir = REPO_ROOT / "build" / name
    env = dict(os.environ)
    env["PATH"] = f"{Path(_tool('ninja')).parent}{os.pathsep}{env.get('PATH', '')}"
    if not (build_dir / "build.ninja").exists():
        configure = subprocess.run(
            [
                _tool("cmake"), "-S", str(REPO_ROOT), "-B", str(build_dir), "-G", "Ninja",
                f"-DCMAKE_BUILD_TYPE={build_type}", "-DETRT_BUILD_TESTS=ON",
                f"-DETRT_SANITIZE={sanitize}",
            ],
            env=env, capture_output=True, text=True, check=False,
        )
        assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    build = subprocess.run(
        [_tool("cmake"), "--build", str(build_dir), "--parallel", "2", "--target", *CPP_TESTS],
        env=env, capture_output=True, text=True, check=False,
    )
    assert build.returncode == 0, build.stdout[-6000:] + build.stderr[-3000:]
    return build_dir / "tests" / "cpp"


def _run(program: Path, extra_env: dict[str, str] | None = None) -> None:
    assert program.exists(), f"{program} was not built"
    env = dict(os.environ, **(extra_env or {}))
    proc = subprocess.run(
        [str(program)], env=env, capture_output=True, text=True, timeout=900, check=False
    )
    output = proc.stdout + proc.stderr
    print(output[-2000:])
    assert proc.returncode == 0, f"{program.name} exited with {proc.returncode}:\n{output[-6000:]}"


@pytest.fixture(scope="session")
def cpp_tests() -> Path:
    return _build("cpp-tests", "Release")


@pytest.fixture(scope="session")
def cpp_tests_sanitized() -> Path:
    return _build("cpp-tests-asan", "RelWithDebInfo", "address,undefined")


def test_cpp_unit_tests_exist() -> None:
    assert "test_kernels_light" in CPP_TESTS, CPP_TESTS


@pytest.mark.slow
@pytest.mark.parametrize("name", CPP_TESTS)
def test_cpp_unit(cpp_tests: Path, name: str) -> None:
    _run(cpp_tests / name)


@pytest.mark.slow
@pytest.mark.parametrize("name", CPP_TESTS)
def test_cpp_unit_under_sanitizers(cpp_tests_sanitized: Path, name: str) -> None:
    _run(cpp_tests_sanitized / name, SANITIZER_ENV)

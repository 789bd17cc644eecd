"""The standalone C++ unit tests (tests/cpp/test_*.cpp): built with CMake and Ninja in the
release build (build/runtime) and the AddressSanitizer + UBSan one (build/asan) the tool tests
use, then run one program at a time."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from runtime_build import SANITIZER_ENV, asan_build, build_tools

REPO_ROOT = Path(__file__).resolve().parents[2]
CPP_TESTS = sorted(p.stem for p in (REPO_ROOT / "tests" / "cpp").glob("test_*.cpp"))


def _run(program: Path, extra_env: dict[str, str] | None = None) -> str:
    assert program.exists(), f"{program} was not built"
    env = dict(os.environ, **(extra_env or {}))
    proc = subprocess.run(
        [str(program)], env=env, capture_output=True, text=True, timeout=900, check=False
    )
    output = proc.stdout + proc.stderr
    print(output[-2000:])
    assert proc.returncode == 0, f"{program.name} exited with {proc.returncode}:\n{output[-6000:]}"
    return output


@pytest.fixture(scope="session")
def cpp_tests() -> Path:
    return build_tools("runtime", CPP_TESTS).build_dir / "tests" / "cpp"


@pytest.fixture(scope="session")
def cpp_tests_sanitized() -> Path:
    # The same build/asan as the sanitized tool tests: the libraries are built once.
    return asan_build(CPP_TESTS).build_dir / "tests" / "cpp"


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


# The fast kernel tests once more under each cap below AVX-512 (test_gemm forces every level
# itself): the AVX2 and baseline bodies of every dispatched loop run on any machine.
ISA_CAPPED_TESTS = ("test_conv_pool", "test_dynamic", "test_kernels_light")


@pytest.mark.slow
@pytest.mark.parametrize("cap", ["avx2", "sse2"])
@pytest.mark.parametrize("name", ISA_CAPPED_TESTS)
def test_cpp_unit_under_isa_cap(cpp_tests: Path, name: str, cap: str) -> None:
    output = _run(cpp_tests / name, {"ETRT_MAX_ISA": cap})
    assert f"0 failures (kernels: {cap})" in output, output[-2000:]

"""The kernels that hold instruction-set code compile for aarch64 too (their portable path,
isa_generic), so x86-only code cannot creep in unguarded. A few seconds: a syntax check with
Debian's cross compiler; the aarch64 wheel's long suite runs them (bash ci/long.sh cross)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# A kernel file with per-ISA code: compiled once per instruction set, or x86 intrinsics.
_ISA_CODE = re.compile(r'#include [<"](isa_clones\.inc|\w*intrin\.h)[>"]')


def _isa_files() -> list[Path]:
    return sorted(
        p for p in (REPO / "src" / "kernels").glob("*.cpp") if _ISA_CODE.search(p.read_text())
    )


@pytest.mark.cross
def test_kernels_with_isa_code_compile_for_aarch64() -> None:
    compiler = shutil.which("aarch64-linux-gnu-g++")
    assert compiler, "apt-get install g++-aarch64-linux-gnu (ci/setup.sh installs it)"
    files = _isa_files()
    names = {p.name for p in files}
    assert {"gemm.cpp", "conv_nhwc.cpp", "pool.cpp"} <= names, names
    for path in files:
        proc = subprocess.run(
            [compiler, "-std=c++17", "-O2", "-fsyntax-only", "-Wall", "-Werror",
             "-DETRT_API_VERSION=1", f"-I{REPO / 'include'}", f"-I{REPO / 'src'}", str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, f"{path.name} for aarch64:\n{proc.stderr[-3000:]}"

"""Builds C++ consumers of the etrt Conan package the way a Conan user would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def etrt_version() -> str:
    return (ROOT / "VERSION").read_text().strip()


def run(cmd: list[str | os.PathLike[str]], **kwargs: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, check=False, **kwargs  # type: ignore[call-overload]
    )
    if proc.returncode != 0:
        raise AssertionError(
            f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n"
            f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
        )
    return proc


def build_consumer(source_dir: Path, build_dir: Path) -> Path:
    """conan install + cmake configure/build of a consumer of etrt/<version>; returns build_dir."""
    build_dir.mkdir(parents=True, exist_ok=True)
    # From build_dir: CMakeToolchain adds a CMakeUserPresets.json to the working directory when
    # it holds a CMakeLists.txt, which the repository root does.
    run([
        "conan", "install", f"--requires=etrt/{etrt_version()}",
        "-g", "CMakeDeps", "-g", "CMakeToolchain",
        "--output-folder", build_dir, "-s", "build_type=Release",
    ], cwd=build_dir)
    run([
        "cmake", "-S", source_dir, "-B", build_dir, "-G", "Ninja",
        f"-DCMAKE_TOOLCHAIN_FILE={build_dir / 'conan_toolchain.cmake'}",
        "-DCMAKE_BUILD_TYPE=Release",
    ])
    run(["cmake", "--build", build_dir, "-j2"])
    return build_dir

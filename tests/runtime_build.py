"""Builds the runtime's command-line tools for tests (reused when up to date)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

SANITIZER_ENV = {
    # Huge (malformed) allocations must come back as null, not abort the process.
    "ASAN_OPTIONS": "allocator_may_return_null=1:detect_leaks=1:abort_on_error=0:exitcode=66",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=67",
}


@dataclass(frozen=True)
class Tools:
    build_dir: Path

    @property
    def load_fuzz(self) -> Path:
        return self.build_dir / "tools" / "etrt_load_fuzz"

    @property
    def runner(self) -> Path:
        return self.build_dir / "tools" / "etrt_runner"

    @property
    def selftest(self) -> Path:
        return self.build_dir / "tools" / "etrt_runtime_selftest"


def build_tools(name: str, targets: list[str], sanitize: str = "") -> Tools:
    """Configures build/<name> once and builds `targets` with ninja -j2."""
    build_dir = REPO_ROOT / "build" / name
    if not (build_dir / "build.ninja").exists():
        subprocess.run(
            [
                "cmake",
                "-S",
                str(REPO_ROOT),
                "-B",
                str(build_dir),
                "-G",
                "Ninja",
                "-DETRT_BUILD_TOOLS=ON",
                "-DCMAKE_BUILD_TYPE=" + ("RelWithDebInfo" if sanitize else "Release"),
                f"-DETRT_SANITIZE={sanitize}",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    result = subprocess.run(
        ["ninja", "-C", str(build_dir), "-j2", *targets], capture_output=True, text=True
    )
    assert result.returncode == 0, f"building {targets} failed:\n{result.stdout}\n{result.stderr}"
    return Tools(build_dir)


def sanitizer_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(SANITIZER_ENV)
    return env

"""Builds the libFuzzer targets (tools/fuzz/build.sh, reused when up to date) and replays
inputs through them: each target is also a driver that loads and executes the files it is
given, naming every stage's outcome on stderr (ETRT_FUZZ_VERBOSE)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import prebuild

REPO_ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("program", "data_map", "xnnpack")
FUZZ_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024"
    ":abort_on_error=1:handle_abort=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}


@dataclass(frozen=True)
class Fuzzers:
    build_dir: Path

    def exe(self, target: str) -> Path:
        return self.build_dir / "tools" / "fuzz" / f"etrt_fuzz_{target}"

    def seeds(self, target: str) -> Path:
        return self.build_dir / "seeds" / target

    def replay(self, target: str, files: list[Path]) -> dict[str, list[str]]:
        """Runs `files` through the target once each; returns each file's stage lines
        ("load: ok", "execute: InvalidArgument: ..."). Fails on any crash or report."""
        env = dict(os.environ, ETRT_FUZZ_VERBOSE="1", **FUZZ_ENV)
        proc = subprocess.run(
            [str(self.exe(target)), "-timeout=30", *map(str, files)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=600,
            env=env,
        )
        assert_clean(proc)
        stages: dict[str, list[str]] = {}
        current: list[str] | None = None
        for line in proc.stderr.splitlines():
            if line.startswith("Running: "):
                current = stages.setdefault(Path(line[len("Running: ") :]).name, [])
            elif line.startswith("etrt_fuzz: ") and current is not None:
                current.append(line[len("etrt_fuzz: ") :])
        assert set(stages) == {f.name for f in files}, proc.stderr[-3000:]
        return stages


def assert_clean(proc: subprocess.CompletedProcess[str]) -> None:
    for marker in (
        "ERROR: AddressSanitizer",
        "ERROR: LeakSanitizer",
        "runtime error:",
        "ERROR: libFuzzer",
        "==ERROR",
        "deadly signal",
        "SUMMARY:",
    ):
        assert marker not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-6000:]}"


def build_fuzzers() -> Fuzzers:
    build_dir = REPO_ROOT / "build" / "fuzz"
    prebuild.wait_until_free(build_dir)
    prebuild.wait_until_free(build_dir, ".seeds-lock")  # the seeds have a lock of their own
    proc = subprocess.run(
        ["bash", str(REPO_ROOT / "tools" / "fuzz" / "build.sh"), str(build_dir)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, (
        f"tools/fuzz/build.sh failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return Fuzzers(build_dir)

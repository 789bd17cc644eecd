"""Interrupting a command-line tool while its Python modules are still loading."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


def _module_of(import_time_line: str) -> str:
    return import_time_line.rsplit("|", 1)[-1].strip()


def interrupt_start_up(
    args: list[str], entry_module: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs `python -X importtime *args` and sends SIGINT as soon as the process has imported
    `entry_module` and one module more: the tool's entry point runs, its CLI is still loading.
    Returns the outcome with the import-time report taken out of stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen_entry = False
    report: list[str] = []
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        report.append(line)
        if not line.startswith("import time:"):
            break  # the tool's own output: it got past start-up before the signal
        if seen_entry and _module_of(line) != entry_module:
            proc.send_signal(signal.SIGINT)
            break
        seen_entry = seen_entry or _module_of(line) == entry_module
        assert time.monotonic() < deadline, "the entry module was never imported"
    stdout, rest = proc.communicate(timeout=120)
    lines = report + rest.splitlines(keepends=True)
    stderr = "".join(line for line in lines if not line.startswith("import time:"))
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)

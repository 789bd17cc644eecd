"""Interrupting a command-line tool while its Python modules are still loading."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


def _module_of(import_time_line: str) -> str:
    return import_time_line.rsplit("|", 1)[-1].strip()


# On a loaded machine the tool may finish loading between the line that triggers the signal
# and its delivery; such a run says nothing about start-up, so it is run again.
ATTEMPTS = 8


def interrupt_start_up(
    args: list[str], entry_module: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs `python -X importtime *args` and sends SIGINT as soon as the process has imported
    `entry_module` and one module more: the tool's entry point runs, its CLI is still loading.
    Returns the outcome with the import-time report taken out of stderr: of the first run the
    signal reached before the tool wrote anything, else of the last run."""
    for _ in range(ATTEMPTS):
        proc, late = _interrupt_once(args, entry_module, env, cwd)
        if not late:
            break
    return proc


def _interrupt_once(
    args: list[str], entry_module: str, env: dict[str, str], cwd: Path | None
) -> tuple[subprocess.CompletedProcess[str], bool]:
    """One run; `late` when the tool got past start-up before the signal (it wrote its own
    output, or it exited normally)."""
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
    late = False
    for line in proc.stderr:
        report.append(line)
        if not line.startswith("import time:"):
            late = True  # the tool's own output: it got past start-up before the signal
            break
        if seen_entry and _module_of(line) != entry_module:
            proc.send_signal(signal.SIGINT)
            break
        seen_entry = seen_entry or _module_of(line) == entry_module
        assert time.monotonic() < deadline, "the entry module was never imported"
    stdout, rest = proc.communicate(timeout=120)
    lines = report + rest.splitlines(keepends=True)
    stderr = "".join(line for line in lines if not line.startswith("import time:"))
    late = late or proc.returncode == 0 or stdout != ""
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), late

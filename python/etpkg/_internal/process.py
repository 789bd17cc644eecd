"""Running external programs so that an interrupt leaves nothing behind.

Each tool runs in a process group of its own. When etpkg is interrupted (SIGINT, or SIGTERM
turned into one by the CLI) while a tool runs, the whole group gets SIGINT, so Python tools
(pip, auditwheel), CMake and the build it drives stop and clean up after themselves; whatever
is left after a grace period is killed. Then the interrupt goes on, unwinding etpkg's own
temporary directories.

Each tool also gets a temporary directory of its own (TMPDIR, TMP and TEMP), removed when it
ends: a tool stopped where it cannot clean up (auditwheel between creating its directory and
entering the block that removes it, or killed after the grace period) leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

GRACE_SECONDS = 10.0

# An interrupt that arrives while a tool is being started would escape between fork and the
# point where the tool can be stopped, leaving it running: it is held until then.
_spawning = False
_pending = False


def interrupt_now_or_later() -> None:
    """For an interrupt handler: raises KeyboardInterrupt now, or, while a tool is being
    started, as soon as it has started (so that it is stopped with everything else)."""
    global _pending
    if _spawning:
        _pending = True
        return
    raise KeyboardInterrupt


def run(
    argv: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """subprocess.run(capture_output=True, text=True, check=False), interrupt-safe."""
    global _spawning, _pending
    cmd = [str(a) for a in argv]
    _spawning = True
    scratch = ""
    try:
        scratch = tempfile.mkdtemp(prefix="etpkg-tool-")
        tool_env = dict(os.environ if env is None else env)
        tool_env.update(TMPDIR=scratch, TMP=scratch, TEMP=scratch)
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=tool_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own group: the build it drives can be stopped with it
        )
    except BaseException:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)  # interrupts still held (_spawning)
        _spawning = False
        if _pending:
            _pending = False
            raise KeyboardInterrupt from None
        raise
    try:
        return _wait(proc, cmd, timeout)
    finally:
        _remove_holding_interrupts(scratch)


def _remove_holding_interrupts(scratch: str) -> None:
    """Removes a tool's directory with an interrupt held until it is gone: one raised inside
    rmtree's walk of open directories left it half removed and ended etpkg with OSError (Bad
    file descriptor) instead of the interrupt's status."""
    global _spawning, _pending
    _spawning = True
    try:
        shutil.rmtree(scratch, ignore_errors=True)
    finally:
        _spawning = False
    if _pending:
        _pending = False
        raise KeyboardInterrupt


def _wait(
    proc: subprocess.Popen[str], cmd: list[str], timeout: float | None
) -> subprocess.CompletedProcess[str]:
    global _spawning, _pending
    with proc:
        try:
            _spawning = False  # from here on an interrupt stops the tool
            if _pending:
                _pending = False
                raise KeyboardInterrupt
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.communicate()
            raise
        except BaseException:
            _stop(proc)
            raise
        return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _stop(proc: subprocess.Popen[str]) -> None:
    _signal_group(proc, signal.SIGINT)
    try:
        proc.communicate(timeout=GRACE_SECONDS)
    except BaseException:
        pass
    _signal_group(proc, signal.SIGKILL)  # anything of the group still running
    proc.wait()


def _signal_group(proc: subprocess.Popen[str], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)

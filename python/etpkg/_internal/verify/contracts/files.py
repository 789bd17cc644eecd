"""Executables and data: each executable of the package's bindirs is in <pkg>/bin, named by
an imported target <namespace>::<file> and <NAME>_BIN_DIR, and every shared library it needs
resolves inside the wheel (its DT_RUNPATH is $ORIGIN/../lib); each resdir is in the wheel at
its package-relative path, named by <NAME>_RES_DIRS, and holds its files."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from etpkg._internal.build.elf import is_elf, read_elf
from etpkg._internal.verify.runner import CheckFailed, run

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite


def _resolved(suite: Suite, exe: Path) -> dict[str, Path]:
    """ldd's answer for an executable: library name -> path; a library not found fails."""
    env = suite.ws.env(suite.modern()[0])
    if suite.ws.host is None:
        out = run(["ldd", exe], env=env).stdout
    else:  # ldd's own way, in the emulator: the loader lists what it would load
        out = run([exe], env={**env, "LD_TRACE_LOADED_OBJECTS": "1"}).stdout
    if "not found" in out:
        raise CheckFailed(f"{exe.name}: libraries not found:\n{out}")
    found = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\S+) => (\S+) \(0x[0-9a-f]+\)$", line)
        if match:
            found[match.group(1)] = Path(match.group(2))
    return found


def check(suite: Suite) -> str:
    ws, m = suite.ws, suite.sdk
    if not m.executables and not m.res_dirs:
        return "n/a: the package ships no executable and no data"
    targets = [f"{m.cmake_namespace}::{exe}" for exe in m.executables]
    proc = suite.configure_only("files", "files_probe.cmake.j2", targets=targets)
    seen = dict(re.findall(r"etpkg: exe (\S+)=(.*)", proc.stdout))
    lines = []
    bin_dir = ws.pkg_root / "bin"
    for target, exe in zip(targets, m.executables, strict=True):
        path = bin_dir / exe
        if not path.is_file() or not os.access(path, os.X_OK):
            raise CheckFailed(f"{exe} is not an executable file in {bin_dir}")
        if Path(seen.get(target, "")).resolve() != path.resolve():
            raise CheckFailed(f"{target}: IMPORTED_LOCATION {seen.get(target)!r}, not {path}")
        detail = f"{target} -> bin/{exe}"
        if is_elf(path):
            info = read_elf(path)
            if info.rpath is not None or not info.runpath or info.runpath[0] != "$ORIGIN/../lib":
                raise CheckFailed(f"{exe}: DT_RPATH {info.rpath}, DT_RUNPATH {info.runpath}")
            resolved = _resolved(suite, path)
            inside = {
                n: p
                for n, p in resolved.items()
                if p.resolve().parent in {d.resolve() for d in ws.wheel_lib_dirs}
            }
            detail += f" (loads {sorted(inside)} from the wheel)"
        lines.append(detail)
    bin_var = re.search(r"etpkg: bin=(.*)", proc.stdout)
    if m.executables and (bin_var is None or Path(bin_var.group(1)).resolve() != bin_dir.resolve()):
        raise CheckFailed(f"{m.variable_prefix}_BIN_DIR is {bin_var and bin_var.group(1)!r}")
    res = [Path(r) for r in re.findall(r"etpkg: res=(.*)", proc.stdout)]
    want = [ws.pkg_root / d for d in m.res_dirs]
    if [p.resolve() for p in res] != [p.resolve() for p in want]:
        raise CheckFailed(f"{m.variable_prefix}_RES_DIRS is {res}, expected {want}")
    for d in want:
        files = [p for p in d.rglob("*") if p.is_file()]
        if not files:
            raise CheckFailed(f"res dir {d} holds no file")
        lines.append(f"{d.relative_to(ws.pkg_root)}/: {len(files)} files")
    return "; ".join(lines)

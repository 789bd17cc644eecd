"""SDK wheels depended on (depend.py): installed beside the wheel within its range, each
library it needs reached in that sibling, and none of it grafted into this wheel too (two
copies of one library in a process: two registries)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etpkg._internal.build.elf import is_elf, read_elf
from etpkg._internal.verify.runner import CheckFailed

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite


def _stem(file_name: str) -> str:
    """libfmt.so.9, libfmt.so, libfmt-1a2b3c4d.so.9 (auditwheel's copy) -> libfmt."""
    return re.sub(r"(-[0-9a-f]{8})?\.so(\..*)?$", "", file_name)


def check(suite: Suite) -> str:
    ws, sdk = suite.ws, suite.sdk
    if not sdk.wheel_requires:
        return "depends on no SDK wheel"
    shipped = [p for d in (ws.lib_dir, ws.grafted_dir) if d.is_dir() for p in d.iterdir()]
    problems: list[str] = []
    for req in sdk.wheel_requires:
        stems = {_stem(n) for pair in req.sonames for n in pair}
        twice = sorted(p.name for p in shipped if _stem(p.name) in stems)
        if twice:
            problems.append(
                f"{req.name} is depended on ({req.requirement}) and grafted too: {twice}"
            )
        sibling = ws.site / req.import_name
        config = sibling / "lib" / "cmake" / req.cmake_file_name
        if not config.is_dir():
            problems.append(
                f"{req.requirement} installed no {req.import_name}/lib/cmake/"
                f"{req.cmake_file_name} beside the wheel"
            )
        for _, file_name in req.sonames:
            if not (sibling / "lib" / file_name).is_file():
                problems.append(f"{req.requirement} ships no {req.import_name}/lib/{file_name}")
    own = [p for p in sorted(ws.lib_dir.iterdir()) if p.is_file() and is_elf(p)]
    wanted = {f"$ORIGIN/../../{r.import_name}/lib" for r in sdk.wheel_requires}
    needs = {b: r for r in sdk.wheel_requires for _, b in r.sonames}
    for lib in own:
        info = read_elf(lib)
        if any(n in needs for n in info.needed) and not wanted & set(info.runpath or ()):
            problems.append(
                f"{lib.name} needs {sorted(set(info.needed) & set(needs))} but its "
                f"DT_RUNPATH {info.runpath} names no sibling wheel's lib dir"
            )
    if problems:
        raise CheckFailed("; ".join(problems))
    names = ", ".join(r.requirement for r in sdk.wheel_requires)
    return f"{names} installed beside it, reached by RUNPATH, nothing of it grafted"

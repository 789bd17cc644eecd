"""Entry points and the installed package's CLI: the cmake.root, cmake.prefix and pkg_config
entry points import in a venv holding only the wheel and lead to the config and the .pc files
(scikit-build-core and pkgconf-pypi resolve an entry point by importing its module and taking
its directory); `python -m <pkg> --cmake-prefix-path` prints the prefix consumers use."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from etpkg._internal.plan.cmake import config_file_name
from etpkg._internal.plan.pkgconfig import pkg_config_modules
from etpkg._internal.verify.runner import CheckFailed, run
from etpkg._internal.verify.tools import MODERN
from etpkg._internal.verify.workspace import Workspace

ENTRY_POINT_GROUPS = ("cmake.root", "cmake.prefix", "pkg_config")


@dataclass(frozen=True)
class EntryPoint:
    group: str
    name: str
    value: str  # the module it names
    directory: Path | None  # None: the module did not import
    error: str | None


def resolve(ws: Workspace) -> list[EntryPoint]:
    """The installed wheel's discovery entry points, loaded as the tools load them."""
    script = (
        resources.files("etpkg._internal.verify") / "templates" / "resolve_entry_points.py"
    ).read_text(encoding="utf-8")
    py = ws.venv / "bin" / "python"
    argv: list[str | Path] = [py, "-c", script, ws.sdk.distribution, *ENTRY_POINT_GROUPS]
    proc = run(argv, env=ws.env(ws.tool(MODERN[0])))
    return [
        EntryPoint(
            e["group"], e["name"], e["value"], Path(e["dir"]) if e["dir"] else None, e["error"]
        )
        for e in json.loads(proc.stdout)
    ]


def check(ws: Workspace) -> str:
    """Each group is registered, imports without extra packages, and leads to the SDK files."""
    m = ws.sdk
    eps = resolve(ws)
    missing = [g for g in ENTRY_POINT_GROUPS if not any(e.group == g for e in eps)]
    if missing:
        raise CheckFailed(f"the wheel registers no {missing} entry point")
    broken = [f"{e.group} {e.name} = {e.value}: {e.error}" for e in eps if e.directory is None]
    if broken:
        raise CheckFailed(
            "entry points whose module does not import in a venv holding only the wheel "
            "(scikit-build-core and pkgconf import it): " + "; ".join(broken)
        )
    config = Path("lib") / "cmake" / m.cmake_file_name / config_file_name(m.cmake_file_name)
    lines = []
    for e in eps:
        assert e.directory is not None
        if e.group == "cmake.root" and e.name != m.cmake_file_name:
            raise CheckFailed(
                f"cmake.root entry point {e.name!r}: scikit-build-core sets {e.name}_ROOT, but "
                f"find_package needs {m.cmake_file_name}_ROOT"
            )
        if e.group.startswith("cmake.") and not (e.directory / config).is_file():
            raise CheckFailed(f"{e.group} {e.name} -> {e.directory}, which has no {config}")
        if e.group == "pkg_config":
            pcs = {p.stem for p in e.directory.glob("*.pc")}
            missing = sorted(set(pkg_config_modules(m)) - pcs)
            if missing:
                raise CheckFailed(
                    f"pkg_config {e.name} -> {e.directory}, which lacks {missing} (.pc)"
                )
        if e.directory.resolve() != ws.pkg_root.resolve() and e.group.startswith("cmake."):
            raise CheckFailed(f"{e.group} {e.name} -> {e.directory}, not {ws.pkg_root}")
        lines.append(f"{e.group} {e.name} -> {e.directory.relative_to(ws.site)}")
    return "; ".join(lines)


def check_prefix_cli(ws: Workspace) -> str:
    """`python -m <pkg> --cmake-prefix-path` prints the prefix the consumers used."""
    py = ws.venv / "bin" / "python"
    # The consumer's environment: no PYTHONPATH that could shadow the installed package.
    env = ws.env(ws.tool(MODERN[0]))
    out = run([py, "-m", ws.sdk.import_name, "--cmake-prefix-path"], env=env).stdout.strip()
    if Path(out).resolve() != ws.pkg_root.resolve():
        raise CheckFailed(f"--cmake-prefix-path printed {out!r}, expected {ws.pkg_root}")
    return out

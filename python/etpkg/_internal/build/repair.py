"""auditwheel: choose the platform tag from its own analysis, repair, then undo its DT_RPATH,
and read back what it grafted (which library became which file, and where it came from)."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from etpkg._internal.build.elf import is_elf, read_elf
from etpkg._internal.build.tools import auditwheel, patchelf
from etpkg._internal.errors import ToolError
from etpkg._internal.tags import manylinux_platform

log = logging.getLogger(__name__)

# auditwheel names a grafted copy after the file it copied: <base>-<8 hex digits of its
# sha256>.<rest of the file name> (libbz2.so.1.0.4 -> libbz2-1a2b3c4d.so.1.0.4), and makes that
# the copy's SONAME.
_GRAFTED = re.compile(r"(?P<base>.+)-[0-9a-f]{8}(?P<ext>\..+)")


@dataclass(frozen=True)
class Analysis:
    platform: str  # the manylinux tag auditwheel finds the wheel meets
    external: dict[str, Path]  # SONAME -> real path of each library it would graft (JSON: same)


def analyze(
    wheel: Path, ld_paths: tuple[Path, ...] = (), machine: str | None = None
) -> Analysis:
    """auditwheel show --json: the platform (see tags.py) and the external libraries;
    `machine`: the wheel's arch (auditwheel's policies are those of the machine it runs on)."""
    text = auditwheel("show", "--json", wheel, ld_paths=ld_paths, machine=machine)
    tag = manylinux_platform(text, wheel.name)
    try:
        libs = json.loads(text).get("external_libs") or {}
        external = {str(soname): Path(path) for soname, path in libs.items() if path}
    except (ValueError, AttributeError) as exc:
        raise ToolError(f"auditwheel show --json: unexpected external_libs ({exc})") from exc
    log.info("auditwheel: %s; external %s", tag, sorted(external))
    return Analysis(tag, external)


def repair(
    wheel: Path,
    platform: str,
    out_dir: Path,
    ld_paths: tuple[Path, ...] = (),
    exclude: tuple[str, ...] = (),
    machine: str | None = None,
) -> Path:
    """auditwheel repair --only-plat into out_dir; returns the repaired wheel. `exclude`:
    SONAMEs never grafted (the libraries of SDK wheels depended on); `machine`: the wheel's
    arch."""
    excludes = [arg for soname in exclude for arg in ("--exclude", soname)]
    auditwheel(
        "repair",
        "--plat",
        platform,
        "--only-plat",
        *excludes,
        "-w",
        out_dir,
        wheel,
        ld_paths=ld_paths,
        machine=machine,
    )
    wheels = sorted(out_dir.glob("*.whl"))
    if len(wheels) != 1:
        raise ToolError(f"auditwheel repair wrote {len(wheels)} wheels into {out_dir}, expected 1")
    return wheels[0]


def keep_runpaths(root: Path, wanted: dict[str, str]) -> None:
    """Puts back planned DT_RUNPATH entries (wheel path -> runpath) that repair dropped:
    auditwheel keeps only entries naming directories inside the wheel, and a sibling
    wheel's lib dir is not."""
    for rel, runpath in wanted.items():
        path = root / rel
        info = read_elf(path)
        have = list(info.runpath or info.rpath or ())
        missing = [e for e in runpath.split(":") if e not in have]
        if missing:
            patchelf("--set-rpath", ":".join([*have, *missing]), path)


def restore_runpaths(root: Path) -> list[Path]:
    """auditwheel writes DT_RPATH (--force-rpath); rewrite each as DT_RUNPATH, same value."""
    changed: list[Path] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        if not is_elf(path):
            continue
        info = read_elf(path)
        if info.rpath is None:
            continue
        value = ":".join(info.rpath)
        if info.runpath is not None:
            value = ":".join(dict.fromkeys([*info.rpath, *info.runpath]))
        patchelf("--set-rpath", value, path)  # no --force-rpath: DT_RUNPATH
        log.debug("%s: DT_RPATH -> DT_RUNPATH %s", path.relative_to(root), value)
        changed.append(path)
    return changed


def grafts(root: Path, libs_dir: str, external: dict[str, Path]) -> dict[str, str]:
    """Original SONAME -> wheel-relative path of each copy auditwheel grafted into libs_dir;
    `external` is its analysis before repair (SONAME -> the file it copies)."""
    by_file = {path.name: soname for soname, path in external.items()}
    found: dict[str, str] = {}
    directory = root / libs_dir
    if not directory.is_dir():
        return found
    for path in sorted(directory.iterdir()):
        if not (path.is_file() and is_elf(path)):
            continue
        match = _GRAFTED.fullmatch(path.name)
        original = match.group("base") + match.group("ext") if match else path.name
        soname = by_file.get(original, original)
        if soname not in external:
            raise ToolError(f"auditwheel grafted {path.name}, which its analysis did not name")
        found[soname] = f"{libs_dir}/{path.name}"
    return found

"""What the operating system's packages hold (Debian's dpkg): the headers of a Conan system
package's -dev packages, the copyright file of a library auditwheel grafts, and each package's
version and architecture (for the SBOM).

A Conan "system" package (a wrapper recipe whose system_requirements() installs Debian
packages) has nothing in its package folder: its headers and its licence are those of the
Debian packages it names, and a library taken from /usr/lib belongs to the Debian package that
`dpkg -S` names. Without dpkg (not a Debian system), nothing can be found and the caller says
which dependency cannot be shipped.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

from etpkg._internal import process

INCLUDE_ROOT = Path("/usr/include")
DOC_ROOT = Path("/usr/share/doc")
OS_RELEASE = Path("/etc/os-release")


def dpkg_available() -> bool:
    return shutil.which("dpkg-query") is not None


@functools.cache
def package_files(package: str) -> tuple[Path, ...]:
    """Every path the installed Debian package holds; () when it is not installed."""
    if not dpkg_available():
        return ()
    proc = process.run(["dpkg-query", "-L", package])
    if proc.returncode != 0:
        return ()
    return tuple(Path(line) for line in proc.stdout.splitlines() if line.startswith("/"))


def headers(package: str) -> list[tuple[str, Path]]:
    """(include path, file) of each header the package installs under /usr/include; a
    multiarch dir (/usr/include/x86_64-linux-gnu/) is searched by compilers like
    /usr/include, so its files are named relative to it."""
    found: dict[str, Path] = {}
    for path in package_files(package):
        if not path.is_relative_to(INCLUDE_ROOT) or not path.is_file():
            continue
        rel = path.relative_to(INCLUDE_ROOT)
        if len(rel.parts) > 1 and rel.parts[0].endswith("-linux-gnu"):
            rel = Path(*rel.parts[1:])
        found.setdefault(rel.as_posix(), path)
    return sorted(found.items())


def _variants(path: Path) -> list[Path]:
    """The path as dpkg may have recorded it: Debian 12 merged /lib into /usr/lib, and dpkg
    still knows many libraries by their /lib name (or by a symlink's name)."""
    out = [path, path.resolve()]
    for p in list(out):
        text = p.as_posix()
        for merged, old in (("/usr/lib/", "/lib/"), ("/usr/lib64/", "/lib64/")):
            if text.startswith(merged):
                out.append(Path(old + text[len(merged) :]))
            elif text.startswith(old):
                out.append(Path(merged + text[len(old) :]))
    return list(dict.fromkeys(out))


@functools.cache
def owner(path: Path) -> str | None:
    """The Debian package that installed this file, or None."""
    if not dpkg_available():
        return None
    for candidate in _variants(path):
        proc = process.run(["dpkg-query", "-S", candidate.as_posix()])
        if proc.returncode == 0 and ":" in proc.stdout:
            return proc.stdout.split(":", 1)[0].split(",")[0].strip()
    return None


def copyright_file(package: str) -> Path | None:
    """Debian's /usr/share/doc/<package>/copyright (Policy 12.5), or None."""
    path = DOC_ROOT / package.split(":", 1)[0] / "copyright"
    return path.resolve() if path.is_file() else None


@functools.cache
def package_version(package: str) -> tuple[str, str] | None:
    """(version, architecture) of the installed Debian package, or None."""
    if not dpkg_available():
        return None
    proc = process.run(["dpkg-query", "-W", "-f=${Version} ${Architecture}", package])
    parts = proc.stdout.split()
    if proc.returncode != 0 or len(parts) != 2:
        return None
    return parts[0], parts[1]


@functools.cache
def distribution() -> str:
    """The distribution's purl namespace: os-release's ID ("debian", "ubuntu")."""
    try:
        text = OS_RELEASE.read_text(encoding="utf-8")
    except OSError:
        return "debian"
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "ID" and value.strip().strip("\"'"):
            return value.strip().strip("\"'").lower()
    return "debian"

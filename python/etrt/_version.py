"""The package version: the installed distribution's, else the repository's VERSION file.

Read from the wheel's own METADATA beside the package, not through importlib.metadata, which
scans every distribution on sys.path (most of `import etrt`'s time when it was used).
"""

from __future__ import annotations

from pathlib import Path


def _from_dist_info(site: Path) -> str | None:
    for info in sorted(site.glob("etrt-*.dist-info")):
        try:
            with open(info / "METADATA", encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        break  # end of the headers
                    key, _, value = line.partition(":")
                    if key.strip().lower() == "version":  # field names are case-insensitive
                        return value.strip()
        except OSError:
            continue
    return None


def find_version() -> str:
    package = Path(__file__).resolve().parent
    version = _from_dist_info(package.parent)
    if version is not None:
        return version
    try:
        return (package.parents[1] / "VERSION").read_text(encoding="utf-8").strip()
    except OSError:
        return "0+unknown"

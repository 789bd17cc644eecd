"""The package version: the installed distribution's, else the repository's VERSION file."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path


def find_version() -> str:
    try:
        return metadata.version("etrt")
    except metadata.PackageNotFoundError:
        pass
    version_file = Path(__file__).resolve().parents[2] / "VERSION"
    try:
        return version_file.read_text(encoding="utf-8").strip()
    except OSError:
        return "0+unknown"

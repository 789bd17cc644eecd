"""The user's cache directory for what etpkg downloads and may reuse (verify's CMake venvs).

$ETPKG_CACHE_DIR when set, else $XDG_CACHE_HOME/etpkg, else ~/.cache/etpkg (the XDG base
directory rule). Deleting it costs only downloads on the next run."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    if os.environ.get("ETPKG_CACHE_DIR"):
        return Path(os.environ["ETPKG_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "etpkg"


def cmake_cache_dir() -> Path:
    """One venv per CMake version `etpkg verify` builds with."""
    return cache_dir() / "cmake-venvs"

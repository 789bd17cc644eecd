"""Shared pytest fixtures for every suite. Keep this free of etrt and torch: the etpkg suite
must collect without them (etrt's fixtures live in etrt_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT

"""Shared pytest fixtures for every suite. Keep this free of etrt and torch: the etpkg suite
must collect without them (etrt's fixtures live in etrt_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests on the ASan+UBSan runner go last, the order otherwise kept: ci/test.sh builds
    that runner in the background, and it finishes while the release tests run instead of the
    first ASan test waiting for it (240 s of the gate before)."""

    def on_asan(item: pytest.Item) -> bool:
        callspec = getattr(item, "callspec", None)
        return callspec is not None and "asan" in callspec.params.values()

    items.sort(key=on_asan)

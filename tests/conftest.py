"""Shared pytest fixtures. Keep this small: one fixture per shared need."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import etrt
import models
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def exported_program() -> Callable[[str, int], etrt.Program]:
    """exported_program(name, batch) -> etrt.Program of a tests/models.py model (cached)."""
    cache: dict[tuple[str, int], etrt.Program] = {}

    def get(name: str, batch: int) -> etrt.Program:
        if (name, batch) not in cache:
            model, inputs = models.make(name, batch)
            cache[(name, batch)] = etrt.export(model, inputs)
        return cache[(name, batch)]

    return get

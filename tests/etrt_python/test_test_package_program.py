"""test_package runs a checked-in program; it must be what today's exporter writes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_checked_in_test_package_program_is_current() -> None:
    path = ROOT / "test_package" / "make_program.py"
    spec = importlib.util.spec_from_file_location("make_program", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.program_bytes()
    assert (ROOT / "test_package" / "linear_relu.etrt").read_bytes() == expected, (
        "run `python test_package/make_program.py` and commit the result"
    )

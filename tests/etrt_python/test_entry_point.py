"""`python -m etrt` interrupted: one line and exit status 130, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from runtime_build import REPO_ROOT
from start_up import interrupt_start_up


def test_interrupt_during_start_up_is_one_line_and_status_130(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    # A command that would take seconds (torch loads), so the signal always lands first.
    args = ["-m", "etrt", "export", "etrt.examples:mlp", "-o", str(tmp_path / "mlp.etrt")]
    proc = interrupt_start_up(args, "etrt", env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines() == ["error: interrupted by SIGINT"], proc.stderr
    assert proc.returncode == 130
    assert not (tmp_path / "mlp.etrt").exists()

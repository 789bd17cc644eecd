"""tools/model_scan.py as docs/TESTING.md runs it: each model in its own process, one line and
one kind per model, the markdown table, and an exit status that only etrt's failures set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_scan_names_each_kind_of_result(inprocess_runtime: Path, tmp_path: Path) -> None:
    table = tmp_path / "scan.md"
    # flaubert: its position ids reach the lookup as an expanded view; vit_mae masks patches at
    # random; longformer's attention does not pass torch.export
    proc = subprocess.run(
        [sys.executable, ROOT / "tools" / "model_scan.py", "transformers", "flaubert", "vit_mae",
         "longformer", "--markdown", table],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kinds = {line.split()[0]: line.split()[1] for line in proc.stdout.splitlines()[:3]}
    assert kinds == {"flaubert": "OK", "vit_mae": "RANDOM", "longformer": "UNEXPORTABLE"}, (
        proc.stdout
    )
    assert proc.stdout.splitlines()[-1] == "3 models: OK 1, UNEXPORTABLE 1, RANDOM 1"
    rows = table.read_text().splitlines()
    assert rows[2].startswith("| flaubert | OK | max error ") and len(rows) == 7

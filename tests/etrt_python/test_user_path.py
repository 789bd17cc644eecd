"""What a new user meets first: the export command's help and built-in examples, the profile
command without matplotlib, and the cost of `import etrt`. (The same from an installed wheel:
test_python_runtime.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import runtime_build
from etpkg_fixtures import REPO_ROOT


def _etrt(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env or dict(os.environ),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_export_help_states_the_factory_contract(tmp_path: Path) -> None:
    proc = _etrt("-m", "etrt", "export", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "(model, example_inputs)" in text
    assert "etrt.examples:mlp" in text


def test_quick_start_exports_and_runs_the_built_in_example(tmp_path: Path) -> None:
    # An empty directory: nothing from the repository's tests is importable.
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    env["ETRT_LIBRARY_DIR"] = str(runtime_build.build_tools("runtime", ["etrt_runner"]).build_dir)
    for factory in ("mlp", "cnn"):
        out = tmp_path / f"{factory}.etrt"
        proc = _etrt("-m", "etrt", "export", f"etrt.examples:{factory}", "-o", str(out),
                     cwd=tmp_path, env=env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        run = _etrt("-m", "etrt", "run", str(out), cwd=tmp_path, env=env)
        assert run.returncode == 0, run.stderr
        assert re.search(r"output 0: float32 \[1, 10\]", run.stdout), run.stdout


def test_profile_chart_without_matplotlib_is_refused_before_any_work(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    program = tmp_path / "mlp.etrt"
    assert _etrt("-m", "etrt", "export", "etrt.examples:mlp", "-o", str(program),
                 cwd=tmp_path, env=env).returncode == 0  # fmt: skip
    block = (
        "import sys; sys.modules['matplotlib'] = None\n"  # as if it were not installed
        "from etrt.cli import main\n"
        f"sys.exit(main(['profile', {str(program)!r}, '-o', 'x.png']))\n"
    )
    proc = _etrt("-c", block, cwd=tmp_path, env=env)
    assert proc.returncode == 1
    assert "pip install 'etrt[profile]'" in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.etrt"]  # nothing profiled or drawn


def import_cost_ms(python: str, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """The fastest of five `import etrt` (importtime's cumulative microseconds), and one log."""
    best, log = float("inf"), ""
    for _ in range(5):
        proc = subprocess.run(
            [python, "-X", "importtime", "-c", "import etrt"],
            capture_output=True, text=True, env=env, cwd=cwd, check=True,
        )  # fmt: skip
        line = next(ln for ln in proc.stderr.splitlines() if ln.rstrip().endswith("| etrt"))
        best = min(best, int(line.split("|")[1]) / 1e3)
        log = proc.stderr
    return best, log


def test_import_etrt_is_cheap(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    ms, log = import_cost_ms(sys.executable, env, tmp_path)
    for heavy in ("importlib.metadata", "torch", "numpy"):
        assert not re.search(rf"\| +{re.escape(heavy)}$", log, re.M), f"import etrt loads {heavy}"
    assert ms <= 50, f"import etrt took {ms:.1f} ms"

"""`python -m etrt` as a user runs it: the real CLI in a subprocess, from the installed wheel
(tests/wheel_venv.py), outside the repository. Exit codes (2 usage, 1 failure), refusals that
name the operator and the stage, the CLI's own flags in its advice, torch missing, the
decoder example, the data map found beside a program, profile without matplotlib, and progress
on a terminal only."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import wheel_venv
from etpkg_fixtures import run_on_tty

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Cli:
    venv: wheel_venv.Venv
    work: Path

    def __call__(self, *args: str | Path, block: str = "") -> subprocess.CompletedProcess[str]:
        """`python -m etrt ARGS`; with `block`, that Python runs first (e.g. hiding a module)."""
        argv: list[str | Path] = [self.venv.python, "-m", "etrt", *args]
        if block:
            run = f"{block}\nimport runpy; runpy.run_module('etrt', run_name='__main__')"
            argv = [self.venv.python, "-c", run, *args]
        return subprocess.run(
            argv, cwd=self.work, env=self.venv.env(), capture_output=True, text=True,
            timeout=600, check=False,
        )  # fmt: skip

    def on_tty(self, *args: str) -> tuple[int, str]:
        """Runs with stderr on a pseudo-terminal (stdout a pipe); returns (status, stderr)."""
        argv: list[str | Path] = [self.venv.python, "-m", "etrt", *args]
        status, _, seen = run_on_tty(argv, cwd=self.work, env=self.venv.env())
        return status, seen


@pytest.fixture(scope="module")
def cli(etrt_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    root = tmp_path_factory.mktemp("etrt-cli")
    venv = wheel_venv.make_venv(root / "venv")
    wheel_venv.install_wheel(venv, etrt_wheel)
    work = root / "work"
    work.mkdir()
    return Cli(venv, work)


@pytest.fixture(scope="module")
def mlp(cli: Cli) -> Path:
    proc = cli("export", "etrt.examples:mlp", "-o", "mlp.etrt", "--external-constants")
    assert proc.returncode == 0, proc.stderr
    return cli.work / "mlp.etrt"


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stderr.strip()


def test_usage_errors_exit_2_and_failures_exit_1(cli: Cli) -> None:
    pt2_strict = ["export", "m.pt2", "-o", "m.etrt", "--strict"]  # a .pt2 is already exported
    for usage in (["export"], ["--no-such-flag"], ["profile", "x.etrt", "--runs", "0"], [],
                  pt2_strict):  # fmt: skip
        proc = cli(*usage)
        assert proc.returncode == 2, (usage, proc.stderr)
        assert "usage:" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("run", "missing.etrt")
    assert proc.returncode == 1
    assert "missing.etrt" in _one_error_line(proc)


def test_every_command_help_describes_it(cli: Cli) -> None:
    for command in ("export", "run", "ops", "profile"):
        proc = cli(command, "-h")
        assert proc.returncode == 0, proc.stderr
        # After the usage block comes a description, before the argument lists.
        blocks = proc.stdout.split("\n\n")
        assert len(blocks) > 2 and not blocks[1].lstrip().startswith(
            ("positional arguments", "options")
        ), (command, proc.stdout)


def test_refusal_names_the_operator_and_the_stage(cli: Cli) -> None:
    (cli.work / "inverse.py").write_text(
        "import torch\n"
        "class Inverse(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.linalg.inv(x)\n"
        "def make():\n"
        "    return Inverse().eval(), (torch.randn(4, 4),)\n"
    )
    proc = cli("export", "inverse.py:make", "-o", "inverse.etrt")
    assert proc.returncode == 1
    line = _one_error_line(proc)
    assert line.startswith("error: lowering to etrt failed: aten::linalg_inv at inverse.py:4"), line
    assert not (cli.work / "inverse.etrt").exists()


def test_verbose_shows_the_cause_of_a_failure(cli: Cli) -> None:
    (cli.work / "broken.py").write_text("def make():\n    raise RuntimeError('no weights here')\n")
    proc = cli("-v", "export", "broken.py:make", "-o", "broken.etrt")
    assert proc.returncode == 1 and "Traceback" in proc.stderr, proc.stderr
    assert 'broken.py", line 2, in make' in proc.stderr, proc.stderr
    last = proc.stderr.splitlines()[-1]  # still ends with the one line a plain run prints
    assert last.startswith("error: broken.py:make() failed: RuntimeError: no weights here"), last


def test_missing_kernel_advice_names_the_cli_flag(cli: Cli) -> None:
    (cli.work / "sine.py").write_text(
        "import torch\n"
        "@torch.library.custom_op('etrt_cli::sine', mutates_args=())\n"
        "def sine(x: torch.Tensor) -> torch.Tensor:\n"
        "    return torch.sin(x)\n"
        "@sine.register_fake\n"
        "def _(x):\n"
        "    return torch.empty_like(x)\n"
        "class Sine(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.ops.etrt_cli.sine(x)\n"
        "def make():\n"
        "    return Sine(), (torch.randn(2, 8),)\n"
    )
    proc = cli("export", "sine.py:make", "-o", "sine.etrt")
    assert proc.returncode == 1
    line = _one_error_line(proc)
    assert "etrt_cli::sine" in line and "pass --allow-missing-ops" in line, line
    assert "allow_missing_ops=True" not in line


def test_export_without_torch_names_the_extra(cli: Cli) -> None:
    proc = cli("export", "etrt.examples:mlp", "-o", "x.etrt", block="import sys\n"
               "sys.modules['torch'] = None  # as if it were not installed")  # fmt: skip
    assert proc.returncode == 1
    assert "pip install 'etrt[export]'" in _one_error_line(proc)


def test_run_finds_the_data_map_beside_the_program_and_says_so(cli: Cli, mlp: Path) -> None:
    proc = cli("run", mlp)
    assert proc.returncode == 0, proc.stderr
    assert f"using the named data map {mlp.with_suffix('.ptd')}" in proc.stdout, proc.stdout
    assert re.search(r"^output 0: float32 \[1, 10\]", proc.stdout, re.M), proc.stdout
    # Without it, one line naming what is missing.
    moved = mlp.with_name("elsewhere.ptd")
    mlp.with_suffix(".ptd").rename(moved)
    try:
        proc = cli("run", mlp)
        assert proc.returncode == 1
        assert "no named data map" in _one_error_line(proc)
        proc = cli("run", mlp, "--data", moved)
        assert proc.returncode == 0 and "using the named data map" not in proc.stdout
    finally:
        moved.rename(mlp.with_suffix(".ptd"))


def test_profile_without_matplotlib_prints_the_table_and_keeps_the_events(
    cli: Cli, mlp: Path
) -> None:
    hide = "import sys\nsys.modules['matplotlib'] = None  # as if it were not installed"
    dump = cli.work / "nompl.etdump"
    proc = cli("profile", mlp, "--runs", "7", "--etdump", dump, block=hide)
    assert proc.returncode == 0, proc.stderr
    assert "pip install 'etrt[profile]'" in proc.stdout and dump.is_file()
    assert not mlp.with_suffix(".png").exists()
    lines = proc.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("operator"))
    assert header.split() == ["operator", "kind", "calls", "median", "us", "min", "us", "share"]
    rows = {ln.split()[0]: ln.split() for ln in lines if ln.startswith("aten::")}
    assert rows["aten::addmm"][1:3] == ["operator", "2"], rows  # two per run
    for row in rows.values():
        assert float(row[4]) <= float(row[3])  # the fastest run's time is at most the median
    median = re.search(r"median run ([\d.]+) us, fastest ([\d.]+) us", proc.stdout)
    (run,) = [ln.split() for ln in lines if ln.startswith("run ")]
    assert median and run[2:4] == [median.group(1), median.group(2)], (run, proc.stdout)
    # A chart asked for and impossible: refused before any work.
    proc = cli("profile", mlp, "-o", "x.png", "--etdump", "y.etdump", block=hide)
    assert proc.returncode == 1 and "pip install 'etrt[profile]'" in _one_error_line(proc)
    assert not (cli.work / "y.etdump").exists()


def test_progress_shows_on_a_terminal_only(cli: Cli) -> None:
    status, seen = cli.on_tty("export", "etrt.examples:mlp", "-o", "tty.etrt")
    assert status == 0, seen
    for stage in ("tracing with torch.export", "decomposing to core ATen", "lowering to etrt"):
        assert f"etrt export: {stage}..." in seen, seen
    assert seen.endswith("\r\x1b[K"), repr(seen[-80:])  # the line is cleared at the end
    profile = ("profile", "tty.etrt", "--runs", "300", "--etdump", "tty.etdump")
    status, seen = cli.on_tty(*profile)
    assert status == 0, seen
    assert "etrt profile: profiling [########################] 300/300" in seen, repr(seen)
    status, seen = cli.on_tty("-q", *profile)
    assert status == 0 and seen == "", repr(seen)
    # Not a terminal: nothing on stderr.
    proc = cli(*profile)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_decoder_example_exports_with_the_export_options(cli: Cli) -> None:
    """etrt.examples:decoder (its dynamic prompt length runs in the README walk-through's
    examples/decode) through --strict (TorchDynamo) and --no-dynamic-shapes: the example
    inputs' fixed shapes, [1, 5] tokens."""
    args = ("export", "etrt.examples:decoder", "-o", "fixed.etrt", "--strict")
    proc = cli(*args, "--no-dynamic-shapes")
    assert proc.returncode == 0, proc.stderr
    script = (
        "import etrt, numpy as np\n"
        "method = etrt.load('fixed.etrt').method()\n"
        "print(method)\n"
        "(logits,) = method(np.array([[3, 14, 15, 92, 65]]), np.arange(5))\n"
        "print(logits.shape)\n"
    )
    proc = subprocess.run(
        [cli.venv.python, "-c", script], cwd=cli.work, env=cli.venv.env(), capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "<etrt.Method forward(int64[1, 5], int64[5]) -> (float32[1, 5, 96])>",
        "(1, 5, 96)",
    ]

"""The newcomer's walk-through: the README's quick start, its commands and files taken from the
markdown as they are written, run by bash in a fresh venv beside a dist/ holding the built etrt
wheel; then the installed app runs with the wheel's venv gone. A README edit that breaks a
command fails here. Also: docs/python-runtime.md's first block on the program the quick start
made, and the README's release profile against the etrt binary in the Conan cache."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import wheel_venv
from etpkg import testing
from etpkg_fixtures import REPO_ROOT, env, run_etpkg
from packaging.requirements import Requirement

pytestmark = pytest.mark.slow

EXAMPLE = re.compile(r"<!-- (?:readme|docs)-example: (\S+) -->\n```\w*\n(.*?)```", re.S)


def examples(doc: Path) -> dict[str, str]:
    """name -> text of each block the document marks as an example."""
    return dict(EXAMPLE.findall(doc.read_text()))


README = examples(REPO_ROOT / "README.md")


@dataclass(frozen=True)
class Walk:
    root: Path
    venv: wheel_venv.Venv
    export: subprocess.CompletedProcess[str]
    app: subprocess.CompletedProcess[str]


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=900, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def walk(etrt_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walk]:
    root = tmp_path_factory.mktemp("newcomer")
    (root / "dist").mkdir()
    shutil.copy(etrt_wheel, root / "dist" / etrt_wheel.name)
    venv = wheel_venv.make_venv(root / "venv", pip=True)
    for name, text in README.items():
        if name.startswith("quickstart/"):
            path = root / name.removeprefix("quickstart/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    env = venv.env()
    export = _bash(README["quickstart-export"], root, env)
    assert export.returncode == 0, export.stdout[-3000:] + export.stderr[-3000:]
    app = _bash(README["quickstart-app"], root, env)
    assert app.returncode == 0, app.stdout[-3000:] + app.stderr[-3000:]
    yield Walk(root, venv, export, app)


def test_quick_start_installs_the_wheel_with_the_tested_torch_only(walk: Walk) -> None:
    # The extra states the tested series; pip took the torch already there (no index reachable).
    metadata = next(walk.venv.site.glob("etrt-*.dist-info")) / "METADATA"
    requires = [
        Requirement(ln.split(":", 1)[1])
        for ln in metadata.read_text().splitlines()
        if ln.startswith("Requires-Dist:")
    ]
    (torch,) = [r for r in requires if r.name == "torch"]
    assert torch.marker is not None and torch.marker.evaluate({"extra": "export"})
    pinned = re.search(r"^torch==(\S+)", (REPO_ROOT / "requirements.txt").read_text(), re.M)
    assert pinned and torch.specifier.contains(pinned.group(1)), (torch, "the pin is outside")
    for untested in ("2.12.1", "2.14.0", "3.0.0"):
        assert not torch.specifier.contains(untested), torch
    assert not list(walk.venv.site.glob("torch*")), "pip installed a torch of its own"
    assert "Successfully installed etrt-0.1.0" in walk.export.stdout, walk.export.stdout


def test_quick_start_exports_and_runs_the_mlp(walk: Walk) -> None:
    out = walk.export.stdout
    assert re.search(r"^wrote mlp\.etrt \(\d+ bytes", out, re.M), out
    assert re.search(r"^output 0: float32 \[1, 10\]", out, re.M), out


def _numbers(text: str) -> list[float]:
    (line,) = [ln for ln in text.splitlines() if re.fullmatch(r"(\S+ ){10}", ln)]
    return [float(v) for v in line.split()]


def test_quick_start_app_builds_installs_and_runs_without_the_wheel(walk: Walk) -> None:
    built = _numbers(walk.app.stdout.split("-- Install configuration")[0])
    lib = walk.root / "deploy" / "lib"
    installed = sorted(p.name for p in lib.iterdir())
    for name in ("libetrt.so", "libetrt_kernels_optimized.so"):
        assert name in installed, installed
    app = walk.root / "deploy" / "bin" / "app"
    info = testing.read_elf(app)
    assert info.rpath is None and info.runpath is not None, (info.rpath, info.runpath)
    assert not [p for p in info.runpath if p.startswith("/")], info.runpath
    # The wheel's venv gone: the deployed tree stands alone.
    walk.venv.prefix.rename(walk.root / "venv-gone")
    try:
        proc = subprocess.run(
            [app, walk.root / "mlp.etrt"], capture_output=True, text=True, timeout=120,
            env={"PATH": "/usr/bin:/bin"}, check=False,
        )  # fmt: skip
    finally:
        (walk.root / "venv-gone").rename(walk.venv.prefix)
    assert proc.returncode == 0, proc.stderr
    assert _numbers(proc.stdout) == built
    resolved = subprocess.run(["ldd", app], capture_output=True, text=True, check=True).stdout
    assert "deploy/bin/../lib/libetrt.so " in resolved, resolved
    assert "site-packages" not in resolved, resolved


def test_quick_start_profile_prints_the_table_and_keeps_the_events(walk: Walk) -> None:
    out = walk.app.stdout
    header = re.search(r"median run ([\d.]+) us", out)
    row = re.search(r"^run +\d+ +([\d.]+) +([\d.]+) +100%$", out, re.M)
    assert header and row, out
    assert header.group(1) == row.group(1)  # the header's median is the table's
    assert (walk.root / "mlp.etdump").is_file()


def test_readme_decode_example_generates_from_the_wheels_decoder(walk: Walk) -> None:
    """examples/decode on the decoder etrt.examples ships: the README's commands as written."""
    shutil.copytree(REPO_ROOT / "examples" / "decode", walk.root / "examples" / "decode")
    proc = _bash(README["decode"], walk.root, walk.venv.env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    tokens = [ln for ln in proc.stdout.splitlines() if re.fullmatch(r"(\d+ ){15}\d+", ln)]
    assert len(tokens) == 1 and all(int(t) < 96 for t in tokens[0].split()), proc.stdout


def test_python_runtime_doc_runs_on_the_quick_start_program(walk: Walk) -> None:
    block = examples(REPO_ROOT / "docs" / "python-runtime.md")["python-runtime"]
    proc = subprocess.run(
        [walk.venv.python, "-c", block], cwd=walk.root, env=walk.venv.env(),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    promised = [m.group(1).strip() for m in re.finditer(r"^print\(.*?\)\s+# (.*)$", block, re.M)]
    assert proc.stdout.splitlines() == promised


def test_readme_conan_consumer_builds_and_runs_the_quick_start_app(walk: Walk) -> None:
    """The README's conanfile.txt beside the quick start's app.cpp and CMakeLists.txt (its
    install lines dropped, as the README says), built by its commands with the project's Conan
    home (etrt/0.1.0 in the cache, as ci/build.sh leaves it)."""
    app = walk.root / "conan_app"
    app.mkdir()
    (app / "conanfile.txt").write_text(README["conan_app/conanfile.txt"])
    (app / "app.cpp").write_text(README["quickstart/app/app.cpp"])
    cmake = README["quickstart/app/CMakeLists.txt"].splitlines()
    (app / "CMakeLists.txt").write_text("\n".join(ln for ln in cmake if "install" not in ln))
    proc = _bash(README["conan-app"], walk.root, env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert len(_numbers(proc.stdout)) == 10
    assert _numbers(proc.stdout) == _numbers(walk.app.stdout.split("-- Install configuration")[0])


def test_release_profile_picks_the_built_binary(tmp_path: Path) -> None:
    """The README's `release` profile names the binary ci/build.sh made: wheelify -pr takes it."""
    profile = tmp_path / "release"
    profile.write_text(README["release-profile"])
    proc = run_etpkg("wheelify", "etrt/0.1.0", "-pr", profile, "-of", tmp_path / "dist", "-q")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_file()

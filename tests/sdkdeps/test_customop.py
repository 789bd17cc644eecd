"""Proof that SDK wheels can depend on SDK wheels (docs/DEPENDENCIES.md): the custom-operator
SDK of examples/customop, a Conan package linking etrt::runtime, wheelified against the etrt
wheel (dist/, from ci/build.sh). From Python and from a C++ app, a program calling its op runs
with exactly one libetrt.so mapped (the etrt wheel's) and the kernel in that one registry.
Upgrading etrt within the declared range keeps it working; outside it pip refuses (the other
etrt versions are metadata-only variants of the same wheel: the same binary under another
version, which is what pip decides on).

Long (suite `sdkdeps`, ci/long.sh sdkdeps): conan create of the example, a torch export."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from etpkg_fixtures import REPO_ROOT, conan, rewrite_wheel, run_etpkg
from wheel_venv import Venv, make_venv

pytestmark = [pytest.mark.long, pytest.mark.sdkdeps]

HERE = Path(__file__).resolve().parent
EXAMPLE = REPO_ROOT / "examples" / "customop"
REF = "etrt-customop/0.1.0"


def _etrt_wheel() -> Path:
    wheels = sorted((REPO_ROOT / "dist").glob("etrt-0.1.0-*.whl"))
    assert wheels, "no etrt wheel in dist/: run bash ci/build.sh first"
    return wheels[-1]


def _with_version(wheel: Path, out_dir: Path, version: str) -> Path:
    """The same wheel under another version (file name and METADATA)."""
    name = wheel.name.replace("-0.1.0-", f"-{version}-")
    return rewrite_wheel(
        wheel,
        out_dir / name,
        "METADATA",
        lambda data: data.replace(b"\nVersion: 0.1.0\n", f"\nVersion: {version}\n".encode()),
    )


@pytest.fixture(scope="module")
def plugin_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    conan("create", str(EXAMPLE), "--build=missing")
    out = tmp_path_factory.mktemp("plugin")
    proc = run_etpkg("wheelify", REF, "--output-dir", out, "-q")
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


def _pip(venv: Venv, *args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pip", "--python", venv.python, "install", "-q", "--no-index"]
    return subprocess.run([*map(str, argv), *map(str, args)], capture_output=True, text=True)


def _session(venv: Venv, program: Path) -> dict[str, object]:
    proc = subprocess.run(
        [venv.python, HERE / "customop_session.py", program],
        env=venv.env(), capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_plugin_wheel_depends_on_etrt_and_carries_no_runtime(plugin_wheel: Path) -> None:
    with zipfile.ZipFile(plugin_wheel) as zf:
        names = zf.namelist()
        (meta,) = [n for n in names if n.endswith("METADATA")]
        metadata = zf.read(meta).decode()
    assert not [n for n in names if "libetrt.so" in n or ".libs/" in n]
    assert "Requires-Dist: etrt<0.2,>=0.1.0" in metadata


def test_python_and_cpp_share_one_runtime(plugin_wheel: Path, tmp_path: Path) -> None:
    links = tmp_path / "links"
    links.mkdir()
    shutil.copy(_etrt_wheel(), links)
    shutil.copy(plugin_wheel, links)
    venv = make_venv(tmp_path / "venv")
    proc = _pip(venv, "--find-links", links, "etrt-customop")
    assert proc.returncode == 0, proc.stderr
    etrt_lib = str((venv.site / "etrt" / "lib" / "libetrt.so").resolve())

    program = tmp_path / "model.etrt"
    got = _session(venv, program)
    assert got["registered"] is True
    assert got["libetrt"] == [etrt_lib]
    assert float(str(got["max_abs_diff"])) < 1e-5

    prefix = subprocess.run(
        [venv.python, "-m", "etrt_customop", "--cmake-prefix-path"],
        env=venv.env(), capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    build = tmp_path / "build"
    for argv in (
        ["cmake", "-S", HERE / "app", "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"],
        ["cmake", "--build", build],
    ):
        done = subprocess.run(argv, env=venv.env(), capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = subprocess.run([build / "app", program], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "registered 1" in lines
    assert [ln for ln in lines if ln.startswith("libetrt ")] == [f"libetrt {etrt_lib}"]
    # The same numbers as eager PyTorch on the app's input.
    import torch

    sys.path.insert(0, str(EXAMPLE / "python"))
    import etrt_customop

    op = etrt_customop.define_torch_op()
    torch.manual_seed(0)
    linear = torch.nn.Linear(8, 4).eval()
    x = torch.tensor([float(i % 7) - 3.0 for i in range(24)]).reshape(3, 8)
    want = op(linear(x), 0.5).detach().flatten().tolist()
    (out_line,) = [ln for ln in lines if ln.startswith("out ")]
    got_values = [float(v) for v in out_line.split()[1:]]
    assert max(abs(a - b) for a, b in zip(got_values, want, strict=True)) < 1e-5


def test_upgrade_within_range_works_outside_pip_refuses(
    plugin_wheel: Path, tmp_path: Path
) -> None:
    links = tmp_path / "links"
    links.mkdir()
    shutil.copy(plugin_wheel, links)
    _with_version(_etrt_wheel(), links, "0.1.1")
    _with_version(_etrt_wheel(), links, "0.2.0")
    venv = make_venv(tmp_path / "venv")
    proc = _pip(venv, "--find-links", links, "etrt-customop")
    assert proc.returncode == 0, proc.stderr
    got = _session(venv, tmp_path / "model.etrt")
    assert got["registered"] is True and float(str(got["max_abs_diff"])) < 1e-5
    (info,) = venv.site.glob("etrt-*.dist-info")
    installed = (info / "METADATA").read_text()
    assert "\nVersion: 0.1.1\n" in installed  # pip took the newest version in range
    refused = _pip(venv, "--find-links", links, "etrt-customop", "etrt==0.2.0")
    assert refused.returncode != 0
    assert "Cannot install etrt-customop==0.1.0 and etrt==0.2.0" in refused.stderr


def test_etpkg_verify_across_etrt(plugin_wheel: Path) -> None:
    proc = run_etpkg(
        "verify", "--quick", "-q", "--find-links", _etrt_wheel().parent, plugin_wheel
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "PASS  SDK wheels depended on  " in proc.stdout
    assert "etrt>=0.1.0,<0.2 installed beside it" in proc.stdout

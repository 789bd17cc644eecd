"""etrt's release path from end to end, with real servers on 127.0.0.1: the first machine
builds etrt (`conan create .`, the project's Conan cache), wheelifies it and uploads the
package and the recipes its graph needs to a Conan server (conan-server); a second machine, a
Conan home holding nothing but that remote, wheelifies `etrt/<version>` from it and gets the
first machine's wheel byte for byte; `etpkg publish` puts that wheel on a package index
(pypiserver); a fresh venv `pip install etrt`s from that index alone (numpy and flatbuffers
from a local wheel dir, ci/setup.sh's build/wheelhouse), runs a program from Python, and a C++
app built with find_package(etrt) against it runs the same program with nothing set."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import servers
from etpkg_fixtures import REPO_ROOT, env, run_etpkg
from etpkg_fixtures import _has_binary as has_binary
from etpkg_fixtures import checked_run as run

pytestmark = pytest.mark.slow  # real servers, two wheelify runs, a C++ build

WHEELHOUSE = REPO_ROOT / "build" / "wheelhouse"
APP = REPO_ROOT / "tests" / "consumer" / "release_app"
PROGRAM = REPO_ROOT / "test_package" / "linear_relu.etrt"
VERSION = (REPO_ROOT / "VERSION").read_text().strip()
REF = f"etrt/{VERSION}"


@pytest.fixture(scope="module")
def first_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """etrt's wheel made on the first machine, from the project's Conan cache."""
    if not has_binary(REF):
        run(
            ["conan", "create", REPO_ROOT, "--build=missing", "-c", "tools.build:jobs=2"], env=env()
        )
    proc = run_etpkg("wheelify", REF, "-of", tmp_path_factory.mktemp("first-machine"))
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def second_wheel(first_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The wheel the second machine makes from the Conan server alone."""
    root = tmp_path_factory.mktemp("conan")
    with servers.conan_server(root / "server") as server:
        servers.upload(REF, server, root, env())
        home = root / "second-machine"
        machine = servers.other_machine(home, server.url, env())
        creds = servers.credentials_env(servers.REMOTE, servers.USER, servers.PASSWORD)
        dist = root / "dist"
        argv = [sys.executable, "-m", "etpkg", "wheelify", REF, "-r", servers.REMOTE, "-u"]
        proc = subprocess.run(
            [*argv, "-of", str(dist)],
            env={**machine, **creds},
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, proc.stderr
        yield Path(proc.stdout.strip())


def test_second_machine_wheelifies_the_same_wheel_from_the_conan_server(
    first_wheel: Path, second_wheel: Path
) -> None:
    assert second_wheel.name == first_wheel.name
    assert second_wheel.read_bytes() == first_wheel.read_bytes()


@pytest.fixture(scope="module")
def installed(second_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with etrt from the package index (the wheel published there by etpkg
    publish) and its Python dependencies from the local wheel dir; no other index."""
    if not sorted(WHEELHOUSE.glob("numpy-*.whl")):
        pytest.fail(f"{WHEELHOUSE} holds no numpy wheel: run ci/setup.sh (it downloads them)")
    root = tmp_path_factory.mktemp("pypi")
    with servers.package_index(root / "index") as index:
        proc = run_etpkg(
            "publish",
            second_wheel,
            "-r",
            f"{index.url}/",
            "--username",
            servers.USER,
            "--password",
            servers.PASSWORD,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"{second_wheel.name}: uploaded to {index.url}/"
        venv = root / "venv"
        run([sys.executable, "-m", "venv", venv])
        pip = [venv / "bin" / "python", "-m", "pip", "install", "--index-url"]
        pip += [f"{index.url}/simple/", "--find-links", WHEELHOUSE, "etrt"]
        proc = run(pip, env=servers.pip_env(env()), cwd=root)
        assert re.search(r"Successfully installed .*\betrt-" + re.escape(VERSION), proc.stdout)
        yield venv


def test_pip_installs_etrt_from_the_index_and_its_python_side_runs(installed: Path) -> None:
    py = installed / "bin" / "python"
    script = (
        "import numpy as np, etrt\n"
        f"y = etrt.load({str(PROGRAM)!r}).forward(np.arange(4, dtype=np.float32)[None] - 1.5)\n"
        "print(' '.join(f'{v:.6f}' for v in np.asarray(y[0]).ravel()))\n"
    )
    out = run([py, "-c", script], env=_clean_env(), cwd=installed).stdout.split()
    x = [j - 1.5 for j in range(4)]
    expected = [
        max(0.0, 0.01 * i - 0.02 + sum((0.1 * (i + 1) - 0.05 * j) * x[j] for j in range(4)))
        for i in range(3)
    ]
    assert [float(v) for v in out] == pytest.approx(expected, abs=1e-6)


def _clean_env() -> dict[str, str]:
    """A user's shell: no PYTHONPATH into this checkout, no LD_LIBRARY_PATH, no CMake hints."""
    out = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "CMAKE_", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "PIP_"))
    }
    out["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return out


def test_cpp_app_built_with_find_package_against_the_installed_etrt_runs(
    installed: Path, tmp_path: Path
) -> None:
    py = installed / "bin" / "python"
    clean = _clean_env()
    prefix = run([py, "-m", "etrt", "--cmake-prefix-path"], env=clean).stdout.strip()
    assert Path(prefix).resolve().is_relative_to(installed.resolve())
    build = tmp_path / "build"
    run(
        ["cmake", "-S", APP, "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"],
        env=clean,
    )
    run(["cmake", "--build", build], env=clean)
    out = run([build / "app", PROGRAM], env=clean, cwd=tmp_path).stdout
    assert out.strip() == f"etrt {VERSION}: linear_relu.etrt matches (3 outputs)"

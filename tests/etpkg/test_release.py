"""The team's release path on the toysdk fixture, against a real Conan server (conan-server on
127.0.0.1): binaries built on one machine and uploaded; another machine, whose Conan home holds
nothing but the remote, wheelifies from the remote and gets the same wheel, byte for byte. A
remote that refuses the credentials or cannot be reached is one error line and no output."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import servers
from etpkg_fixtures import ensure_toysdk, env

pytestmark = pytest.mark.slow  # real conan-server processes


def etpkg(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "etpkg", *(str(a) for a in args)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def first_machine(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """toysdk built into the project's Conan cache and its wheel made there."""
    ref = ensure_toysdk()
    dist = tmp_path_factory.mktemp("first-dist")
    proc = etpkg("wheelify", ref, "-o", dist, env=env())
    assert proc.returncode == 0, proc.stderr
    return ref, Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def conan_remote(
    tmp_path_factory: pytest.TempPathFactory, first_machine: tuple[str, Path]
) -> Iterator[servers.Server]:
    """A private conan-server holding toysdk and the recipes it requires."""
    root = tmp_path_factory.mktemp("conan-server")
    with servers.conan_server(root / "server") as server:
        servers.upload(first_machine[0], server, root, env())
        yield server


def test_other_machine_wheelifies_from_the_remote_byte_identical(
    first_machine: tuple[str, Path], conan_remote: servers.Server, tmp_path: Path
) -> None:
    ref, first_wheel = first_machine
    home = tmp_path / "home"
    machine = servers.other_machine(home, conan_remote.url, env())
    assert "{}" in servers.conan("list", "*", "--format=json", env=machine).stdout  # empty
    # Without the remote the package is nowhere on this machine.
    alone = etpkg("wheelify", ref, "-o", tmp_path / "none", env=machine)
    assert alone.returncode == 1 and "not in the Conan cache" in alone.stderr, alone.stderr

    creds = servers.credentials_env(servers.REMOTE, servers.USER, servers.PASSWORD)
    dist = tmp_path / "dist"
    proc = etpkg(
        "wheelify", ref, "-r", servers.REMOTE, "--update", "-o", dist, env={**machine, **creds}
    )
    assert proc.returncode == 0, proc.stderr
    wheel = Path(proc.stdout.strip())
    assert wheel.name == first_wheel.name
    assert wheel.read_bytes() == first_wheel.read_bytes()
    # It came from the server: the binary is now in this machine's own cache.
    listed = servers.conan("list", f"{ref}:*", "--format=json", env=machine).stdout
    assert '"packages"' in listed


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("etpkg: error: "), proc.stderr
    return lines[0]


def _nothing_written(home: Path, dist: Path, ref: str, machine: dict[str, str]) -> None:
    assert not dist.exists() or not any(dist.iterdir()), list(dist.iterdir())
    listed = servers.conan("list", f"{ref}:*", "--format=json", env=machine).stdout
    assert '"packages"' not in listed, listed


def test_refused_credentials_are_one_line_and_write_nothing(
    first_machine: tuple[str, Path], conan_remote: servers.Server, tmp_path: Path
) -> None:
    ref = first_machine[0]
    machine = servers.other_machine(tmp_path / "home", conan_remote.url, env())
    dist = tmp_path / "dist"
    wrong = servers.credentials_env(servers.REMOTE, servers.USER, "not-the-password")
    proc = etpkg("wheelify", ref, "-r", servers.REMOTE, "-o", dist, env={**machine, **wrong})
    line = _one_error_line(proc)
    assert f"Conan remote '{servers.REMOTE}' ({conan_remote.url}) rejected the credentials" in line
    _nothing_written(tmp_path / "home", dist, ref, machine)

    # No credentials at all: said so, never a prompt on stdin.
    proc = etpkg("wheelify", ref, "-r", servers.REMOTE, "-o", dist, env=machine)
    assert "needs credentials" in _one_error_line(proc)
    _nothing_written(tmp_path / "home", dist, ref, machine)


def test_unreachable_remote_is_one_line_and_writes_nothing(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    ref = first_machine[0]
    url = f"http://127.0.0.1:{servers.free_port()}"  # nothing listens there
    machine = servers.other_machine(tmp_path / "home", url, env())
    dist = tmp_path / "dist"
    creds = servers.credentials_env(servers.REMOTE, servers.USER, servers.PASSWORD)
    proc = etpkg("wheelify", ref, "-r", servers.REMOTE, "-o", dist, env={**machine, **creds})
    line = _one_error_line(proc)
    assert line == (
        f"etpkg: error: cannot reach Conan remote '{servers.REMOTE}' at {url}: Connection refused"
    )
    _nothing_written(tmp_path / "home", dist, ref, machine)


def test_unknown_remote_and_update_without_remote(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    ref = first_machine[0]
    machine = servers.other_machine(tmp_path / "home", "http://127.0.0.1:1", env())
    proc = etpkg("wheelify", ref, "-r", "nosuch", "-o", tmp_path / "dist", env=machine)
    assert "no Conan remote named 'nosuch'" in _one_error_line(proc)
    proc = etpkg("wheelify", ref, "--update", env=machine)
    assert proc.returncode == 2 and "--update needs --remote" in proc.stderr, proc.stderr
    assert os.environ.get("CONAN_HOME") != machine["CONAN_HOME"]

"""The team's release path on the toysdk fixture, against real servers on 127.0.0.1: binaries
built on one machine and uploaded to a Conan server (conan-server); another machine, whose
Conan home holds nothing but the remote, wheelifies from the remote and gets the same wheel,
byte for byte; `etpkg publish` uploads it to a package index (pypiserver) that pip then serves
it from. A server that refuses the credentials or cannot be reached is one error line, and
nothing is written or uploaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import servers
from etpkg_fixtures import REPO_ROOT, ensure_toysdk, env, rewrite_wheel

pytestmark = pytest.mark.slow  # real conan-server and pypiserver processes

PYTHON = REPO_ROOT / "python"


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


def _set(profile: Path, setting: str, value: str) -> None:
    lines = profile.read_text().splitlines()
    new = [f"{setting}={value}" if ln.startswith(f"{setting}=") else ln for ln in lines]
    assert new != lines, f"{profile} has no {setting}"
    profile.write_text("\n".join(new) + "\n")


def test_other_machine_picks_the_uploaded_binary_with_its_profile(
    first_machine: tuple[str, Path], conan_remote: servers.Server, tmp_path: Path
) -> None:
    """The other machine's default profile differs from the build machine's (Debug, whose
    binary nobody uploaded); -pr names the team's profile, and that binary is the one taken."""
    ref, first_wheel = first_machine
    home = tmp_path / "home"
    machine = servers.other_machine(home, conan_remote.url, env())
    team = home / "profiles" / "team-release"
    team.write_text((home / "profiles" / "default").read_text())
    _set(home / "profiles" / "default", "build_type", "Debug")
    creds = {**machine, **servers.credentials_env(servers.REMOTE, servers.USER, servers.PASSWORD)}
    proc = etpkg("wheelify", ref, "-r", servers.REMOTE, "-of", tmp_path / "none", env=creds)
    line = _one_error_line(proc)
    assert f"has no binary of {ref} for the default profile; upload one built with it" in line
    assert not (tmp_path / "none").exists()

    proc = etpkg(
        "wheelify",
        ref,
        "-r",
        servers.REMOTE,
        "-pr",
        "team-release",
        "-of",
        tmp_path / "dist",
        env=creds,
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).read_bytes() == first_wheel.read_bytes()


def test_a_download_broken_midway_leaves_no_half_written_package(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    """Not transactional, on purpose: what a failed fetch leaves in the Conan cache is what
    `conan install` leaves, the recipes and every binary that arrived whole, never a half
    one; dist/ is untouched, and the next run fetches what is missing."""
    ref = first_machine[0]
    root = tmp_path / "server"
    with servers.conan_server(root) as server:
        servers.upload(ref, server, tmp_path, env())
        (tgz,) = (root / "data" / ref).rglob("conan_package.tgz")
        whole = tgz.read_bytes()
        tgz.write_bytes(whole[: len(whole) // 2])  # the server now sends a truncated binary
        home = tmp_path / "home"
        machine = {
            **servers.other_machine(home, server.url, env()),
            **servers.credentials_env(servers.REMOTE, servers.USER, servers.PASSWORD),
        }
        dist = tmp_path / "dist"
        proc = etpkg("wheelify", ref, "-r", servers.REMOTE, "-of", dist, env=machine)
        line = _one_error_line(proc)
        assert f"cannot fetch {ref} from Conan remote '{servers.REMOTE}'" in line
        assert "Error while extracting downloaded file" in line
        _nothing_written(home, dist, ref, machine)
        assert len(_binaries("bzip2/system", machine)) == 1  # the dependency, whole

        tgz.write_bytes(whole)
        proc = etpkg("wheelify", ref, "-r", servers.REMOTE, "-of", dist, env=machine)
        assert proc.returncode == 0, proc.stderr
        assert Path(proc.stdout.strip()).read_bytes() == first_machine[1].read_bytes()


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("etpkg: error: "), proc.stderr
    return lines[0]


def _binaries(ref: str, machine: dict[str, str]) -> list[str]:
    """The package ids of ref in the machine's Conan cache."""
    listed = json.loads(servers.conan("list", f"{ref}:*", "--format=json", env=machine).stdout)
    recipes = listed.get("Local Cache", {}).values()
    return [
        pkg
        for recipe in recipes
        if isinstance(recipe, dict)
        for revision in recipe.get("revisions", {}).values()
        for pkg in revision.get("packages", {})
    ]


def _nothing_written(home: Path, dist: Path, ref: str, machine: dict[str, str]) -> None:
    assert not dist.exists() or not any(dist.iterdir()), list(dist.iterdir())
    assert _binaries(ref, machine) == []


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


# --- etpkg publish against a real package index (pypiserver on 127.0.0.1) ---------------


def publish(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return etpkg("publish", *args, env=env or {**os.environ, "PYTHONPATH": str(PYTHON)})


CREDS = ("--username", servers.USER, "--password", servers.PASSWORD)


def index_files(index: servers.Server) -> dict[str, bytes]:
    packages = Path(index.log).parent / "packages"
    return {p.name: p.read_bytes() for p in packages.iterdir() if p.is_file()}


def test_publish_uploads_the_wheel_that_pip_then_downloads(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    wheel = first_machine[1]
    with servers.package_index(tmp_path / "index") as index:
        proc = publish(wheel, "-r", f"{index.url}/", *CREDS)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert proc.stdout.strip() == f"{wheel.name}: uploaded to {index.url}/"
        assert index_files(index) == {wheel.name: wheel.read_bytes()}
        # What pip gets from the index is that very file.
        got = tmp_path / "got"
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", got]
        pip += ["--index-url", f"{index.url}/simple/", "toysdk==0.3.1"]
        fetched = subprocess.run(
            pip, env=servers.pip_env(env()), capture_output=True, text=True, check=False
        )
        assert fetched.returncode == 0, fetched.stderr
        assert (got / wheel.name).read_bytes() == wheel.read_bytes()
        # Publishing again (a re-run CI job) finds the same file there and skips it.
        again = publish(wheel, "-r", f"{index.url}/", env=env_with_twine_credentials())
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip() == f"{wheel.name}: already on {index.url}/ (the same file)"


def env_with_twine_credentials() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(PYTHON),
        "TWINE_USERNAME": servers.USER,
        "TWINE_PASSWORD": servers.PASSWORD,
    }


def test_publish_refuses_a_different_file_under_a_published_name(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    ref, wheel = first_machine
    later = dict(env(), SOURCE_DATE_EPOCH="1767312000")  # same package, other timestamps
    proc = etpkg("wheelify", ref, "-of", tmp_path / "later", env=later)
    assert proc.returncode == 0, proc.stderr
    other = Path(proc.stdout.strip())
    assert other.name == wheel.name and other.read_bytes() != wheel.read_bytes()
    with servers.package_index(tmp_path / "index") as index:
        assert publish(wheel, "-r", f"{index.url}/", *CREDS).returncode == 0
        line = _one_error_line(publish(other, "-r", f"{index.url}/", *CREDS))
        assert f"package index {index.url}/ already has a different {wheel.name}" in line
        assert index_files(index) == {wheel.name: wheel.read_bytes()}  # unchanged


def test_publish_with_refused_or_no_credentials_is_one_line_and_uploads_nothing(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    wheel = first_machine[1]
    with servers.package_index(tmp_path / "index") as index:
        url = f"{index.url}/"
        proc = publish(
            wheel, "-r", url, "--username", servers.USER, "--password", "not-the-password"
        )
        assert _one_error_line(proc) == (
            f"etpkg: error: package index {url} refused the credentials of user "
            f"'{servers.USER}' (HTTP 403 Forbidden): check those given with "
            "--username/--password, "
            "TWINE_USERNAME/TWINE_PASSWORD or ~/.pypirc; nothing was uploaded"
        )
        proc = publish(wheel, "-r", url)  # never a prompt on stdin
        assert "needs credentials: give them with --username/--password" in _one_error_line(proc)
        assert index_files(index) == {}


def test_publish_to_an_unreachable_index_is_one_line(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{servers.free_port()}/"  # nothing listens there
    proc = publish(first_machine[1], "-r", url, *CREDS)
    assert _one_error_line(proc) == (
        f"etpkg: error: cannot reach package index {url}: Connection refused; nothing was uploaded"
    )


def test_publish_refuses_wheels_etpkg_did_not_make_or_that_changed_before_uploading_any(
    first_machine: tuple[str, Path], tmp_path: Path
) -> None:
    wheel = first_machine[1]
    foreign = rewrite_wheel(
        wheel,
        tmp_path / "foreign" / wheel.name,
        ".dist-info/WHEEL",
        lambda data: data.replace(b"Generator: etpkg ", b"Generator: bdist_wheel "),
    )
    patched = rewrite_wheel(  # RECORD in line, so only the SBOM knows the library was changed
        wheel, tmp_path / "patched" / wheel.name, "lib/libtoysdk_core.so", lambda d: d + b"\0"
    )
    with servers.package_index(tmp_path / "index") as index:
        url = f"{index.url}/"
        line = _one_error_line(publish(foreign, "-r", url, *CREDS))
        assert line.startswith(f"etpkg: error: not publishing {wheel.name}: its WHEEL names")
        # The good wheel first, the changed one second: neither goes up.
        line = _one_error_line(publish(wheel, patched, "-r", url, *CREDS))
        assert f"not publishing {wheel.name}: toysdk/lib/libtoysdk_core.so: the SBOM's" in line
        line = _one_error_line(publish(tmp_path / "none.whl", "-r", url, *CREDS))
        assert line == f"etpkg: error: {tmp_path / 'none.whl'}: no such wheel file"
        assert index_files(index) == {}

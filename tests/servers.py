"""Real servers for the release-path tests: a Conan server (conan-server) and a Python package
index (pypiserver), each on 127.0.0.1 at a free port with its own temporary storage.

They run from .venv-servers (tests/servers-requirements.txt, made by ci/setup.sh): the
conan-server wheel bundles its own copy of Conan, which must not replace the project's.
A server that cannot start fails the test (never a skip). Each server stops at the end of its
`with` block, dies with the process that started it (PR_SET_PDEATHSIG) and, whatever happens,
exits by itself after LIFETIME seconds (SIGALRM).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from etpkg_fixtures import REPO_ROOT

SERVERS_VENV = REPO_ROOT / ".venv-servers"
SERVERS_PYTHON = SERVERS_VENV / "bin" / "python"
LIFETIME = 900  # seconds; far beyond any test that uses a server
START_TIMEOUT = 60.0

USER = "releaser"
PASSWORD = "s3cret-release"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _servers_python() -> Path:
    if not SERVERS_PYTHON.is_file():
        pytest.fail(
            f"{SERVERS_VENV} is missing: run ci/setup.sh (it installs "
            "tests/servers-requirements.txt there)"
        )
    return SERVERS_PYTHON


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@contextlib.contextmanager
def _serve(argv: list[str], log: Path, probe_url: str, url: str) -> Iterator[Server]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
        )
    server = Server(url, proc, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"server at {url} exited with {proc.returncode}:\n{server.log_tail()}")
            try:
                with urllib.request.urlopen(probe_url, timeout=2):
                    break
            except urllib.error.HTTPError:
                break  # it answers: up (an auth challenge is an answer)
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"server at {url} did not start in {START_TIMEOUT:.0f} s:\n"
                        f"{server.log_tail()}"
                    )
                time.sleep(0.2)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_CONAN_SERVER = textwrap.dedent(
    """
    import signal, sys
    signal.alarm(int(sys.argv[3]))
    from conans.server.launcher import ServerLauncher
    ServerLauncher(server_dir=sys.argv[1]).server.run(host="127.0.0.1", port=int(sys.argv[2]))
    """
)


@contextlib.contextmanager
def conan_server(root: Path, *, private: bool = True) -> Iterator[Server]:
    """conan_server on 127.0.0.1:<free port>, storage under root. USER may write; reading
    needs USER's credentials too when `private` (a team's internal server)."""
    port = free_port()
    root.mkdir(parents=True, exist_ok=True)
    readers = USER if private else "*"
    (root / "server.conf").write_text(
        textwrap.dedent(
            f"""\
            [server]
            jwt_secret: release-test-jwt-secret
            jwt_expire_minutes: 120
            ssl_enabled: False
            port: {port}
            public_port:
            host_name: 127.0.0.1
            authorize_timeout: 1800
            disk_storage_path: {root / "data"}
            disk_authorize_timeout: 1800
            updown_secret: release-test-updown-secret

            [write_permissions]
            */*@*/*: {USER}

            [read_permissions]
            */*@*/*: {readers}

            [users]
            {USER}: {PASSWORD}
            """
        )
    )
    argv = [str(_servers_python()), "-c", _CONAN_SERVER, str(root), str(port), str(LIFETIME)]
    url = f"http://127.0.0.1:{port}"
    with _serve(argv, root / "server.log", f"{url}/v2/ping", url) as server:
        yield server


_PYPI_SERVER = textwrap.dedent(
    """
    import signal, sys
    signal.alarm(int(sys.argv[1]))
    from passlib.apache import HtpasswdFile
    ht = HtpasswdFile(sys.argv[2], new=True)
    ht.set_password(sys.argv[3], sys.argv[4])
    ht.save()
    from pypiserver.__main__ import main
    main(sys.argv[5:])
    """
)


@contextlib.contextmanager
def package_index(root: Path) -> Iterator[Server]:
    """pypiserver on 127.0.0.1:<free port> serving root/packages; uploads need USER's
    credentials (htpasswd, made with passlib); no fallback to any other index."""
    port = free_port()
    packages = root / "packages"
    packages.mkdir(parents=True, exist_ok=True)
    argv = [
        str(_servers_python()),
        "-c",
        _PYPI_SERVER,
        str(LIFETIME),
        str(root / "htpasswd"),
        USER,
        PASSWORD,
        "run",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--authenticate",
        "update",
        "--passwords",
        str(root / "htpasswd"),
        "--disable-fallback",
        "--server",
        "wsgiref",
        str(packages),
    ]
    url = f"http://127.0.0.1:{port}"
    with _serve(argv, root / "server.log", f"{url}/simple/", url) as server:
        yield server


REMOTE = "team"  # the remote's name on the other machine


def credentials_env(remote: str, user: str, password: str) -> dict[str, str]:
    """How Conan takes a remote's credentials without prompting."""
    key = remote.upper().replace("-", "_")
    return {f"CONAN_LOGIN_USERNAME_{key}": user, f"CONAN_PASSWORD_{key}": password}


def conan(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["conan", *(str(a) for a in args)], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"conan {' '.join(map(str, args))}:\n{proc.stderr[-3000:]}"
    return proc


def upload(ref: str, server: Server, work: Path, env: dict[str, str]) -> None:
    """From the Conan home of `env` (the first machine): uploads ref's recipe and binary and
    those of everything its graph needs (the system-wrapper recipes) to the server, the way
    CI would: conan install -> conan list --graph -> conan upload --list."""
    name = f"upload-{server.url.rsplit(':', 1)[1]}"
    conan("remote", "add", name, server.url, env=env)
    try:
        conan("remote", "login", name, USER, "-p", PASSWORD, env=env)
        # -of: conan install writes its env scripts there, not into the cwd (the checkout).
        out = work / "install"
        graph = conan("install", f"--requires={ref}", "-of", out, "--format=json", env=env).stdout
        (work / "graph.json").write_text(graph)
        listing = conan("list", f"--graph={work / 'graph.json'}", "--format=json", env=env)
        (work / "upload.json").write_text(listing.stdout)
        conan("upload", f"--list={work / 'upload.json'}", "-r", name, "-c", env=env)
    finally:
        conan("remote", "remove", name, env=env)


def other_machine(home: Path, server_url: str, env: dict[str, str]) -> dict[str, str]:
    """An empty Conan home (no cache, no recipes checkout) whose only remote is the server,
    with the project's profile settings; returns its environment."""
    out = dict(env, CONAN_HOME=str(home))
    conan("profile", "detect", "--name", "default", env=out)
    profile = home / "profiles" / "default"
    text = profile.read_text()
    profile.write_text(
        "\n".join(
            "compiler.cppstd=17" if ln.startswith("compiler.cppstd=") else ln
            for ln in text.splitlines()
        )
        + "\n"
    )
    conan("remote", "remove", "*", env=out)
    conan("remote", "add", REMOTE, server_url, env=out)
    return out


def pip_env(base: dict[str, str]) -> dict[str, str]:
    """pip with no configuration of this machine (no config file, no PIP_* variable): the
    indexes and wheel dirs a command names are the only ones it uses."""
    out = {k: v for k, v in base.items() if not k.startswith("PIP_")}
    out["PIP_CONFIG_FILE"] = os.devnull
    out["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return out

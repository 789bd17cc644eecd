"""Conan packages for etpkg's tests: the toysdk fixture and the deliberately bad badsdk_*."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
TOYSDK_REF = "toysdk/0.3.1"
BAD_DEFECTS = ("missing", "notelf", "wrongarch", "abspath")


def env() -> dict[str, str]:
    """The project's environment (ci/env.sh): venv tools first, its own CONAN_HOME."""
    out = dict(os.environ)
    out.setdefault("CONAN_HOME", str(REPO_ROOT / ".conan-home"))
    out["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), out.get("PATH", "")])
    out["PYTHONPATH"] = str(REPO_ROOT / "python")
    return out


def _in_cache(ref: str) -> bool:
    proc = subprocess.run(
        ["conan", "list", f"{ref}:*", "--format=json"],
        env=env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return '"packages"' in proc.stdout


def _conan(*args: str) -> None:
    proc = subprocess.run(["conan", *args], env=env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"conan {' '.join(args)} failed:\n{proc.stderr[-3000:]}")


def ensure_toysdk() -> str:
    """Creates toysdk (and its system bzip2 recipe) in the cache unless a binary is there."""
    if not _in_cache(TOYSDK_REF):
        _conan("export", str(FIXTURES / "recipes" / "bzip2" / "all"), "--version", "system")
        _conan("create", str(FIXTURES / "toysdk"), "--build=missing")
    return TOYSDK_REF


def ensure_badsdk(defect: str) -> str:
    ref = f"badsdk_{defect}/1.0"
    if not _in_cache(ref):
        _conan("create", str(FIXTURES / "badsdk"), "--name", f"badsdk_{defect}")
    return ref


def run_etpkg(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "etpkg", *(str(a) for a in args)],
        env=env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="session")
def toysdk_wheel_for_consumers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ref = ensure_toysdk()
    dist = tmp_path_factory.mktemp("consumer-dist")
    proc = run_etpkg("wheelify", ref, "-o", dist)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def rewrite_wheel(
    wheel: Path,
    out: Path,
    member: str,
    change: Callable[[bytes], bytes],
    *,
    update_record: bool = True,
) -> Path:
    """A copy of the wheel at out whose file ending in `member` is change(data); RECORD is
    brought in line unless update_record is False (a wheel changed after it was built)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as src:
        items = [(info, src.read(info)) for info in src.infolist()]
    (target,) = [info.filename for info, _ in items if info.filename.endswith(member)]
    changed = {target: change(dict((i.filename, d) for i, d in items)[target])}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info, data in items:
            data = changed.get(info.filename, data)
            if update_record and info.filename.endswith(".dist-info/RECORD"):
                lines = []
                for line in data.decode().splitlines():
                    path = line.split(",")[0]
                    if path in changed:
                        new = changed[path]
                        line = f"{path},{record_hash(new)},{len(new)}"
                    lines.append(line)
                data = ("\n".join(lines) + "\n").encode()
            dst.writestr(info, data)
    return out

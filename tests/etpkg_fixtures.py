"""Conan packages for etpkg's tests: the fixture packages of tests/fixtures (each a shape of
SDK) and the deliberately bad badsdk_*, and the wheels made of them."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
BAD_DEFECTS = ("missing", "notelf", "wrongarch", "abspath", "objects", "dollarflag", "script")


@dataclass(frozen=True)
class Fixture:
    """A fixture package of tests/fixtures: its recipe dir, the binary it is built as, and
    the local recipes (tests/fixtures/recipes) it requires."""

    ref: str
    folder: Path
    options: tuple[str, ...] = ()  # -o of conan create and etpkg wheelify
    recipes: tuple[tuple[str, str], ...] = ()  # (name, version)

    @property
    def conan_args(self) -> list[str]:
        return [arg for option in self.options for arg in ("-o", option)]


# Each a shape etpkg must ship; none a copy of etrt (see each conanfile's docstring).
PACKAGES = {
    # C++, shared, a registration-only plugin, Debian's libbz2 whose header consumers include.
    "toysdk": Fixture("toysdk/0.3.1", FIXTURES / "toysdk", recipes=(("bzip2", "system"),)),
    # C, static, a dash in the name, GeoKit as CMake name, header-only component, an archive
    # plugin, a Conan dependency (tinyhash) whose headers and archive reach consumers, an
    # executable and data files.
    "geokit": Fixture(
        "geo-kit/1.2.3-rc1",
        FIXTURES / "geokit",
        recipes=(("tinyhash", "1.0"),),
    ),
    # The same built shared (-o "*:shared=True"): tinyhash's library is grafted from the cache.
    "geokit-shared": Fixture(
        "geo-kit/1.2.3-rc1",
        FIXTURES / "geokit",
        options=("*:shared=True",),
        recipes=(("tinyhash", "1.0"),),
    ),
    # Header-only C++: no settings, a py3-none-any wheel, version 2024.05.1, its own import name.
    "ringbuf": Fixture("ringbuf/2024.05.1", FIXTURES / "ringbuf"),
}
TOYSDK_REF = PACKAGES["toysdk"].ref


def env() -> dict[str, str]:
    """The project's environment (ci/env.sh): venv tools first, its own CONAN_HOME."""
    out = dict(os.environ)
    out.setdefault("CONAN_HOME", str(REPO_ROOT / ".conan-home"))
    out["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), out.get("PATH", "")])
    out["PYTHONPATH"] = str(REPO_ROOT / "python")
    return out


def conan(*args: str) -> str:
    proc = subprocess.run(["conan", *args], env=env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"conan {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def _has_binary(ref: str) -> bool:
    """A binary of ref's latest recipe revision is cached."""
    args = ["list", f"{ref}:*", "--format=json"]
    data = json.loads(conan(*args))
    for recipe in data.get("Local Cache", {}).values():
        if not isinstance(recipe, dict):  # {"error": "... not found"}
            continue
        for revision in recipe.get("revisions", {}).values():
            if revision.get("packages"):
                return True
    return False


def ensure(name: str) -> Fixture:
    """The fixture package and everything it requires in the cache, built from the current
    recipes: each exported first (a changed recipe gets a new revision, which has no binary
    until it is built), then whatever binary of the graph is missing built."""
    fixture = PACKAGES[name]
    for recipe, version in fixture.recipes:
        conan("export", str(FIXTURES / "recipes" / recipe / "all"), "--version", version)
    conan("export", str(fixture.folder))
    with tempfile.TemporaryDirectory(prefix="etpkg-fixture-") as out:
        conan(
            "install",
            f"--requires={fixture.ref}",
            "--build=missing",
            *fixture.conan_args,
            "-of",
            out,
        )
    return fixture


def ensure_toysdk() -> str:
    """Creates toysdk (and its system bzip2 recipe) in the cache unless a binary is there."""
    return ensure("toysdk").ref


def ensure_badsdk(defect: str) -> str:
    ref = f"badsdk_{defect}/1.0"
    if not _has_binary(ref):
        conan("create", str(FIXTURES / "badsdk"), "--name", f"badsdk_{defect}")
    return ref


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Writes each (relative path, indented text) of a recipe or consumer under root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def checked_run(argv: list[str | Path], **kw: object) -> subprocess.CompletedProcess[str]:
    """subprocess.run with text output captured; a non-zero exit fails with the output."""
    proc = subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        check=False,
        **kw,  # type: ignore[call-overload]
    )
    assert proc.returncode == 0, f"{argv}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def run_etpkg(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "etpkg", *(str(a) for a in args)],
        env=env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def run_on_tty(
    argv: list[str | Path], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Runs argv with stderr on a pseudo-terminal and stdout a pipe (at most 64 KiB of it):
    (exit status, stdout, everything the terminal showed)."""
    main, side = pty.openpty()
    proc = subprocess.Popen(
        [str(a) for a in argv], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=side,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(side)
    seen = b""
    while select.select([main], [], [], 900)[0]:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the terminal's other end closed: the process is gone
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(timeout=60), out, seen.decode(errors="replace")


def wheel_of_recipe(root: Path, files: dict[str, str], ref: str, *create_args: str) -> Path:
    """The wheel `etpkg wheelify` makes of an inline recipe: `files` written to root/recipe,
    `conan create` there (with create_args), the wheel in root/dist."""
    write_tree(root / "recipe", files)
    conan("create", str(root / "recipe"), *create_args)
    proc = run_etpkg("wheelify", ref, "--output-dir", root / "dist")
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def wheelify(name: str, dist: Path) -> Path:
    """The fixture's wheel, made by `etpkg wheelify` into dist."""
    fixture = ensure(name)
    proc = run_etpkg("wheelify", fixture.ref, "--output-dir", dist, *fixture.conan_args)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture(scope="session")
def package_wheel(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """package_wheel(name) -> the wheel of a fixture package (made once per session)."""
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = wheelify(name, tmp_path_factory.mktemp(f"dist-{name}"))
        return made[name]

    return get


@pytest.fixture(scope="session")
def toysdk_wheel_for_consumers(package_wheel: Callable[[str], Path]) -> Path:
    return package_wheel("toysdk")


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

"""A foreign SDK cross-built for aarch64 on this x86_64 machine: conan create with an armv8 host
profile (Debian's cross compilers), etpkg wheelify -> manylinux_*_aarch64, etpkg verify running
its consumers under qemu-user. The tools are Debian's g++-aarch64-linux-gnu and qemu-user
(ci/setup.sh installs them); the run fails, never skips, without them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from corpus import runner
from etpkg._internal.verify.runner import elf_arch

pytestmark = [pytest.mark.corpus, pytest.mark.cross]

ARMV8 = """\
include(default)
[settings]
arch=armv8
[conf]
tools.build:compiler_executables={"c": "aarch64-linux-gnu-gcc", "cpp": "aarch64-linux-gnu-g++"}
"""
TOOLS = {"aarch64-linux-gnu-g++": "g++-aarch64-linux-gnu", "qemu-aarch64": "qemu-user"}


@pytest.fixture(scope="module")
def cross(tmp_path_factory: pytest.TempPathFactory) -> runner.Corpus:
    missing = [pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None]
    assert not missing, f"apt-get install {' '.join(missing)} (ci/setup.sh installs them)"
    corpus = runner.Corpus(runner.REPO / "build" / "corpus")
    corpus.setup()
    (corpus.conan_home / "profiles" / "armv8").write_text(ARMV8)
    corpus.fetch_source(runner.load_recipe("zlib"))
    return corpus


def _run(corpus: runner.Corpus, argv: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(
        argv, env=corpus.env, cwd=cwd, capture_output=True, text=True, errors="replace"
    )
    assert proc.returncode == 0, (
        f"{argv[:3]} rc={proc.returncode}:\n{proc.stdout[-3000:]}\n" + (proc.stderr[-3000:])
    )
    return proc.stdout


def _cross_wheel(corpus: runner.Corpus, tmp: Path, shared: bool) -> Path:
    recipe = runner.load_recipe("zlib")
    folder = tmp / "recipe"
    shutil.copytree(recipe.folder, folder)
    args = ["-pr:h", "armv8", "-pr:b", "default", "-o", f"zlib/*:shared={shared}"]
    _run(corpus, ["conan", "create", str(folder), "--version", recipe.version, *args,
                  "--build=missing"])  # fmt: skip
    dist = tmp / "dist"
    _run(corpus, [sys.executable, "-m", "etpkg", "wheelify", recipe.ref, *args, "-o", str(dist)])
    (wheel,) = dist.glob("*.whl")
    return wheel


def _elf_members(wheel: Path, tmp: Path) -> dict[str, str | None]:
    out = tmp / "unpacked"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(out)
    return {
        p.relative_to(out).as_posix(): elf_arch(p)
        for p in out.rglob("*")
        if p.is_file() and not p.is_symlink() and (p.suffix in (".so", ".a") or ".so." in p.name)
    }


def test_cross_built_shared_zlib_is_an_aarch64_wheel_whose_consumers_pass_under_qemu(
    cross: runner.Corpus, tmp_path: Path
) -> None:
    wheel = _cross_wheel(cross, tmp_path, shared=True)
    # zlib binds nothing newer than GLIBC_2.17 on aarch64 (the arch's first glibc).
    assert wheel.name == "zlib-1.2.13-py3-none-manylinux_2_17_aarch64.whl"
    libs = {k: v for k, v in _elf_members(wheel, tmp_path).items() if v is not None}
    assert libs and set(libs.values()) == {"aarch64"}, libs
    show = _run(cross, [sys.executable, "-m", "auditwheel", "show", str(wheel)])
    assert '"manylinux_2_17_aarch64"' in " ".join(show.split())

    work = tmp_path / "verify"
    out = _run(
        cross,
        [sys.executable, "-m", "etpkg", "verify", "--quick", "--work", str(work), str(wheel)],
    )
    passed = re.search(r"(\d+)/(\d+) checks passed", out)
    assert passed is not None and passed.group(1) == passed.group(2), out
    # The consumers verify built and ran are aarch64 programs: qemu ran them.
    apps = [p for p in work.rglob("app*") if p.is_file() and elf_arch(p) is not None]
    assert len(apps) >= 4 and {elf_arch(p) for p in apps} == {"aarch64"}, apps


# Long (ci/long.sh cross): the gate's shared case proves the cross build; this one the floor of
# static archives, which test_floor.py checks natively in the gate.
@pytest.mark.long
def test_cross_built_static_zlib_takes_its_glibc_floor_from_the_aarch64_c_library(
    cross: runner.Corpus, tmp_path: Path
) -> None:
    wheel = _cross_wheel(cross, tmp_path, shared=False)
    version = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "libc6-arm64-cross"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    major, minor = re.match(r"(\d+)\.(\d+)", version).groups()  # type: ignore[union-attr]
    assert wheel.name == f"zlib-1.2.13-py3-none-manylinux_{major}_{minor}_aarch64.whl"
    archives = {k: v for k, v in _elf_members(wheel, tmp_path).items() if k.endswith(".a")}
    assert archives, "the static wheel ships libz.a"

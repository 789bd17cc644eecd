"""Proof on real conan-center recipes (tests/corpus): spdlog built shared and wheelified with
`--depend fmt` against fmt's own wheel ships no libfmt and no fmt headers, declares
`fmt>=9.1.0,<9.2` (spdlog's fmt/8.1.1 replaced by 9.1.0: the version resolved), and spdlog's
upstream test_package builds against the two installed wheels alone (CMake, and pkg-config
through `python -m spdlog --pkg-config-path`), runs, and loads each library from its wheel.

Long (suite `sdkdeps`, ci/long.sh sdkdeps): builds fmt and spdlog from Debian's sources in the
corpus work area (build/corpus or $ETPKG_CORPUS_WORK), a few minutes the first time."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from corpus import runner
from corpus.cases import CASES
from wheel_venv import make_venv

pytestmark = [pytest.mark.long, pytest.mark.sdkdeps]

CASE = {c.name: c for c in CASES}
TEST_PACKAGE = runner.RECIPES / "spdlog" / "all" / "test_package"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(fmt's wheel, spdlog's wheel depending on it), both from the corpus recipes."""
    corpus = runner.Corpus(
        Path(os.environ.get("ETPKG_CORPUS_WORK") or runner.REPO / "build" / "corpus")
    )
    corpus.setup()
    fmt = corpus.run_case(CASE["fmt"], ("create", "wheelify"))
    assert fmt.ok, fmt.steps
    spdlog = corpus.run_case(CASE["spdlog"], ("create",))
    assert spdlog.ok, spdlog.steps
    run = runner._CaseRun(corpus, CASE["spdlog"], runner.load_recipe("spdlog"))
    out = tmp_path_factory.mktemp("spdlog")
    argv = [sys.executable, "-m", "etpkg", "wheelify", "spdlog/1.10.0", *run.conan_args,
            "--depend", "fmt", "-of", str(out), "-q"]  # fmt: skip
    proc = subprocess.run(argv, env=corpus.env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (fmt_wheel,) = (corpus.work / "cases" / "fmt" / "dist").glob("*.whl")
    (spdlog_wheel,) = out.glob("*.whl")
    return fmt_wheel, spdlog_wheel


def test_spdlog_wheel_declares_fmt_and_ships_none_of_it(wheels: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(wheels[1]) as zf:
        names = zf.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = zf.read(meta).decode()
    assert not [n for n in names if "libfmt" in n or n.startswith("spdlog/include/fmt/")]
    assert not [n for n in names if ".libs/" in n]
    assert "Requires-Dist: fmt<9.2,>=9.1.0" in metadata


def test_upstream_test_package_against_the_two_wheels(
    wheels: tuple[Path, Path], tmp_path: Path
) -> None:
    links = tmp_path / "links"
    links.mkdir()
    for wheel in wheels:
        (links / wheel.name).write_bytes(wheel.read_bytes())
    venv = make_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(venv.python), "install", "-q",
           "--no-index", "--find-links", str(links), "spdlog"]  # fmt: skip
    done = subprocess.run(pip, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # fmt came in through Requires-Dist
    env = venv.env()

    def query(flag: str) -> str:
        return subprocess.run(
            [venv.python, "-m", "spdlog", flag], env=env, capture_output=True, text=True,
            check=True,
        ).stdout.strip()  # fmt: skip

    build = tmp_path / "build"
    for argv in (
        ["cmake", "-S", TEST_PACKAGE, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_PREFIX_PATH={query('--cmake-prefix-path')}", "-DCMAKE_IGNORE_PREFIX_PATH=/usr",
         *(f"-D{d}" for d in CASE["spdlog"].cmake_defs)],
        ["cmake", "--build", build, "-j2"],
    ):  # fmt: skip
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "not found (try using -rpath" not in done.stdout + done.stderr
    program = build / "test_package"
    run = subprocess.run([program], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Welcome to spdlog version 1.10.0" in run.stdout + run.stderr
    ldd = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
    loaded = dict(re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M))
    assert Path(loaded["libspdlog.so"]).resolve().parent == (venv.site / "spdlog" / "lib").resolve()
    assert Path(loaded["libfmt.so"]).resolve().parent == (venv.site / "fmt" / "lib").resolve()

    # pkg-config: both wheels' .pc dirs from the dependent alone; Requires: fmt resolves.
    pc_env = {**env, "PKG_CONFIG_LIBDIR": query("--pkg-config-path")}
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "spdlog"], env=pc_env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert flags.returncode == 0, flags.stderr
    pc_program = tmp_path / "pc_test_package"
    cxx = ["c++", "-std=c++17", TEST_PACKAGE / "test_package.cpp", "-o", pc_program,
           *flags.stdout.split()]  # fmt: skip
    done = subprocess.run(cxx, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lib_dirs = [str(venv.site / p / "lib") for p in ("spdlog", "fmt")]
    run = subprocess.run(
        [pc_program], env={**env, "LD_LIBRARY_PATH": ":".join(lib_dirs)},
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr


def test_etpkg_verify_across_the_two_wheels(wheels: tuple[Path, Path]) -> None:
    argv = [sys.executable, "-m", "etpkg", "verify", "--quick", "-q",
            "--find-links", str(wheels[0].parent), str(wheels[1])]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "PASS  SDK wheels depended on" in proc.stdout

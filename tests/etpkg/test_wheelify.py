"""wheelify end to end on the toysdk fixture: layout, ELF facts after repair, reproducibility,
the generated Python helper, and bad inputs that must leave dist/ untouched."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shlex
import stat
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import etpkg
import pytest
from etpkg._internal.build.elf import read_elf
from etpkg_fixtures import BAD_DEFECTS, REPO_ROOT, ensure_badsdk, ensure_toysdk, env, run_etpkg

PKG = "toysdk"
LIBS = ("libtoysdk_core.so", "libtoysdk_plugin.so", "libtoysdk_extra.so")


@pytest.fixture(scope="session")
def toysdk_wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    ref = ensure_toysdk()
    dist = tmp_path_factory.mktemp("dist")
    start = time.monotonic()
    proc = run_etpkg("wheelify", ref, "-o", dist)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    wheel = Path(proc.stdout.strip())
    assert wheel.parent == dist and wheel.is_file()
    print(f"\nwheelify {ref}: {elapsed:.2f} s wall", file=sys.stderr)
    yield wheel


@pytest.fixture(scope="session")
def unpacked(toysdk_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(toysdk_wheel) as zf:
        zf.extractall(root)
    for info in zipfile.ZipFile(toysdk_wheel).infolist():
        os.chmod(root / info.filename, (info.external_attr >> 16) & 0o777)
    return root


def test_wheel_name_carries_a_manylinux_tag(toysdk_wheel: Path) -> None:
    assert toysdk_wheel.name.startswith("toysdk-0.3.1-py3-none-manylinux_2_")
    assert toysdk_wheel.name.endswith("_x86_64.whl")


def test_layout(toysdk_wheel: Path) -> None:
    names = set(zipfile.ZipFile(toysdk_wheel).namelist())
    expected = {
        f"{PKG}/__init__.py",  # from etpkg_python_packages
        f"{PKG}/_etpkg.py",
        f"{PKG}/__main__.py",
        f"{PKG}/include/toysdk/core.h",
        f"{PKG}/include/toysdk/extra.h",
        f"{PKG}/include/toysdk/export.h",
        f"{PKG}/lib/__init__.py",
        f"{PKG}/lib/pkgconfig/__init__.py",
        f"{PKG}/lib/cmake/toysdk/toysdk-config.cmake",
        f"{PKG}/lib/cmake/toysdk/toysdk-config-version.cmake",
        f"{PKG}/lib/cmake/toysdk/toysdk-etpkg-install.cmake",  # toysdk_install_runtime()
        f"{PKG}/lib/cmake/toysdk/runpath.ldopts",
        f"{PKG}/lib/cmake/toysdk/runpath-module.ldopts",
        # Debian's libbz2-dev header: toysdk/extra.h includes it, so consumers need it.
        f"{PKG}/include/bzlib.h",
        f"{PKG}/lib/pkgconfig/toysdk.pc",  # the package's own .pc (PkgConfigDeps' name)
        "toysdk-0.3.1.dist-info/licenses/LICENSE",
        "toysdk-0.3.1.dist-info/licenses/libbz2-1.0/copyright",  # the grafted libbz2's
        "toysdk-0.3.1.dist-info/licenses/libbz2-dev/copyright",  # bzlib.h's
        "toysdk-0.3.1.dist-info/METADATA",
        "toysdk-0.3.1.dist-info/WHEEL",
        "toysdk-0.3.1.dist-info/RECORD",
        "toysdk-0.3.1.dist-info/entry_points.txt",
        *(f"{PKG}/lib/{lib}" for lib in LIBS),
        *(f"{PKG}/lib/pkgconfig/toysdk-{c}.pc" for c in ("core", "plugin", "extra")),
    }
    assert expected <= names, sorted(expected - names)
    # The versioned chain libtoysdk_core.so -> .so.1 -> .so.1.2.0 became one file.
    assert not [n for n in names if ".so." in n and n.startswith(f"{PKG}/lib/")]
    grafted = [n for n in names if n.startswith(f"{PKG}.libs/")]
    assert len(grafted) == 1 and grafted[0].split("/")[1].startswith("libbz2-"), grafted


def test_entries_are_regular_files_with_fixed_modes(toysdk_wheel: Path) -> None:
    for info in zipfile.ZipFile(toysdk_wheel).infolist():
        mode = info.external_attr >> 16
        assert stat.S_ISREG(mode), info.filename  # no symlinks, no dirs
        want = 0o755 if ".so" in info.filename else 0o644
        assert stat.S_IMODE(mode) == want, (info.filename, oct(mode))
        assert info.date_time == (2026, 1, 1, 0, 0, 0)
        assert info.compress_type == zipfile.ZIP_DEFLATED


def test_record_hashes_every_final_file(toysdk_wheel: Path) -> None:
    zf = zipfile.ZipFile(toysdk_wheel)
    record = zf.read("toysdk-0.3.1.dist-info/RECORD").decode()
    rows = {row[0]: row for row in csv.reader(io.StringIO(record))}
    assert set(rows) == set(zf.namelist())
    for name, (_, digest, size) in rows.items():
        if name.endswith("RECORD"):
            continue
        data = zf.read(name)
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == f"sha256={expected}" and int(size) == len(data), name
    assert zf.namelist()[-1] == "toysdk-0.3.1.dist-info/RECORD"


def test_metadata_and_entry_points(toysdk_wheel: Path) -> None:
    zf = zipfile.ZipFile(toysdk_wheel)
    meta = zf.read("toysdk-0.3.1.dist-info/METADATA").decode().lower()
    for line in (
        "name: toysdk",
        "version: 0.3.1",
        "license-expression: mit",
        "summary: a toy sdk used to test etpkg",
        "homepage, https://example.invalid/toysdk",
        # etpkg_python_requires: Requires-Dist, and Provides-Extra for the marker's extra.
        "requires-dist: packaging>=21\n",
        'requires-dist: numpy>=1.23; extra == "arrays"\n',
        "provides-extra: arrays\n",
    ):
        assert line in meta
    wheel = zf.read("toysdk-0.3.1.dist-info/WHEEL").decode()
    assert "Root-Is-Purelib: false" in wheel
    tag = toysdk_wheel.name.removesuffix(".whl").split("-", 2)[2]
    assert f"Tag: {tag}" in wheel.splitlines()
    eps = zf.read("toysdk-0.3.1.dist-info/entry_points.txt").decode()
    assert "[cmake.root]\ntoysdk = toysdk\n" in eps
    assert "[cmake.prefix]\ntoysdk = toysdk\n" in eps
    assert "[pkg_config]\ntoysdk = toysdk.lib.pkgconfig\n" in eps


def test_soname_equals_shipped_file_and_needed_entries_follow(unpacked: Path) -> None:
    for lib in LIBS:
        info = read_elf(unpacked / PKG / "lib" / lib)
        assert info.soname == lib
    for lib in ("libtoysdk_plugin.so", "libtoysdk_extra.so"):
        needed = read_elf(unpacked / PKG / "lib" / lib).needed
        assert "libtoysdk_core.so" in needed and "libtoysdk_core.so.1" not in needed


def test_every_elf_has_runpath_only_and_inside_the_wheel(unpacked: Path) -> None:
    elves = [p for p in unpacked.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert len(elves) == 4
    for path in elves:
        info = read_elf(path)
        assert info.rpath is None, f"{path.name} has DT_RPATH {info.rpath}"
        for entry in info.runpath or ():
            assert entry.startswith("$ORIGIN"), (path.name, entry)
            target = (path.parent / entry.replace("$ORIGIN", ".")).resolve()
            assert target.is_dir() and target.is_relative_to(unpacked.resolve())
    # auditwheel patched extra (it needs the grafted libbz2): its runpath is back to DT_RUNPATH.
    extra = read_elf(unpacked / PKG / "lib" / "libtoysdk_extra.so")
    assert extra.runpath == ("$ORIGIN", "$ORIGIN/../../toysdk.libs")
    assert read_elf(unpacked / PKG / "lib" / "libtoysdk_core.so").runpath == ("$ORIGIN",)


def test_auditwheel_show_reports_manylinux(toysdk_wheel: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(toysdk_wheel)],
        env=env(),
        capture_output=True,
        text=True,
        check=True,
    )
    tag = toysdk_wheel.name.removesuffix(".whl").split("-")[-1]
    assert tag.startswith("manylinux_2_")
    assert f'platform tag: "{tag}"' in " ".join(proc.stdout.split())


def test_no_build_machine_path_in_any_file(unpacked: Path) -> None:
    needles = [str(REPO_ROOT).encode(), env()["CONAN_HOME"].encode()]
    for path in unpacked.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [n for n in needles if n in data], path


def test_two_runs_are_byte_identical(toysdk_wheel: Path, tmp_path: Path) -> None:
    proc = run_etpkg("wheelify", "toysdk/0.3.1", "-o", tmp_path)
    assert proc.returncode == 0, proc.stderr
    again = Path(proc.stdout.strip())
    assert again.name == toysdk_wheel.name
    assert again.read_bytes() == toysdk_wheel.read_bytes()


def test_conanfile_directory_is_accepted(toysdk_wheel: Path, tmp_path: Path) -> None:
    proc = run_etpkg("wheelify", "-o", tmp_path, cwd=REPO_ROOT / "tests" / "fixtures" / "toysdk")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).read_bytes() == toysdk_wheel.read_bytes()


def _python_m(unpacked: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", PKG, *args],
        env={**env(), "PYTHONPATH": str(unpacked)},
        capture_output=True,
        text=True,
        check=True,
        cwd=unpacked,
    )
    return proc.stdout.strip()


def test_python_m_prints_consumer_paths(unpacked: Path) -> None:
    prefix = Path(_python_m(unpacked, "--cmake-prefix-path"))
    assert (prefix / "lib" / "cmake" / "toysdk" / "toysdk-config.cmake").is_file()
    assert (Path(_python_m(unpacked, "--pkg-config-path")) / "toysdk-core.pc").is_file()
    includes = shlex.split(_python_m(unpacked, "--includes"))
    assert f"-I{unpacked / PKG / 'include'}" in includes
    assert "-DTOYSDK_API_VERSION=3" in includes and "-std=c++17" in includes


def test_libs_route_links_an_app_that_loads_the_plugin_and_grafted_lib(
    unpacked: Path, tmp_path: Path
) -> None:
    src = tmp_path / "app.cpp"
    src.write_text(
        '#include <cstdio>\n#include "toysdk/core.h"\n#include "toysdk/extra.h"\n'
        "int main() {\n"
        '  std::printf("plugins=%d has=%d size=%zu\\n", toysdk::plugin_count(),\n'
        '              toysdk::has_plugin("toy_plugin"), toysdk::compressed_size("aaaaaaaa"));\n'
        "  return 0;\n}\n"
    )
    cflags = shlex.split(_python_m(unpacked, "--includes"))
    libs = shlex.split(_python_m(unpacked, "--libs"))
    app = tmp_path / "app"
    subprocess.run(["g++", *cflags, str(src), "-o", str(app), *libs], check=True)
    out = subprocess.run([str(app)], capture_output=True, text=True, check=True).stdout
    # The registration-only plugin was retained; extra found the grafted libbz2 via its runpath.
    assert out.startswith("plugins=1 has=1 size=")
    assert int(out.split("size=")[1]) > 0


# ---- bad inputs: one error line, exit 1, output dir untouched ----------------------------


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.fixture
def dist_with_old_wheel(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "toysdk-0.3.0-py3-none-manylinux_2_24_x86_64.whl").write_bytes(b"an older wheel")
    return dist


def _assert_one_error_line(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("etpkg: error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_no_conan_package(dist_with_old_wheel: Path) -> None:
    before = _snapshot(dist_with_old_wheel)
    proc = run_etpkg("wheelify", "nosuchsdk/9.9", "-o", dist_with_old_wheel)
    _assert_one_error_line(proc, "nosuchsdk/9.9", "conan create")
    assert _snapshot(dist_with_old_wheel) == before


def test_conanfile_dir_not_created_yet(dist_with_old_wheel: Path, tmp_path: Path) -> None:
    recipe = tmp_path / "recipe"
    recipe.mkdir()
    (recipe / "conanfile.py").write_text(
        "from conan import ConanFile\n\nclass R(ConanFile):\n    name = 'nevercreated'\n"
        "    version = '0.0.1'\n"
    )
    before = _snapshot(dist_with_old_wheel)
    proc = run_etpkg("wheelify", recipe, "-o", dist_with_old_wheel)
    _assert_one_error_line(proc, "nevercreated/0.0.1", "conan create")
    assert _snapshot(dist_with_old_wheel) == before


# What wheelify must say about each defective package the fixtures can build.
BAD_PACKAGE_ERRORS = {
    "missing": ("component badsdk_missing", "libbad.so not found"),
    "notelf": ("libbad.so", "not an ELF file"),
    "wrongarch": ("libbad.so", "EM_AARCH64", "x86_64"),
    "abspath": ("badsdk_abspath/lib/libbad.so", "build-machine path"),
    "objects": ("component badsdk_objects: cpp_info.objects", "cannot be carried into a wheel"),
    "dollarflag": ("exelinkflags", "'-Wl,-rpath,$ORIGIN/../lib' holds a '$'"),
    # A script is no ELF data: always refused, and the error names the way out.
    "script": (
        "badsdk_script/bin/badsdk-config: contains the build-machine path",
        "--exclude bin/badsdk-config",
    ),
}


def test_every_bad_package_fixture_is_exercised() -> None:
    assert set(BAD_PACKAGE_ERRORS) == set(BAD_DEFECTS)


@pytest.mark.parametrize(("defect", "needles"), sorted(BAD_PACKAGE_ERRORS.items()))
def test_bad_package_leaves_dist_untouched(
    defect: str, needles: tuple[str, ...], dist_with_old_wheel: Path
) -> None:
    ref = ensure_badsdk(defect)
    before = _snapshot(dist_with_old_wheel)
    # A build path in a library's string data is refused only on request (issue 21).
    strict = ["--strict"] if defect == "abspath" else []
    proc = run_etpkg("wheelify", ref, "-o", dist_with_old_wheel, *strict)
    _assert_one_error_line(proc, *needles)
    assert _snapshot(dist_with_old_wheel) == before


def test_a_build_path_in_library_data_is_a_note_without_strict(tmp_path: Path) -> None:
    ref = ensure_badsdk("abspath")
    proc = run_etpkg("wheelify", ref, "-o", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "badsdk_abspath/lib/libbad.so: holds a build-machine path 1 time(s)" in proc.stderr
    assert "--strict refuses it" in proc.stderr


def test_exclude_leaves_a_script_with_the_build_path_out(tmp_path: Path) -> None:
    ref = ensure_badsdk("script")
    proc = run_etpkg("wheelify", ref, "-o", tmp_path, "--exclude", "bin/*-config")
    assert proc.returncode == 0, proc.stderr
    assert "bin/badsdk-config left out of the wheel (--exclude)" in proc.stderr
    with zipfile.ZipFile(proc.stdout.strip()) as zf:
        names = zf.namelist()
        assert not [n for n in names if n.endswith("badsdk-config")], names
        assert "badsdk_script/lib/libbad.so" in names, names
        sbom_name = next(n for n in names if n.endswith("sboms/etpkg.cdx.json"))
        doc = json.loads(zf.read(sbom_name))
    # The package's own component (the Conan package the files come from) lists what was left out.
    (package,) = [c for c in doc["components"] if c["name"] == "badsdk_script"]
    excluded = [p["value"] for p in package["properties"] if p["name"] == "etpkg:excluded"]
    assert excluded == ["bin/badsdk-config"], package["properties"]
    # The Python API takes the same globs; one that leaves nothing out is an error.
    with pytest.raises(etpkg.LayoutError, match="--exclude bin/nothing: matches no"):
        etpkg.wheelify(ref, tmp_path / "api", exclude=["bin/badsdk-config", "bin/nothing"])


def test_component_alias_reaches_the_config_and_a_bad_one_is_one_line(
    toysdk_wheel: Path, tmp_path: Path
) -> None:
    proc = run_etpkg(
        "wheelify", "toysdk/0.3.1", "-o", tmp_path, "--component-alias", "Kernel=core"
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(proc.stdout.strip()) as zf:
        (config,) = [n for n in zf.namelist() if n.endswith("toysdk-config.cmake")]
        text = zf.read(config).decode()
    assert '"Kernel"' in text, text
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_etpkg("wheelify", "toysdk/0.3.1", "-o", tmp_path, "--component-alias", "Kernel=kern")
    _assert_one_error_line(proc, "--component-alias 'Kernel=kern'", "no component 'kern'")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_unwritable_output_dir(toysdk_wheel: Path, tmp_path: Path) -> None:
    # Fails for root too: the output dir's parent is a regular file.
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    proc = run_etpkg("wheelify", "toysdk/0.3.1", "-o", blocker / "dist")
    _assert_one_error_line(proc, "cannot write", str(blocker / "dist"))
    assert blocker.read_text() == "a file, not a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]


def test_output_dir_is_created_when_missing(toysdk_wheel: Path, tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    proc = run_etpkg("wheelify", "toysdk/0.3.1", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in out.iterdir()] == [toysdk_wheel.name]


def test_usage_error_exits_2_with_one_line() -> None:
    proc = run_etpkg("wheelify", "--no-such-flag")
    assert proc.returncode == 2
    assert proc.stderr.startswith("etpkg: error: ") and len(proc.stderr.splitlines()) == 1

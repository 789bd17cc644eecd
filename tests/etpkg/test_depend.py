"""Depend instead of graft (docs/DEPENDENCIES.md): geo-kit built shared, wheelified with
`--depend tinyhash` against tinyhash's own wheel (both fixture recipes), ships no libtinyhash
and no tinyhash headers, declares tinyhash, and a C consumer built against the two installed
wheels alone (CMake and pkg-config) runs, loading the one libtinyhash of the tinyhash wheel;
pip refuses a tinyhash outside the Conan requirement's range. The version table is tested on
its own (pure)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from etpkg._internal.depend import lowest_version, parse_choice, pep440_specifier
from etpkg._internal.errors import LayoutError
from etpkg._internal.verify.contracts import depends
from etpkg._internal.verify.runner import CheckFailed
from etpkg._internal.verify.suite import Suite
from etpkg._internal.verify.workspace import prepare
from etpkg_fixtures import ensure, record_hash, rewrite_wheel, run_etpkg, write_tree
from wheel_venv import make_venv

SHARED = ("-o", "*:shared=True")


@pytest.mark.parametrize(
    ("required", "built", "spec"),
    [
        ("9.1.0", "9.1.0", ">=9.1.0,<9.2"),  # Conan's default non_embed_mode: minor_mode
        ("0.1.0", "0.1.0", ">=0.1.0,<0.2"),
        ("2", "2", ">=2,<3"),
        ("[>=1.0 <2]", "1.4", ">=1.0,<2"),
        ("[~1.2]", "1.2.7", ">=1.2,<1.3"),
        ("[^1.2]", "1.9", ">=1.2,<2"),
        ("[^0.1]", "0.1.3", ">=0.1,<0.2"),
        ("[>1.0 <=1.5]", "1.5", ">1.0,<=1.5"),
        ("[=1.2.3]", "1.2.3", "==1.2.3"),
        ("[1.2.*]", "1.2.9", "==1.2.*"),
        ("[*]", "3.0", ""),
    ],
)
def test_conan_requirement_maps_to_pep440(required: str, built: str, spec: str) -> None:
    assert pep440_specifier(required, built) == spec


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("fmt", ("fmt", None)),
        ("fmt=fmt-sdk", ("fmt", "fmt-sdk")),
        (" etrt = etrt_gpu ", ("etrt", "etrt_gpu")),
    ],
)
def test_depend_choice_names_the_package_and_its_wheel(
    text: str, parsed: tuple[str, str | None]
) -> None:
    assert parse_choice(text) == parsed


@pytest.mark.parametrize("text", ["", "=fmt", "fmt=", "fmt=not a name", "fmt=-x"])
def test_depend_choice_refuses_what_names_no_wheel(text: str) -> None:
    with pytest.raises(LayoutError, match="depend"):
        parse_choice(text)


def test_alternatives_are_refused_by_name() -> None:
    with pytest.raises(LayoutError, match=r"alternatives \('\|\|'\)"):
        pep440_specifier("[>=1 <2 || >=3]", "1.0")


def test_find_package_asks_the_lowest_version_in_range() -> None:
    assert lowest_version(">=9.1.0,<9.2") == "9.1.0"
    assert lowest_version("==1.2.*") == "1.2"
    assert lowest_version("<2") == ""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tinyhash's wheel, geo-kit's depending on it, and geo-kit's grafting it (the default)."""
    fixture = ensure("geokit-shared")
    out = tmp_path_factory.mktemp("depend")
    made: dict[str, Path] = {}
    for key, args in {
        "tinyhash": ("tinyhash/1.0", *SHARED),
        "geokit": (fixture.ref, *SHARED, "--depend", "tinyhash"),
        "grafted": (fixture.ref, *SHARED),
    }.items():
        proc = run_etpkg("wheelify", *args, "--output-dir", out / key, "-q")
        assert proc.returncode == 0, proc.stderr
        made[key] = Path(proc.stdout.strip().splitlines()[-1])
    return made


def _names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def _metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return zf.read(name).decode()


def test_depended_package_is_declared_not_grafted(wheels: dict[str, Path]) -> None:
    names = _names(wheels["geokit"])
    assert not [n for n in names if "tinyhash" in n], "tinyhash shipped in geo-kit's wheel"
    assert not [n for n in names if n.startswith("geo_kit.libs/")]
    assert "Requires-Dist: tinyhash<1.1,>=1.0" in _metadata(wheels["geokit"])
    # The default still grafts it, and declares nothing.
    grafted = _names(wheels["grafted"])
    assert [n for n in grafted if n.startswith("geo_kit.libs/libtinyhash")]
    assert "Requires-Dist" not in _metadata(wheels["grafted"])


def test_depend_names_an_unknown_package(tmp_path: Path) -> None:
    fixture = ensure("geokit-shared")
    proc = run_etpkg(
        "wheelify", fixture.ref, *SHARED, "--depend", "zlib", "--output-dir", tmp_path, "-q"
    )
    assert proc.returncode == 1
    assert "depend zlib: geo-kit does not require zlib" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir())


APP = {
    "CMakeLists.txt": """
        cmake_minimum_required(VERSION 3.24)
        project(app C)
        find_package(GeoKit 1.2 REQUIRED COMPONENTS core)
        add_executable(app app.c)
        target_link_libraries(app PRIVATE GeoKit::core)
        install(TARGETS app)
        GeoKit_install_runtime(DESTINATION lib)
        """,
    "app.c": """
        #include <stdio.h>
        #include <geokit/geokit.h>
        int main(void) {
          printf("%llu\\n", (unsigned long long)gk_shape_id("square"));
          return 0;
        }
        """,
}


def _fnv1a(text: str) -> int:
    digest = 14695981039346656037
    for byte in text.encode():
        digest = ((digest ^ byte) * 1099511628211) % 2**64
    return digest


def _pip(venv_python: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pip", "--python", venv_python, "install", "-q", "--no-index"]
    return subprocess.run([*map(str, argv), *map(str, args)], capture_output=True, text=True)


def test_consumer_runs_against_the_two_installed_wheels(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    venv = make_venv(tmp_path / "venv")
    links = tmp_path / "links"
    links.mkdir()
    for key in ("tinyhash", "geokit"):
        (links / wheels[key].name).write_bytes(wheels[key].read_bytes())
    # pip resolves geo-kit's Requires-Dist from the links dir alone.
    proc = _pip(venv.python, "--find-links", links, "geo-kit")
    assert proc.returncode == 0, proc.stderr
    assert (venv.site / "tinyhash" / "lib" / "libtinyhash.so").is_file()

    env = venv.env()
    prefix = subprocess.run(
        [venv.python, "-m", "geo_kit", "--cmake-prefix-path"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    write_tree(tmp_path / "app", APP)
    build, deploy = tmp_path / "build", tmp_path / "deploy"
    for argv in (
        ["cmake", "-S", tmp_path / "app", "-B", build, "-G", "Ninja",
         f"-DCMAKE_PREFIX_PATH={prefix}"],
        ["cmake", "--build", build],
        ["cmake", "--install", build, "--prefix", deploy],
    ):  # fmt: skip
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    want = f"{_fnv1a('square')}\n"
    run = subprocess.run([build / "app"], capture_output=True, text=True, check=True)
    assert run.stdout == want
    # Which libtinyhash the loader took: the tinyhash wheel's, reached from libgeokit.so's
    # RUNPATH (the app itself links only libgeokit.so and is not told where tinyhash is).
    ldd = subprocess.run(["ldd", build / "app"], capture_output=True, text=True).stdout
    (line,) = [ln for ln in ldd.splitlines() if "libtinyhash" in ln]
    assert str((venv.site / "tinyhash" / "lib").resolve()) in line or str(venv.site) in line
    # Copied away with install(): both wheels' libraries beside the app, no venv needed.
    assert sorted(p.name for p in (deploy / "lib").iterdir()) == [
        "libgeokit.so",
        "libtinyhash.so",
    ]
    (tmp_path / "venv").rename(tmp_path / "gone")
    run = subprocess.run([deploy / "bin" / "app"], capture_output=True, text=True, check=True)
    assert run.stdout == want
    (tmp_path / "gone").rename(tmp_path / "venv")

    # pkg-config: the helper prints both wheels' .pc dirs; Requires: tinyhash resolves.
    pc_path = subprocess.run(
        [venv.python, "-m", "geo_kit", "--pkg-config-path"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "geo-kit-core"],
        env={**env, "PKG_CONFIG_PATH": pc_path}, capture_output=True, text=True,
    )  # fmt: skip
    assert flags.returncode == 0, flags.stderr
    dirs = {str(Path(f[2:]).resolve()) for f in flags.stdout.split() if f.startswith("-I")}
    assert str((venv.site / "tinyhash" / "include").resolve()) in dirs
    cc = ["cc", tmp_path / "app" / "app.c", "-o", tmp_path / "pc-app", *flags.stdout.split()]
    done = subprocess.run(cc, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_target_layout_resolves_the_sibling(wheels: dict[str, Path], tmp_path: Path) -> None:
    """pip install --target puts the dependency in the same dir: the RUNPATH reaches it."""
    target = tmp_path / "target"
    argv = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--target", target,
            "--find-links", wheels["tinyhash"].parent, wheels["geokit"]]  # fmt: skip
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ldd = subprocess.run(
        ["ldd", target / "geo_kit" / "lib" / "libgeokit.so"], capture_output=True, text=True
    ).stdout
    (line,) = [ln for ln in ldd.splitlines() if "libtinyhash" in ln]
    found = Path(line.split("=>")[1].split()[0]).resolve()
    assert found == (target / "tinyhash" / "lib" / "libtinyhash.so").resolve()


def test_pip_refuses_a_dependency_outside_the_range(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    venv = make_venv(tmp_path / "venv")
    links = tmp_path / "links"
    (links).mkdir()
    (links / wheels["geokit"].name).write_bytes(wheels["geokit"].read_bytes())
    newer = wheels["tinyhash"].name.replace("-1.0-", "-1.1-")
    rewrite_wheel(
        wheels["tinyhash"],
        links / newer,
        "METADATA",
        lambda data: data.replace(b"\nVersion: 1.0\n", b"\nVersion: 1.1\n"),
    )
    proc = _pip(venv.python, "--find-links", links, "geo-kit")
    assert proc.returncode != 0
    assert "tinyhash<1.1,>=1.0" in proc.stdout + proc.stderr


def _with_member(wheel: Path, out: Path, name: str, data: bytes) -> Path:
    """A copy of the wheel with one more file (RECORD lists it)."""
    with zipfile.ZipFile(wheel) as src:
        items = [(info, src.read(info)) for info in src.infolist()]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info, content in items:
            if info.filename.endswith(".dist-info/RECORD"):
                content += f"{name},{record_hash(data)},{len(data)}\n".encode()
            dst.writestr(info, content)
        dst.writestr(name, data)
    return out


def _depends_check(wheel: Path, links: Path, work: Path) -> str:
    ws = prepare(wheel, work, work / "cmake-cache", (links,))
    return depends.check(Suite(ws))


def test_verify_installs_the_depended_wheel_and_refuses_a_graft_too(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    links = wheels["tinyhash"].parent
    good = _depends_check(wheels["geokit"], links, tmp_path / "good")
    assert good == (
        "tinyhash>=1.0,<1.1 installed beside it, reached by RUNPATH, nothing of it grafted"
    )
    # The same wheel with the copy of libtinyhash the default (grafting) wheel carries.
    with zipfile.ZipFile(wheels["grafted"]) as zf:
        (copy,) = [n for n in zf.namelist() if n.startswith("geo_kit.libs/libtinyhash")]
        data = zf.read(copy)
    both = _with_member(wheels["geokit"], tmp_path / wheels["geokit"].name, copy, data)
    with pytest.raises(CheckFailed, match=r"tinyhash is depended on \(tinyhash>=1.0,<1.1\) "
                       r"and grafted too: \['libtinyhash-[0-9a-f]{8}\.so'\]"):  # fmt: skip
        _depends_check(both, links, tmp_path / "both")


@pytest.mark.long
@pytest.mark.sdkdeps
def test_etpkg_verify_passes_across_the_two_wheels(wheels: dict[str, Path]) -> None:
    proc = run_etpkg(
        "verify",
        "--cmake",
        "3.31.10",
        "-q",
        "--find-links",
        wheels["tinyhash"].parent,
        wheels["geokit"],
    )  # one CMake, both generators and the variables route
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "PASS  SDK wheels depended on" in proc.stdout
    assert "PASS  variables 3.31.10" in proc.stdout

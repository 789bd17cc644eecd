"""Every fixture package of tests/fixtures (each a shape of SDK unlike etrt: see
etpkg_fixtures.PACKAGES) built with `conan create`, wheelified, and then:

- held against Conan's own generators for the same package (CMakeDeps, PkgConfigDeps): the
  wheel gives the config file names, imported targets and .pc names a Conan user finds;
- consumed by a real CMake project and by a pkg-config build, each proving what the package
  is for (a plugin registered, a header-only part used, a dependency's function called);
- proven by `etpkg verify`.
"""

from __future__ import annotations

import re
import shlex
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import etpkg
import pytest
from etpkg import testing
from etpkg._internal import tags
from etpkg_fixtures import PACKAGES, REPO_ROOT, conan, ensure, run_etpkg

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
APPS = REPO_ROOT / "tests" / "consumer"
NAMES = ("toysdk", "geokit", "geokit-shared", "ringbuf")
# CMake versions verify runs the targets and variables checks on: the oldest (before the
# $ORIGIN fix) and the newest (toysdk's own suite runs the whole matrix).
VERIFY_CMAKE = ("3.24.3", "4.4.5")


def fnv1a(text: str) -> int:
    h = 14695981039346656037
    for byte in text.encode():
        h = ((h ^ byte) * 1099511628211) % 2**64
    return h


# What each package's own app prints when the SDK works: the CMake app in tests/consumer,
# linking the package-wide target, and the same source built from `pkg-config --cflags
# --libs <modules>`.
EXPECTED = {
    "toysdk": (
        "toysdk_app",
        ["-DTOYSDK_LINK=core;plugin;extra"],
        ("toysdk",),
        ["-DTOYSDK_APP_EXTRA"],
        re.compile(r"api=3 plugins=1 toy_plugin=1\ncompressed=[1-9]\d*\nbzip2=1\.0\.\d"),
    ),
    "geokit": (
        "geokit_app",
        [],
        ("geo-kit",),
        [],
        re.compile(rf"shapes=2 triangle=6 right=90 compat=1 id={fnv1a('triangle'):016x}\n$"),
    ),
    "ringbuf": (
        "ringbuf_app",
        [],
        ("ringbuf",),
        [],
        re.compile(r"full=1 first=1 size=1 checked=1"),
    ),
}
EXPECTED["geokit-shared"] = EXPECTED["geokit"]


@pytest.fixture(scope="module", params=NAMES)
def name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def wheel(name: str, package_wheel: Callable[[str], Path]) -> Path:
    return package_wheel(name)


@pytest.fixture(scope="module")
def installed(
    wheel: Path, name: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[testing.Workspace]:
    yield testing.prepare(wheel, tmp_path_factory.mktemp(f"installed-{name}"), CMAKE_CACHE)


def members(wheel: Path) -> set[str]:
    return set(zipfile.ZipFile(wheel).namelist())


def read(wheel: Path, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as zf:
        (member,) = [n for n in zf.namelist() if n.endswith(suffix)]
        return zf.read(member).decode()


# ----------------------------------------------------------------------------- the wheel


def test_wheel_name_tag_and_normalized_version(name: str, wheel: Path) -> None:
    expected = {
        "toysdk": ("toysdk-0.3.1-py3-none-manylinux_2_", "toysdk"),
        "geokit": (
            f"geo_kit-1.2.3rc1-py3-none-{tags.glibc_platform(tags.arch_for_conan('x86_64'))}",
            "geo_kit",
        ),
        "geokit-shared": ("geo_kit-1.2.3rc1-py3-none-manylinux_2_", "geo_kit"),
        "ringbuf": ("ringbuf-2024.5.1-py3-none-any", "ringbuf_sdk"),
    }
    prefix, package = expected[name]
    assert wheel.name.startswith(prefix), wheel.name
    meta = read(wheel, ".dist-info/METADATA")
    version = wheel.name.split("-")[1]
    assert f"\nversion: {version}\n" in meta.lower()
    assert {n.split("/")[0] for n in members(wheel)} >= {
        package,
        f"{wheel.name.split('-')[0]}-{version}.dist-info",
    }
    purelib = "Root-Is-Purelib: true" in read(wheel, ".dist-info/WHEEL")
    assert purelib == (name == "ringbuf")


def test_header_only_package_has_no_binary_at_all(package_wheel: Callable[[str], Path]) -> None:
    wheel = package_wheel("ringbuf")
    with zipfile.ZipFile(wheel) as zf:
        binaries = [n for n in zf.namelist() if zf.read(n)[:4] == b"\x7fELF" or n.endswith(".a")]
    assert binaries == []
    assert "ringbuf_sdk/include/ringbuf/ringbuf.hpp" in members(wheel)


def test_binary_selection_picks_static_or_shared(package_wheel: Callable[[str], Path]) -> None:
    static, shared = members(package_wheel("geokit")), members(package_wheel("geokit-shared"))
    assert {"geo_kit/lib/libgeokit.a", "geo_kit/lib/libgeokit_shapes.a"} <= static
    assert "geo_kit/lib/libtinyhash.a" in static  # a dependency's archive consumers link
    assert not [n for n in static if n.endswith(".so") or ".libs/" in n]
    assert {"geo_kit/lib/libgeokit.so", "geo_kit/lib/libgeokit_shapes.so"} <= shared
    grafted = [n for n in shared if n.startswith("geo_kit.libs/")]
    assert len(grafted) == 1 and grafted[0].split("/")[1].startswith("libtinyhash-"), grafted


def test_licences_of_the_package_and_of_what_it_redistributes(name: str, wheel: Path) -> None:
    """PEP 639: every licence file in .dist-info/licenses/, each named by License-File."""
    expected = {
        "toysdk": {"LICENSE", "libbz2-1.0/copyright", "libbz2-dev/copyright"},
        "geokit": {"LICENSE", "tinyhash/LICENSE"},
        "geokit-shared": {"LICENSE", "tinyhash/LICENSE"},
        "ringbuf": {"LICENSE"},
    }[name]
    dist = next(n.split("/")[0] for n in members(wheel) if ".dist-info/" in n)
    shipped = {n.split("/licenses/", 1)[1] for n in members(wheel) if "/licenses/" in n}
    assert shipped == expected
    # Each once: geokit-shared both ships tinyhash's headers and grafts its library.
    listed = re.findall(r"^license-file: (.+)$", read(wheel, "/METADATA"), re.M | re.I)
    assert sorted(listed) == sorted(expected)
    assert all(f"{dist}/licenses/{rel}" in members(wheel) for rel in listed)


def test_cli_and_api_give_the_same_wheel_for_a_selection(
    package_wheel: Callable[[str], Path], tmp_path: Path
) -> None:
    fixture = ensure("geokit-shared")
    api = etpkg.wheelify(fixture.ref, tmp_path / "api", options=list(fixture.options))
    assert api.read_bytes() == package_wheel("geokit-shared").read_bytes()
    sdk = etpkg.read_package(fixture.ref, options=list(fixture.options))
    assert [c.linkage for c in sdk.components if c.libs] == ["shared", "shared"]


def test_a_selection_with_no_binary_is_one_line(tmp_path: Path) -> None:
    ref = ensure("geokit").ref
    proc = run_etpkg("wheelify", ref, "-s", "build_type=Debug", "--output-dir", tmp_path / "d")
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "no binary of geo-kit/1.2.3-rc1, tinyhash/1.0 for -s build_type=Debug" in proc.stderr
    assert not (tmp_path / "d").exists()


def test_a_profile_selects_the_binary(package_wheel: Callable[[str], Path], tmp_path: Path) -> None:
    """-pr takes a profile file as conan install does (here: the default one plus the option)."""
    default = Path(conan("profile", "path", "default").strip())
    profile = tmp_path / "shared"
    profile.write_text(f"include({default})\n[options]\n*:shared=True\n")
    ref = ensure("geokit-shared").ref
    proc = run_etpkg("wheelify", ref, "-pr", profile, "--output-dir", tmp_path / "d")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).read_bytes() == package_wheel("geokit-shared").read_bytes()


# ----------------------------------------------------------------------------- Conan's names

NAMES_PROBE = """cmake_minimum_required(VERSION 3.24...4.4)
project(names LANGUAGES NONE)
find_package({name} CONFIG REQUIRED)
get_directory_property(targets IMPORTED_TARGETS)
list(SORT targets)
get_filename_component(config "${{{name}_CONFIG}}" NAME)
message(STATUS "etpkg-names: config=${{config}} targets=${{targets}}")
"""


def configured_names(
    ws: testing.Workspace, work: Path, cmake_file_name: str, prefix: Path
) -> tuple[str, set[str]]:
    """(config file find_package took, imported targets) of find_package(<name>) in prefix."""
    src = work / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "CMakeLists.txt").write_text(NAMES_PROBE.format(name=cmake_file_name))
    tool = ws.tool(testing.MODERN[0])
    proc = testing.run(
        [
            tool.cmake,
            "-S",
            src,
            "-B",
            work / "build",
            f"-DCMAKE_PREFIX_PATH={prefix}",
            "-DCMAKE_BUILD_TYPE=Release",  # CMakeDeps insists
        ],
        env=ws.env(tool),
    )
    found = re.search(r"etpkg-names: config=(\S+) targets=(\S*)", proc.stdout)
    assert found, proc.stdout
    return found.group(1), set(found.group(2).split(";")) - {""}


def test_names_are_conans_cmakedeps_and_pkgconfigdeps(
    name: str, installed: testing.Workspace, tmp_path: Path
) -> None:
    fixture = PACKAGES[name]
    generated = tmp_path / "conan"
    conan(
        "install",
        f"--requires={fixture.ref}",
        *fixture.conan_args,
        "-g",
        "CMakeDeps",
        "-g",
        "PkgConfigDeps",
        "-of",
        str(generated),
    )
    sdk = installed.sdk
    conan_config, conan_targets = configured_names(
        installed, tmp_path / "conan-probe", sdk.cmake_file_name, generated
    )
    wheel_config, wheel_targets = configured_names(
        installed, tmp_path / "wheel-probe", sdk.cmake_file_name, installed.pkg_root
    )
    # The same config file name (so the same find_package spellings find it) and version file.
    assert wheel_config == conan_config
    version_file = conan_config.replace("Config.cmake", "ConfigVersion.cmake").replace(
        "-config.cmake", "-config-version.cmake"
    )
    assert (generated / version_file).is_file()
    assert (installed.pkg_root / "lib" / "cmake" / sdk.cmake_file_name / version_file).is_file()
    # Every target Conan gives (its own helpers and the OS's packages' aside) the wheel gives,
    # and only those, besides the imported executables: a required package the wheel carries
    # (tinyhash) gives its own targets, as find_dependency does for a CMakeDeps consumer.
    dep_namespaces = ("BZip2::", "CONAN_LIB::")  # CONAN_LIB: its internals
    expected = {t for t in conan_targets if "::" in t and not t.startswith(dep_namespaces)}
    executables = {f"{sdk.cmake_namespace}::{exe}" for exe in sdk.executables}
    assert wheel_targets - executables == expected
    assert sdk.cmake_target in expected  # the package-wide target, e.g. GeoKit::GeoKit
    # The same .pc names, a carried package's included (a system package's aside).
    deps = {f"{recipe}.pc" for recipe, version in fixture.recipes if version == "system"}
    conan_pcs = {p.name for p in generated.glob("*.pc")} - deps
    wheel_pcs = {p.name for p in (installed.lib_dir / "pkgconfig").glob("*.pc")}
    assert wheel_pcs == conan_pcs, (wheel_pcs, conan_pcs)


def test_parity_finds_no_difference_from_cmakedeps_and_pkgconfigdeps(
    name: str, wheel: Path, tmp_path: Path
) -> None:
    """etpkg parity on every fixture shape: registration-only plugin and a system package
    (toysdk: BZip2 left to the OS), archives and a carried requirement whose archive ships
    (geokit: tinyhash's own config and .pc), the same shared (tinyhash's headers only reach
    consumers, its library grafted), header-only with a version whose PEP 440 form differs
    (2024.05.1)."""
    report = etpkg.parity(wheel, conan_args=list(PACKAGES[name].conan_args), work_dir=tmp_path)
    assert report.ok, "\n".join(report.differences)


# ----------------------------------------------------------------------------- consumers


def test_cmake_project_uses_the_sdk(name: str, installed: testing.Workspace) -> None:
    app_dir, args, _, _, pattern = EXPECTED[name]
    tool = installed.tool(testing.MODERN[0])
    build = installed.root / "cmake-app"
    installed.configure(tool, "Ninja", APPS / app_dir, build, *args)
    installed.build(tool, build)
    out = testing.run([build / "app"], env=installed.env(tool)).stdout
    assert pattern.search(out), out


def test_pkg_config_build_uses_the_sdk(name: str, installed: testing.Workspace) -> None:
    """The app's source compiled with `pkg-config --cflags --libs` of the package's .pc (all
    components through its Requires), linked with --as-needed."""
    app_dir, _, modules, defines, pattern = EXPECTED[name]
    source = next(p for p in (APPS / app_dir).iterdir() if p.suffix in (".c", ".cpp"))
    pc_env = {"PKG_CONFIG_PATH": str(installed.lib_dir / "pkgconfig"), "PATH": "/usr/bin:/bin"}
    flags = shlex.split(
        testing.run(["pkg-config", "--cflags", "--libs", *modules], env=pc_env).stdout
    )
    if source.suffix == ".c":
        assert not [f for f in flags if f.startswith("-std=c++")], flags  # C gets no C++ flag
    compiler = "gcc" if source.suffix == ".c" else "g++"
    app = installed.root / f"pc-app-{name}"
    rpaths = [f"-Wl,-rpath,{d}" for d in installed.wheel_lib_dirs]
    testing.run([compiler, *defines, source, "-o", app, "-Wl,--as-needed", *flags, *rpaths])
    assert pattern.search(testing.run([app]).stdout)


def test_pkg_config_define_prefix_prints_normalised_paths(
    name: str, installed: testing.Workspace
) -> None:
    """A relocatable .pc names its files from its own place (${pcfiledir}/../..); pkg-config's
    --define-prefix (the README's advice) prints them normalised, each one an existing path; only
    the grafted libraries' directory stays a sibling of the package (<pkg>/../<dist>.libs)."""
    _, _, modules, _, _ = EXPECTED[name]
    pc_env = {"PKG_CONFIG_PATH": str(installed.lib_dir / "pkgconfig"), "PATH": "/usr/bin:/bin"}
    plain = testing.run(["pkg-config", "--cflags", "--libs", *modules], env=pc_env).stdout
    flags = shlex.split(
        testing.run(
            ["pkg-config", "--define-prefix", "--cflags", "--libs", *modules], env=pc_env
        ).stdout
    )
    paths = [f[2:] for f in flags if f.startswith(("-I", "-L"))]
    paths += [p for f in flags if f.startswith("-Wl,") for p in f.split(",") if p.startswith("/")]
    assert "/../" in plain and paths, (plain, flags)
    for path in paths:
        inside = re.sub(r"/[^/]+/\.\./([^/]+\.libs)\b", r"/\1", path)
        assert "/../" not in inside and "/./" not in inside, flags
        assert Path(path).exists(), path


def test_python_m_reports_the_same_version_everywhere(
    name: str, installed: testing.Workspace
) -> None:
    """The wheel's PEP 440 version, the .pc Version, <NAME>_BUILD_VERSION and the CMake
    version file agree (2024.05.1 is 2024.5.1, 1.2.3-rc1 is 1.2.3rc1 and CMake's 1.2.3)."""
    sdk = installed.sdk
    py = installed.venv / "bin" / "python"
    printed = testing.run([py, "-m", sdk.import_name, "--version"]).stdout.strip()
    assert printed == sdk.wheel_version
    pc_env = {"PKG_CONFIG_PATH": str(installed.lib_dir / "pkgconfig"), "PATH": "/usr/bin:/bin"}
    module = sdk.components[0].pkg_config_name or ""
    assert testing.run(["pkg-config", "--modversion", module], env=pc_env).stdout.strip() == printed
    config_dir = installed.pkg_root / "lib" / "cmake" / sdk.cmake_file_name
    texts = "\n".join(p.read_text() for p in config_dir.glob("*.cmake"))
    assert f'set(PACKAGE_VERSION "{sdk.cmake_version}")' in texts
    assert f'set({sdk.variable_prefix}_BUILD_VERSION "{printed}" PARENT_SCOPE)' in texts
    expected = {"toysdk": "0.3.1", "geokit": "1.2.3rc1", "geokit-shared": "1.2.3rc1"}
    assert printed == expected.get(name, "2024.5.1")


def test_geokit_tool_runs_from_the_installed_wheel(
    package_wheel: Callable[[str], Path], tmp_path: Path
) -> None:
    """bindirs: the executable runs where the wheel installed it, its plugin registered."""
    for name in ("geokit", "geokit-shared"):
        ws = testing.prepare(package_wheel(name), tmp_path / name, CMAKE_CACHE)
        out = testing.run([ws.pkg_root / "bin" / "geokit-info"]).stdout
        assert out.strip() == "geo-kit 1.2.3-rc1 shapes=2 polygon-area=4", out
        assert (
            ws.pkg_root / "share" / "geokit" / "shapes.txt"
        ).read_text() == "polygon\ntriangle\n"


# ----------------------------------------------------------------------------- etpkg verify


@pytest.mark.parametrize(
    ("package", "quick"),
    # toysdk: its own suite runs the whole matrix (test_toysdk_consumers.py).
    [("geokit", False), ("geokit-shared", True), ("ringbuf", False)],
)
def test_verify_passes(
    package: str, quick: bool, package_wheel: Callable[[str], Path], tmp_path: Path
) -> None:
    report = etpkg.verify(
        package_wheel(package),
        quick=quick,
        cmake_versions=VERIFY_CMAKE,
        work_dir=tmp_path / "w",
        cmake_cache=CMAKE_CACHE,
        strict_headers=True,
    )
    failed = {r.name: r.detail for r in report.failures}
    assert report.ok, failed
    names = {r.name for r in report.results}
    assert {"package-wide target", "executables and data"} <= names
    assert quick or "variables 3.24.3" in names
    print("\n".join(f"{r.name}: {r.detail[:160]}" for r in report.results), file=sys.stderr)

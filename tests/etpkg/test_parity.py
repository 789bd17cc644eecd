"""The wheel gives consumers what CMakeDeps and PkgConfigDeps give them (issue 21), proved by
`etpkg parity` on a package that sets every property those generators read
(parity_recipes.py) and by real consumers built against the wheel alone; plus the names and
policies around it (import names, build paths in ELF data, Conan's spellings, -std)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import etpkg
import pytest
from etpkg._internal import conan as conan_module
from etpkg._internal.build import checks
from etpkg._internal.build.elf import read_elf
from etpkg._internal.conan import Selection, component_aliases
from etpkg._internal.conanargs import as_pairs
from etpkg._internal.errors import LayoutError, PackageError
from etpkg._internal.model import CXX, C, Component, Sdk, default_import_name
from etpkg._internal.plan.cmake import render_cmake_package
from etpkg._internal.plan.pkgconfig import render_component
from etpkg_fixtures import (
    REPO_ROOT,
    checked_run,
    conan,
    env,
    rewrite_wheel,
    run_etpkg,
    write_tree,
)
from parity_recipes import PARKIT_REF, RECIPES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    recipes = tmp_path_factory.mktemp("parity-recipes")
    write_tree(recipes, RECIPES)
    conan("create", str(recipes / "pardep"))
    conan("create", str(recipes / "parkit"))
    dist = tmp_path_factory.mktemp("dist-parkit")
    # Conan's own spellings, as conan create takes them (issue 21, observation 8).
    proc = run_etpkg(
        "wheelify", PARKIT_REF, "--output-dir", dist,
        "-pr:h", "default", "-pr:b", "default", "-s:h", "build_type=Release",
        "-c", "tools.build:jobs=1", "--build", "missing",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "component core: cpp_info.sources ['src/core.c'] are not compiled" in proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def site(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("parity-site")
    checked_run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                 "--target", target, wheel])  # fmt: skip
    return target


def helper(site: Path, *args: str) -> str:
    run_env = {**env(), "PYTHONPATH": str(site)}
    return checked_run([sys.executable, "-m", "parkit", *args], env=run_env).stdout.strip()


def test_parity_finds_no_difference_on_a_package_setting_every_property(
    wheel: Path, tmp_path: Path
) -> None:
    report = etpkg.parity(wheel, work_dir=tmp_path)
    assert report.ok, "\n".join(report.differences)
    assert {
        "cmake parkit (CONFIG)",
        "cmake PARKIT (MODULE)",
        "cmake Par-Dep (CONFIG)",
        "pkg-config parkit",
        "pkg-config parkit-1",
        "pkg-config parkit-core",
        "pkg-config parkitcore",
        "pkg-config parkit-extra",
        "pkg-config pardep",
    } <= set(report.checked), report.checked


def test_parity_lists_each_difference_on_one_line_and_exits_1(wheel: Path, tmp_path: Path) -> None:
    refuse_all = rewrite_wheel(
        wheel,
        tmp_path / "a" / wheel.name,
        "parkit-config-version.cmake",
        lambda d: d.replace(b"set(PACKAGE_VERSION_COMPATIBLE TRUE)", b""),
    )
    broken = rewrite_wheel(
        refuse_all,
        tmp_path / "b" / wheel.name,
        "lib/pkgconfig/parkit-core.pc",
        lambda d: d.replace(b" -DPARKIT_CORE=1", b""),
    )
    flavour = rewrite_wheel(
        broken,
        tmp_path / "c" / wheel.name,
        "lib/pkgconfig/pardep.pc",
        lambda d: d.replace(b"flavour=plain", b"flavour=other"),
    )
    proc = run_etpkg("parity", flavour, "--work", tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    # pkg_config_custom_content: a variable's value is compared too.
    assert "pkg-config pardep: variable flavour: PkgConfigDeps 'plain', wheel 'other'" in lines
    assert "cmake parkit (CONFIG): version 1.4.2: CMakeDeps accepts it, the wheel does not" in lines
    assert any(ln.startswith("pkg-config parkit-core: cflags: PkgConfigDeps {") for ln in lines)
    assert lines[-1].endswith("difference(s) for parkit/1.4.2")


CONSUMER_CMAKE = """
    cmake_minimum_required(VERSION 3.21)
    project(consumer C)
    # Observation 4: ParDep declares AnyNewerVersion, so an older request is accepted; its
    # version is its system_package_version, as CMakeDeps reports it.
    find_package(Par-Dep 1.0 REQUIRED)
    if(NOT Par-Dep_VERSION STREQUAL "7.0.1")
      message(FATAL_ERROR "Par-Dep_VERSION ${Par-Dep_VERSION}")
    endif()
    find_package(parkit 1.4 REQUIRED)
    # Observation 3: a required package the wheel carries gives its own targets.
    if(NOT TARGET ParDep::pardep OR NOT TARGET parkit::extra_alias OR NOT TARGET parkit::all)
      message(FATAL_ERROR "missing targets")
    endif()
    # Observation 5: CMakeDeps' variables, in the file name's case and upper case.
    if(NOT parkit_LIBRARIES STREQUAL "parkit::parkit"
       OR NOT parkit_DEFINITIONS STREQUAL "-DPARKIT_CORE=1"
       OR NOT PARKIT_VERSION_STRING STREQUAL "1.4.2"
       OR NOT Par-Dep_INCLUDE_DIR OR NOT PAR-DEP_INCLUDE_DIRS)
      message(FATAL_ERROR "variables: ${parkit_LIBRARIES} ${parkit_DEFINITIONS}")
    endif()
    # A builddir is on CMAKE_MODULE_PATH (finding F12: doctest, catch2).
    include(parkit_tools)
    parkit_tools_answer(answer)
    if(NOT answer EQUAL 42)
      message(FATAL_ERROR "builddir module: ${answer}")
    endif()
    # Conan 2's CMake-only properties: cmake_extra_dependencies found, cmake_extra_variables
    # set (a package-folder path as the wheel's own root, ${...} expanded, a cache entry),
    # cmake_extra_interface_libs on the component's target.
    get_filename_component(root "${parkit_DIR}/../../.." ABSOLUTE)
    get_property(mode_type CACHE PARKIT_MODE PROPERTY TYPE)
    get_target_property(extra_links parkit::extra INTERFACE_LINK_LIBRARIES)
    if(NOT Threads_FOUND OR NOT TARGET Threads::Threads
       OR NOT PARKIT_ROOT STREQUAL root OR NOT PARKIT_TOOLDIR STREQUAL "${root}/cmake"
       OR NOT EXISTS "${PARKIT_TOOLDIR}/parkit_tools.cmake" OR NOT PARKIT_LEVEL EQUAL 3
       OR NOT PARKIT_GENERATED_BY STREQUAL "Ninja generator"
       OR NOT PARKIT_MODE STREQUAL "fast" OR NOT mode_type STREQUAL "STRING"
       OR NOT "Threads::Threads" IN_LIST extra_links)
      message(FATAL_ERROR "extra: ${Threads_FOUND} ${PARKIT_ROOT} (${root}) ${PARKIT_TOOLDIR} "
        "${PARKIT_LEVEL} ${PARKIT_GENERATED_BY} ${PARKIT_MODE} ${mode_type} ${extra_links}")
    endif()
    add_executable(app main.c)
    target_link_libraries(app PRIVATE parkit::extra_alias ParDep::pardep)
"""
MODULE_CMAKE = """
    cmake_minimum_required(VERSION 3.21)
    project(consumer C)
    # Observation 1: the package's Find module answers module mode.
    find_package(PARKIT 1.4 MODULE REQUIRED)
    if(NOT TARGET Threads::Threads OR NOT PARKIT_LEVEL EQUAL 3
       OR NOT EXISTS "${PARKIT_TOOLDIR}/parkit_tools.cmake")
      message(FATAL_ERROR "extra: ${PARKIT_LEVEL} ${PARKIT_TOOLDIR}")
    endif()
    add_executable(app main.c)
    target_link_libraries(app PRIVATE PARKIT::PARKIT)
"""
MAIN_C = """
    #include <stdio.h>
    #include <parkit/extra.h>
    int main(void) { printf("%d %d\\n", parkit_extra(3), pardep_twice(5)); return 0; }
"""


@pytest.mark.parametrize("cmake_lists", [CONSUMER_CMAKE, MODULE_CMAKE], ids=["config", "module"])
def test_a_cmake_consumer_of_the_wheel_alone_builds_and_runs(
    site: Path, tmp_path: Path, cmake_lists: str
) -> None:
    write_tree(tmp_path / "src", {"CMakeLists.txt": cmake_lists, "main.c": MAIN_C})
    build = tmp_path / "build"
    checked_run(
        ["cmake", "-G", "Ninja", "-S", tmp_path / "src", "-B", build,
         f"-DCMAKE_PREFIX_PATH={helper(site, '--cmake-prefix-path')}",
         f"-DCMAKE_MODULE_PATH={helper(site, '--cmake-module-path')}",
         "-DCMAKE_IGNORE_PREFIX_PATH=/usr;/usr/local"],
        env=env(),
    )  # fmt: skip
    checked_run(["cmake", "--build", build], env=env())
    assert checked_run([build / "app"]).stdout == "100 10\n"
    # Built without a SONAME (nosoname), the wheel's copy has one: consumers' DT_NEEDED
    # names the file, never the path it was linked by.
    lib = site / "parkit" / "lib"
    assert read_elf(lib / "libparkit_core.so").soname == "libparkit_core.so"
    # extra was linked to it by path (as CMake links a library without SONAME): its DT_NEEDED
    # names the shipped file, and the build-machine path is gone from its string table too.
    assert "libparkit_core.so" in read_elf(lib / "libparkit_extra.so").needed
    assert b"/libparkit_core.so" not in (lib / "libparkit_extra.so").read_bytes()


def test_a_pkg_config_consumer_of_an_alias_builds_with_the_required_packages_pc(
    site: Path, tmp_path: Path
) -> None:
    """Observations 2 and 9: parkit-1.pc (an alias) requires parkit.pc, whose components
    require pardep.pc (the carried package's own); no -std reaches a C consumer."""
    pc_env = {"PKG_CONFIG_LIBDIR": helper(site, "--pkg-config-path"), "PATH": "/usr/bin:/bin"}
    flags = shlex.split(
        checked_run(["pkg-config", "--cflags", "--libs", "parkit-1"], env=pc_env).stdout
    )
    assert "-DPARDEP_ON=1" in flags and not [f for f in flags if f.startswith("-std")], flags
    variable = ["pkg-config", "--variable=flavour", "parkit-extra"]
    assert checked_run(variable, env=pc_env).stdout.strip() == "extra"
    # The nested include dir reaches every route (finding F15: json-c's include/json-c).
    assert "-I${includedir}/parkit" in (site / "parkit/lib/pkgconfig/parkit-core.pc").read_text()
    assert f"-I{site / 'parkit' / 'include' / 'parkit'}" in helper(site, "--includes").split()
    versions = ["pkg-config", "--modversion", "parkit-extra", "pardep", "parkit-1"]
    assert checked_run(versions, env=pc_env).stdout.split() == ["9.9", "7.0.1", "1.4.2"]
    (tmp_path / "main.c").write_text(MAIN_C.replace("\n    ", "\n"))
    compiler = shutil.which("clang") or "gcc"
    app = tmp_path / "app"
    checked_run([compiler, tmp_path / "main.c", "-o", app, *flags])
    run_env = {**os.environ, "LD_LIBRARY_PATH": str(site / "parkit" / "lib")}
    assert checked_run([app], env=run_env).stdout == "100 10\n"


def _sdk(**component: object) -> Sdk:
    comp = Component(name="core", target="x::core", libs=("x",), **component)  # type: ignore[arg-type]
    return Sdk("x", "1.0", Path("x"), (comp,), "x", "x", cxx_standard="17")


def test_pc_files_carry_std_only_for_components_declared_cxx_only() -> None:
    """Observation 9: without declared languages a .pc has no -std (PkgConfigDeps never
    writes one); declared C++ alone keeps the package's standard."""
    undeclared = _sdk(languages=(CXX,), languages_declared=False, cflags=("-fno-common",))
    text = render_component(undeclared, undeclared.components[0])
    assert "-std=" not in text and "-fno-common" in text
    declared = _sdk(languages=(CXX,), languages_declared=True)
    assert "-std=c++17" in render_component(declared, declared.components[0])
    both = _sdk(languages=(C, CXX), languages_declared=True)
    assert "Cflags: -I${includedir}\n" in render_component(both, both.components[0])


class _Info:
    def __init__(self, value: str | None) -> None:
        self.value = value

    def get_property(self, name: str) -> str | None:
        return self.value


def test_an_import_name_shadowing_the_standard_library_gets_a_safe_default_or_is_refused() -> None:
    """Observation 6: zlib's wheel imports as zlib_sdk; etpkg_import_name "json" is refused
    naming the property."""
    assert default_import_name("zlib") == "zlib_sdk"
    assert default_import_name("numpy") == "numpy_sdk"
    assert default_import_name("geo-kit") == "geo_kit"
    assert conan_module._import_name(_Info(None), "zlib") == "zlib_sdk"
    with pytest.raises(LayoutError, match=r"etpkg_import_name.*shadow the standard library.s json"):
        conan_module._import_name(_Info("json"), "jsonkit")


def test_a_build_path_in_elf_string_data_is_reported_and_refused_only_when_strict(
    tmp_path: Path,
) -> None:
    """Observation 7: a __FILE__ string inside a program is data; a .pc naming the build
    dir is a path a consumer uses."""
    build_dir = Path("/home/builder/.conan2/p/b/zstd1234/b")
    program = tmp_path / "pkg" / "bin" / "zstd"
    program.parent.mkdir(parents=True)
    elf = Path(sys.executable).resolve().read_bytes()
    program.write_bytes(elf + (str(build_dir) + "/lib/common/zstd.c\0").encode() * 3)
    pc = tmp_path / "pkg" / "lib" / "pkgconfig" / "zstd.pc"
    pc.parent.mkdir(parents=True)
    pc.write_text(f"prefix={build_dir}\n")
    problems = checks.forbidden_path_problems(tmp_path, [build_dir])
    assert [p.path for p in problems] == ["pkg/lib/pkgconfig/zstd.pc"]
    strict = checks.forbidden_path_problems(tmp_path, [build_dir], strict=True)
    assert sorted(p.path for p in strict) == ["pkg/bin/zstd", "pkg/lib/pkgconfig/zstd.pc"]
    assert [(e.path, e.count) for e in checks.embedded_paths(tmp_path, [build_dir])] == [
        ("pkg/bin/zstd", 3)
    ]


def test_conan_spellings_map_to_host_and_build_contexts() -> None:
    """Observation 8: -pr:h/-pr:b/-s:h/-s:b/-o:a/-c/--build as conan create reads them."""
    pairs = [("-pr:h", "h"), ("-pr:b", "b"), ("-s:h", "build_type=Debug"),
             ("-s:b", "os=Linux"), ("-o:a", "*:shared=True"), ("-c", "tools.build:jobs=2"),
             ("--build", "missing")]  # fmt: skip
    sel = Selection.from_conan_args(pairs, Selection(profiles=("p",)))
    assert sel.profiles == ("p", "h") and sel.build_profiles == ("b",)
    assert sel.settings == ("build_type=Debug",) and sel.build_settings == ("os=Linux",)
    assert sel.options == sel.build_options == ("*:shared=True",)
    assert sel.conf == ("tools.build:jobs=2",) and sel.build_modes == ("missing",)
    api = Selection.from_conan_args(
        as_pairs(["-pr:b", "b", "-s:h", "build_type=Debug", "--build=missing"]), Selection()
    )
    assert api.build_profiles == ("b",) and api.build_modes == ("missing",)
    with pytest.raises(etpkg.PackageError, match="-q"):
        etpkg.wheelify("x/1.0", conan_args=["-q", "x"])
    proc = subprocess.run(
        [sys.executable, "-m", "etpkg", "wheelify", "-pr:x", "a"],
        env=env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "unrecognized arguments" in proc.stderr


def test_verify_passes_on_a_find_mode_both_package_with_its_own_version_policy(
    wheel: Path, tmp_path: Path
) -> None:
    """verify's consumers get the package's config, not CMake's Find<Name> (corpus finding
    F3), its version checks follow SameMinorVersion (1.3 refused), and the carried Par-Dep's
    variables (PAR-DEP_* too, CMakeDeps' upper case: findings F8, F11) are not a leak."""
    report = etpkg.verify(
        wheel,
        quick=True,
        work_dir=tmp_path / "w",
        cmake_cache=REPO_ROOT / "build" / "cmake-venvs",
        strict_headers=True,
    )
    assert report.ok, {r.name: r.detail for r in report.failures}
    versions = next(r for r in report.results if r.name == "versions")
    assert "1.3: rejected" in versions.detail and "1.4: accepted" in versions.detail


def test_parity_creates_its_work_directory(wheel: Path, tmp_path: Path) -> None:
    """Corpus finding F4: --work naming a directory that does not exist yet."""
    proc = run_etpkg("parity", wheel, "--work", tmp_path / "new" / "dir")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("no difference")


def test_a_find_module_names_a_package_without_components_by_its_module_target() -> None:
    """cmake_module_file_name / cmake_module_target_name of a package with no components
    (giflib: GIF, GIF::GIF) name the Find module and its target; the config keeps its own."""
    comp = Component(name="gif", target="gif::gif", libs=("gif",), languages=(C,))
    sdk = Sdk(
        "gif", "5.2.1", Path("gif"), (comp,), "gif", "gif",
        cmake_target="gif::gif", cmake_find_mode="both",
        cmake_module_file_name="GIF", cmake_module_target="GIF::GIF",
    )  # fmt: skip
    files = {k: v.decode() for k, v in render_cmake_package(sdk).items()}
    module = files["gif/lib/cmake/modules/FindGIF.cmake"]
    assert "add_library(GIF::GIF SHARED IMPORTED)" in module and "gif::gif" not in module
    assert "set(GIF_LIBRARIES" in module and "find_package_handle_standard_args(GIF" in module
    config = files["gif/lib/cmake/gif/gif-config.cmake"]
    assert "add_library(gif::gif SHARED IMPORTED)" in config and "GIF::GIF" not in config


def test_a_find_module_answers_ahead_of_cmakes_own_even_with_the_system_package_present(
    tmp_path: Path,
) -> None:
    """Observation 1: zlib's cmake_find_mode "both". Debian's zlib1g-dev is on this machine
    (/usr/include/zlib.h), so without the wheel's FindZLIB.cmake CMake's own FindZLIB answers
    find_package(ZLIB) from /usr; with the wheel's module dir on CMAKE_MODULE_PATH, the
    wheel's answers."""
    assert Path("/usr/include/zlib.h").is_file(), "the system zlib this test shadows is gone"
    comp = Component(name="zlib", target="ZLIB::ZLIB", libs=(), languages=(C,))
    sdk = Sdk(
        "zlib", "1.2.13", Path("zlib_sdk"), (comp,), "ZLIB", "ZLIB",
        cmake_target="ZLIB::ZLIB", cmake_find_mode="both",
    )  # fmt: skip
    for rel, data in render_cmake_package(sdk).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    (tmp_path / "zlib_sdk" / "include").mkdir()
    write_tree(
        tmp_path / "src",
        {
            "CMakeLists.txt": """
                cmake_minimum_required(VERSION 3.21)
                project(consumer C)
                find_package(ZLIB 1.2 REQUIRED)
                message(STATUS "zlib-from=${ZLIB_INCLUDE_DIRS}")
            """
        },
    )

    def answer(*args: str) -> str:
        proc = checked_run(
            ["cmake", "-S", tmp_path / "src", "-B", tmp_path / f"b{len(args)}", *args], env=env()
        )
        found = [ln for ln in proc.stdout.splitlines() if "zlib-from=" in ln]
        return found[0].split("zlib-from=", 1)[1]

    assert answer().startswith("/usr/include")  # CMake's own FindZLIB
    module_dir = tmp_path / "zlib_sdk" / "lib" / "cmake" / "modules"
    assert answer(f"-DCMAKE_MODULE_PATH={module_dir}") == str(tmp_path / "zlib_sdk" / "include")
    # What the config refuses (a range excluding 1.2.13, as verify asks) the Find module
    # refuses too, so falling back to module mode finds nothing.
    write_tree(
        tmp_path / "range",
        {
            "CMakeLists.txt": """
                cmake_minimum_required(VERSION 3.21)
                project(consumer C)
                find_package(ZLIB 1.1...<1.2.13 QUIET)
                message(STATUS "zlib-found=${ZLIB_FOUND}")
            """
        },
    )
    proc = checked_run(
        ["cmake", "-S", tmp_path / "range", "-B", tmp_path / "range-build",
         f"-DCMAKE_PREFIX_PATH={tmp_path / 'zlib_sdk'}", f"-DCMAKE_MODULE_PATH={module_dir}",
         "-DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON", "-DCMAKE_IGNORE_PREFIX_PATH=/usr"],
        env=env(),
    )  # fmt: skip
    assert "zlib-found=FALSE" in proc.stdout, proc.stdout


def _find_components(tmp_path: Path, sdk: Sdk, components: str, flag: str) -> tuple[int, str]:
    """Configures a consumer of `sdk`'s rendered config that asks find_package for
    `components`: (exit status, output), the output holding found=<Pkg>_FOUND and
    flag=<Pkg>_<flag>_FOUND."""
    prefix = tmp_path / sdk.name
    if not prefix.exists():
        for rel, data in render_cmake_package(sdk).items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_bytes(data)
        (prefix / "include").mkdir()
    pkg = sdk.cmake_file_name
    src = tmp_path / f"src-{components.replace(' ', '_').replace(':', '_')}"
    write_tree(
        src,
        {
            "CMakeLists.txt": f"""
                cmake_minimum_required(VERSION 3.21)
                project(consumer C)
                find_package({pkg} REQUIRED {components} CONFIG)
                message(STATUS "found=${{{pkg}_FOUND}} flag=${{{pkg}_{flag}_FOUND}}")
            """
        },
    )
    proc = subprocess.run(
        ["cmake", "-S", src, "-B", src / "build", f"-DCMAKE_PREFIX_PATH={prefix}",
         "-DCMAKE_IGNORE_PREFIX_PATH=/usr"],
        env=env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


def test_a_component_is_found_by_its_conan_name_its_target_or_the_targets_last_part(
    tmp_path: Path,
) -> None:
    """pcre2's upstream test_package asks find_package(PCRE2 REQUIRED 8BIT CONFIG) for
    PCRE2::8BIT (Conan component pcre2-8); CMakeDeps checks no component, so it answers. The
    wheel's config accepts each of the three names and still refuses an unknown one."""
    comps = (
        Component(name="pcre2-8", target="PCRE2::8BIT", libs=(), languages=(C,)),
        Component(name="pcre2-posix", target="PCRE2::POSIX", libs=(), languages=(C,),
                  requires=("pcre2-8",)),
    )  # fmt: skip
    sdk = Sdk("pcre2", "10.42", Path("pcre2"), comps, "PCRE2", "PCRE2", cmake_target="PCRE2::PCRE2")
    rc, out = _find_components(tmp_path, sdk, "8BIT PCRE2::POSIX pcre2-8", "8BIT")
    assert rc == 0 and ("found=1 flag=TRUE" in out or "found=TRUE flag=TRUE" in out), out
    rc, out = _find_components(tmp_path, sdk, "16BIT", "16BIT")
    assert rc != 0 and "requested component(s): 16BIT" in out, out


def test_a_component_alias_is_found_and_other_unknown_names_still_fail(tmp_path: Path) -> None:
    """Vorbis' upstream test_package asks find_package(Vorbis REQUIRED Enc CONFIG): Enc is
    upstream VorbisConfig's name for Vorbis::vorbisenc, which no Conan property declares
    (CMakeDeps answers only because it checks no component). An alias the wheel's maker gives
    (--component-alias Enc=vorbisenc) is found; File, not given, still fails, naming it."""
    comps = (
        Component(name="vorbismain", target="Vorbis::vorbis", libs=(), languages=(C,)),
        Component(name="vorbisenc", target="Vorbis::vorbisenc", libs=(), languages=(C,),
                  requires=("vorbismain",)),
    )  # fmt: skip
    aliases = component_aliases(["Enc=vorbisenc"], comps, "--component-alias")
    sdk = Sdk("vorbis", "1.3.7", Path("vorbis"), comps, "Vorbis", "Vorbis",
              cmake_target="Vorbis::Vorbis", component_aliases=aliases)  # fmt: skip
    rc, out = _find_components(tmp_path, sdk, "Enc", "Enc")
    assert rc == 0 and "flag=TRUE" in out, out
    rc, out = _find_components(tmp_path, sdk, "File", "File")
    assert rc != 0 and "requested component(s): File" in out, out


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("Enc", "expected <name>=<component>"),
        ("Enc=vorbisfile", "no component 'vorbisfile' (it has: vorbisenc, vorbismain)"),
        ("vorbis=vorbisenc", "'vorbis' already names component 'vorbismain'"),
        ("En c=vorbisenc", "expected <name>=<component>"),
    ],
)
def test_a_component_alias_must_name_a_component_and_a_free_name(entry: str, message: str) -> None:
    comps = (
        Component(name="vorbismain", target="Vorbis::vorbis", libs=(), languages=(C,)),
        Component(name="vorbisenc", target="Vorbis::vorbisenc", libs=(), languages=(C,)),
    )
    with pytest.raises(PackageError, match=re.escape(message)):
        component_aliases([entry], comps, "--component-alias")
    assert component_aliases(["Enc=vorbisenc", "Enc=vorbisenc"], comps, "x") == (
        ("Enc", "vorbisenc"),
    )


def test_a_left_out_packages_include_dirs_are_not_counted_in_pkg_config_cflags(
    tmp_path: Path,
) -> None:
    """PkgConfigDeps' .pc of a shared library Requires its private dependency's .pc (libarchive
    -> lzo2), so `pkg-config --cflags` gives that package's include dirs (lzo's include/lzo)
    though CMakeDeps gives none (the headers trait) and neither does the wheel. Parity leaves
    out what lies under a left-out package's folder; the package's own dirs still count."""
    from etpkg._internal.parity import observe

    own, dep, pcs = tmp_path / "own", tmp_path / "dep", tmp_path / "pc"
    for d in (own / "include", dep / "include" / "sub", pcs):
        d.mkdir(parents=True)
    (pcs / "dep.pc").write_text(
        f"Name: dep\nDescription: d\nVersion: 1\nCflags: -I{dep}/include -I{dep}/include/sub\n"
    )
    (pcs / "own.pc").write_text(
        f"Name: own\nDescription: o\nVersion: 1\nRequires: dep\nCflags: -I{own}/include\n"
    )
    roots = observe.Roots((own, dep))
    every = observe.run_pkg_config(pcs, "own", roots, dict(os.environ))
    assert every.cflags == {"-Iinclude", "-Iinclude/sub"}
    kept = observe.run_pkg_config(pcs, "own", roots, dict(os.environ), drop_under=(dep,))
    assert kept.cflags == {"-Iinclude"}

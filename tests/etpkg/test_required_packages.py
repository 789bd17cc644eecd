"""What a required package gives consumers besides its files (definitions, compile and link
flags) reaches them through the wheel as CMakeDeps and PkgConfigDeps would pass it on, and
component names Conan allows with '-' and '+' pass `etpkg verify`.

Two header-only packages, written here and created in the test's Conan cache (no compiler):
flagdep, whose header refuses to compile without its definition and includes a header found
only through its compile flag (a path in its package), and flagkit, whose components io-core
and kit++ ship flagdep's headers (a header-library's headers reach its consumers).
"""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import etpkg
import pytest
from etpkg import testing
from etpkg_fixtures import REPO_ROOT, conan, run_etpkg, write_tree

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
SDK_REF = "flagkit/1.0.0"
# The flag a consumer executable is linked with when flagdep's exelinkflags reach it.
LINK_FLAG = "-Wl,-z,now"

RECIPES = {
    "flagdep/conanfile.py": '''
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class FlagDep(ConanFile):
            name = "flagdep"
            version = "0.4.2"
            license = "MIT"
            package_type = "header-library"
            exports_sources = "include/*", "LICENSE"
            no_copy_source = True

            def package_id(self):
                self.info.clear()

            def package(self):
                copy(self, "*.hpp", os.path.join(self.source_folder, "include"),
                     os.path.join(self.package_folder, "include"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                self.cpp_info.bindirs = []
                self.cpp_info.libdirs = []
                self.cpp_info.defines = ["FLAGDEP_ENABLED=1"]
                compat = os.path.join(self.package_folder, "include", "flagdep", "compat")
                self.cpp_info.cxxflags = ["-I" + compat]
                self.cpp_info.exelinkflags = ["''' + LINK_FLAG + '''"]
    ''',
    "flagdep/include/flagdep/dep.hpp": """
        #pragma once
        #ifndef FLAGDEP_ENABLED
        #error "FLAGDEP_ENABLED must be defined by the package"
        #endif
        #include <flagdep_compat.hpp>
        namespace flagdep { constexpr int twice(int v) { return v + v; } }
    """,
    "flagdep/include/flagdep/compat/flagdep_compat.hpp": """
        #pragma once
        namespace flagdep { constexpr int compat = 1; }
    """,
    "flagdep/LICENSE": "MIT (test fixture only)\n",
    "flagkit/conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class FlagKit(ConanFile):
            name = "flagkit"
            version = "1.0.0"
            license = "MIT"
            package_type = "header-library"
            exports_sources = "include/*", "LICENSE"
            no_copy_source = True

            def requirements(self):
                self.requires("flagdep/0.4.2")

            def package_id(self):
                self.info.clear()

            def package(self):
                copy(self, "*.hpp", os.path.join(self.source_folder, "include"),
                     os.path.join(self.package_folder, "include"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                core = self.cpp_info.components["io-core"]
                core.bindirs = []
                core.libdirs = []
                core.requires = ["flagdep::flagdep"]
                kit = self.cpp_info.components["kit++"]
                kit.bindirs = []
                kit.libdirs = []
                kit.requires = ["io-core"]
    """,
    "flagkit/include/flagkit/io_core.hpp": """
        #pragma once
        #include <flagdep/dep.hpp>
        namespace flagkit { constexpr int four() { return flagdep::twice(2); } }
    """,
    "flagkit/include/flagkit/kit.hpp": """
        #pragma once
        #include <flagkit/io_core.hpp>
        namespace flagkit { constexpr int eight() { return flagdep::twice(four()); } }
    """,
    "flagkit/LICENSE": "MIT (test fixture only)\n",
}

APP = """
    #include <cstdio>
    #include <flagkit/kit.hpp>
    int main() { std::printf("eight=%d compat=%d\\n", flagkit::eight(), flagdep::compat); }
"""
APP_CMAKE = """
    cmake_minimum_required(VERSION 3.24)
    project(flagkit_app CXX)
    find_package(flagkit REQUIRED COMPONENTS kit++)
    add_executable(app main.cpp)
    target_link_libraries(app PRIVATE flagkit::kit++)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    recipes = tmp_path_factory.mktemp("recipes")
    write_tree(recipes, RECIPES)
    conan("create", str(recipes / "flagdep"))
    conan("create", str(recipes / "flagkit"))
    dist = tmp_path_factory.mktemp("dist-flagkit")
    proc = run_etpkg("wheelify", SDK_REF, "--output-dir", dist)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> testing.Workspace:
    return testing.prepare(wheel, tmp_path_factory.mktemp("installed-flagkit"), CMAKE_CACHE)


def bind_now(app: Path) -> bool:
    return "BIND_NOW" in testing.run(["readelf", "-d", app]).stdout


def test_a_required_packages_definitions_and_flags_reach_cmake_consumers(
    installed: testing.Workspace, tmp_path: Path
) -> None:
    """flagkit::kit++ carries flagdep's definition, its compile flag (relocated into the
    wheel) and its link flag: an app including <flagkit/kit.hpp> builds, links with it, runs."""
    src = tmp_path / "src"
    write_tree(src, {"main.cpp": APP, "CMakeLists.txt": APP_CMAKE})
    tool = installed.tool(testing.MODERN[0])
    installed.configure(tool, "Ninja", src, tmp_path / "build")
    installed.build(tool, tmp_path / "build")
    app = tmp_path / "build" / "app"
    assert testing.run([app], env=installed.env(tool)).stdout == "eight=8 compat=1\n"
    assert bind_now(app)


def test_a_required_packages_definitions_and_flags_reach_pkg_config_consumers(
    installed: testing.Workspace, tmp_path: Path
) -> None:
    pc_env = {"PKG_CONFIG_PATH": str(installed.lib_dir / "pkgconfig"), "PATH": "/usr/bin:/bin"}
    flags = shlex.split(
        testing.run(["pkg-config", "--cflags", "--libs", "flagkit-kit++"], env=pc_env).stdout
    )
    assert "-DFLAGDEP_ENABLED=1" in flags and LINK_FLAG in flags, flags
    (tmp_path / "main.cpp").write_text(textwrap.dedent(APP))
    app = tmp_path / "app"
    testing.run(["g++", tmp_path / "main.cpp", "-o", app, *flags])
    assert testing.run([app]).stdout == "eight=8 compat=1\n"
    assert bind_now(app)


def test_verify_passes_on_component_names_with_dash_and_plus(
    wheel: Path, tmp_path: Path
) -> None:
    """io-core and kit++ (as grpc's grpc++): <pkg>_<comp>_FOUND is read for each; every
    header, flagdep's included, compiles on its own."""
    report = etpkg.verify(
        wheel,
        quick=True,
        cmake_versions=(testing.MODERN[0],),
        work_dir=tmp_path / "w",
        cmake_cache=CMAKE_CACHE,
        strict_headers=True,
    )
    results = {r.name: r for r in report.results}
    assert report.ok, {r.name: r.detail for r in report.failures}
    found = results["unknown component"].detail
    assert "'io-core': 'TRUE'" in found and "'kit++': 'TRUE'" in found, found
    assert results["headers"].detail.startswith("4 headers compile on their own"), results

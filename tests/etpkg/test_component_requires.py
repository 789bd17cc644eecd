"""A requirement on one component of another package (`requires = ["base::core"]`) brings
that component, and what it requires, to the wheel's consumers, not the whole package: as
Conan's CMakeDeps and PkgConfigDeps link it.

Two packages, written here and created in the test's Conan cache: base, with components core
and extra (extra requires core), built static and shared; and top, a shared library whose
cpp_info requires base::core only (base's headers and libraries reach top's consumers). Built
shared, only core's library is one top's library needs: before, wheelify refused to make the
wheel (extra's library, which nothing in the wheel needs, had no grafted copy to link); built
static, consumers linked extra's archive too.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from etpkg import testing
from etpkg_fixtures import REPO_ROOT, conan, run_etpkg, write_tree

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
TOP_REF = "top-comp/0.3.0"
JOBS = ("-c", "tools.build:jobs=1")

BASE = {
    "conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.cmake import CMake, cmake_layout
        from conan.tools.files import copy


        class Base(ConanFile):
            name = "base-comp"
            version = "1.4.0"
            license = "MIT"
            package_type = "library"
            settings = "os", "arch", "compiler", "build_type"
            options = {"shared": [True, False], "fPIC": [True, False]}
            default_options = {"shared": False, "fPIC": True}
            exports_sources = "CMakeLists.txt", "src/*", "include/*", "LICENSE"
            generators = "CMakeToolchain"

            def layout(self):
                cmake_layout(self)

            def build(self):
                cmake = CMake(self)
                cmake.configure()
                cmake.build()

            def package(self):
                CMake(self).install()
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                core = self.cpp_info.components["core"]
                core.libs = ["base_core"]
                extra = self.cpp_info.components["extra"]
                extra.libs = ["base_extra"]
                extra.requires = ["core"]
    """,
    "CMakeLists.txt": """
        cmake_minimum_required(VERSION 3.15)
        project(base CXX)
        add_library(base_core src/core.cpp)
        target_include_directories(base_core PUBLIC include)
        add_library(base_extra src/extra.cpp)
        target_link_libraries(base_extra PUBLIC base_core)
        install(TARGETS base_core base_extra)
        install(DIRECTORY include/ DESTINATION include)
    """,
    "include/base/core.h": """
        #pragma once
        namespace base { int core_value(); }
    """,
    "include/base/extra.h": """
        #pragma once
        namespace base { int extra_value(); }
    """,
    "src/core.cpp": """
        #include "base/core.h"
        int base::core_value() { return 40; }
    """,
    "src/extra.cpp": """
        #include "base/core.h"
        #include "base/extra.h"
        int base::extra_value() { return base::core_value() + 1; }
    """,
    "LICENSE": "MIT (test fixture only)\n",
}

TOP = {
    "conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.cmake import CMake, cmake_layout
        from conan.tools.files import copy


        class Top(ConanFile):
            name = "top-comp"
            version = "0.3.0"
            license = "MIT"
            package_type = "shared-library"
            settings = "os", "arch", "compiler", "build_type"
            exports_sources = "CMakeLists.txt", "src/*", "include/*", "LICENSE"
            generators = "CMakeToolchain", "CMakeDeps"

            def requirements(self):
                self.requires("base-comp/1.4.0", transitive_headers=True, transitive_libs=True)

            def layout(self):
                cmake_layout(self)

            def build(self):
                cmake = CMake(self)
                cmake.configure()
                cmake.build()

            def package(self):
                CMake(self).install()
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                self.cpp_info.libs = ["top"]
                self.cpp_info.requires = ["base-comp::core"]
    """,
    "CMakeLists.txt": """
        cmake_minimum_required(VERSION 3.15)
        project(top CXX)
        find_package(base-comp CONFIG REQUIRED)
        add_library(top SHARED src/top.cpp)
        target_include_directories(top PUBLIC include)
        target_link_libraries(top PUBLIC base-comp::core)
        install(TARGETS top)
        install(DIRECTORY include/ DESTINATION include)
    """,
    "include/top/top.h": """
        #pragma once
        #include "base/core.h"
        namespace top { int top_value(); inline int inl() { return base::core_value(); } }
    """,
    "src/top.cpp": """
        #include "top/top.h"
        int top::top_value() { return base::core_value() + 2; }
    """,
    "LICENSE": "MIT (test fixture only)\n",
}

APP = {
    "main.cpp": """
        #include <cstdio>
        #include <top/top.h>
        int main() { std::printf("top=%d core=%d\\n", top::top_value(), top::inl()); }
    """,
    "CMakeLists.txt": """
        cmake_minimum_required(VERSION 3.24)
        project(top_app CXX)
        find_package(top-comp REQUIRED)
        add_executable(app main.cpp)
        target_link_libraries(app PRIVATE top-comp::top-comp)
    """,
}


@pytest.fixture(scope="module")
def recipes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("recipes-comp")
    write_tree(root / "base", BASE)
    write_tree(root / "top", TOP)
    return root


@pytest.fixture(scope="module", params=["static", "shared"])
def installed(
    request: pytest.FixtureRequest, recipes: Path, tmp_path_factory: pytest.TempPathFactory
) -> testing.Workspace:
    """top's wheel, base built static or shared, installed in a venv."""
    options = ["-o", f"base-comp/*:shared={request.param == 'shared'}"]
    conan("create", str(recipes / "base"), *options, *JOBS)
    conan("create", str(recipes / "top"), *options, *JOBS)
    dist = tmp_path_factory.mktemp(f"dist-top-{request.param}")
    proc = run_etpkg("wheelify", TOP_REF, "--output-dir", dist, *options)
    assert proc.returncode == 0, proc.stderr
    wheel = Path(proc.stdout.strip())
    return testing.prepare(
        wheel, tmp_path_factory.mktemp(f"installed-{request.param}"), CMAKE_CACHE
    )


def test_consumers_link_only_the_required_component(installed: testing.Workspace) -> None:
    (comp,) = installed.sdk.components
    linked = [Path(f).name for f in comp.dependency_files]
    assert [f for f in linked if "base_core" in f], linked
    assert not [f for f in linked if "base_extra" in f], linked
    libs = installed.lib_dir.parent.parent  # site-packages: the grafted copies' dir too
    assert not list(libs.rglob("libbase_extra*")), "extra's library is shipped"


def test_a_cmake_consumer_builds_and_runs(installed: testing.Workspace, tmp_path: Path) -> None:
    write_tree(tmp_path / "src", APP)
    tool = installed.tool(testing.MODERN[0])
    installed.configure(tool, "Ninja", tmp_path / "src", tmp_path / "build")
    installed.build(tool, tmp_path / "build")
    out = testing.run([tmp_path / "build" / "app"], env=installed.env(tool)).stdout
    assert out == "top=42 core=40\n"


def test_pkg_config_links_only_the_required_component(installed: testing.Workspace) -> None:
    pc_env = {"PKG_CONFIG_PATH": str(installed.lib_dir / "pkgconfig"), "PATH": "/usr/bin:/bin"}
    flags = shlex.split(testing.run(["pkg-config", "--libs", "top-comp"], env=pc_env).stdout)
    assert [f for f in flags if "base_core" in f], flags
    assert not [f for f in flags if "base_extra" in f], flags

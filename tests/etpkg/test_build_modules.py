"""A package's cmake_build_modules reach consumers as CMakeDeps gives them: included by
find_package in the caller's scope, with the files beside them (a module reads a template
through CMAKE_CURRENT_LIST_DIR), and what they set is the package author's, not a leak of
etpkg's config (`etpkg verify`'s good-citizen check).

bmodkit, written here and created in the test's Conan cache (header-only: no compiler), ships
lib/cmake/bmodkit-extra/bmodkit-macros.cmake, whose bmodkit_generate() configures
templates/bmodkit_gen.h.in from its own directory. The module sets _BMODKIT_MACROS_DIR (the
package's prefix after an underscore), MACROS_GENERATED_HEADER (outside its prefixes) and
BMODKIT_BUILD_VERSION, a name etpkg's config sets too (OpenJPEG's module sets
OPENJPEG_BUILD_VERSION to the patch number): the module's value is the one consumers see.
"""

from __future__ import annotations

from pathlib import Path

import etpkg
import pytest
from etpkg import testing
from etpkg._internal.verify.suite import Suite
from etpkg._internal.verify.workspace import prepare
from etpkg_fixtures import REPO_ROOT, conan, rewrite_wheel, wheel_of_recipe, write_tree

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
REF = "bmodkit/1.0.0"
MODULE_DIR = "lib/cmake/bmodkit-extra"

RECIPE = {
    "conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class BModKit(ConanFile):
            name = "bmodkit"
            version = "1.0.0"
            license = "MIT"
            package_type = "header-library"
            exports_sources = "include/*", "cmake/*", "LICENSE"
            no_copy_source = True

            def package_id(self):
                self.info.clear()

            def package(self):
                copy(self, "*", os.path.join(self.source_folder, "include"),
                     os.path.join(self.package_folder, "include"))
                copy(self, "*", os.path.join(self.source_folder, "cmake"),
                     os.path.join(self.package_folder, "lib", "cmake", "bmodkit-extra"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                self.cpp_info.bindirs = []
                self.cpp_info.libdirs = []
                self.cpp_info.builddirs = []
                self.cpp_info.set_property(
                    "cmake_build_modules", ["lib/cmake/bmodkit-extra/bmodkit-macros.cmake"]
                )
    """,
    "include/bmodkit/bmodkit.hpp": """
        #pragma once
        namespace bmodkit { constexpr int base() { return 40; } }
    """,
    "cmake/bmodkit-macros.cmake": """
        # consumers call bmodkit_generate(<target> <value>) after find_package(bmodkit)
        set(_BMODKIT_MACROS_DIR "${CMAKE_CURRENT_LIST_DIR}")
        set(MACROS_GENERATED_HEADER "bmodkit_gen.h")
        set(BMODKIT_BUILD_VERSION "0")
        function(bmodkit_generate tgt value)
          set(BMODKIT_GEN_VALUE "${value}")
          set(out "${CMAKE_CURRENT_BINARY_DIR}/${MACROS_GENERATED_HEADER}")
          configure_file("${_BMODKIT_MACROS_DIR}/templates/bmodkit_gen.h.in" "${out}" @ONLY)
          target_include_directories(${tgt} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}")
        endfunction()
    """,
    "cmake/templates/bmodkit_gen.h.in": """
        #pragma once
        #define BMODKIT_GEN_VALUE @BMODKIT_GEN_VALUE@
    """,
    "LICENSE": "MIT (test fixture only)\n",
}

APP = {
    "main.cpp": """
        #include <cstdio>
        #include <bmodkit/bmodkit.hpp>
        #include "bmodkit_gen.h"
        int main() { std::printf("value=%d\\n", bmodkit::base() + BMODKIT_GEN_VALUE); }
    """,
    "CMakeLists.txt": """
        cmake_minimum_required(VERSION 3.24)
        project(bmodkit_app CXX)
        find_package(bmodkit REQUIRED)
        add_executable(app main.cpp)
        target_link_libraries(app PRIVATE bmodkit::bmodkit)
        bmodkit_generate(app 2)
    """,
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wheel_of_recipe(tmp_path_factory.mktemp("bmodkit"), RECIPE, REF)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> testing.Workspace:
    return testing.prepare(wheel, tmp_path_factory.mktemp("installed-bmodkit"), CMAKE_CACHE)


def build_app(ws: testing.Workspace, work: Path, *args: str) -> str:
    """The app, calling the module's function after find_package, built and run."""
    write_tree(work / "src", APP)
    tool = ws.tool(testing.MODERN[0])
    ws.configure(tool, "Ninja", work / "src", work / "build", *args)
    ws.build(tool, work / "build")
    return testing.run([work / "build" / "app"], env=ws.env(tool)).stdout


def test_a_build_modules_sibling_files_ship_and_its_function_works(
    installed: testing.Workspace, tmp_path: Path
) -> None:
    assert build_app(installed, tmp_path / "wheel") == "value=42\n"
    shipped = installed.pkg_root / MODULE_DIR  # the module's directory, its layout kept
    assert (shipped / "bmodkit-macros.cmake").is_file()
    assert (shipped / "templates" / "bmodkit_gen.h.in").is_file()


def test_the_same_app_works_with_conans_cmakedeps(
    installed: testing.Workspace, tmp_path: Path
) -> None:
    """The app is right: Conan's CMakeDeps (reading the package folder) gives the same."""
    generated = tmp_path / "conan"
    conan("install", f"--requires={REF}", "-g", "CMakeDeps", "-of", str(generated))
    out = build_app(installed, tmp_path / "cmakedeps", f"-DCMAKE_PREFIX_PATH={generated}")
    assert out == "value=42\n"


def test_verify_accepts_what_the_build_module_sets(wheel: Path, tmp_path: Path) -> None:
    """_BMODKIT_MACROS_DIR (the package's prefix after an underscore) and
    MACROS_GENERATED_HEADER (no prefix of the package, set by its build module) are not
    counted against etpkg's config; BMODKIT_BUILD_VERSION, set by the module after the config
    set it, is the module's (as under CMakeDeps), not a wrong build version."""
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
    assert "1 build module(s) included" in results["good citizen"].detail
    assert "BMODKIT_BUILD_VERSION is the package's build module's" in results["versions"].detail


def test_verify_still_finds_a_variable_etpkgs_config_leaks(wheel: Path, tmp_path: Path) -> None:
    """With build modules traced, a variable set by the generated config itself still fails."""

    def leak(data: bytes) -> bytes:
        text = data.decode()
        assert "cmake_policy(POP)\n" in text
        return text.replace("cmake_policy(POP)\n", "cmake_policy(POP)\nset(leaked 1)\n").encode()

    broken = rewrite_wheel(wheel, tmp_path / "dist" / wheel.name, "-config.cmake", leak)
    suite = Suite(prepare(broken, tmp_path / "work", CMAKE_CACHE), versions=(testing.MODERN[0],))
    suite.record("good citizen", suite.check_good_citizen)
    last = suite.results[-1]
    assert not last.ok, last.detail
    assert "find_package changed the caller's scope: set ['leaked']" in last.detail, last.detail

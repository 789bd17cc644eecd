"""A component library an app loads only through another library's NEEDED (issue 21, libwebp).

dupsym has libwebp's shape: dec (libdupdec.so) and full (libdupfull.so) both export
dup_decode, full exports nothing else; mux (libdupmux.so) requires full and NEEDs it. An app
linking the package-wide target references dup_decode for full, which --as-needed (this
toolchain's default) resolves from libdupdec, linked first: the app never NEEDs libdupfull.so
directly, yet loads it through libdupmux.so. verify's contract is that every library of the
linked components is loaded when the app runs (one exporting nothing another loaded one does
not may stay unloaded: nothing can make an app need it); only retained (registration-only)
libraries must be NEEDED directly. dup/register.hpp (doctest.h's shape) links only with an
implementation unit of the consumer's: verify's variables check compiles the headers, never
links them. lite (libduplite.so, full's twin that nothing NEEDs) is
the one left unloaded: dec, loaded, exports all it does. main (libdupmain.so) has
gtest_main's shape: the library is the program's main(), its only export, so verify's apps
define none (they used to declare `void main(void)` to reference it and failed to compile).
"""

from __future__ import annotations

import pytest
from etpkg import testing
from etpkg._internal.verify.suite import Suite
from etpkg_fixtures import REPO_ROOT, wheel_of_recipe

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
REF = "dupsym/1.0.0"

RECIPE = {
    "conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class Dupsym(ConanFile):
            name = "dupsym"
            version = "1.0.0"
            license = "MIT"
            package_type = "shared-library"
            settings = "os", "arch", "compiler", "build_type"
            exports_sources = "src/*", "include/*", "LICENSE"

            def build(self):
                src = os.path.join(self.source_folder, "src")
                cc = "cc -shared -fPIC -O1"
                self.run(f"{cc} -o libdupdec.so -Wl,-soname,libdupdec.so {src}/dec.c")
                self.run(f"{cc} -o libdupfull.so -Wl,-soname,libdupfull.so {src}/full.c")
                self.run(f"{cc} -o libduplite.so -Wl,-soname,libduplite.so {src}/full.c")
                self.run(f"{cc} -o libdupmux.so -Wl,-soname,libdupmux.so {src}/mux.c "
                         "-L. -Wl,--no-as-needed -ldupfull")
                self.run(f"{cc} -o libdupmain.so -Wl,-soname,libdupmain.so {src}/main.c")

            def package(self):
                for lib in ("dupdec", "duplite", "dupfull", "dupmux", "dupmain"):
                    copy(self, f"lib{lib}.so", self.build_folder,
                         os.path.join(self.package_folder, "lib"))
                copy(self, "*.h*", os.path.join(self.source_folder, "include"),
                     os.path.join(self.package_folder, "include"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                self.cpp_info.components["dec"].libs = ["dupdec"]
                self.cpp_info.components["lite"].libs = ["duplite"]
                self.cpp_info.components["full"].libs = ["dupfull"]
                self.cpp_info.components["mux"].libs = ["dupmux"]
                self.cpp_info.components["mux"].requires = ["full"]
                self.cpp_info.components["main"].libs = ["dupmain"]
    """,
    "include/dup/dup.h": """
        #pragma once
        #ifdef __cplusplus
        extern "C" {
        #endif
        int dup_decode(void);
        int dup_decode_only(void);
        int dup_mux(void);
        #ifdef __cplusplus
        }
        #endif
    """,
    # doctest.h's shape: including it registers something the consumer's own implementation
    # unit defines. It compiles alone; an app that includes it without that unit cannot link.
    "include/dup/register.hpp": """
        #pragma once
        int dup_register();
        static const int dup_registered = dup_register();
    """,
    "src/dec.c": """
        int dup_decode(void) { return 1; }
        int dup_decode_only(void) { return 3; }
    """,
    "src/full.c": "int dup_decode(void) { return 1; }\n",
    # gtest_main's shape: the program's main() is the library's (hidden: only main exported).
    "src/main.c": """
        __attribute__((visibility("hidden"))) int dup_main_helper(void) { return 0; }
        int main(void) { return dup_main_helper(); }
    """,
    "src/mux.c": """
        int dup_decode(void);
        int dup_mux(void) { return dup_decode() + 1; }
    """,
    "LICENSE": "MIT (test fixture only)\n",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    root = tmp_path_factory.mktemp("dupsym")
    wheel = wheel_of_recipe(root, RECIPE, REF, "-c", "tools.build:jobs=1")
    ws = testing.prepare(wheel, root / "work", CMAKE_CACHE)
    return Suite(ws, versions=(testing.MODERN[0],), generators=(testing.MODERN[1],))


@pytest.mark.parametrize(
    "check",
    [
        "check_package_target",
        "check_each_component_alone",
        "check_targets",
        "check_pkg_config",
        "check_variables",
        "check_good_citizen",
    ],
)
def test_a_library_loaded_through_another_is_linked(suite: Suite, check: str) -> None:
    method = getattr(suite, check)
    args = {"check_targets": suite.versions + suite.generators, "check_variables": suite.versions}
    result = suite.record(check, lambda: str(method(*args.get(check, ()))))
    assert result.ok, result.detail


def test_the_shape_is_the_one_verify_used_to_refuse(suite: Suite) -> None:
    """The package-wide app does not need libdupfull.so directly (so the test above exercises
    the loaded-set contract), and loads it."""
    suite.record("package-wide target", suite.check_package_target)
    app = suite.ws.root / "entry" / "_package" / "build" / "app"
    needed = testing.wheel_needed(app, suite.sdk)
    assert "libdupfull.so" not in needed and "libdupmux.so" in needed, needed
    out = testing.run([app], env=suite.ws.env(suite.ws.tool(testing.MODERN[0]))).stdout
    assert "libdupfull.so" in out and "libduplite.so" not in out, out

"""A package's plugins and its run environment reach the wheel's users as they reach a Conan
consumer's programs.

plugkit, written here and created in the test's Conan cache, is openssl's shape in small: a
shared library that dlopen()s plugins from a subdirectory of its lib dir
(lib/plugkit-plugins/hello.so, needing libplugkit.so; openssl's lib/ossl-modules/legacy.so)
found through a variable of its runenv_info (PLUGKIT_PLUGINS; openssl's OPENSSL_MODULES),
which Conan's VirtualRunEnv sets for test_package (`env="conanrun"`). The wheel ships the
plugin at its package-relative path with a runpath to the wheel's lib dir, and
`python -m plugkit --run-env` prints the variable with the installed wheel's path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from etpkg._internal.build.elf import read_elf
from etpkg_fixtures import checked_run, wheel_of_recipe

pytestmark = pytest.mark.slow

REF = "plugkit/1.0.0"

RECIPE = {
    "conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class PlugKit(ConanFile):
            name = "plugkit"
            version = "1.0.0"
            license = "MIT"
            settings = "os", "arch", "compiler", "build_type"
            package_type = "shared-library"
            exports_sources = "src/*", "include/*", "LICENSE"

            def build(self):
                src = os.path.join(self.source_folder, "src")
                self.run(f"cc -shared -fPIC -o libplugkit.so -Wl,-soname,libplugkit.so "
                         f"-I{self.source_folder}/include {src}/plugkit.c -ldl")
                self.run(f"cc -shared -fPIC -o hello.so {src}/hello.c -L. -lplugkit")

            def package(self):
                lib = os.path.join(self.package_folder, "lib")
                copy(self, "libplugkit.so", self.build_folder, lib)
                copy(self, "hello.so", self.build_folder, os.path.join(lib, "plugkit-plugins"))
                copy(self, "*.h", os.path.join(self.source_folder, "include"),
                     os.path.join(self.package_folder, "include"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                self.cpp_info.libs = ["plugkit"]
                self.cpp_info.system_libs = ["dl"]
                self.runenv_info.define_path(
                    "PLUGKIT_PLUGINS", os.path.join(self.package_folder, "lib", "plugkit-plugins"))
    """,
    "include/plugkit.h": """
        #pragma once
        int plugkit_base(void);
        int plugkit_run(void);  /* the hello plugin's answer, -1 when it does not load */
    """,
    "src/plugkit.c": """
        #include <dlfcn.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include "plugkit.h"
        int plugkit_base(void) { return 40; }
        int plugkit_run(void) {
            const char *dir = getenv("PLUGKIT_PLUGINS");
            char path[4096];
            if (!dir) return -1;
            snprintf(path, sizeof path, "%s/hello.so", dir);
            void *h = dlopen(path, RTLD_NOW);
            if (!h) { fprintf(stderr, "%s\\n", dlerror()); return -1; }
            int (*hello)(void) = (int (*)(void))dlsym(h, "hello");
            return hello ? hello() : -1;
        }
    """,
    "src/hello.c": """
        int plugkit_base(void);
        int hello(void) { return plugkit_base() + 2; }
    """,
    "LICENSE": "MIT (test fixture only)\n",
}

APP = """
#include <stdio.h>
#include <plugkit.h>
int main(void) { printf("answer=%d\\n", plugkit_run()); return 0; }
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheel = wheel_of_recipe(tmp_path_factory.mktemp("plugkit"), RECIPE, REF)
    target = tmp_path_factory.mktemp("site-plugkit")
    checked_run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
         target, wheel]
    )  # fmt: skip
    return target


def test_a_plugin_in_a_lib_subdirectory_ships_with_a_runpath_to_the_wheels_libraries(
    site: Path,
) -> None:
    plugin = site / "plugkit" / "lib" / "plugkit-plugins" / "hello.so"
    assert plugin.is_file()
    info = read_elf(plugin)
    assert info.runpath == ("$ORIGIN/../../lib",)
    assert "libplugkit.so" in info.needed


def test_run_env_gives_the_installed_plugin_dir_and_the_plugin_loads(
    site: Path, tmp_path: Path
) -> None:
    code = "import runpy, site, sys; site.addsitedir(sys.argv[1]); sys.argv[1:2] = []; " \
        "runpy.run_module('plugkit', run_name='__main__', alter_sys=True)"  # fmt: skip
    out = checked_run([sys.executable, "-c", code, site, "--run-env"]).stdout
    plugins = site / "plugkit" / "lib" / "plugkit-plugins"
    assert out.splitlines() == [f"PLUGKIT_PLUGINS={plugins}"]
    (tmp_path / "app.c").write_text(APP)
    lib = site / "plugkit" / "lib"
    checked_run(
        ["cc", tmp_path / "app.c", "-o", tmp_path / "app", f"-I{site / 'plugkit' / 'include'}",
         f"-L{lib}", "-lplugkit", f"-Wl,-rpath,{lib}"]
    )  # fmt: skip
    env = {"PATH": "/usr/bin:/bin", "PLUGKIT_PLUGINS": str(plugins)}
    run = subprocess.run([tmp_path / "app"], env=env, capture_output=True, text=True)
    assert run.stdout == "answer=42\n", run.stderr

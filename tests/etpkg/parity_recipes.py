"""Two packages for the parity tests, written with write_tree and created in the test's Conan
cache: pardep (header-only, required, its headers shipped in the wheel of the other) and
parkit, a C library whose package_info() sets every property CMakeDeps and PkgConfigDeps
read: file, target, module and alias names, find mode both, a version policy, components
requiring each other and pardep, system libraries, definitions, flags, pkg-config names,
aliases, custom content (text and dict, a package-folder path, an override of libdir), a
component version, nested include dirs, a builddir, extra dependencies, variables and
interface libraries, a library without SONAME (nosoname), and `sources` (which both ignore);
pardep reports a system_package_version. No `languages`: its .pc files get no -std."""

from __future__ import annotations

PARDEP_REF = "pardep/2.1.0"
PARKIT_REF = "parkit/1.4.2"

RECIPES = {
    "pardep/conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class ParDep(ConanFile):
            name = "pardep"
            version = "2.1.0"
            license = "MIT"
            package_type = "header-library"
            exports_sources = "include/*", "LICENSE"
            no_copy_source = True

            def package_id(self):
                self.info.clear()

            def package(self):
                copy(self, "*.h", os.path.join(self.source_folder, "include"),
                     os.path.join(self.package_folder, "include"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                self.cpp_info.bindirs = []
                self.cpp_info.libdirs = []
                self.cpp_info.defines = ["PARDEP_ON=1"]
                self.cpp_info.set_property("cmake_file_name", "Par-Dep")  # as yaml-cpp: a '-'
                self.cpp_info.set_property("cmake_target_name", "ParDep::pardep")
                self.cpp_info.set_property("cmake_config_version_compat", "AnyNewerVersion")
                self.cpp_info.set_property("pkg_config_name", "pardep")
                # What its files report (freetype reports its libtool version this way).
                self.cpp_info.set_property("system_package_version", "7.0.1")
                # A dict, holding the package folder (hwdata's pkgdatadir): ${prefix} in the wheel.
                self.cpp_info.set_property("pkg_config_custom_content", {
                    "pardatadir": os.path.join(self.package_folder, "include", "pardep"),
                    "flavour": "plain",
                })
    """,
    "pardep/include/pardep/pardep.h": """
        #pragma once
        #ifndef PARDEP_ON
        #error "PARDEP_ON must come from the package"
        #endif
        static inline int pardep_twice(int v) { return v + v; }
    """,
    "pardep/LICENSE": "MIT (test fixture only)\n",
    "parkit/LICENSE": "MIT (test fixture only)\n",
    "parkit/conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class ParKit(ConanFile):
            name = "parkit"
            version = "1.4.2"
            license = "MIT"
            package_type = "shared-library"
            settings = "os", "arch", "compiler", "build_type"
            exports_sources = "src/*", "include/*", "cmake/*", "LICENSE"

            def requirements(self):
                self.requires("pardep/2.1.0", transitive_headers=True)

            def build(self):
                src = os.path.join(self.source_folder, "src")
                inc = [os.path.join(self.source_folder, "include")]
                inc += self.dependencies["pardep"].cpp_info.includedirs
                flags = " ".join("-I" + d for d in inc) + " -DPARDEP_ON=1 -fPIC -shared"
                # No SONAME (nosoname below), as a Rust cdylib (zenoh-c) or a vendor's
                # binary (gurobi) comes.
                self.run(f"cc {flags} -o libparkit_core.so {src}/core.c -lm")
                # By path, as CMake links a library without SONAME: DT_NEEDED is that path.
                self.run(f"cc {flags} -o libparkit_extra.so -Wl,-soname,libparkit_extra.so "
                         f"{src}/extra.c {self.build_folder}/libparkit_core.so")

            def package(self):
                copy(self, "*.h", os.path.join(self.source_folder, "include"),
                     os.path.join(self.package_folder, "include"))
                copy(self, "*.so", self.build_folder, os.path.join(self.package_folder, "lib"))
                copy(self, "*.cmake", os.path.join(self.source_folder, "cmake"),
                     os.path.join(self.package_folder, "cmake"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))
                copy(self, "core.c", os.path.join(self.source_folder, "src"),
                     os.path.join(self.package_folder, "src"))

            def package_info(self):
                info = self.cpp_info
                info.set_property("cmake_file_name", "parkit")
                info.set_property("cmake_target_name", "parkit::parkit")
                info.set_property("cmake_target_aliases", ["parkit::all"])
                info.set_property("cmake_find_mode", "both")
                info.set_property("cmake_module_file_name", "PARKIT")
                info.set_property("cmake_module_target_name", "PARKIT::PARKIT")
                info.set_property("cmake_config_version_compat", "SameMinorVersion")
                info.set_property("pkg_config_name", "parkit")
                info.set_property("pkg_config_aliases", ["parkit-1"])
                # Text: `key=value` lines are variables, other lines dropped (as PkgConfigDeps).
                info.set_property("pkg_config_custom_content",
                                  f"tooldir={self.package_folder}/cmake\\nnot a variable\\n"
                                  "libdir=${prefix}/lib")
                # Conan 2's CMake-only additions: packages the config finds, variables it
                # sets (a package-folder path among them: the wheel's own root), targets a
                # component links (CUDA::cudart for matx; here the system's Threads).
                info.set_property("cmake_extra_dependencies", ["Threads"])
                info.set_property("cmake_extra_variables", {
                    "PARKIT_TOOLDIR": f"{self.package_folder}/cmake",
                    "PARKIT_ROOT": self.package_folder,
                    "PARKIT_LEVEL": 3,
                    "PARKIT_GENERATED_BY": "${CMAKE_GENERATOR} generator",
                    "PARKIT_MODE": {"value": "fast", "cache": True, "type": "STRING",
                                    "docstring": "parkit's mode"},
                })
                core = info.components["core"]
                core.libs = ["parkit_core"]
                core.includedirs = ["include", "include/parkit"]  # nested, as freetype2
                core.builddirs = ["cmake"]  # include(parkit_tools), as doctest's and catch2's
                core.defines = ["PARKIT_CORE=1"]
                core.system_libs = ["m"]
                core.cflags = ["-fno-common"]
                core.requires = ["pardep::pardep"]
                core.set_property("cmake_target_name", "parkit::core")
                core.set_property("nosoname", True)
                # For CMakeConfigDeps' INTERFACE_SOURCES; CMakeDeps ignores them, etpkg says so.
                core.sources = ["src/core.c"]
                core.set_property("cmake_module_target_name", "PARKIT::core")
                core.set_property("pkg_config_name", "parkit-core")
                core.set_property("pkg_config_aliases", ["parkitcore"])
                extra = info.components["extra"]
                extra.libs = ["parkit_extra"]
                extra.requires = ["core"]
                extra.exelinkflags = ["-Wl,-z,now"]
                extra.sharedlinkflags = ["-Wl,-z,now"]
                extra.set_property("cmake_target_name", "parkit::extra")
                extra.set_property("cmake_extra_interface_libs", ["Threads::Threads"])
                extra.set_property("cmake_target_aliases", ["parkit::extra_alias"])
                extra.set_property("pkg_config_custom_content", "flavour=extra")
                extra.set_property("component_version", "9.9")
    """,
    "parkit/cmake/parkit_tools.cmake": """
        function(parkit_tools_answer out)
          set(${out} 42 PARENT_SCOPE)
        endfunction()
    """,
    "parkit/include/parkit/core.h": """
        #pragma once
        #include <pardep/pardep.h>
        int parkit_core(int v);
    """,
    "parkit/include/parkit/extra.h": """
        #pragma once
        #include <parkit/core.h>
        int parkit_extra(int v);
    """,
    "parkit/src/core.c": """
        #include <math.h>
        #include <parkit/core.h>
        int parkit_core(int v) { return pardep_twice(v) + (int)sqrt(16.0); }
    """,
    "parkit/src/extra.c": """
        #include <parkit/extra.h>
        int parkit_extra(int v) { return parkit_core(v) * 10; }
    """,
}

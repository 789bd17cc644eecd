import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, rmdir


class CpuinfoConan(ConanFile):
    """cpuinfo built from Debian's source package with the host profile's compiler (for a
    glibc older than Debian 12's: ci/manylinux_2_28/profile)."""

    name = "cpuinfo"
    description = "cpuinfo (CPU feature and topology detection), from Debian's source package"
    license = "BSD-2-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    python_requires = "debiansource/1.0"
    build_policy = "missing"

    def layout(self):
        cmake_layout(self, src_folder="src")

    def source(self):
        self.python_requires["debiansource"].module.fetch(self)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["CPUINFO_LIBRARY_TYPE"] = "shared"
        for part in ("UNIT_TESTS", "MOCK_TESTS", "BENCHMARKS", "TOOLS", "PKG_CONFIG"):
            tc.cache_variables[f"CPUINFO_BUILD_{part}"] = False
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        CMake(self).install()
        # Its CMake config names this build's paths; consumers get Conan's.
        rmdir(self, os.path.join(self.package_folder, "share"))
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.libs = ["cpuinfo"]
        self.cpp_info.set_property("cmake_file_name", "cpuinfo")
        self.cpp_info.set_property("cmake_target_name", "cpuinfo::cpuinfo")

import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, save
from conan.tools.system import package_manager


class PthreadpoolConan(ConanFile):
    """pthreadpool built from Debian 12's source package with the host profile's compiler (see
    cpuinfo's source recipe); FXdiv is header-only, from Debian's libfxdiv-dev."""

    name = "pthreadpool"
    description = "pthreadpool (a portable thread pool), from Debian's source package"
    license = "BSD-2-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    python_requires = "debiansource/1.0"
    build_policy = "missing"

    def layout(self):
        cmake_layout(self, src_folder="src")

    def system_requirements(self):
        package_manager.Apt(self).install(["libfxdiv-dev"], update=True, check=True)

    def source(self):
        self.python_requires["debiansource"].module.fetch(self)

    def generate(self):
        # FXdiv's headers are Debian's (/usr/include): an empty target stands in for its build.
        fxdiv = os.path.join(self.generators_folder, "fxdiv")
        save(self, os.path.join(fxdiv, "CMakeLists.txt"),
             "cmake_minimum_required(VERSION 3.5)\nproject(fxdiv C)\nadd_library(fxdiv INTERFACE)\n")
        tc = CMakeToolchain(self)
        tc.cache_variables["PTHREADPOOL_LIBRARY_TYPE"] = "shared"
        tc.cache_variables["PTHREADPOOL_BUILD_TESTS"] = False
        tc.cache_variables["PTHREADPOOL_BUILD_BENCHMARKS"] = False
        tc.cache_variables["FXDIV_SOURCE_DIR"] = fxdiv.replace("\\", "/")
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        CMake(self).install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.libs = ["pthreadpool"]
        self.cpp_info.set_property("cmake_file_name", "pthreadpool")
        self.cpp_info.set_property("cmake_target_name", "pthreadpool::pthreadpool")

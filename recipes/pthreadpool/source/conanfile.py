import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, save


class PthreadpoolConan(ConanFile):
    """pthreadpool built from Debian's source package with the host profile's compiler (see
    cpuinfo's source recipe), against FXdiv's headers from its own source package."""

    name = "pthreadpool"
    description = "pthreadpool (a portable thread pool), from Debian's source package"
    license = "BSD-2-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    python_requires = "debiansource/1.0"
    build_policy = "missing"

    def layout(self):
        cmake_layout(self, src_folder="src")

    def requirements(self):
        self.requires("fxdiv/0.0.20200417", visible=False)

    def source(self):
        self.python_requires["debiansource"].module.fetch(self)

    def generate(self):
        # pthreadpool adds FXDIV_SOURCE_DIR as a subproject: one that only names the headers.
        include = os.path.join(self.dependencies["fxdiv"].package_folder, "include")
        fxdiv = os.path.join(self.generators_folder, "fxdiv")
        save(self, os.path.join(fxdiv, "CMakeLists.txt"),
             "cmake_minimum_required(VERSION 3.5)\nproject(fxdiv C)\nadd_library(fxdiv INTERFACE)\n"
             f'target_include_directories(fxdiv INTERFACE "{include}")\n'.replace("\\", "/"))
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
        self.cpp_info.system_libs = ["pthread"]
        self.cpp_info.set_property("cmake_file_name", "pthreadpool")
        self.cpp_info.set_property("cmake_target_name", "pthreadpool::pthreadpool")

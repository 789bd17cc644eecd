import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, rm


class XnnpackConan(ConanFile):
    """XNNPACK built from Debian's source package with the host profile's compiler (see
    cpuinfo's source recipe), against the cpuinfo, pthreadpool and FXdiv built the same way.
    Only the library and its production microkernels: no tests, benchmarks, or the microkernels
    XNNPACK does not dispatch to (docs/PLATFORMS.md has the build's size and time)."""

    name = "xnnpack"
    description = "XNNPACK (neural network inference operators), from Debian's source package"
    license = "BSD-3-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    python_requires = "debiansource/1.0"
    build_policy = "missing"

    def layout(self):
        cmake_layout(self, src_folder="src")

    def requirements(self):
        # xnnpack.h includes pthreadpool.h.
        self.requires("pthreadpool/0.0.20240616", transitive_headers=True)
        self.requires("cpuinfo/0.0.20250905")
        self.requires("fxdiv/0.0.20200417", visible=False)

    def source(self):
        self.python_requires["debiansource"].module.fetch(self)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["XNNPACK_LIBRARY_TYPE"] = "shared"
        tc.cache_variables["XNNPACK_BUILD_TESTS"] = False
        tc.cache_variables["XNNPACK_BUILD_BENCHMARKS"] = False
        tc.cache_variables["XNNPACK_BUILD_ALL_MICROKERNELS"] = False
        # Its microkernels are a static library linked into the shared one.
        tc.cache_variables["CMAKE_POSITION_INDEPENDENT_CODE"] = True
        # KleidiAI (arm64 only) has no source package this build could take.
        tc.cache_variables["XNNPACK_ENABLE_KLEIDIAI"] = False
        # cpuinfo, pthreadpool and FXdiv: the packages above. XNNPACK looks for
        # <dir>/lib/lib<name>.so and <dir>/include under each *_SOURCE_DIR.
        tc.cache_variables["XNNPACK_USE_SYSTEM_LIBS"] = True
        for name in ("cpuinfo", "pthreadpool", "fxdiv"):
            folder = self.dependencies[name].package_folder.replace("\\", "/")
            tc.cache_variables[f"{name.upper()}_SOURCE_DIR"] = folder
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build(target="XNNPACK")

    def package(self):
        CMake(self).install()
        # microkernels-prod is linked into libXNNPACK.so; its static copy is not needed.
        rm(self, "libmicrokernels-prod.a", os.path.join(self.package_folder, "lib"))
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.libs = ["XNNPACK"]
        self.cpp_info.set_property("cmake_file_name", "xnnpack")
        self.cpp_info.set_property("cmake_target_name", "xnnpack::xnnpack")

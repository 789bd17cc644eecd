import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy
from conan.tools.system import package_manager


class XnnpackConan(ConanFile):
    """XNNPACK built from Debian 12's source package with the host profile's compiler (see
    cpuinfo's source recipe), against the cpuinfo and pthreadpool built the same way; FP16,
    FXdiv and psimd are header-only, from Debian's -dev packages. Only the library: no tests,
    benchmarks or JIT (docs/PLATFORMS.md has the build's size and time)."""

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
        self.requires("pthreadpool/0.0.20210507", transitive_headers=True)
        self.requires("cpuinfo/0.0.20220617")

    def system_requirements(self):
        package_manager.Apt(self).install(
            ["libfp16-dev", "libfxdiv-dev", "libpsimd-dev"], update=True, check=True
        )

    def source(self):
        self.python_requires["debiansource"].module.fetch(self)

    def generate(self):
        deps = [self.dependencies[name].package_folder for name in ("cpuinfo", "pthreadpool")]
        tc = CMakeToolchain(self)
        tc.cache_variables["XNNPACK_LIBRARY_TYPE"] = "shared"
        tc.cache_variables["XNNPACK_BUILD_TESTS"] = False
        tc.cache_variables["XNNPACK_BUILD_BENCHMARKS"] = False
        # clog, cpuinfo and pthreadpool: the packages above, found before Debian's in /usr.
        tc.cache_variables["XNNPACK_USE_SYSTEM_LIBS"] = True
        tc.cache_variables["CMAKE_LIBRARY_PATH"] = ";".join(f"{d}/lib" for d in deps)
        tc.extra_cflags = [f"-I{d}/include" for d in deps]
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build(target="XNNPACK")

    def package(self):
        CMake(self).install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.libs = ["XNNPACK"]
        self.cpp_info.set_property("cmake_file_name", "xnnpack")
        self.cpp_info.set_property("cmake_target_name", "xnnpack::xnnpack")

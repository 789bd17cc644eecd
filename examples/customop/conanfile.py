import os

from conan import ConanFile
from conan.tools.cmake import CMake, cmake_layout
from conan.tools.files import copy


class EtrtCustomOpConan(ConanFile):
    """A custom-operator SDK built on etrt: libetrt_customop.so registers a kernel for
    mylib::scaled_relu into etrt's one operator registry (etrt/runtime/kernel.h), and its
    Python package declares the same op to torch.library so models using it export. Its wheel
    depends on the etrt wheel instead of carrying a second libetrt.so (etpkg_depend)."""

    name = "etrt-customop"
    version = "0.1.0"
    description = "mylib::scaled_relu for etrt (an example of an SDK wheel on the etrt wheel)"
    license = "BSD-3-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain"
    exports_sources = "CMakeLists.txt", "src/*", "include/*", "python/*", "LICENSE"

    def requirements(self):
        # The range the wheel's Requires-Dist carries (etrt>=0.1,<0.2).
        self.requires("etrt/[>=0.1 <0.2]", transitive_headers=True)

    def layout(self):
        cmake_layout(self)

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        cmake = CMake(self)
        cmake.install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.py", os.path.join(self.source_folder, "python"),
             os.path.join(self.package_folder, "python"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "etrt_customop")
        self.cpp_info.set_property("cmake_target_name", "etrt_customop::etrt_customop")
        self.cpp_info.set_property("etpkg_cxx_standard", "17")
        self.cpp_info.set_property("etpkg_python_packages", ["python/etrt_customop"])
        self.cpp_info.set_property("etpkg_depend", ["etrt"])
        self.cpp_info.libs = ["etrt_customop"]
        self.cpp_info.requires = ["etrt::runtime"]
        # Registers from a static initializer; callers reference nothing of it.
        self.cpp_info.set_property("etpkg_registration_only", True)

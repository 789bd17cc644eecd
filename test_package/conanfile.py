import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, cmake_layout


class EtrtTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        app = os.path.join(self.cpp.build.bindir, "etrt_test_package")
        # A cross build runs its program through the host profile's emulator (qemu-user).
        emulator = self.conf.get("user.etrt:emulator", default="")
        if can_run(self):
            self.run(app, env="conanrun")
        elif emulator:
            self.run(f"{emulator} {app}", env="conanrun")
        else:
            self.output.warning(f"{app} not run: cross build without user.etrt:emulator")

import os

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.system import package_manager


class CpuinfoSystemConan(ConanFile):
    name = "cpuinfo"
    description = "cpuinfo (CPU feature and topology detection) from the Debian archive"
    license = "BSD-2-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    build_policy = "missing"
    python_requires = "debian-debs/1.0"

    def validate(self):
        if self.settings.os != "Linux":
            raise ConanInvalidConfiguration(f"{self.ref} wraps Debian packages: Linux only")

    def package_id(self):
        # One binary per arch: a cross build's package holds that arch's Debian files.
        del self.info.settings.compiler
        del self.info.settings.build_type
        self.info.requires.clear()

    def system_requirements(self):
        if self._debs.foreign(self):
            return  # the host arch's packages are unpacked by build()
        apt = package_manager.Apt(self)
        apt.install(["libcpuinfo-dev"], update=True, check=True)

    @property
    def _debs(self):
        return self.python_requires["debian-debs"].module

    def build(self):
        if self._debs.foreign(self):
            self._debs.download_and_unpack(self, ['libcpuinfo0', 'libcpuinfo-dev'], self._root)

    def package(self):
        if self._debs.foreign(self):
            self._debs.package_unpacked(self, self._root)

    @property
    def _root(self):
        return os.path.join(self.build_folder, "root")

    def package_info(self):
        # Header and library live in /usr, which the compiler and linker already search.
        self.cpp_info.bindirs = []
        self.cpp_info.includedirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.system_libs = ["cpuinfo"]
        if self._debs.foreign(self):  # the unpacked packages of the host arch
            self.cpp_info.includedirs = ["include"]
            self.cpp_info.libdirs = ["lib"]
            self.cpp_info.system_libs = []
            self.cpp_info.libs = ["cpuinfo"]
        self.cpp_info.set_property("cmake_file_name", "cpuinfo")
        self.cpp_info.set_property("cmake_target_name", "cpuinfo::cpuinfo")

import os

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.system import package_manager


class FlatbuffersSystemConan(ConanFile):
    name = "flatbuffers"
    description = "FlatBuffers compiler (flatc) and C++ headers from the Debian archive"
    license = "Apache-2.0"
    package_type = "header-library"
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
        apt.install(["libflatbuffers-dev", "flatbuffers-compiler"], update=True, check=True)

    @property
    def _debs(self):
        return self.python_requires["debian-debs"].module

    def build(self):
        if self._debs.foreign(self):
            self._debs.download_and_unpack(self, ['libflatbuffers-dev'], self._root)

    def package(self):
        if self._debs.foreign(self):
            self._debs.package_unpacked(self, self._root)

    @property
    def _root(self):
        return os.path.join(self.build_folder, "root")

    def package_info(self):
        # Headers and flatc live in /usr, which the compiler and PATH already search.
        self.cpp_info.bindirs = []
        self.cpp_info.includedirs = []
        self.cpp_info.libdirs = []
        if self._debs.foreign(self):  # the unpacked headers of the host arch's package
            self.cpp_info.includedirs = ["include"]
        self.cpp_info.set_property("cmake_file_name", "flatbuffers")
        self.cpp_info.set_property("cmake_target_name", "flatbuffers::flatbuffers")

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

    def validate(self):
        if self.settings.os != "Linux":
            raise ConanInvalidConfiguration(f"{self.ref} wraps Debian packages: Linux only")

    def package_id(self):
        self.info.clear()

    def system_requirements(self):
        apt = package_manager.Apt(self)
        apt.install(["libflatbuffers-dev", "flatbuffers-compiler"], update=True, check=True)

    def package_info(self):
        # Headers and flatc live in /usr, which the compiler and PATH already search.
        self.cpp_info.bindirs = []
        self.cpp_info.includedirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "flatbuffers")
        self.cpp_info.set_property("cmake_target_name", "flatbuffers::flatbuffers")

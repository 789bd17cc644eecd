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

    def validate(self):
        if self.settings.os != "Linux":
            raise ConanInvalidConfiguration(f"{self.ref} wraps Debian packages: Linux only")

    def package_id(self):
        self.info.clear()

    def system_requirements(self):
        apt = package_manager.Apt(self)
        apt.install(["libcpuinfo-dev"], update=True, check=True)

    def package_info(self):
        # Header and library live in /usr, which the compiler and linker already search.
        self.cpp_info.bindirs = []
        self.cpp_info.includedirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.system_libs = ["cpuinfo"]
        self.cpp_info.set_property("cmake_file_name", "cpuinfo")
        self.cpp_info.set_property("cmake_target_name", "cpuinfo::cpuinfo")

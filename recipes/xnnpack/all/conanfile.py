from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.system import package_manager


class XnnpackSystemConan(ConanFile):
    name = "xnnpack"
    description = "XNNPACK (neural network inference operators) from the Debian archive"
    license = "BSD-3-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    build_policy = "missing"

    def requirements(self):
        # xnnpack.h includes <pthreadpool.h>, but Debian's libxnnpack-dev does not depend on
        # libpthreadpool-dev: the headers must come with this requirement.
        self.requires("pthreadpool/system", transitive_headers=True)
        self.requires("cpuinfo/system")

    def validate(self):
        if self.settings.os != "Linux":
            raise ConanInvalidConfiguration(f"{self.ref} wraps Debian packages: Linux only")

    def package_id(self):
        self.info.clear()

    def system_requirements(self):
        apt = package_manager.Apt(self)
        apt.install(["libxnnpack-dev"], update=True, check=True)

    def package_info(self):
        # Header and library live in /usr, which the compiler and linker already search.
        self.cpp_info.bindirs = []
        self.cpp_info.includedirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.system_libs = ["XNNPACK"]
        self.cpp_info.set_property("cmake_file_name", "xnnpack")
        self.cpp_info.set_property("cmake_target_name", "xnnpack::xnnpack")

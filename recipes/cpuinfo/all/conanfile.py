from conan import ConanFile


class CpuinfoSystemConan(ConanFile):
    name = "cpuinfo"
    description = "cpuinfo (CPU feature and topology detection) from the Debian archive"
    license = "BSD-2-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    build_policy = "missing"
    python_requires = "debian-debs/1.1"
    # validate, package_id, system_requirements, build and package: Debian's packages, natively
    # from apt, in a cross build the host arch's .deb files (recipes/debian-debs)
    python_requires_extend = "debian-debs.DebianPackage"
    apt_packages = ("libcpuinfo-dev",)
    host_debs = ("libcpuinfo0", "libcpuinfo-dev")
    debian_libs = ("cpuinfo",)

    def package_info(self):
        self.debian_cpp_info()
        self.cpp_info.set_property("cmake_file_name", "cpuinfo")
        self.cpp_info.set_property("cmake_target_name", "cpuinfo::cpuinfo")

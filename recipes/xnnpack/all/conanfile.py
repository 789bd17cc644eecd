from conan import ConanFile


class XnnpackSystemConan(ConanFile):
    name = "xnnpack"
    description = "XNNPACK (neural network inference operators) from the Debian archive"
    license = "BSD-3-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    build_policy = "missing"
    python_requires = "debian-debs/1.1"
    # validate, package_id, system_requirements, build and package: Debian's packages, natively
    # from apt, in a cross build the host arch's .deb files (recipes/debian-debs)
    python_requires_extend = "debian-debs.DebianPackage"
    apt_packages = ("libxnnpack-dev",)
    host_debs = ("libxnnpack0", "libxnnpack-dev")
    debian_libs = ("XNNPACK",)

    def requirements(self):
        # xnnpack.h includes <pthreadpool.h>, but Debian's libxnnpack-dev does not depend on
        # libpthreadpool-dev: the headers must come with this requirement.
        self.requires("pthreadpool/system", transitive_headers=True)
        self.requires("cpuinfo/system")

    def package_info(self):
        self.debian_cpp_info()
        self.cpp_info.set_property("cmake_file_name", "xnnpack")
        self.cpp_info.set_property("cmake_target_name", "xnnpack::xnnpack")

from conan import ConanFile


class PthreadpoolSystemConan(ConanFile):
    name = "pthreadpool"
    description = "pthreadpool (portable thread pool for C/C++) from the Debian archive"
    license = "BSD-2-Clause"
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    build_policy = "missing"
    python_requires = "debian-debs/1.1"
    # validate, package_id, system_requirements, build and package: Debian's packages, natively
    # from apt, in a cross build the host arch's .deb files (recipes/debian-debs)
    python_requires_extend = "debian-debs.DebianPackage"
    apt_packages = ("libpthreadpool-dev",)
    host_debs = ("libpthreadpool0", "libpthreadpool-dev")
    debian_libs = ("pthreadpool",)

    def package_info(self):
        self.debian_cpp_info()
        self.cpp_info.set_property("cmake_file_name", "pthreadpool")
        self.cpp_info.set_property("cmake_target_name", "pthreadpool::pthreadpool")

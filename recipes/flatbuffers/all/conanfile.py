from conan import ConanFile


class FlatbuffersSystemConan(ConanFile):
    name = "flatbuffers"
    description = "FlatBuffers compiler (flatc) and C++ headers from the Debian archive"
    license = "Apache-2.0"
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    build_policy = "missing"
    python_requires = "debian-debs/1.1"
    # validate, package_id, system_requirements, build and package: Debian's packages, natively
    # from apt, in a cross build the host arch's .deb files (recipes/debian-debs)
    python_requires_extend = "debian-debs.DebianPackage"
    apt_packages = ("libflatbuffers-dev", "flatbuffers-compiler")
    host_debs = ("libflatbuffers-dev",)
    debian_libs = ()

    def package_info(self):
        self.debian_cpp_info()
        self.cpp_info.set_property("cmake_file_name", "flatbuffers")
        self.cpp_info.set_property("cmake_target_name", "flatbuffers::flatbuffers")

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout, CMakeDeps
from conan.tools.env import VirtualBuildEnv
from conan.tools.files import copy, get, rmdir
from conan.tools.scm import Version
from conan.tools.build import check_min_cppstd, cross_building
from conan.tools.microsoft import is_msvc
import os

required_conan_version = ">=2.1"


class GlogConan(ConanFile):
    name = "glog"
    description = "Google logging library"
    license = "BSD-3-Clause"
    url = "https://github.com/conan-io/conan-center-index"
    homepage = "https://github.com/google/glog/"
    topics = ("logging",)
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "shared": [True, False],
        "fPIC": [True, False],
        "with_gflags": [True, False],
        "with_threads": [True, False],
        "with_unwind": [True, False],
    }
    default_options = {
        "shared": False,
        "fPIC": True,
        "with_gflags": True,
        "with_threads": True,
        "with_unwind": True,
    }

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC
        if self.settings.os not in ["Linux", "FreeBSD"]:
            del self.options.with_unwind

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")
        if self.options.with_gflags:
            self.options["gflags"].shared = self.options.shared

    def layout(self):
        cmake_layout(self, src_folder="src")

    def requirements(self):
        if self.options.with_gflags:
            self.requires("gflags/[>=2.2.2 <3]", transitive_headers=True, transitive_libs=True)
        # 0.4.0 requires libunwind unconditionally
        if self.options.get_safe("with_unwind"):
            self.requires("libunwind/[>=1.8.0 <2]", transitive_headers=True, transitive_libs=True)

    def validate(self):
        if Version(self.version) < "0.7.0":
            return

        check_min_cppstd(self, 14)

    def build_requirements(self):
        if Version(self.version) >= "0.7.0":
            self.tool_requires("cmake/[>=3.22 <4]")
        elif Version(self.version) >= "0.6.0":
            self.tool_requires("cmake/[>=3.16 <4]")

    def source(self):
        _debian_orig_source(self, strip_root=True)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["WITH_GFLAGS"] = self.options.with_gflags
        tc.cache_variables["WITH_THREADS"] = self.options.with_threads
        tc.cache_variables["WITH_PKGCONFIG"] = True
        if self.settings.os == "Emscripten":
            tc.cache_variables["WITH_SYMBOLIZE"] = False
            tc.cache_variables["HAVE_SYSCALL_H"] = False
            tc.cache_variables["HAVE_SYS_SYSCALL_H"] = False
        else:
            tc.cache_variables["WITH_SYMBOLIZE"] = True
        tc.cache_variables["WITH_UNWIND"] = self.options.get_safe("with_unwind", default=False)
        tc.cache_variables["BUILD_TESTING"] = False
        tc.cache_variables["WITH_GTEST"] = False
        # TODO: Remove after fixing https://github.com/conan-io/conan/issues/12012
        # Needed for https://github.com/google/glog/blob/v0.7.1/CMakeLists.txt#L81
        # and https://github.com/google/glog/blob/v0.7.1/CMakeLists.txt#L90
        tc.cache_variables["CMAKE_TRY_COMPILE_CONFIGURATION"] = str(self.settings.build_type)

        if is_msvc(self) and cross_building(self) and self.settings.arch == "armv8":
            tc.cache_variables["HAVE_SYMBOLIZE_EXITCODE"] = "1"
        tc.generate()

        tc = CMakeDeps(self)
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "COPYING", dst=os.path.join(self.package_folder, "licenses"), src=self.source_folder)
        cmake = CMake(self)
        cmake.install()
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))
        rmdir(self, os.path.join(self.package_folder, "lib", "pkgconfig"))
        rmdir(self, os.path.join(self.package_folder, "share"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "glog")
        self.cpp_info.set_property("cmake_target_name", "glog::glog")
        self.cpp_info.set_property("pkg_config_name", "libglog")
        postfix = "d" if self.settings.build_type == "Debug" else ""
        self.cpp_info.libs = ["glog" + postfix]
        if self.settings.os in ["Linux", "FreeBSD"]:
            self.cpp_info.system_libs = ["pthread"]
        elif self.settings.os == "Windows":
            self.cpp_info.system_libs = ["dbghelp"]
            self.cpp_info.defines = ["GLOG_NO_ABBREVIATED_SEVERITIES"]
            decl = "__declspec(dllimport)" if self.options.shared else ""
            self.cpp_info.defines.append(f"GOOGLE_GLOG_DLL_DECL={decl}")
        if self.options.with_gflags and not self.options.shared:
            self.cpp_info.defines.extend(["GFLAGS_DLL_DECLARE_FLAG=", "GFLAGS_DLL_DEFINE_FLAG="])
        if Version(self.version) >= "0.7.0":
            self.cpp_info.defines.extend(["GLOG_USE_GLOG_EXPORT="])


def _debian_orig_source(conanfile, destination=None, strip_root=False):
    # Corpus adaptation (the only change to this recipe besides conandata.yml): the upstream
    # sources are the .orig tarball of Debian's source package, which the corpus runner
    # downloads with `apt-get source` into $ETPKG_CORPUS_SOURCES.
    import os
    from conan.errors import ConanException
    from conan.tools.files import check_sha256, unzip
    data = conanfile.conan_data["sources"][conanfile.version]
    cache = os.environ.get("ETPKG_CORPUS_SOURCES", "")
    tarball = os.path.join(cache, data["file"])
    if not cache or not os.path.isfile(tarball):
        raise ConanException(f"{data['file']} is not in ETPKG_CORPUS_SOURCES: run the corpus "
                             f"runner, or apt-get source --download-only {data['debian']}")
    check_sha256(conanfile, tarball, data["sha256"])
    unzip(conanfile, tarball, destination=destination or conanfile.source_folder,
          strip_root=strip_root)

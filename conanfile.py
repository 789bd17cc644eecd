import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load


class EtrtConan(ConanFile):
    name = "etrt"
    description = "A compact inference runtime for programs exported with torch.export"
    license = "Apache-2.0"
    homepage = "https://example.invalid/etrt"
    topics = ("inference", "pytorch", "runtime")
    package_type = "shared-library"
    settings = "os", "arch", "compiler", "build_type"
    exports = "VERSION"
    exports_sources = (
        "VERSION", "LICENSE", "CMakeLists.txt", "cmake/*", "src/*", "include/*", "schema/*",
        "tools/*", "python/etrt/*",
    )

    def set_version(self):
        self.version = load(self, os.path.join(self.recipe_folder, "VERSION")).strip()

    def validate(self):
        check_min_cppstd(self, 17)

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # Header-only use of FlatBuffers inside the runtime: nothing reaches consumers.
        self.requires("flatbuffers/system", visible=False)
        # libetrt_backend_xnnpack.so links XNNPACK (which brings pthreadpool and cpuinfo).
        self.requires("xnnpack/system")
        # libetrt_threadpool.so links Debian's pthreadpool; its public header does not include it.
        self.requires("pthreadpool/system")

    def build_requirements(self):
        self.tool_requires("flatbuffers/system")

    def generate(self):
        CMakeToolchain(self).generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        CMake(self).install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.py", os.path.join(self.source_folder, "python"),
             os.path.join(self.package_folder, "python"), excludes=("*/__pycache__/*",))
        copy(self, "*.fbs", os.path.join(self.source_folder, "schema"),
             os.path.join(self.package_folder, "python", "etrt", "schema"))
        copy(self, "etrt-conan-cxx17.cmake", os.path.join(self.source_folder, "cmake"),
             os.path.join(self.package_folder, "lib", "cmake", "etrt"))

    def package_info(self):
        # Everything downstream (CMakeDeps, etpkg's wheel config, pkg-config) derives from this.
        self.cpp_info.set_property("cmake_file_name", "etrt")
        self.cpp_info.set_property("cmake_target_name", "etrt::etrt")
        # CMakeDeps cannot express a C++ standard; the build module adds cxx_std_17.
        self.cpp_info.set_property("cmake_build_modules", ["lib/cmake/etrt/etrt-conan-cxx17.cmake"])
        self.cpp_info.set_property("etpkg_cxx_standard", "17")
        self.cpp_info.set_property("etpkg_python_packages", ["python/etrt"])
        # The wheel's tag, held: wheelify refuses a build needing newer symbol versions and
        # names them. 2_34 is what Debian 12's toolchain reaches (docs/PLATFORMS.md).
        self.cpp_info.set_property("etpkg_manylinux", "2_34")
        # The wheel's Requires-Dist. The runtime binding needs numpy; the program reader
        # (etrt.Program, load_program_info) needs flatbuffers; only the exporter needs torch,
        # only `python -m etrt profile`'s chart needs matplotlib. The exporter is tested with
        # torch 2.13 (requirements.txt): the extra allows that series only.
        self.cpp_info.set_property("etpkg_python_requires", [
            "numpy>=1.23", "flatbuffers>=23", 'torch>=2.13,<2.14; extra == "export"',
            'matplotlib>=3.5; extra == "profile"',
        ])

        runtime = self.cpp_info.components["runtime"]
        runtime.libs = ["etrt"]
        runtime.defines = ["ETRT_API_VERSION=1"]
        runtime.set_property("cmake_target_name", "etrt::runtime")
        runtime.set_property("pkg_config_name", "etrt-runtime")

        kernels = self.cpp_info.components["kernels_optimized"]
        kernels.libs = ["etrt_kernels_optimized"]
        kernels.requires = ["runtime"]
        kernels.set_property("cmake_target_name", "etrt::kernels_optimized")
        kernels.set_property("pkg_config_name", "etrt-kernels_optimized")
        # Registers kernels from a static initializer and exports nothing a caller references:
        # consumers must link it with --no-as-needed or it is dropped.
        self._registration_only(kernels)

        threadpool = self.cpp_info.components["threadpool"]
        threadpool.libs = ["etrt_threadpool"]
        threadpool.requires = ["runtime", "pthreadpool::pthreadpool"]
        threadpool.set_property("cmake_target_name", "etrt::threadpool")
        threadpool.set_property("pkg_config_name", "etrt-threadpool")
        # Registration-only too: it attaches to the runtime's parallel_for from a static
        # initializer, and a consumer that just wants parallel kernels references none of its
        # symbols (get_threadpool() is for the few that tune it). Without retention
        # --as-needed drops it and parallel_for silently stays serial.
        self._registration_only(threadpool)

        xnnpack = self.cpp_info.components["backend_xnnpack"]
        xnnpack.libs = ["etrt_backend_xnnpack"]
        # Runs delegates on the shared pool, so it needs etrt::threadpool too.
        xnnpack.requires = ["runtime", "threadpool", "xnnpack::xnnpack"]
        xnnpack.set_property("cmake_target_name", "etrt::backend_xnnpack")
        xnnpack.set_property("pkg_config_name", "etrt-backend_xnnpack")
        # Registers "XnnpackBackend" from a static initializer; nothing references its symbols.
        self._registration_only(xnnpack)

        etdump = self.cpp_info.components["etdump"]
        etdump.libs = ["etrt_etdump"]
        etdump.requires = ["runtime"]
        etdump.set_property("cmake_target_name", "etrt::etdump")
        etdump.set_property("pkg_config_name", "etrt-etdump")
        # Not registration-only: callers construct its ETDumpGen, so a plain link keeps it.

    def _registration_only(self, component):
        # etpkg reads the property and writes its own retention into the wheel's config; the
        # flags give Conan consumers (CMakeDeps) the same scoped --no-as-needed.
        component.set_property("etpkg_registration_only", True)
        (lib,) = component.libs
        path = os.path.join(self.package_folder, "lib", f"lib{lib}.so")
        component.exelinkflags = [f"-Wl,--push-state,--no-as-needed,{path},--pop-state"]
        component.sharedlinkflags = list(component.exelinkflags)

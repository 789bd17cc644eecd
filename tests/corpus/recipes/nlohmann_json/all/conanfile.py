from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, get
from conan.tools.layout import basic_layout
import os

required_conan_version = ">=1.50.0"


class NlohmannJsonConan(ConanFile):
    name = "nlohmann_json"
    homepage = "https://github.com/nlohmann/json"
    description = "JSON for Modern C++ parser and generator."
    topics = "json", "header-only"
    url = "https://github.com/conan-io/conan-center-index"
    license = "MIT"
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    no_copy_source = True

    @property
    def _minimum_cpp_standard(self):
        return 11

    def layout(self):
        basic_layout(self, src_folder="src")

    def package_id(self):
        self.info.clear()

    def validate(self):
        if self.settings.compiler.cppstd:
            check_min_cppstd(self, self._minimum_cpp_standard)

    def source(self):
        _debian_orig_source(self, strip_root=True)

    def generate(self):
        pass

    def build(self):
        pass

    def package(self):
        copy(self, "LICENSE*", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*", os.path.join(self.source_folder, "include"), os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "nlohmann_json")
        self.cpp_info.set_property("cmake_target_name", "nlohmann_json::nlohmann_json")
        self.cpp_info.set_property("pkg_config_name", "nlohmann_json")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []


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

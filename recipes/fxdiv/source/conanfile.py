import os

from conan import ConanFile
from conan.tools.files import copy


class FxdivConan(ConanFile):
    """FXdiv (integer division by a run-time constant, header-only) from Debian's source
    package: pthreadpool and XNNPACK include fxdiv.h."""

    name = "fxdiv"
    description = "FXdiv (division via fixed-point multiplication), from Debian's source package"
    license = "MIT"
    package_type = "header-library"
    python_requires = "debiansource/1.0"
    build_policy = "missing"
    no_copy_source = True

    def source(self):
        self.python_requires["debiansource"].module.fetch(self)

    def package(self):
        copy(self, "fxdiv.h", os.path.join(self.source_folder, "include"),
             os.path.join(self.package_folder, "include"))
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_id(self):
        self.info.clear()

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []

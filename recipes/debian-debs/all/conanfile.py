"""Debian packages of another architecture, for the recipes that wrap Debian packages when
Conan cross-builds (host arch != build arch).

Installing them through multiarch (`apt-get install libxnnpack-dev:arm64`) is not possible
for every package: libxnnpack0, libxnnpack-dev, libpthreadpool0 and libpthreadpool-dev are not
`Multi-Arch: same` in Debian 12, so the arm64 package would replace the machine's amd64 one.
Instead the recipe downloads the host arch's .deb files from the Debian archive with the
machine's apt (`apt-get download`, after `dpkg --add-architecture <arch>` and an update) and
unpacks them into its package folder: the machine's own packages are left alone.
"""

import glob
import os
import shutil

from conan import ConanFile
from conan.errors import ConanException, ConanInvalidConfiguration
from conan.tools.build import cross_building
from conan.tools.system import package_manager

# Conan arch -> (Debian arch, multiarch library directory)
_DEBIAN_ARCHES = {
    "armv8": ("arm64", "aarch64-linux-gnu"),
    "x86_64": ("amd64", "x86_64-linux-gnu"),
    "ppc64le": ("ppc64el", "powerpc64le-linux-gnu"),
    "s390x": ("s390x", "s390x-linux-gnu"),
    "riscv64": ("riscv64", "riscv64-linux-gnu"),
}


def foreign(conanfile):
    """Whether the packages must come from another arch's .deb files (a cross build)."""
    return cross_building(conanfile)


def _arch(conanfile):
    arch = str(conanfile.settings.arch)
    if arch not in _DEBIAN_ARCHES:
        raise ConanException(f"{conanfile.ref}: no Debian architecture known for arch={arch}")
    return _DEBIAN_ARCHES[arch]


def download_and_unpack(conanfile, packages, root):
    """apt-get download each package for the host arch into the build folder; unpack into root."""
    debian_arch, _ = _arch(conanfile)
    names = [f"{p}:{debian_arch}" for p in packages]
    downloads = os.path.join(conanfile.build_folder, "debs")
    os.makedirs(downloads, exist_ok=True)
    try:
        conanfile.run("apt-get download " + " ".join(names), cwd=downloads)
    except ConanException as exc:
        raise ConanException(
            f"{conanfile.ref}: cannot download {' '.join(names)} from the Debian archive: "
            f"run `dpkg --add-architecture {debian_arch} && apt-get update` first ({exc})"
        ) from exc
    for deb in sorted(glob.glob(os.path.join(downloads, "*.deb"))):
        conanfile.run(f"dpkg-deb -x {deb} {root}")


def package_unpacked(conanfile, root):
    """include/, lib/ (the multiarch dir's contents) and the copyright files into the package."""
    _, multiarch = _arch(conanfile)
    include = os.path.join(root, "usr", "include")
    if os.path.isdir(include):
        shutil.copytree(include, os.path.join(conanfile.package_folder, "include"), symlinks=True)
    lib = os.path.join(root, "usr", "lib", multiarch)
    if os.path.isdir(lib):
        shutil.copytree(
            lib,
            os.path.join(conanfile.package_folder, "lib"),
            symlinks=True,
            ignore=shutil.ignore_patterns("pkgconfig", "cmake"),
        )
    for copyright_file in glob.glob(os.path.join(root, "usr", "share", "doc", "*", "copyright")):
        name = os.path.basename(os.path.dirname(copyright_file))
        dest = os.path.join(conanfile.package_folder, "licenses", name)
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(copyright_file, dest)


class DebianPackage:
    """The base (`python_requires_extend = "debian-debs.DebianPackage"`) of a recipe that wraps
    Debian packages: natively apt installs `apt_packages` and the files stay in /usr; when Conan
    cross-builds, the host arch's `host_debs` are unpacked into the package instead. One binary
    per arch. `debian_libs` are the libraries consumers link (none for headers only)."""

    apt_packages = ()
    host_debs = ()
    debian_libs = ()

    def validate(self):
        if self.settings.os != "Linux":
            raise ConanInvalidConfiguration(f"{self.ref} wraps Debian packages: Linux only")

    def package_id(self):
        del self.info.settings.compiler
        del self.info.settings.build_type
        self.info.requires.clear()

    def system_requirements(self):
        if foreign(self):
            return  # the host arch's packages are unpacked by build()
        package_manager.Apt(self).install(list(self.apt_packages), update=True, check=True)

    def build(self):
        if foreign(self):
            download_and_unpack(self, list(self.host_debs), self._debian_root)

    def package(self):
        if foreign(self):
            package_unpacked(self, self._debian_root)

    @property
    def _debian_root(self):
        return os.path.join(self.build_folder, "root")

    def debian_cpp_info(self):
        """Natively the files live in /usr, which the compiler and linker already search; a
        cross build's package holds them itself."""
        self.cpp_info.bindirs = []
        self.cpp_info.includedirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.system_libs = list(self.debian_libs)
        if foreign(self):
            self.cpp_info.includedirs = ["include"]
            self.cpp_info.libdirs = ["lib"] if self.debian_libs else []
            self.cpp_info.system_libs = []
            self.cpp_info.libs = list(self.debian_libs)


class DebianDebs(ConanFile):
    name = "debian-debs"
    description = "Helpers for recipes that take another architecture's Debian packages"
    license = "Apache-2.0"
    package_type = "python-require"

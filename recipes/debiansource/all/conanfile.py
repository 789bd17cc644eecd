"""python_requires of the recipes that build a Debian source package (recipes/*/source): fetch()
puts its upstream tree, Debian's patches applied, into the recipe's source folder."""

import hashlib
import os
import tempfile

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.files import copy, unzip

# A folder holding, per package, its upstream tree at the commit Debian packages (conandata's
# upstream_commit), Debian's patches applied: for a machine whose apt cannot fetch the source.
SOURCES_CONF = "user.etrt:debian_sources"


def fetch(conanfile):
    # Keyed by version: the local-recipes-index trims conandata.yml to the exported version.
    data = conanfile.conan_data["debian"][str(conanfile.version)]
    local = conanfile.conf.get(SOURCES_CONF, check_type=str)
    if local:
        tree = os.path.join(local, data["package"])
        if not os.path.isfile(os.path.join(tree, "CMakeLists.txt")):
            raise ConanException(f"{SOURCES_CONF}: {tree} holds no {data['package']} source tree")
        copy(conanfile, "*", tree, conanfile.source_folder)
        return
    with tempfile.TemporaryDirectory(prefix="debsrc-") as tmp:
        conanfile.run(
            f"apt-get source --download-only {data['package']}={data['version']}", cwd=tmp
        )
        orig = os.path.join(tmp, data["orig"])
        if _sha256(orig) != data["sha256"]:
            raise ConanException(f"{data['orig']}: SHA-256 differs from Debian's .dsc")
        unzip(conanfile, orig, destination=conanfile.source_folder, strip_root=True)
        debian = [f for f in os.listdir(tmp) if f.endswith(".debian.tar.xz")]
        if debian:
            unzip(conanfile, os.path.join(tmp, debian[0]), destination=conanfile.source_folder)
            series = os.path.join(conanfile.source_folder, "debian", "patches", "series")
            if os.path.isfile(series):
                for name in open(series).read().split():
                    patch = os.path.join(conanfile.source_folder, "debian", "patches", name)
                    conanfile.run(f"patch -p1 -i {patch}", cwd=conanfile.source_folder)


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class DebianSource(ConanFile):
    name = "debiansource"
    package_type = "python-require"

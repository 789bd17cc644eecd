"""python_requires of the recipes that build a Debian source package (recipes/*/source): fetch()
puts the package's upstream tree (its orig tarball) into the recipe's source folder.

The tarball comes from the pool of the Debian archive that the machine's apt uses (or the conf
`user.etrt:debian_mirror`), and must match the SHA-256 that the recipe's conandata.yml pins: the
one in the `Checksums-Sha256` of that suite's `Sources` index. Debian's own patches
(`.debian.tar.xz`) are not applied: the archive this project is built against does not serve
them, and the builds below need none of them.
"""

import os
import subprocess
import tarfile

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.files import download, unzip

# The Debian archive's root URL, for a machine without apt or to use another mirror.
MIRROR_CONF = "user.etrt:debian_mirror"


def fetch(conanfile):
    # Keyed by version: the local-recipes-index trims conandata.yml to the exported version.
    data = conanfile.conan_data["debian"][str(conanfile.version)]
    package, orig = data["package"], data["orig"]
    prefix = package[:4] if package.startswith("lib") else package[0]
    url = f"{mirror(conanfile)}/pool/main/{prefix}/{package}/{orig}"
    target = os.path.join(conanfile.source_folder, orig)
    try:
        # download() checks the SHA-256 and removes the file if it differs.
        download(conanfile, url, target, sha256=data["sha256"])
    except ConanException as exc:
        raise ConanException(
            f"{conanfile.ref}: cannot fetch Debian's {orig} ({data['suite']}, "
            f"version {data['version']}) with SHA-256 {data['sha256']}: {exc}"
        ) from exc
    unzip(conanfile, target, destination=conanfile.source_folder, strip_root=_one_root(target))
    os.remove(target)


def _one_root(tarball):
    # Most orig tarballs hold one top folder; some (XNNPACK's) hold the tree itself.
    with tarfile.open(tarball) as tar:
        tops = {name.split("/", 1)[0] for name in tar.getnames()}
    return len(tops) == 1


def mirror(conanfile):
    """The archive root: the conf, else the first Debian (not security) archive apt lists."""
    configured = conanfile.conf.get(MIRROR_CONF, check_type=str)
    if configured:
        return configured.rstrip("/")
    try:
        out = subprocess.run(
            ["apt-get", "indextargets", "--format", "$(LABEL) $(REPO_URI)"],
            check=True, capture_output=True, text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ConanException(
            f"{conanfile.ref}: no Debian archive known: apt-get indextargets failed ({exc}); "
            f"set the conf {MIRROR_CONF}"
        ) from exc
    for line in out.splitlines():
        label, _, uri = line.partition(" ")
        if label == "Debian" and uri:
            return uri.rstrip("/")
    raise ConanException(
        f"{conanfile.ref}: apt lists no Debian archive; set the conf {MIRROR_CONF}"
    )


class DebianSource(ConanFile):
    name = "debiansource"
    package_type = "python-require"

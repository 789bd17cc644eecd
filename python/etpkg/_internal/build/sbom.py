"""Writing the wheel's SBOM (plan/sbom.py renders it): what each file of the final tree is, the
package it comes from, and the hash of the file it was made from, read off the disk.

Where a file comes from is where its source lies: in the SDK's Conan package folder, in the
folder of a Conan package it requires, or else in a Debian package (`dpkg -S`); a grafted
library's source is the file auditwheel copied. Files etpkg generated belong to the SDK.
auditwheel's own SBOM, when it wrote one, is merged and removed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from etpkg._internal.build import system
from etpkg._internal.build.elf import ELF_MAGIC
from etpkg._internal.build.wheelfile import source_date_epoch, tree_files
from etpkg._internal.conan import ConanPackage
from etpkg._internal.errors import CheckError
from etpkg._internal.facts import SourceFile
from etpkg._internal.plan import sbom
from etpkg._internal.plan.layout import AUDITWHEEL_SBOM, SBOMS
from etpkg._internal.tags import WheelName

log = logging.getLogger(__name__)

ARCHIVE_MAGIC = b"!<arch>\n"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kind(path: str, pkg: str, data: bytes) -> str:
    """What a wheel file is, by where it lies and what it holds."""
    if data.startswith(ARCHIVE_MAGIC):
        return sbom.STATIC_LIBRARY
    if data.startswith(ELF_MAGIC):
        return sbom.EXECUTABLE if path.startswith(f"{pkg}/bin/") else sbom.LIBRARY
    if path.startswith(f"{pkg}/include/"):
        return sbom.HEADER
    if path.endswith(".py"):
        return sbom.PYTHON
    if path.startswith(f"{pkg}/lib/cmake/"):
        return sbom.CMAKE
    if path.startswith(f"{pkg}/lib/pkgconfig/") and path.endswith(".pc"):
        return sbom.PKG_CONFIG
    return sbom.DATA


def sdk_origin(package: ConanPackage, excluded: Sequence[str] = ()) -> sbom.Origin:
    """`excluded`: package-folder files left out with --exclude, one etpkg:excluded each."""
    sdk = package.sdk
    props: tuple[tuple[str, str], ...] = (
        (("conan:binary", package.binary),) if package.binary else ()
    )
    props += tuple(("etpkg:excluded", rel) for rel in excluded)
    return sbom.Origin(
        sbom.CONAN,
        sdk.name,
        sdk.version,
        sdk.license,
        description=" ".join(sdk.description.split()),
        homepage=sdk.homepage,
        properties=props,
    )


class _Origins:
    """The package each source file comes from (cached per Debian package)."""

    def __init__(self, package: ConanPackage, excluded: Sequence[str] = ()) -> None:
        self.package = package
        self.sdk = sdk_origin(package, excluded)
        self._debian: dict[str, sbom.Origin] = {}

    def of(self, source: Path) -> sbom.Origin | None:
        real = source.resolve()
        if real.is_relative_to(self.package.sdk.package_folder.resolve()):
            return self.sdk
        for req in self.package.required:
            if real.is_relative_to(req.package_folder.resolve()):
                return sbom.Origin(sbom.CONAN, req.name, req.version, req.license)
        deb = system.owner(source)
        return self.debian(deb) if deb is not None else None

    def debian(self, deb: str) -> sbom.Origin | None:
        if deb not in self._debian:
            found = system.package_version(deb)
            if found is None:
                return None
            version, arch = found
            copyright_path = system.copyright_file(deb)
            text = copyright_path.read_text(errors="replace") if copyright_path else ""
            self._debian[deb] = sbom.Origin(
                sbom.DEB,
                deb.split(":", 1)[0],
                version,
                sbom.debian_license(text),
                namespace=system.distribution(),
                qualifiers=(("arch", arch),),
            )
        return self._debian[deb]


def _their_refs(theirs: Mapping[str, Any] | None) -> dict[str, str]:
    """auditwheel's bom-refs by what follows their '#': the SHA-256 of the copied file's path."""
    refs: dict[str, str] = {}
    for comp in (theirs or {}).get("components", []):
        ref = str(comp.get("bom-ref", ""))
        if "#" in ref:
            refs[ref.rsplit("#", 1)[1]] = ref
    return refs


def _their_ref(refs: Mapping[str, str], copied: Path) -> str | None:
    for spelling in dict.fromkeys([str(copied), str(copied.resolve())]):
        ref = refs.get(hashlib.sha256(spelling.encode(errors="ignore")).hexdigest())
        if ref is not None:
            return ref
    return None


def _auditwheel_version() -> str:
    try:
        return importlib_metadata.version("auditwheel")
    except importlib_metadata.PackageNotFoundError:
        return ""


def write_sbom(
    tree: Path,
    name: WheelName,
    package: ConanPackage,
    sources: Mapping[str, SourceFile | bytes],
    grafted: Mapping[str, str],
    external: Mapping[str, Path],
    *,
    repaired: bool,
    etpkg_version: str,
    excluded: Sequence[str] = (),
    properties: Sequence[tuple[str, str]] = (),
) -> str:
    """Writes <dist-info>/sboms/etpkg.cdx.json into the final tree; returns its path.

    `sources`: wheel path -> the file it was copied from or the bytes etpkg generated;
    `grafted`: SONAME -> wheel path of auditwheel's copy, `external`: SONAME -> the file copied.
    """
    dist_info = name.dist_info
    theirs_path = tree / dist_info / SBOMS / AUDITWHEEL_SBOM
    theirs: dict[str, Any] | None = None
    if theirs_path.is_file():
        theirs = json.loads(theirs_path.read_text(encoding="utf-8"))
        theirs_path.unlink()
    origins = _Origins(package, excluded)
    refs = _their_refs(theirs)
    pkg = package.sdk.import_name
    graft_sources = {path: external[soname] for soname, path in grafted.items()}
    files: list[sbom.ShippedFile] = []
    for rel in sorted(tree_files(tree)):
        if rel.startswith(f"{dist_info}/"):
            continue
        data = (tree / rel).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        source = sources.get(rel)
        original_path = graft_sources.get(rel)
        if original_path is None and isinstance(source, SourceFile):
            original_path = source.path
        origin = origins.of(original_path) if original_path is not None else origins.sdk
        if origin is None:
            raise CheckError(
                f"the wheel ships {rel} from {original_path}, which no Conan package and no "
                "Debian package holds: the SBOM cannot say where it comes from"
            )
        original = None
        if original_path is not None:
            original_sha = _sha256(original_path)
            if original_sha != digest:
                their = _their_ref(refs, original_path) if rel in graft_sources else None
                original = sbom.Original(original_path.name, original_sha, their)
        files.append(
            sbom.ShippedFile(
                rel,
                digest,
                kind(rel, pkg, data),
                origin,
                generated=isinstance(source, bytes) or (source is None and original_path is None),
                original=original,
            )
        )
    tools = [("etpkg", etpkg_version)]
    if repaired and theirs is None:
        tools.append(("auditwheel", _auditwheel_version()))
    document = sbom.render_sbom(
        sbom.SbomInput(
            name,
            origins.sdk,
            tuple(files),
            tuple(tools),
            source_date_epoch(),
            theirs,
            tuple(properties),
        )
    )
    out = sbom.sbom_path(name)
    (tree / out).parent.mkdir(parents=True, exist_ok=True)
    (tree / out).write_bytes(document)
    log.info("SBOM: %d files from %d packages", len(files), len({f.origin for f in files}))
    return out

"""The wheel's CycloneDX SBOM (PEP 770: <dist>.dist-info/sboms/etpkg.cdx.json); pure.

One document describes everything the wheel ships, file by file, grouped under the package each
file comes from: the SDK's own Conan package (its libraries, executables, headers, Python
package, data, and the CMake and pkg-config files etpkg generated for it), each Conan package
it requires whose files ship, and each Debian package a grafted library or a shipped header
comes from (`pkg:deb/<distribution>/<name>@<version>?arch=<arch>`). Every file carries the
SHA-256 of the wheel's copy; a file the wheel holds patched (SONAME, DT_NEEDED, runpath) names
the file it was made from, with that file's hash, as its pedigree.

auditwheel writes its own document for the libraries it grafts from OS packages (a component
per copied file: the Debian package's name, version and purl; a bom-ref ending in a hash of
the copied file's path). It is merged here rather than kept beside: each of its components
becomes the ancestor of the grafted copy it made (same bom-ref, name, version, purl, and now
the copied file's SHA-256), anything of it that matches no graft is kept as it was, and
auditwheel is listed among the tools; the wheel then holds one complete SBOM.

Deterministic: the timestamp is SOURCE_DATE_EPOCH, the serial number a UUID derived from the
document's own content, components sorted by the library.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from cyclonedx.model import (
    ExternalReference,
    ExternalReferenceType,
    HashAlgorithm,
    HashType,
    Property,
    XsUri,
)
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType, Pedigree
from cyclonedx.model.license import DisjunctiveLicense, License, LicenseExpression
from cyclonedx.model.tool import ToolRepository
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.spdx import fixup_id, is_expression
from packageurl import PackageURL

from etpkg._internal.plan.layout import SBOM_FILE, SBOMS
from etpkg._internal.tags import WheelName

CONAN = "conan"
DEB = "deb"

# What a shipped file is (the `etpkg:kind` property); libraries and executables also get
# CycloneDX's own types.
LIBRARY = "library"
STATIC_LIBRARY = "static-library"
EXECUTABLE = "executable"
HEADER = "header"
PYTHON = "python"
CMAKE = "cmake"
PKG_CONFIG = "pkg-config"
DATA = "data"
_TYPES = {
    LIBRARY: ComponentType.LIBRARY,
    STATIC_LIBRARY: ComponentType.LIBRARY,
    EXECUTABLE: ComponentType.APPLICATION,
}
PATCHED_NOTE = "the wheel's copy, with its SONAME, DT_NEEDED entries and runpath rewritten"


@dataclass(frozen=True)
class Origin:
    """A package whose files the wheel ships."""

    kind: str  # CONAN or DEB
    name: str
    version: str
    license: str | None = None  # an SPDX expression, or a licence's name
    namespace: str | None = None  # DEB: the distribution, e.g. "debian"
    qualifiers: tuple[tuple[str, str], ...] = ()  # e.g. (("arch", "amd64"),)
    description: str = ""
    homepage: str | None = None
    properties: tuple[tuple[str, str], ...] = ()

    @property
    def purl(self) -> PackageURL:
        return PackageURL(
            self.kind, self.namespace, self.name, self.version, dict(self.qualifiers) or None
        )

    @property
    def ref(self) -> str:
        return str(self.purl)


@dataclass(frozen=True)
class Original:
    """The file a wheel file was made from, when the wheel's copy differs (patched)."""

    name: str  # its file name
    sha256: str
    bom_ref: str | None = None  # auditwheel's bom-ref for it, when its document lists it


@dataclass(frozen=True)
class ShippedFile:
    path: str  # wheel-relative
    sha256: str  # of the wheel's copy
    kind: str  # LIBRARY, STATIC_LIBRARY, EXECUTABLE, HEADER, PYTHON, CMAKE, PKG_CONFIG, DATA
    origin: Origin
    generated: bool = False  # written by etpkg (CMake config, .pc files, Python helper)
    original: Original | None = None


@dataclass(frozen=True)
class SbomInput:
    name: WheelName
    sdk: Origin  # the SDK's own Conan package
    files: tuple[ShippedFile, ...]
    tools: tuple[tuple[str, str], ...]  # (name, version) of what made the wheel
    epoch: int  # SOURCE_DATE_EPOCH
    auditwheel: Mapping[str, Any] | None = None  # auditwheel's own document, to merge
    # Of the wheel itself, e.g. its manylinux floor and what sets it (build/floor.py).
    properties: tuple[tuple[str, str], ...] = ()


def sbom_path(name: WheelName) -> str:
    return f"{name.dist_info}/{SBOMS}/{SBOM_FILE}"


def licenses(value: str | None) -> list[License]:
    """An SPDX id, an SPDX expression, or else a licence's name."""
    if not value:
        return []
    spdx = fixup_id(value)
    if spdx is not None:
        return [DisjunctiveLicense(id=spdx)]
    if is_expression(value):
        return [LicenseExpression(value)]
    return [DisjunctiveLicense(name=value)]


# Debian's short names (copyright-format 1.0) that differ from SPDX ids.
_DEP5_NAMES = {"expat": "MIT", "zlib": "Zlib", "public-domain": "LicenseRef-public-domain"}
_DEP5_GPL = re.compile(r"(?P<name>(?:L|A)?GPL)-(?P<version>\d(?:\.\d)?)(?P<plus>\+?)", re.I)


def _dep5_to_spdx(name: str) -> str | None:
    name = name.strip()
    gpl = _DEP5_GPL.fullmatch(name)
    if gpl:
        version = gpl.group("version") + ("" if "." in gpl.group("version") else ".0")
        suffix = "-or-later" if gpl.group("plus") else "-only"
        return fixup_id(f"{gpl.group('name').upper()}-{version}{suffix}")
    return _DEP5_NAMES.get(name.lower()) or fixup_id(name)


def debian_license(copyright_text: str) -> str | None:
    """The licence of the packaged work in a machine-readable Debian copyright file: the
    License of its `Files: *` paragraph (debian/* is the packaging's), as SPDX where each part
    of it maps to SPDX, else Debian's own words; None when the file is not in that format."""
    if not copyright_text.startswith("Format:"):
        return None
    for paragraph in re.split(r"\n\s*\n", copyright_text):
        fields: dict[str, str] = {
            m.group(1).lower(): m.group(2).strip()
            for m in re.finditer(r"^([A-Za-z-]+):[ \t]*(.*)$", paragraph, re.M)
        }
        if fields.get("files", "").split() != ["*"] or not fields.get("license"):
            continue
        words = fields["license"]
        parts = re.split(r"\s+(or|and)\s+", words, flags=re.I)
        mapped = [part.upper() if i % 2 else _dep5_to_spdx(part) for i, part in enumerate(parts)]
        if all(mapped):
            return " ".join(str(m) for m in mapped)
        return words
    return None


def _hash(sha256: str) -> HashType:
    return HashType(alg=HashAlgorithm.SHA_256, content=sha256)


def _from_document(comp: Mapping[str, Any]) -> Component:
    """A component of auditwheel's document, as it was."""
    purl = comp.get("purl")
    return Component(
        type=ComponentType(comp.get("type", "library")),
        name=str(comp.get("name", "")),
        version=str(comp["version"]) if comp.get("version") else None,
        purl=PackageURL.from_string(purl) if purl else None,
        bom_ref=str(comp.get("bom-ref") or purl or comp.get("name")),
    )


def _file_component(item: ShippedFile) -> Component:
    pedigree = None
    if item.original is not None:
        ancestor = Component(
            type=_TYPES.get(item.kind, ComponentType.FILE),
            name=item.original.name,
            version=item.origin.version,
            purl=item.origin.purl,
            bom_ref=item.original.bom_ref or f"{item.origin.ref}#{item.original.sha256}",
            hashes=[_hash(item.original.sha256)],
        )
        pedigree = Pedigree(ancestors=[ancestor], notes=PATCHED_NOTE)
    props = [Property(name="etpkg:kind", value=item.kind)]
    if item.generated:
        props.append(Property(name="etpkg:generated", value="true"))
    return Component(
        type=_TYPES.get(item.kind, ComponentType.FILE),
        name=item.path,
        version=item.origin.version,
        bom_ref=f"file:{item.path}",
        hashes=[_hash(item.sha256)],
        licenses=licenses(item.origin.license),
        properties=props,
        pedigree=pedigree,
    )


def _origin_component(origin: Origin, files: Sequence[Component]) -> Component:
    refs = []
    if origin.homepage:
        website = ExternalReference(type=ExternalReferenceType.WEBSITE, url=XsUri(origin.homepage))
        refs.append(website)
    return Component(
        type=ComponentType.LIBRARY,
        name=origin.name,
        version=origin.version,
        purl=origin.purl,
        bom_ref=origin.ref,
        description=origin.description or None,
        licenses=licenses(origin.license),
        external_references=refs,
        properties=[Property(name=k, value=v) for k, v in origin.properties],
        components=files,
    )


def _tools(tools: Iterable[tuple[str, str]]) -> ToolRepository:
    return ToolRepository(
        components=[
            Component(
                type=ComponentType.APPLICATION,
                name=name,
                version=version,
                purl=PackageURL("pypi", None, name, version),
                bom_ref=f"tool:{name}@{version}",
            )
            for name, version in dict.fromkeys(tools)
        ]
    )


def _auditwheel_tools(auditwheel: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    tools = (auditwheel or {}).get("metadata", {}).get("tools", [])
    if isinstance(tools, Mapping):  # CycloneDX 1.5+: {"components": [...]}
        tools = tools.get("components", [])
    return [(str(t["name"]), str(t.get("version", ""))) for t in tools if t.get("name")]


def _bom(data: SbomInput, serial: uuid.UUID) -> Bom:
    name = data.name
    dist = name.distribution.replace("_", "-")
    root_purl = PackageURL("pypi", None, dist, name.version, {"file_name": name.filename})
    root = Component(
        type=ComponentType.LIBRARY,
        name=dist,
        version=name.version,
        purl=root_purl,
        bom_ref=str(root_purl),
        licenses=licenses(data.sdk.license),
        properties=[Property(name=k, value=v) for k, v in data.properties],
    )
    origins = list(dict.fromkeys([data.sdk, *(f.origin for f in data.files)]))
    packages = [
        _origin_component(origin, [_file_component(f) for f in data.files if f.origin == origin])
        for origin in origins
    ]
    # What of auditwheel's document no grafted file accounts for is kept as it was.
    theirs = data.auditwheel or {}
    their_root = theirs.get("metadata", {}).get("component", {}).get("bom-ref")
    used = {f.original.bom_ref for f in data.files if f.original is not None} | {their_root}
    kept = [_from_document(c) for c in theirs.get("components", []) if c.get("bom-ref") not in used]
    tools = [*data.tools, *_auditwheel_tools(data.auditwheel)]
    bom = Bom(
        components=[*packages, *kept],
        serial_number=serial,
        metadata=BomMetaData(
            component=root,
            tools=_tools(tools),
            timestamp=datetime.fromtimestamp(data.epoch, timezone.utc),
        ),
    )
    bom.register_dependency(root, [packages[0], *kept])
    bom.register_dependency(packages[0], packages[1:])
    return bom


def _serialize(bom: Bom) -> str:
    return JsonV1Dot6(bom).output_as_string(indent=2) + "\n"


def render_sbom(data: SbomInput) -> bytes:
    """The JSON document; its serial number is derived from the rest of its content."""
    draft = _serialize(_bom(data, uuid.UUID(int=0)))
    digest = hashlib.sha256(draft.encode()).hexdigest()
    serial = uuid.uuid5(uuid.NAMESPACE_URL, f"urn:etpkg:sbom:sha256:{digest}")
    text = _serialize(_bom(data, serial))
    json.loads(text)  # the library's output is JSON; fail here rather than in a wheel
    return text.encode()

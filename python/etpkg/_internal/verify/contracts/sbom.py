"""The SBOM contract: the wheel carries <dist-info>/sboms/etpkg.cdx.json (CycloneDX), and it
lists every file the wheel installs with the SHA-256 of that very file; every library has a
licence, and every grafted library a package it comes from. Read from the archive alone, so
`etpkg publish` checks it too before uploading."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from etpkg._internal.build.elf import ELF_MAGIC
from etpkg._internal.plan.layout import SBOM_FILE, SBOMS
from etpkg._internal.verify.runner import CheckFailed

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite

_DIST_INFO = re.compile(r"(?P<dist>[^/]+)-(?P<version>[^/-]+)\.dist-info/")
_ARCHIVE_MAGIC = b"!<arch>\n"


@dataclass(frozen=True)
class Listed:
    sha256: str | None
    licensed: bool
    origin: str | None  # purl of the package component it sits in


def _walk(
    components: Any, parent_purl: str | None, parent_licensed: bool
) -> Iterator[tuple[str, Listed]]:
    for comp in components or []:
        if not isinstance(comp, Mapping):
            continue
        licensed = bool(comp.get("licenses")) or parent_licensed
        purl = comp.get("purl") or parent_purl
        hashes = {h.get("alg"): h.get("content") for h in comp.get("hashes") or []}
        if comp.get("name") and hashes:
            yield str(comp["name"]), Listed(hashes.get("SHA-256"), licensed, parent_purl)
        yield from _walk(comp.get("components"), purl, licensed)


def _dist_info(zf: zipfile.ZipFile) -> str | None:
    for name in zf.namelist():
        match = _DIST_INFO.match(name)
        if match:
            return match.group(0).rstrip("/")
    return None


def problems(zf: zipfile.ZipFile) -> list[str]:
    """What is wrong with the wheel's SBOM, one line each; [] when nothing is."""
    dist_info = _dist_info(zf)
    if dist_info is None:
        return ["the wheel has no .dist-info directory"]
    path = f"{dist_info}/{SBOMS}/{SBOM_FILE}"
    if path not in zf.namelist():
        return [f"the wheel carries no SBOM ({path})"]
    try:
        doc = json.loads(zf.read(path))
    except ValueError as exc:
        return [f"{path} is not JSON ({exc})"]
    if not isinstance(doc, Mapping) or doc.get("bomFormat") != "CycloneDX":
        return [f"{path} is not a CycloneDX document"]
    found: list[str] = []
    listed: dict[str, Listed] = {}
    for name, entry in _walk(doc.get("components"), None, False):
        if name in listed:
            found.append(f"the SBOM lists {name} twice")
        listed[name] = entry
    libs_dir = dist_info.split("-", 1)[0] + ".libs/"
    members = [i.filename for i in zf.infolist() if not i.is_dir()]
    for member in sorted(members):
        if member.startswith(f"{dist_info}/"):
            continue
        data = zf.read(member)
        item = listed.get(member)
        if item is None:
            found.append(f"{member} is not in the SBOM")
            continue
        actual = hashlib.sha256(data).hexdigest()
        if item.sha256 != actual:
            found.append(f"{member}: the SBOM's SHA-256 {item.sha256} is not the file's {actual}")
        binary = data.startswith((ELF_MAGIC, _ARCHIVE_MAGIC))
        if binary and not item.licensed:
            found.append(f"{member}: the SBOM gives it no licence")
        if member.startswith(libs_dir) and binary and not item.origin:
            found.append(f"{member}: the SBOM names no package it comes from")
    found += [
        f"the SBOM lists {name}, which the wheel does not hold"
        for name in sorted(set(listed) - set(members))
    ]
    return found


def check(suite: Suite) -> str:
    with zipfile.ZipFile(suite.ws.wheel) as zf:
        found = problems(zf)
        count = sum(1 for i in zf.infolist() if ".dist-info/" not in i.filename)
    if found:
        raise CheckFailed("\n".join(found))
    return f"{count} files, each with its SHA-256"

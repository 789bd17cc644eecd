"""The CycloneDX SBOM every wheel carries (.dist-info/sboms/etpkg.cdx.json): valid against the
CycloneDX 1.6 schema, complete (every file with the SHA-256 of the wheel's copy, grouped under
the package it comes from: the SDK's Conan package, a Conan package it requires, a Debian
package with its version and architecture), auditwheel's document merged into it, the same
bytes from the same inputs; and verify's SBOM contract, which fails naming the file on a wheel
whose SBOM misses a library or holds a wrong hash."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from etpkg._internal.build import system
from etpkg._internal.plan import sbom
from etpkg._internal.tags import WheelName
from etpkg._internal.verify.contracts import sbom as sbom_contract
from etpkg._internal.verify.contracts.sbom import problems
from etpkg._internal.verify.runner import CheckFailed
from etpkg_fixtures import env, rewrite_wheel

EPOCH = 1767225600


def document(wheel: Path) -> dict[str, Any]:
    with zipfile.ZipFile(wheel) as zf:
        sboms = [n for n in zf.namelist() if "/sboms/" in n]
        assert sboms == [f"{dist_info(zf)}/sboms/etpkg.cdx.json"], sboms
        return dict(json.loads(zf.read(sboms[0])))


def dist_info(zf: zipfile.ZipFile) -> str:
    (found,) = {n.split("/")[0] for n in zf.namelist() if n.split("/")[0].endswith(".dist-info")}
    return found


def files(doc: Mapping[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Wheel path -> (its file component, the package component it sits in)."""
    out = {}
    for package in doc["components"]:
        for comp in package.get("components", []):
            out[comp["name"]] = (comp, package)
    return out


def sha256(comp: Mapping[str, Any]) -> str:
    (digest,) = [h["content"] for h in comp["hashes"] if h["alg"] == "SHA-256"]
    return str(digest)


def kind(comp: Mapping[str, Any]) -> str:
    (value,) = [p["value"] for p in comp["properties"] if p["name"] == "etpkg:kind"]
    return str(value)


def assert_valid(text: str | bytes) -> None:
    errors = JsonStrictValidator(SchemaVersion.V1_6).validate_str(
        text.decode() if isinstance(text, bytes) else text
    )
    assert errors is None, errors


def test_debian_copyright_files_give_spdx_licences_where_they_map() -> None:
    xnnpack = system.copyright_file("libxnnpack0")
    bz2 = system.copyright_file("libbz2-1.0")
    assert xnnpack is not None and bz2 is not None, "libxnnpack0 and libbz2-1.0 are installed"
    assert sbom.debian_license(xnnpack.read_text()) == "BSD-3-Clause"
    assert sbom.debian_license(bz2.read_text()) == "BSD-variant"  # Debian's own word
    text = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
    text += "Files: debian/*\nLicense: GPL-2\n\nFiles: *\nLicense: GPL-2+ or Expat\n"
    assert sbom.debian_license(text) == "GPL-2.0-or-later OR MIT"
    assert sbom.debian_license("This package was debianized by...\n") is None


def _synthetic(**changes: Any) -> sbom.SbomInput:
    sdk = sbom.Origin(sbom.CONAN, "mysdk", "1.0", "Apache-2.0", homepage="https://example.invalid")
    deb = sbom.Origin(
        sbom.DEB, "libfoo1", "2.1-3", "MIT", namespace="debian", qualifiers=(("arch", "amd64"),)
    )
    ours = sbom.ShippedFile("mysdk/lib/libmysdk.so", "a" * 64, sbom.LIBRARY, sdk)
    graft = sbom.ShippedFile(
        "mysdk.libs/libfoo-12345678.so.1",
        "b" * 64,
        sbom.LIBRARY,
        deb,
        original=sbom.Original("libfoo.so.1", "c" * 64, "pkg:deb/debian/libfoo1@2.1-3#path-hash"),
    )
    config = sbom.ShippedFile(
        "mysdk/lib/cmake/mysdk/mysdk-config.cmake", "d" * 64, sbom.CMAKE, sdk, generated=True
    )
    theirs = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.4",
        "metadata": {
            "component": {"bom-ref": "pkg:pypi/mysdk@1.0?file_name=x.whl"},
            "tools": [{"name": "auditwheel", "version": "6.8.2"}],
        },
        "components": [
            {"type": "library", "bom-ref": "pkg:pypi/mysdk@1.0?file_name=x.whl", "name": "mysdk"},
            {
                "type": "library",
                "bom-ref": "pkg:deb/debian/libfoo1@2.1-3#path-hash",
                "name": "libfoo1",
                "version": "2.1-3",
                "purl": "pkg:deb/debian/libfoo1@2.1-3",
            },
            {
                "type": "library",
                "bom-ref": "pkg:deb/debian/libbar0@1.0#other-path",
                "name": "libbar0",
                "version": "1.0",
                "purl": "pkg:deb/debian/libbar0@1.0",
            },
        ],
    }
    fields: dict[str, Any] = {
        "name": WheelName("mysdk", "1.0", "py3-none-manylinux_2_34_x86_64"),
        "sdk": sdk,
        "files": (ours, graft, config),
        "tools": (("etpkg", "0.1.0"),),
        "epoch": EPOCH,
        "auditwheel": theirs,
    }
    fields.update(changes)
    return sbom.SbomInput(**fields)


def test_rendered_sbom_is_valid_deterministic_and_merges_auditwheels() -> None:
    data = _synthetic()
    text = sbom.render_sbom(data)
    assert text == sbom.render_sbom(_synthetic())
    assert_valid(text)
    doc = json.loads(text)
    assert (
        doc["specVersion"] == "1.6" and doc["metadata"]["timestamp"] == "2026-01-01T00:00:00+00:00"
    )
    root = doc["metadata"]["component"]
    assert (
        root["purl"] == "pkg:pypi/mysdk@1.0?file_name=mysdk-1.0-py3-none-manylinux_2_34_x86_64.whl"
    )
    tools = {(t["name"], t["version"]) for t in doc["metadata"]["tools"]["components"]}
    assert tools == {("etpkg", "0.1.0"), ("auditwheel", "6.8.2")}
    listed = files(doc)
    graft, package = listed["mysdk.libs/libfoo-12345678.so.1"]
    assert package["purl"] == "pkg:deb/debian/libfoo1@2.1-3?arch=amd64"
    assert package["licenses"] == [{"license": {"id": "MIT"}}]
    (ancestor,) = graft["pedigree"]["ancestors"]
    # auditwheel's component for the copied file is now the graft's ancestor, with its hash.
    assert ancestor["bom-ref"] == "pkg:deb/debian/libfoo1@2.1-3#path-hash"
    assert sha256(ancestor) == "c" * 64 and sha256(graft) == "b" * 64
    config, package = listed["mysdk/lib/cmake/mysdk/mysdk-config.cmake"]
    assert package["purl"] == "pkg:conan/mysdk@1.0" and kind(config) == sbom.CMAKE
    assert {"name": "etpkg:generated", "value": "true"} in config["properties"]
    # What no graft accounts for stays; auditwheel's own root does not come back twice.
    refs = [c["bom-ref"] for c in doc["components"]]
    assert "pkg:deb/debian/libbar0@1.0#other-path" in refs
    assert "pkg:deb/debian/libfoo1@2.1-3#path-hash" not in refs
    assert not any(r.startswith("pkg:pypi/") for r in refs)
    deps = {d["ref"]: d.get("dependsOn", []) for d in doc["dependencies"]}
    assert deps[root["bom-ref"]][0] == "pkg:conan/mysdk@1.0"


def test_serial_number_follows_the_content() -> None:
    first = json.loads(sbom.render_sbom(_synthetic()))["serialNumber"]
    later = json.loads(sbom.render_sbom(_synthetic(epoch=EPOCH + 1)))["serialNumber"]
    plain = json.loads(sbom.render_sbom(_synthetic(auditwheel=None)))["serialNumber"]
    assert len({first, later, plain}) == 3
    assert first.startswith("urn:uuid:") and first[len("urn:uuid:") :][14] == "5"  # uuid5


@pytest.fixture(scope="module")
def toysdk(package_wheel: Callable[[str], Path]) -> Path:
    return package_wheel("toysdk")


def test_every_file_of_the_wheel_is_in_the_sbom_with_its_hash(toysdk: Path) -> None:
    doc = document(toysdk)
    with zipfile.ZipFile(toysdk) as zf:
        assert_valid(zf.read(f"{dist_info(zf)}/sboms/etpkg.cdx.json"))
        payload = {
            i.filename: hashlib.sha256(zf.read(i)).hexdigest()
            for i in zf.infolist()
            if ".dist-info/" not in i.filename
        }
        assert problems(zf) == []
    listed = files(doc)
    assert set(listed) == set(payload)
    assert {p: sha256(c) for p, (c, _) in listed.items()} == payload
    kinds = {p: kind(c) for p, (c, _) in listed.items()}
    assert kinds["toysdk/lib/libtoysdk_core.so"] == sbom.LIBRARY
    assert kinds["toysdk/include/toysdk/core.h"] == sbom.HEADER
    assert kinds["toysdk/__init__.py"] == sbom.PYTHON
    assert kinds["toysdk/lib/pkgconfig/toysdk-core.pc"] == sbom.PKG_CONFIG


def test_libraries_name_their_package_version_and_licence(toysdk: Path) -> None:
    listed = files(document(toysdk))
    core, sdk = listed["toysdk/lib/libtoysdk_core.so"]
    assert (sdk["name"], sdk["version"], sdk["purl"]) == (
        "toysdk",
        "0.3.1",
        "pkg:conan/toysdk@0.3.1",
    )
    assert core["licenses"] == [{"license": {"id": "MIT"}}] and core["type"] == "library"
    binary = [p["value"] for p in sdk["properties"] if p["name"] == "conan:binary"]
    assert binary and binary[0].startswith("toysdk/0.3.1#")  # the exact Conan binary
    # Debian's libbz2, grafted: the Debian package, its installed version, arch and licence.
    ((graft, deb),) = [v for p, v in listed.items() if p.startswith("toysdk.libs/libbz2-")]
    version, arch = system.package_version("libbz2-1.0") or ("?", "?")
    assert deb["purl"] == f"pkg:deb/debian/libbz2-1.0@{version.replace('+', '%2B')}?arch={arch}"
    assert deb["licenses"] == [{"license": {"name": "BSD-variant"}}]
    (ancestor,) = graft["pedigree"]["ancestors"]  # the file auditwheel copied, before patching
    copied = Path("/usr/lib/x86_64-linux-gnu") / ancestor["name"]
    assert sha256(ancestor) == hashlib.sha256(copied.read_bytes()).hexdigest() != sha256(graft)
    assert ancestor["bom-ref"].startswith("pkg:deb/debian/libbz2-1.0@")  # auditwheel's own
    # The header consumers include comes from the -dev package.
    _, dev = listed["toysdk/include/bzlib.h"]
    assert dev["purl"].startswith("pkg:deb/debian/libbz2-dev@") and dev["licenses"]


def test_header_only_wheel_carries_an_sbom_too(package_wheel: Callable[[str], Path]) -> None:
    wheel = package_wheel("ringbuf")
    doc = document(wheel)
    tools = [t["name"] for t in doc["metadata"]["tools"]["components"]]
    assert tools == ["etpkg"]  # no auditwheel ran
    listed = files(doc)
    assert kind(listed["ringbuf_sdk/include/ringbuf/ringbuf.hpp"][0]) == sbom.HEADER
    with zipfile.ZipFile(wheel) as zf:
        assert problems(zf) == []


def test_timestamp_is_source_date_epoch(toysdk: Path, tmp_path: Path) -> None:
    later = dict(env(), SOURCE_DATE_EPOCH=str(EPOCH + 86400))
    proc = subprocess.run(
        [sys.executable, "-m", "etpkg", "wheelify", "toysdk/0.3.1", "-of", tmp_path],
        env=later,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc, before = document(Path(proc.stdout.strip())), document(toysdk)
    assert doc["metadata"]["timestamp"] == "2026-01-02T00:00:00+00:00"
    assert doc["serialNumber"] != before["serialNumber"]
    assert files(doc) == files(before)


@pytest.mark.slow  # builds geo-kit shared
def test_a_library_grafted_from_the_conan_cache_names_its_conan_package(
    package_wheel: Callable[[str], Path],
) -> None:
    listed = files(document(package_wheel("geokit-shared")))
    ((graft, package),) = [v for p, v in listed.items() if p.startswith("geo_kit.libs/")]
    assert (package["purl"], package["licenses"]) == (
        "pkg:conan/tinyhash@1.0",
        [{"license": {"id": "0BSD"}}],
    )
    assert graft["pedigree"]["ancestors"][0]["name"] == "libtinyhash.so"


# --- verify's SBOM contract on wheels broken on purpose ---------------------------------


def _edit_sbom(wheel: Path, out: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    def change(data: bytes) -> bytes:
        doc = json.loads(data)
        edit(doc)
        return json.dumps(doc).encode()

    return rewrite_wheel(wheel, out / wheel.name, "sboms/etpkg.cdx.json", change)


def _file_entries(doc: dict[str, Any]) -> Iterator[tuple[list[Any], dict[str, Any]]]:
    for package in doc["components"]:
        for comp in package.get("components", []):
            yield package["components"], comp


def _broken_problems(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return problems(zf)


def test_sbom_contract_names_a_library_missing_from_the_sbom(toysdk: Path, tmp_path: Path) -> None:
    def drop(doc: dict[str, Any]) -> None:
        for siblings, comp in list(_file_entries(doc)):
            if comp["name"] == "toysdk/lib/libtoysdk_plugin.so":
                siblings.remove(comp)

    found = _broken_problems(_edit_sbom(toysdk, tmp_path, drop))
    assert found == ["toysdk/lib/libtoysdk_plugin.so is not in the SBOM"]


def test_sbom_contract_names_a_library_with_a_wrong_hash(toysdk: Path, tmp_path: Path) -> None:
    def wrong(doc: dict[str, Any]) -> None:
        for _, comp in _file_entries(doc):
            if comp["name"].startswith("toysdk.libs/libbz2-"):
                comp["hashes"][0]["content"] = "0" * 64

    (found,) = _broken_problems(_edit_sbom(toysdk, tmp_path, wrong))
    assert (
        found.startswith("toysdk.libs/libbz2-") and f"SHA-256 {'0' * 64} is not the file's" in found
    )


def test_sbom_contract_catches_a_library_changed_after_the_sbom(
    toysdk: Path, tmp_path: Path
) -> None:
    # RECORD brought in line: only the SBOM still knows the library as it was built.
    changed = rewrite_wheel(
        toysdk, tmp_path / toysdk.name, "lib/libtoysdk_core.so", lambda data: data + b"\0"
    )
    (found,) = _broken_problems(changed)
    assert found.startswith("toysdk/lib/libtoysdk_core.so: the SBOM's SHA-256 ")


def test_sbom_contract_wants_a_licence_and_an_origin_for_grafted_libraries(
    toysdk: Path, tmp_path: Path
) -> None:
    def strip(doc: dict[str, Any]) -> None:
        for package in doc["components"]:
            if package["name"] == "libbz2-1.0":
                package.pop("purl")
                package.pop("licenses")
                for comp in package["components"]:
                    comp.pop("licenses")

    found = _broken_problems(_edit_sbom(toysdk, tmp_path, strip))
    assert len(found) == 2 and all(f.startswith("toysdk.libs/libbz2-") for f in found), found
    assert "gives it no licence" in found[0] and "names no package" in found[1]


def test_verify_reports_the_sbom_contract_as_one_failed_check(
    toysdk: Path, tmp_path: Path
) -> None:
    gone = _edit_sbom(toysdk, tmp_path, lambda doc: doc.update(components=[]))
    suite = SimpleNamespace(ws=SimpleNamespace(wheel=gone))
    with pytest.raises(CheckFailed) as failed:
        sbom_contract.check(suite)  # type: ignore[arg-type]
    first = str(failed.value).splitlines()[0]
    pattern = r"toysdk\.libs/libbz2-[0-9a-f]{8}\.so[.0-9]* is not in the SBOM"
    assert re.fullmatch(pattern, first), first
    assert "toysdk/lib/libtoysdk_core.so is not in the SBOM" in str(failed.value)
    assert "files, each with its SHA-256" in sbom_contract.check(
        SimpleNamespace(ws=SimpleNamespace(wheel=toysdk))  # type: ignore[arg-type]
    )

"""The recipes that build Debian source packages for the glibc 2.28 wheels (recipes/*/source,
docs/PLATFORMS.md) agree with each other and with the profiles that use them: every version a
config.yml lists has its Debian tarball and SHA-256 pinned, and every version a manylinux_2_28
profile swaps in exists. A file check, no build (the builds are `ci/long.sh manylinux`'s)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from etpkg_fixtures import REPO_ROOT

RECIPES = REPO_ROOT / "recipes"
PROFILES = sorted((REPO_ROOT / "ci" / "manylinux_2_28").glob("profile*"))
SOURCE_RECIPES = sorted(p.parent.parent.name for p in RECIPES.glob("*/source/conandata.yml"))


def _source_versions(name: str) -> dict[str, str]:
    config = yaml.safe_load((RECIPES / name / "config.yml").read_text())
    return {v: e["folder"] for v, e in config["versions"].items() if e["folder"] == "source"}


@pytest.mark.parametrize("name", SOURCE_RECIPES)
def test_each_source_version_pins_a_debian_orig_tarball(name: str) -> None:
    data = yaml.safe_load((RECIPES / name / "source" / "conandata.yml").read_text())["debian"]
    versions = _source_versions(name)
    assert versions and set(versions) == set(data), (sorted(versions), sorted(data))
    for version, entry in data.items():
        # 0.0~git20241108.4ea82e5-2 -> recipe version 0.0.20241108, tarball of that upstream.
        debian = re.fullmatch(r"0\.0~git(\d{8})\.([0-9a-f]{7})-[\d.]+", entry["version"])
        assert debian, entry["version"]
        assert version == f"0.0.{debian[1]}", (version, entry["version"])
        upstream = entry["version"].rsplit("-", 1)[0]
        assert entry["orig"] == f"{entry['package']}_{upstream}.orig.tar.xz", entry
        assert entry["upstream_commit"] == debian[2], entry
        assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]), entry
        assert entry["suite"] in ("bookworm", "trixie", "forky", "sid"), entry


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_the_profiles_swap_in_versions_that_exist(profile: Path) -> None:
    text = profile.read_text()
    section = text.split("[replace_requires]", 1)[1]
    swaps = dict(re.findall(r"^(\w+)/system: \1/(\S+)$", section, re.M))
    assert set(swaps) == {"xnnpack", "pthreadpool", "cpuinfo"}, swaps
    for name, version in swaps.items():
        assert version in _source_versions(name), (profile.name, name, version)
    # The source recipes' own requirements name the same versions.
    xnnpack = (RECIPES / "xnnpack" / "source" / "conanfile.py").read_text()
    for name in ("pthreadpool", "cpuinfo"):
        assert f'"{name}/{swaps[name]}"' in xnnpack, name

"""wheelify: Conan package -> repaired, checked, reproducible wheel in the output directory.

The pipeline, in order: read (conan) -> probe (build.probe) -> plan (plan.*, pure) -> stage
(build.stage: files + patchelf) -> zip (build.wheelfile) -> repair (build.repair: auditwheel)
-> check (build.checks) -> publish (build.publish: atomic).
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from etpkg._internal import tags
from etpkg._internal.build import checks, repair
from etpkg._internal.build.probe import probe_package
from etpkg._internal.build.publish import publish
from etpkg._internal.build.stage import stage
from etpkg._internal.build.wheelfile import unpack_wheel, write_wheel
from etpkg._internal.conan import read_package
from etpkg._internal.plan.cmake import render_cmake_package
from etpkg._internal.plan.layout import plan_wheel, wheel_sdk
from etpkg._internal.plan.pkgconfig import render_pkg_config
from etpkg._internal.remote import fetch_package
from etpkg._internal.version import VERSION

log = logging.getLogger(__name__)


def wheelify(spec: str, out_dir: Path, *, remote: str | None = None, update: bool = False) -> Path:
    """Builds the wheel of the Conan package `spec` (reference or conanfile dir) into out_dir;
    with `remote`, first installs it from that Conan remote into the cache (remote.py).

    All work happens in a temp dir; out_dir changes only by the final atomic rename.
    """
    start = time.monotonic()
    if remote is not None:
        spec = fetch_package(spec, remote, update=update)
    package = read_package(spec)
    sdk = package.sdk
    arch = tags.arch_for_conan(package.arch)
    files = probe_package(sdk, arch)
    view = wheel_sdk(sdk)
    generated = {**render_cmake_package(view), **render_pkg_config(view)}
    plan, name = plan_wheel(sdk, files, tags.unrepaired_platform(arch), VERSION, generated)
    forbidden = [*sdk.forbidden_paths, package.conan_home]

    with tempfile.TemporaryDirectory(prefix="etpkg-") as tmp_name:
        tmp = Path(tmp_name)
        tree = tmp / "tree"
        stage(plan, tree)
        unrepaired = tmp / "unrepaired" / name.filename
        unrepaired.parent.mkdir()
        write_wheel(tree, unrepaired, name.dist_info)

        platform = repair.choose_platform(unrepaired)
        (tmp / "repaired").mkdir()
        repaired = repair.repair(unrepaired, platform, tmp / "repaired")
        final_tree = tmp / "final"
        unpack_wheel(repaired, final_tree)
        repair.restore_runpaths(final_tree)

        libraries = [patch.path for patch in plan.patches]
        checks.raise_problems(checks.runpath_problems(final_tree, libraries))
        checks.raise_problems(checks.forbidden_path_problems(final_tree, forbidden))

        final = tmp / "out" / repaired.name
        final.parent.mkdir()
        write_wheel(final_tree, final, name.dist_info)
        dest = publish(final, out_dir)
    log.info("wrote %s in %.2f s", dest, time.monotonic() - start)
    return dest

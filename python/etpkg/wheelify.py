"""wheelify: Conan package -> repaired, checked, reproducible wheel in the output directory."""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from etpkg import __version__, checks, repair
from etpkg.conan import read_package
from etpkg.config import render_cmake_package
from etpkg.elf import arch_for_conan
from etpkg.layout import plan_wheel, stage, wheel_sdk
from etpkg.output import publish
from etpkg.pkgconfig import render_pkg_config
from etpkg.wheelfile import unpack_wheel, write_wheel

log = logging.getLogger(__name__)


def wheelify(spec: str, out_dir: Path) -> Path:
    """Builds the wheel of the Conan package `spec` (reference or conanfile dir) into out_dir.

    All work happens in a temp dir; out_dir changes only by the final atomic rename.
    """
    start = time.monotonic()
    package = read_package(spec)
    sdk = package.sdk
    arch = arch_for_conan(package.arch)
    view = wheel_sdk(sdk)
    generated = {**render_cmake_package(view), **render_pkg_config(view)}
    plan, name = plan_wheel(sdk, arch, f"linux_{arch.wheel}", __version__, generated)
    forbidden = [*sdk.forbidden_paths, package.conan_home]

    with tempfile.TemporaryDirectory(prefix="etpkg-") as tmp_name:
        tmp = Path(tmp_name)
        tree = tmp / "tree"
        stage(plan, tree, sdk.name)
        unrepaired = tmp / "unrepaired" / name.filename
        unrepaired.parent.mkdir()
        write_wheel(tree, unrepaired, name.dist_info)

        platform = repair.choose_platform(unrepaired)
        (tmp / "repaired").mkdir()
        repaired = repair.repair(unrepaired, platform, tmp / "repaired")
        final_tree = tmp / "final"
        unpack_wheel(repaired, final_tree)
        repair.restore_runpaths(final_tree)

        libraries = [f"{sdk.name}/lib/{lib.file_name}" for lib in plan.libraries]
        checks.raise_problems(checks.runpath_problems(final_tree, libraries))
        checks.raise_problems(checks.forbidden_path_problems(final_tree, forbidden))

        final = tmp / "out" / repaired.name
        final.parent.mkdir()
        write_wheel(final_tree, final, name.dist_info)
        dest = publish(final, out_dir)
    log.info("wrote %s in %.2f s", dest, time.monotonic() - start)
    return dest

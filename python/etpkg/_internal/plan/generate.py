"""Every file etpkg writes into a wheel (pure): the CMake package, the .pc files, the Python
helper, the dist-info files. Rendered from the wheel's Sdk (plan/view.py); rendered again once
the wheel is repaired, when the grafted libraries and their licences are known."""

from __future__ import annotations

from collections.abc import Sequence

from etpkg._internal.errors import LayoutError
from etpkg._internal.model import Sdk
from etpkg._internal.plan import metadata, pymodule
from etpkg._internal.plan.cmake import libs_dir_name, render_cmake_package
from etpkg._internal.plan.pkgconfig import render_pkg_config
from etpkg._internal.tags import WheelName


def generated_files(
    sdk: Sdk,
    name: WheelName,
    generator_version: str,
    *,
    shipped_python: set[str],
    license_files: Sequence[str] = (),
) -> dict[str, bytes]:
    """Wheel-relative path -> content. `shipped_python`: wheel paths of the Python files the
    package ships itself (etpkg writes no __init__.py or __main__.py over them)."""
    pkg = sdk.import_name
    files = {**render_cmake_package(sdk), **render_pkg_config(sdk)}
    libs_dir = libs_dir_name(sdk)
    for dep in sdk.bundled:  # required packages the wheel carries: their own names
        for path, data in {
            **render_cmake_package(dep, libs_dir=libs_dir, with_manifest=False),
            **render_pkg_config(dep),
        }.items():
            if path in files:
                raise LayoutError(
                    f"{path} would be written for both {sdk.name} and its required package "
                    f"{dep.name}: their CMake file or pkg-config names collide"
                )
            files[path] = data
    if f"{pkg}/__init__.py" not in shipped_python:
        files[f"{pkg}/__init__.py"] = pymodule.render_init(sdk)
    if f"{pkg}/__main__.py" not in shipped_python:
        files[f"{pkg}/__main__.py"] = pymodule.render_main(sdk)
    files[f"{pkg}/_etpkg.py"] = pymodule.render_helper(sdk)
    # pkgconf-pypi resolves the pkg_config entry point as a module: make the dir a package.
    files[f"{pkg}/lib/__init__.py"] = b""
    files[f"{pkg}/lib/pkgconfig/__init__.py"] = b""
    dist = name.dist_info
    files[f"{dist}/METADATA"] = metadata.render_metadata(sdk, license_files)
    files[f"{dist}/WHEEL"] = metadata.render_wheel(name.tag, generator_version)
    files[f"{dist}/entry_points.txt"] = metadata.render_entry_points(sdk)
    return dict(sorted(files.items()))

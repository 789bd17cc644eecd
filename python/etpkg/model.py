"""The neutral description of an SDK that etpkg packages.

Everything downstream of Conan (wheel layout, CMake config, pkg-config files, checks) reads
only these types, so a source other than Conan could fill them in. Paths are relative to the
package root unless a field says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Component:
    """One library of the SDK, exported as one imported target."""

    name: str  # component name, e.g. "kernels_optimized"
    target: str  # CMake target, e.g. "etrt::kernels_optimized"
    libs: tuple[str, ...]  # library names as given to the linker, e.g. ("etrt_kernels_optimized",)
    requires: tuple[str, ...] = ()  # names of other components of this SDK
    external_requires: tuple[str, ...] = ()  # "<dep>::<component>" of other Conan packages
    defines: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ("include",)
    lib_dirs: tuple[str, ...] = ("lib",)
    system_libs: tuple[str, ...] = ()  # e.g. ("dl", "pthread")
    # Registers itself from a static initializer and exports nothing a caller references:
    # consumers must link it with --no-as-needed or the linker drops it.
    registration_only: bool = False
    pkg_config_name: str | None = None


@dataclass(frozen=True)
class Sdk:
    """A whole SDK: what one Conan package describes in package_info()."""

    name: str  # distribution and import name, e.g. "etrt"
    version: str  # full build version, e.g. "0.1.0"
    package_folder: Path  # absolute path of the built package (never written into outputs)
    components: tuple[Component, ...]  # in dependency order: a component follows what it requires
    cmake_file_name: str  # find_package(<cmake_file_name>)
    cmake_namespace: str  # "etrt" for etrt::runtime
    cxx_standard: str | None = None  # e.g. "17"; None when the package states none
    description: str = ""
    license: str | None = None
    homepage: str | None = None
    python_packages: tuple[str, ...] = ()  # dirs inside the package holding Python packages
    # PEP 508 requirements of the Python side, e.g. 'torch>=2.1; extra == "export"': the
    # wheel's Requires-Dist (and Provides-Extra for each extra a marker names).
    python_requires: tuple[str, ...] = ()
    # Build-machine directories (Conan cache, build folders) whose paths must not be shipped.
    forbidden_paths: tuple[Path, ...] = field(default_factory=tuple)

    def component(self, name: str) -> Component:
        for comp in self.components:
            if comp.name == name:
                return comp
        raise KeyError(name)

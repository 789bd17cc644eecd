"""The one neutral description of an SDK that etpkg packages (public: etpkg.Sdk, etpkg.Component).

Everything downstream of Conan (wheel layout, CMake config, pkg-config files, checks, verify)
reads only these types, so a source other than Conan could fill them in. `verify` parses the
manifest a wheel carries back into the same types (see manifest.py). Paths are relative to the
package root unless a field says otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from etpkg._internal.errors import LayoutError
from etpkg._internal.naming import library_file


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

    @property
    def files(self) -> tuple[str, ...]:
        """The component's library files in the wheel's <pkg>/lib, e.g. ("libetrt.so",)."""
        return tuple(library_file(lib) for lib in self.libs)


@dataclass(frozen=True)
class Sdk:
    """A whole SDK: what one Conan package describes in package_info()."""

    name: str  # distribution and import name, e.g. "etrt"
    version: str  # full build version, e.g. "0.1.0"
    # Where the files are: the built Conan package (absolute, never written into outputs), or
    # for an Sdk read back from a wheel's manifest the wheel-relative package dir, Path(name).
    package_folder: Path
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

    @property
    def cmake_version(self) -> str:
        """The numeric release part of the version, the only form CMake compares."""
        try:
            return ".".join(str(n) for n in Version(self.version).release)
        except InvalidVersion as exc:
            raise LayoutError(f"version {self.version!r} is not a valid version") from exc

    @property
    def variable_prefix(self) -> str:
        """Prefix of the config's result variables: ETRT for find_package(etrt)."""
        return re.sub(r"[^A-Za-z0-9_]", "_", self.cmake_file_name).upper()

    def component(self, name: str) -> Component:
        for comp in self.components:
            if comp.name == name:
                return comp
        raise KeyError(name)

    def closure(self, names: Iterable[str]) -> tuple[str, ...]:
        """These components and everything they require, in the SDK's (dependency) order."""
        wanted: set[str] = set()
        pending = list(names)
        while pending:
            name = pending.pop()
            if name not in wanted:
                wanted.add(name)
                pending.extend(self.component(name).requires)
        return tuple(c.name for c in self.components if c.name in wanted)

    def files(self, names: Iterable[str]) -> set[str]:
        """The library files of these components (not of what they require)."""
        return {f for n in names for f in self.component(n).files}

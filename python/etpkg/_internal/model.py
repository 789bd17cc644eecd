"""The one neutral description of an SDK that etpkg packages (public: etpkg.Sdk, etpkg.Component).

Everything downstream of Conan (wheel layout, CMake config, pkg-config files, checks, verify)
reads only these types, so a source other than Conan could fill them in. `verify` parses the
manifest a wheel carries back into the same types (see manifest.py). Paths are relative to the
package root unless a field says otherwise.

Flags (cflags, cxxflags, link flags) that name a file of the package hold it as
`${prefix}/<path in the package>` once planned (see plan/relocate.py): pkg-config's own
variable, which the CMake config and the Python helper define the same way.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from etpkg._internal.errors import LayoutError
from etpkg._internal.naming import library_file

C = "C"
CXX = "C++"
LANGUAGES = (C, CXX)
SHARED = "shared"
STATIC = "static"


@dataclass(frozen=True)
class Component:
    """One library of the SDK (or a header-only part of it), exported as one imported target."""

    name: str  # component name, e.g. "kernels_optimized"
    target: str  # CMake target, e.g. "etrt::kernels_optimized"
    libs: tuple[str, ...]  # library names as given to the linker; () for a header-only component
    requires: tuple[str, ...] = ()  # names of other components of this SDK
    external_requires: tuple[str, ...] = ()  # "<dep>::<component>" of other Conan packages
    defines: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ("include",)
    lib_dirs: tuple[str, ...] = ("lib",)
    system_libs: tuple[str, ...] = ()  # e.g. ("dl", "pthread"), linked as -l<name>
    # Registers itself from a static initializer and exports nothing a caller references:
    # consumers must link it with --no-as-needed (an archive: --whole-archive) or the linker
    # drops it.
    registration_only: bool = False
    pkg_config_name: str | None = None
    languages: tuple[str, ...] = (CXX,)  # what consumers compile against it: "C", "C++"
    linkage: str = SHARED  # SHARED or STATIC; meaningless for a header-only component
    cflags: tuple[str, ...] = ()  # compile flags for C consumers
    cxxflags: tuple[str, ...] = ()  # compile flags for C++ consumers
    sharedlinkflags: tuple[str, ...] = ()  # link flags for consumers that are shared libraries
    exelinkflags: tuple[str, ...] = ()  # link flags for consumers that are executables
    # Libraries of other packages consumers link with this component, by wheel-relative path
    # (a grafted <dist>.libs/libx-1a2b3c4d.so.1, an archive shipped in <pkg>/lib/).
    dependency_files: tuple[str, ...] = ()
    # Conan's names beside the target: cmake_target_aliases, cmake_module_target_name (the
    # target a Find module defines; default the target), pkg_config_aliases.
    target_aliases: tuple[str, ...] = ()
    module_target: str = ""
    pkg_config_aliases: tuple[str, ...] = ()
    pkg_config_custom_content: str = ""
    # The recipe declared the languages (cpp_info.languages or the recipe's): without that, a
    # .pc carries no -std (PkgConfigDeps never writes one).
    languages_declared: bool = True
    version: str = ""  # component_version: its .pc Version (default the package's)
    # cmake_extra_interface_libs: what else its CMake target links (targets such as
    # CUDA::cudart that a cmake_extra_dependencies package defines); CMake only, as CMakeDeps.
    cmake_interface_libs: tuple[str, ...] = ()

    @property
    def header_only(self) -> bool:
        return not self.libs

    @property
    def static(self) -> bool:
        return bool(self.libs) and self.linkage == STATIC

    @property
    def files(self) -> tuple[str, ...]:
        """The component's library files in the wheel's <pkg>/lib, e.g. ("libetrt.so",)."""
        return tuple(library_file(lib, static=self.static) for lib in self.libs)

    @property
    def cxx(self) -> bool:
        return CXX in self.languages

    @property
    def c_only(self) -> bool:
        return CXX not in self.languages


@dataclass(frozen=True)
class DependencyComponent:
    """One component of a required package: what a requirement on `<pkg>::<name>` links."""

    name: str
    libs_names: tuple[str, ...] = ()  # -l names
    system_libs: tuple[str, ...] = ()
    # As Conan spells them: "<comp>" (of the same package) or "<pkg>::<comp>" (of another).
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dependency:
    """Another package the SDK requires whose headers or libraries reach its consumers (what
    Conan propagates to a consumer of the SDK: the requirement's headers and libs traits)."""

    name: str  # Conan name, e.g. "bzip2"
    version: str
    headers: bool  # consumers compile against its headers: shipped under <pkg>/include
    libs: bool  # consumers link its libraries
    system: bool  # a wrapper of the OS's package: nothing of it is in its package folder
    package_folder: Path | None  # the built Conan package (build machine; never written out)
    include_dirs: tuple[Path, ...] = ()  # absolute
    lib_dirs: tuple[Path, ...] = ()  # absolute
    libs_names: tuple[str, ...] = ()  # libraries consumers link (-l names)
    system_libs: tuple[str, ...] = ()
    # Debian packages its recipe installs (Conan's system requirements): a system package's
    # headers and licence come from there.
    apt_packages: tuple[str, ...] = ()
    license: str | None = None
    requires: tuple[str, ...] = ()  # names of the packages it requires itself
    # What its cpp_info gives its consumers beside headers and libraries (all its components'):
    # CMakeDeps and PkgConfigDeps pass these on to a consumer of the SDK, and so does the wheel
    # through each component that requires it. Paths may name its package folder (absolute).
    defines: tuple[str, ...] = ()
    cflags: tuple[str, ...] = ()
    cxxflags: tuple[str, ...] = ()
    sharedlinkflags: tuple[str, ...] = ()
    exelinkflags: tuple[str, ...] = ()
    # Its components (none when its cpp_info has none): a requirement on one of them links
    # that component's libraries and those of what it requires, not the whole package's.
    components: tuple[DependencyComponent, ...] = ()
    # Its own cpp_info as an Sdk (names, components, properties; files in its package folder),
    # from which the wheel writes its CMake config and .pc files. None when read back from a
    # wheel's manifest.
    described: Sdk | None = None
    # The CMake file name of the config the wheel carries for it ("" when none).
    cmake_file_name: str = ""
    # The version the recipe requires, as written: "9.1.0" or a range "[>=1.0 <2]".
    required_version: str = ""


@dataclass(frozen=True)
class WheelRequirement:
    """A required package the SDK depends on as an SDK wheel of its own instead of grafting
    it (depend.py): its wheel is a Requires-Dist, its config a find_dependency, its .pc a
    Requires, its lib dir a relative RUNPATH into the sibling package in site-packages."""

    name: str  # Conan name, e.g. "fmt"
    distribution: str  # its wheel's distribution name, e.g. "fmt"
    specifier: str  # PEP 440, e.g. ">=9.1.0,<9.2"
    import_name: str  # its wheel's package dir in site-packages
    cmake_file_name: str
    cmake_version: str  # the lowest version find_package asks of its config, e.g. "9.1"
    package_target: str  # its package-wide CMake target, e.g. "fmt::fmt"
    targets: tuple[tuple[str, str], ...] = ()  # (component, CMake target) of its components
    pkg_config_name: str = ""  # its package-wide .pc ("" when none)
    pkg_config_names: tuple[tuple[str, str], ...] = ()  # (component, .pc name)
    # (SONAME as built, file name in its wheel) of its shared libraries: DT_NEEDED entries
    # of this SDK's libraries are rewritten to the second, which is never grafted.
    sonames: tuple[tuple[str, str], ...] = ()

    @property
    def requirement(self) -> str:
        """The PEP 508 line of Requires-Dist."""
        return f"{self.distribution}{self.specifier}"

    def target(self, component: str) -> str:
        """The CMake target a requirement on <name>::<component> links."""
        return dict(self.targets).get(component, self.package_target)

    def pkg_config(self, component: str) -> str:
        """The .pc name a requirement on <name>::<component> requires."""
        return dict(self.pkg_config_names).get(component, self.pkg_config_name)


class CMakeVariable(NamedTuple):
    """One entry of cmake_extra_variables, set by the config as CMakeDeps sets it: a quoted
    string (CMake expands ${...} in it; a package path is ${prefix}-relative once planned), or a
    number; a cache entry when `cache_type` is set."""

    name: str
    value: str
    quoted: bool
    cache_type: str = ""  # BOOL, FILEPATH, PATH, STRING or INTERNAL
    docstring: str = ""
    force: bool = False


class RunEnvEntry(NamedTuple):
    """One variable of a package's runenv_info: defined, or prepended / appended to the value
    it has; a path value is package-relative and joined with os.pathsep."""

    name: str
    op: str  # "define", "prepend" or "append"
    values: tuple[str, ...]
    path: bool
    separator: str


@dataclass(frozen=True)
class Sdk:
    """A whole SDK: what one Conan package describes in package_info()."""

    name: str  # the Conan package name, e.g. "etrt" or "geo-kit"
    version: str  # the Conan version as the recipe writes it, e.g. "1.2.3-rc1"
    # Where the files are: the built Conan package (absolute, never written into outputs), or
    # for an Sdk read back from a wheel's manifest the wheel-relative package dir.
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
    # The Python import name, i.e. the wheel's top-level package dir (etpkg_import_name).
    import_name: str = ""
    cmake_target: str = ""  # the package-wide target; default <name>::<name>
    # The aggregate .pc requiring every component's; default the package name, "none": none.
    pkg_config_name: str = ""
    build_modules: tuple[str, ...] = ()  # cmake_build_modules, package-relative
    bin_dirs: tuple[str, ...] = ()  # executables consumers run, shipped in <pkg>/bin
    res_dirs: tuple[str, ...] = ()  # data files, shipped at the same package-relative path
    # cpp_info.builddirs: CMake module dirs, shipped at the same package-relative path and put
    # on the consumer's CMAKE_MODULE_PATH by the config (as Conan's CMakeToolchain does).
    build_dirs: tuple[str, ...] = ()
    executables: tuple[str, ...] = ()  # file names in <pkg>/bin, once probed
    dependencies: tuple[Dependency, ...] = ()
    # CMakeDeps' vocabulary: config, module, both or none; the Find module's file name and
    # package-wide target; the version file's policy (CMake's names).
    cmake_find_mode: str = "config"
    cmake_module_file_name: str = ""
    cmake_module_target: str = ""
    cmake_target_aliases: tuple[str, ...] = ()
    cmake_variable_prefixes: tuple[str, ...] = ()  # cmake_additional_variables_prefixes
    cmake_config_version_compat: str = "SameMajorVersion"
    pkg_config_aliases: tuple[str, ...] = ()  # of the package-wide .pc
    pkg_config_custom_content: str = ""  # of the package-wide .pc
    # The version the package's files report (CMake's version file, .pc Version) when it is
    # not the Conan version: freetype's libtool version 24.3.18 for 2.12.1.
    system_package_version: str = ""
    # Required packages whose CMake config and .pc files the wheel carries (their libraries
    # grafted or shipped, their headers in include/), each described as an Sdk of its own.
    bundled: tuple[Sdk, ...] = ()
    # Definitions the package's own cpp_info gives (CMakeDeps' <Name>_DEFINITIONS), before
    # those of required packages are merged into its components.
    package_defines: tuple[str, ...] = ()
    # etpkg_depend: required packages to depend on as SDK wheels ("fmt" or "fmt=<wheel
    # name>"); once planned, each a WheelRequirement and gone from `dependencies`.
    depend: tuple[str, ...] = ()
    wheel_requires: tuple[WheelRequirement, ...] = ()
    # The manylinux platform the maintainer chose (etpkg_manylinux), e.g. "2_28"; "" for none.
    manylinux: str = ""
    # Other names find_package(... COMPONENTS) may ask for, each mapped to a component
    # (etpkg_component_aliases, wheelify --component-alias): an upstream config's own names
    # (Vorbis' Enc for vorbisenc) that no Conan property can declare. (name, component).
    component_aliases: tuple[tuple[str, str], ...] = ()
    # The package's runenv_info (what Conan's VirtualRunEnv gives a consumer's programs:
    # openssl's OPENSSL_MODULES).
    run_env: tuple[RunEnvEntry, ...] = ()
    # cmake_extra_dependencies: packages the config finds (find_dependency) before its
    # targets, whose targets cmake_extra_interface_libs may name (CUDAToolkit, Threads).
    cmake_extra_dependencies: tuple[str, ...] = ()
    cmake_extra_variables: tuple[CMakeVariable, ...] = ()

    def __post_init__(self) -> None:
        if not self.import_name:
            object.__setattr__(self, "import_name", default_import_name(self.name))
        if not self.cmake_target:
            object.__setattr__(self, "cmake_target", f"{self.name}::{self.name}")
        if not self.pkg_config_name:
            object.__setattr__(self, "pkg_config_name", self.name)
        if not self.cmake_module_file_name:
            object.__setattr__(self, "cmake_module_file_name", self.cmake_file_name)
        if not self.cmake_module_target:
            object.__setattr__(self, "cmake_module_target", self.cmake_target)

    @property
    def distribution(self) -> str:
        """The PEP 503 normalized distribution name, e.g. "geo-kit"."""
        return canonicalize_name(self.name)

    @property
    def wheel_version(self) -> str:
        """The version in PEP 440 normal form: the wheel's, the .pc files', BUILD_VERSION."""
        try:
            return str(Version(self.version))
        except InvalidVersion as exc:
            raise LayoutError(
                f"version {self.version!r} of {self.name} is not a PEP 440 version"
            ) from exc

    @property
    def cmake_version(self) -> str:
        """The numeric release part of the version, the only form CMake compares; of
        system_package_version when the package sets one (as CMakeDeps' version file)."""
        if self.system_package_version:
            nums = re.findall(r"[0-9]+", self.system_package_version)
            if nums:
                return ".".join(str(int(n)) for n in nums[:4])
        return ".".join(str(n) for n in Version(self.wheel_version).release)

    @property
    def pc_version(self) -> str:
        """The package-wide .pc Version: system_package_version, else the wheel's."""
        return self.system_package_version or self.wheel_version

    @property
    def variable_prefix(self) -> str:
        """Prefix of the config's result variables: ETRT for find_package(etrt)."""
        return re.sub(r"[^A-Za-z0-9_]", "_", self.cmake_file_name).upper()

    @property
    def header_only(self) -> bool:
        """Nothing binary at all: a py3-none-any wheel."""
        return all(c.header_only for c in self.components) and not self.executables

    @property
    def languages(self) -> tuple[str, ...]:
        found = {lang for c in self.components for lang in c.languages}
        return tuple(lang for lang in LANGUAGES if lang in found)

    @property
    def cmake_languages(self) -> tuple[str, ...]:
        """The CMake languages a consumer project enables for this SDK: C and/or CXX."""
        return tuple("CXX" if lang == CXX else lang for lang in self.languages)

    @property
    def aggregate_target(self) -> str | None:
        """The package-wide target when it is not one of the components' own."""
        if self.cmake_target in {c.target for c in self.components}:
            return None
        return self.cmake_target

    @property
    def aggregate_pkg_config(self) -> str | None:
        """The package-wide .pc name when there is one beside the components'."""
        if self.pkg_config_name == "none":
            return None
        if self.pkg_config_name in {c.pkg_config_name for c in self.components}:
            return None
        return self.pkg_config_name

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

    def shared_files(self, names: Iterable[str]) -> set[str]:
        """The shared library files of these components: what an app linking them needs."""
        return {f for n in names if not self.component(n).static for f in self.component(n).files}


# Top-level names a wheel's package must not take besides the standard library's: what
# nearly every environment holds (installers, build tools, the scientific stack, etpkg's own).
WELL_KNOWN_PACKAGES = frozenset(
    """_distutils_hack attr certifi charset_normalizer cmake conan cython etpkg google
    idna jinja2 markupsafe nanobind ninja numpy packaging pandas pip pkg_resources pybind11
    pytest requests scipy setuptools six tomli torch typing_extensions urllib3 wheel yaml""".split()
)
SAFE_SUFFIX = "_sdk"


def shadowed(import_name: str) -> str | None:
    """What an import name would hide ("the standard library's zlib"), or None."""
    if import_name in sys.stdlib_module_names:
        return f"the standard library's {import_name}"
    if import_name.lower() in WELL_KNOWN_PACKAGES:
        return f"the well-known package {import_name.lower()}"
    return None


def default_import_name(name: str) -> str:
    """The import name etpkg gives a package when etpkg_import_name is unset: the PEP 503
    normalized name with '-' as '_' ("geo-kit" and "Geo.Kit" -> "geo_kit"), with "_sdk"
    appended when that would shadow a standard-library module or a well-known package
    ("zlib" -> "zlib_sdk": `import zlib` and `python -m zlib` stay Python's)."""
    base = canonicalize_name(name).replace("-", "_")
    return base + SAFE_SUFFIX if shadowed(base) else base

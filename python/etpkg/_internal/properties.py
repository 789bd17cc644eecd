"""The etpkg-specific properties a Conan recipe sets in package_info(), each declared once.

Everything else etpkg reads is Conan's own vocabulary (cpp_info with its languages,
cmake_file_name, cmake_target_name, pkg_config_name, cmake_build_modules, the recipe's
languages and package_type). conan.py reads these through their declarations.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Property:
    name: str
    scope: str  # "package" (cpp_info) or "component" (cpp_info.components[...])
    meaning: str


CXX_STANDARD = Property(
    "etpkg_cxx_standard",
    "package",
    'C++ standard consumers must compile with, e.g. "17": the config\'s <NAME>_CXX_STANDARD, '
    "a cxx_std_<N> compile feature on every C++ component's target, -std=c++<N> in the .pc "
    "files of components consumed from C++ only (a component's languages, Conan's own).",
)
IMPORT_NAME = Property(
    "etpkg_import_name",
    "package",
    "The Python import name of the wheel's package (its top-level directory, python -m "
    "<name>). Default: the PEP 503 normalized package name with '-' as '_' (geo-kit -> "
    "geo_kit), with '_sdk' appended when that would shadow a standard-library module or a "
    "well-known package (zlib -> zlib_sdk); a value that would shadow one is refused. The "
    "distribution name is always the normalized package name.",
)
PYTHON_PACKAGES = Property(
    "etpkg_python_packages",
    "package",
    "Directories inside the package folder holding Python packages (each with an "
    "__init__.py) that the wheel ships at its root; a string or a list of strings.",
)
PYTHON_REQUIRES = Property(
    "etpkg_python_requires",
    "package",
    "PEP 508 requirements of the Python side, written as Requires-Dist; an extra named in a "
    'marker (extra == "x") becomes Provides-Extra. A string or a list of strings.',
)
DEPEND = Property(
    "etpkg_depend",
    "package",
    "Required packages the wheel depends on as SDK wheels of their own instead of grafting "
    'their libraries: "<conan name>" (the wheel etpkg makes of it, named as etpkg names it) '
    'or "<conan name>=<distribution>"; a string or a list of strings. wheelify --depend adds '
    "to it (docs/DEPENDENCIES.md).",
)

COMPONENT_ALIASES = Property(
    "etpkg_component_aliases",
    "package",
    'Other names a consumer may ask find_package(... COMPONENTS) for, each "<name>=<component>" '
    "(a Conan component of the package): an upstream config's own component names, which CMakeDeps "
    "cannot declare (Vorbis' Enc for vorbisenc). A string or a list of strings; wheelify "
    "--component-alias adds to it. Any other unknown name still fails the find_package.",
)

MANYLINUX = Property(
    "etpkg_manylinux",
    "package",
    'The manylinux platform the wheel must get, e.g. "2_28" (or "manylinux_2_28"): wheelify '
    "tags the wheel with it and refuses a build whose files need newer symbol versions, "
    "naming them. etpkg wheelify --manylinux overrides it. Default: the oldest platform the "
    "files meet, whatever the build machine gives.",
)

REGISTRATION_ONLY = Property(
    "etpkg_registration_only",
    "component",
    "The component's libraries register themselves from static initializers and export "
    "nothing a consumer references: consumers link them with a scoped --no-as-needed "
    "(archives: --whole-archive; see naming.py) or the linker drops them.",
)

ALL = (
    COMPONENT_ALIASES,
    CXX_STANDARD,
    DEPEND,
    IMPORT_NAME,
    MANYLINUX,
    PYTHON_PACKAGES,
    PYTHON_REQUIRES,
    REGISTRATION_ONLY,
)

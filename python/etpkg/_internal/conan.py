"""Reading a built Conan package from the local cache (Conan's Python API) into an Sdk.

The source side of the pipeline: the only module that talks to Conan. The etpkg_* properties
it reads are declared in properties.py.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etpkg._internal import properties
from etpkg._internal.errors import PackageError
from etpkg._internal.model import Component, Sdk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConanPackage:
    sdk: Sdk
    arch: str  # the Conan `arch` setting the binary was built for
    conan_home: Path


@contextlib.contextmanager
def _quiet_conan() -> Iterator[None]:
    """Conan prints to stderr (and a few things to stdout); keep both off our stdout."""
    from conan.api.output import ConanOutput

    previous = ConanOutput.get_output_level()
    if not log.isEnabledFor(logging.DEBUG):
        ConanOutput.define_log_level("error")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        ConanOutput.set_output_level(previous)


def _reference_from_spec(api: Any, spec: str) -> tuple[str, Path | None]:
    """A reference, or a conanfile dir/file whose name and version come from the recipe."""
    from conan.errors import ConanException

    path = Path(spec)
    conanfile = path / "conanfile.py" if path.is_dir() else path
    if conanfile.name == "conanfile.py" and conanfile.is_file():
        try:
            recipe = api.local.inspect(str(conanfile.resolve()), remotes=[], lockfile=None)
        except ConanException as exc:
            raise PackageError(f"cannot read {conanfile}: {_first_line(exc)}") from exc
        if not recipe.name or not recipe.version:
            raise PackageError(f"{conanfile} declares no name or version; pass a reference instead")
        return f"{recipe.name}/{recipe.version}", conanfile.resolve().parent
    if path.exists() or "/" not in spec or spec.startswith((".", "/")):
        raise PackageError(
            f"{spec!r} is neither a conanfile directory nor a package reference like name/version"
        )
    return spec, None


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def read_package(spec: str) -> ConanPackage:
    """Finds the package in the cache (built for the default profile) and describes it."""
    from conan.api.conan_api import ConanAPI
    from conan.errors import ConanException

    with _quiet_conan():
        try:
            api = ConanAPI()
        except ConanException as exc:
            raise PackageError(f"cannot open the Conan home: {_first_line(exc)}") from exc
        home = Path(api.home_folder)
        ref, source_dir = _reference_from_spec(api, spec)
        try:
            profile_host = api.profiles.get_profile([api.profiles.get_default_host()])
            profile_build = api.profiles.get_profile([api.profiles.get_default_build()])
            graph = api.graph.load_graph_requires(
                [ref], None, profile_host, profile_build, lockfile=None, remotes=[], update=None
            )
            graph.report_graph_error()
        except ConanException as exc:
            raise PackageError(
                f"package {ref} is not in the Conan cache {home} ({_first_line(exc)}); "
                "run `conan create .` first"
            ) from exc
        name = ref.split("/", 1)[0]
        node = next((n for n in graph.nodes if n.ref is not None and n.ref.name == name), None)
        if node is None:
            raise PackageError(
                f"package {ref} is not in the Conan cache {home}; run `conan create .` first"
            )
        try:
            api.graph.analyze_binaries(
                graph, build_mode=None, remotes=[], update=None, lockfile=None
            )
        except ConanException as exc:
            raise PackageError(f"cannot resolve the binaries of {ref}: {_first_line(exc)}") from exc
        missing = [str(n.ref) for n in graph.nodes if n.ref is not None and n.binary == "Missing"]
        if missing:
            raise PackageError(
                f"no binary of {', '.join(missing)} for the default profile in the Conan cache "
                f"{home}; run `conan create .` first"
            )
        try:
            api.install.install_binaries(graph, remotes=[])  # runs package_info()
        except ConanException as exc:
            raise PackageError(f"cannot load {ref} from the cache: {_first_line(exc)}") from exc
        conanfile = node.conanfile
        forbidden = [Path(conanfile.package_folder), home]
        # Build, source and export folders exist only for some packages; add those that do.
        with contextlib.suppress(ConanException):
            forbidden.append(Path(api.cache.build_path(node.pref)))
        with contextlib.suppress(ConanException):
            forbidden.append(Path(api.cache.source_path(node.ref)))
        with contextlib.suppress(ConanException):
            forbidden.append(Path(api.cache.export_path(node.ref)))
        if source_dir is not None:
            forbidden.append(source_dir)
        sdk = _to_sdk(conanfile, tuple(dict.fromkeys(forbidden)))
        log.info("read %s from %s", ref, conanfile.package_folder)
        return ConanPackage(sdk=sdk, arch=str(conanfile.settings.get_safe("arch")), conan_home=home)


def _relative(package_folder: Path, dirs: list[str], what: str) -> tuple[str, ...]:
    out: list[str] = []
    for d in dirs:
        path = Path(d)
        if not path.is_absolute():
            path = package_folder / path
        try:
            rel = path.resolve().relative_to(package_folder.resolve())
        except ValueError as exc:
            raise PackageError(
                f"{what} {d} lies outside the package folder {package_folder}"
            ) from exc
        out.append(rel.as_posix())
    return tuple(out)


def _namespace(root_target: str | None, components: tuple[Component, ...], name: str) -> str:
    for target in [root_target, *(c.target for c in components)]:
        if target and "::" in target:
            return target.split("::", 1)[0]
    return name


def _to_sdk(conanfile: Any, forbidden: tuple[Path, ...]) -> Sdk:
    name = str(conanfile.ref.name) if conanfile.ref else str(conanfile.name)
    package_folder = Path(conanfile.package_folder)
    info = conanfile.cpp_info
    components: list[Component] = []
    sorted_components = info.get_sorted_components() if info.has_components else {}
    if not sorted_components:
        sorted_components = {name: info}
    for comp_name, comp in sorted_components.items():
        requires: list[str] = []
        external: list[str] = []
        for req in comp.requires or []:
            pkg, sep, sub = req.partition("::")
            if not sep:
                requires.append(req)
            elif pkg == name:
                requires.append(sub)
            else:
                external.append(req)
        where = f"component {comp_name}"
        target = comp.get_property("cmake_target_name") or f"{name}::{comp_name}"
        components.append(
            Component(
                name=comp_name,
                target=target,
                libs=tuple(comp.libs or ()),
                requires=tuple(requires),
                external_requires=tuple(external),
                defines=tuple(comp.defines or ()),
                include_dirs=_relative(
                    package_folder, comp.includedirs or [], f"{where}: include dir"
                ),
                lib_dirs=_relative(package_folder, comp.libdirs or [], f"{where}: lib dir"),
                system_libs=tuple(comp.system_libs or ()),
                registration_only=bool(comp.get_property(properties.REGISTRATION_ONLY.name)),
                pkg_config_name=comp.get_property("pkg_config_name"),
            )
        )
    comps = tuple(components)
    python_packages = _str_list(info, properties.PYTHON_PACKAGES)
    python_requires = _str_list(info, properties.PYTHON_REQUIRES)
    cxx = info.get_property(properties.CXX_STANDARD.name)
    return Sdk(
        name=name,
        version=str(conanfile.version),
        package_folder=package_folder,
        components=comps,
        cmake_file_name=info.get_property("cmake_file_name") or name,
        cmake_namespace=_namespace(info.get_property("cmake_target_name"), comps, name),
        cxx_standard=str(cxx) if cxx is not None else None,
        description=str(conanfile.description or ""),
        license=_license(conanfile.license),
        homepage=str(conanfile.homepage) if conanfile.homepage else None,
        python_packages=python_packages,
        python_requires=python_requires,
        forbidden_paths=forbidden,
    )


def _str_list(info: Any, prop: properties.Property) -> tuple[str, ...]:
    """A root property given as one string or a list of strings."""
    value = info.get_property(prop.name)
    if not value:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    raise PackageError(f"property {prop.name} must be a string or a list of strings, not {value!r}")


def _license(value: object) -> str | None:
    if not value:
        return None
    if isinstance(value, (list, tuple)):
        return " AND ".join(str(v) for v in value)
    return str(value)

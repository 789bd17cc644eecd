"""Reading a built Conan package from the local cache (Conan's Python API) into an Sdk.

The source side of the pipeline: the only module that talks to Conan. The etpkg_* properties
it reads are declared in properties.py. Which binary is read is chosen like `conan install`
does: profiles (default: the default profile), then -s settings and -o options on top
(Selection).

What reaches the SDK's consumers from the packages it requires is what Conan propagates to a
consumer of the package: the package is resolved as a requirement of a virtual consumer, and
each dependency's `headers` and `libs` traits as that consumer sees them decide (a private
shared library reaches it at run time only; a static library's dependencies are linked too).
"""

from __future__ import annotations

import contextlib
import keyword
import logging
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etpkg._internal import properties
from etpkg._internal.errors import LayoutError, PackageError
from etpkg._internal.model import (
    CXX,
    LANGUAGES,
    SHARED,
    STATIC,
    CMakeVariable,
    Component,
    Dependency,
    DependencyComponent,
    RunEnvEntry,
    Sdk,
    default_import_name,
    shadowed,
)

log = logging.getLogger(__name__)

# cpp_info fields etpkg cannot carry into a wheel; each is refused by name when set.
_UNSUPPORTED_FIELDS = {
    "objects": "object files to link (ship them in an archive instead)",
    "frameworks": "Apple frameworks",
    "frameworkdirs": "Apple framework directories",
}


_FIND_MODES = ("config", "module", "both", "none")
_VERSION_COMPAT = ("SameMajorVersion", "AnyNewerVersion", "SameMinorVersion", "ExactVersion")


@dataclass(frozen=True)
class Selection:
    """Which binary of the package: what `conan install` takes as -pr, -s and -o (host)."""

    profiles: tuple[str, ...] = ()  # default: the default profile
    settings: tuple[str, ...] = ()  # "key=value" or "pkg/*:key=value"
    options: tuple[str, ...] = ()  # "key=value" or "pkg/*:key=value", e.g. "*:shared=True"
    conf: tuple[str, ...] = ()  # "tools.build:jobs=2"
    # The build context (-pr:b, -s:b, -o:b, -c:b); default: the default build profile.
    build_profiles: tuple[str, ...] = ()
    build_settings: tuple[str, ...] = ()
    build_options: tuple[str, ...] = ()
    build_conf: tuple[str, ...] = ()
    # --build policies ("missing", "missing:pkg/*"): binaries built into the cache first.
    build_modes: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = [f"-pr {p}" for p in self.profiles]
        parts += [f"-s {s}" for s in self.settings] + [f"-o {o}" for o in self.options]
        parts += [f"-c {c}" for c in self.conf] + [f"-pr:b {p}" for p in self.build_profiles]
        parts += [f"-s:b {s}" for s in self.build_settings]
        parts += [f"-o:b {o}" for o in self.build_options]
        parts += [f"-c:b {c}" for c in self.build_conf]
        return " ".join(parts) if parts else "the default profile"

    @classmethod
    def from_conan_args(cls, pairs: list[tuple[str, str]], base: Selection) -> Selection:
        """base plus Conan's spellings as etpkg's CLI collects them: (flag, value) with the
        flag's short form and context suffix ("-pr:h", "-s:b", "-o:a", "-c", "--build")."""
        fields: dict[str, list[str]] = {
            "profiles": list(base.profiles),
            "settings": list(base.settings),
            "options": list(base.options),
            "conf": list(base.conf),
            "build_profiles": list(base.build_profiles),
            "build_settings": list(base.build_settings),
            "build_options": list(base.build_options),
            "build_conf": list(base.build_conf),
            "build_modes": list(base.build_modes),
        }
        kinds = {"-pr": "profiles", "-s": "settings", "-o": "options", "-c": "conf"}
        for flag, value in pairs:
            if flag == "--build":
                fields["build_modes"].append(value)
                continue
            kind, _, ctx = flag.partition(":")
            name = kinds[kind]
            if ctx in ("", "h", "a"):
                fields[name].append(value)
            if ctx in ("b", "a"):
                fields[f"build_{name}"].append(value)
        return cls(**{k: tuple(v) for k, v in fields.items()})


DEFAULT_SELECTION = Selection()


@dataclass(frozen=True)
class RuntimePackage:
    """A package the SDK requires (at run time or not) that has files: where auditwheel looks
    for the shared libraries it grafts that the OS does not provide, and their licences."""

    name: str
    package_folder: Path
    lib_dirs: tuple[Path, ...]
    version: str = ""
    license: str | None = None


@dataclass(frozen=True)
class ConanPackage:
    sdk: Sdk
    arch: str | None  # the Conan `arch` setting the binary was built for; None: no settings
    conan_home: Path
    required: tuple[RuntimePackage, ...] = field(default_factory=tuple)
    # The binary read: name/version#recipe-revision:package-id#package-revision.
    binary: str = ""
    build_arch: str | None = None  # the build context's arch: differs on a cross build
    # The host profile's tools.build:compiler_executables ("c", "cpp"), where it names them.
    host_compilers: tuple[tuple[str, str], ...] = ()

    @property
    def cross(self) -> bool:
        return None not in (self.arch, self.build_arch) and self.arch != self.build_arch

    @property
    def ld_paths(self) -> tuple[Path, ...]:
        return tuple(d for p in self.required for d in p.lib_dirs)


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


def profiles(api: Any, selection: Selection) -> tuple[Any, Any]:
    """The host profile the selection gives (and the default build profile)."""
    from conan.errors import ConanException

    try:
        host = api.profiles.get_profile(
            list(selection.profiles) or [api.profiles.get_default_host()],
            settings=list(selection.settings),
            options=list(selection.options),
            conf=list(selection.conf),
        )
        build = api.profiles.get_profile(
            list(selection.build_profiles) or [api.profiles.get_default_build()],
            settings=list(selection.build_settings),
            options=list(selection.build_options),
            conf=list(selection.build_conf),
        )
    except ConanException as exc:
        raise PackageError(
            f"cannot load the profile ({selection.describe()}): {_first_line(exc)}"
        ) from exc
    return host, build


def read_package(spec: str, selection: Selection = DEFAULT_SELECTION) -> ConanPackage:
    """Finds the package's binary for the selection in the cache and describes it."""
    from conan.api.conan_api import ConanAPI
    from conan.errors import ConanException

    with _quiet_conan():
        try:
            api = ConanAPI()
        except ConanException as exc:
            raise PackageError(f"cannot open the Conan home: {_first_line(exc)}") from exc
        home = Path(api.home_folder)
        ref, source_dir = _reference_from_spec(api, spec)
        profile_host, profile_build = profiles(api, selection)
        try:
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
                graph,
                build_mode=list(selection.build_modes) or None,
                remotes=[],
                update=None,
                lockfile=None,
            )
        except ConanException as exc:
            raise PackageError(f"cannot resolve the binaries of {ref}: {_first_line(exc)}") from exc
        missing = [str(n.ref) for n in graph.nodes if n.ref is not None and n.binary == "Missing"]
        if missing:
            raise PackageError(
                f"no binary of {', '.join(missing)} for {selection.describe()} in the Conan "
                f"cache {home}; run `conan create` with the same settings and options first"
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
        system_requires = {
            str(n.ref.name): dict(getattr(n.conanfile, "system_requires", {}) or {})
            for n in graph.nodes
            if n.ref is not None
        }
        deps = _dependencies(graph.root.conanfile, name, system_requires)
        sdk = _to_sdk(conanfile, tuple(dict.fromkeys(forbidden)), deps)
        log.info("read %s from %s", ref, conanfile.package_folder)
        arch = conanfile.settings.get_safe("arch")
        build_arch = conanfile.settings_build.get_safe("arch")
        compilers = conanfile.conf.get("tools.build:compiler_executables", default={}) or {}
        return ConanPackage(
            sdk=sdk,
            arch=str(arch) if arch is not None else None,
            conan_home=home,
            required=_required(conanfile),
            binary=node.pref.repr_notime(),
            build_arch=str(build_arch) if build_arch is not None else None,
            host_compilers=tuple(
                (str(k), str(v)) for k, v in sorted(compilers.items()) if k in ("c", "cpp")
            ),
        )


def _required(conanfile: Any) -> tuple[RuntimePackage, ...]:
    found: list[RuntimePackage] = []
    for _, dep in conanfile.dependencies.host.items():
        if dep.package_folder is None:
            continue
        dirs = [Path(d) for d in dep.cpp_info.aggregated_components().libdirs or []]
        found.append(
            RuntimePackage(
                str(dep.ref.name),
                Path(dep.package_folder),
                tuple(dict.fromkeys(d for d in dirs if d.is_dir())),
                version=str(dep.ref.version),
                license=_license(dep.license),
            )
        )
    return tuple(found)


def _dependencies(
    consumer: Any, own_name: str, system_requires: dict[str, dict[str, Any]]
) -> tuple[Dependency, ...]:
    """What reaches a consumer of the package from the packages it requires."""
    deps: list[Dependency] = []
    for require, dep in consumer.dependencies.host.items():
        dep_name = str(dep.ref.name)
        if dep_name == own_name or not (require.headers or require.libs):
            continue
        info = dep.cpp_info.aggregated_components()
        folder = Path(dep.package_folder) if dep.package_folder else None
        include_dirs = tuple(Path(d) for d in info.includedirs or [] if Path(d).is_dir())
        lib_dirs = tuple(Path(d) for d in info.libdirs or [] if Path(d).is_dir())
        inside = tuple(d for d in include_dirs if folder is not None and d.is_relative_to(folder))
        system = not info.libs and not inside
        apt = system_requires.get(dep_name, {}).get("apt-get", {}).get("install", [])
        deps.append(
            Dependency(
                name=dep_name,
                version=str(dep.ref.version),
                headers=bool(require.headers),
                libs=bool(require.libs),
                system=system,
                package_folder=folder,
                include_dirs=include_dirs,
                lib_dirs=lib_dirs,
                libs_names=tuple(info.libs or ()),
                system_libs=tuple(info.system_libs or ()),
                apt_packages=tuple(str(p) for p in apt),
                license=_license(dep.license),
                requires=tuple(str(d.ref.name) for _, d in dep.dependencies.direct_host.items()),
                defines=tuple(info.defines or ()),
                cflags=tuple(info.cflags or ()),
                cxxflags=tuple(info.cxxflags or ()),
                sharedlinkflags=tuple(info.sharedlinkflags or ()),
                exelinkflags=tuple(info.exelinkflags or ()),
                components=_dependency_components(dep.cpp_info),
                described=_described(dep),
                required_version=_required_version(require, dep),
            )
        )
    return tuple(deps)


def _required_version(require: Any, dep: Any) -> str:
    """The range the recipe requires as written ("[>=1 <2]"; Conan keeps the reference
    before resolution beside the resolved one), else the version resolved: an exact
    reference may have been overridden or replaced ([replace_requires])."""
    ref = getattr(require, "_required_ref", None)
    written = str(getattr(ref, "version", "") or "")
    return written if written.startswith("[") else str(dep.ref.version)


def _described(dep: Any) -> Sdk | None:
    """A required package's own cpp_info as an Sdk, or None when it cannot be one (a system
    wrapper, an application, fields a wheel cannot carry): then the wheel writes no config or
    .pc for it."""
    direct = tuple(
        Dependency(str(d.ref.name), str(d.ref.version), True, True, False, None)
        for _, d in dep.dependencies.direct_host.items()
    )
    try:
        return _to_sdk(dep, (), direct)
    except (PackageError, AttributeError, TypeError):
        return None


def _dependency_components(cpp_info: Any) -> tuple[DependencyComponent, ...]:
    if not cpp_info.has_components:
        return ()
    return tuple(
        DependencyComponent(
            name=str(name),
            libs_names=tuple(comp.libs or ()),
            system_libs=tuple(comp.system_libs or ()),
            requires=tuple(str(r) for r in comp.requires or ()),
        )
        for name, comp in cpp_info.get_sorted_components().items()
    )


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


def _languages(comp: Any, recipe: Any, where: str) -> tuple[str, ...]:
    """Conan's own: the component's cpp_info.languages, else the recipe's; C++ when neither
    says (a recipe without `languages` has C++ settings)."""
    value = getattr(comp, "languages", None) or getattr(recipe, "languages", None) or [CXX]
    if isinstance(value, str):
        value = [value]
    langs = tuple(str(v) for v in value)
    unknown = [lang for lang in langs if lang not in LANGUAGES]
    if unknown:
        raise LayoutError(f"{where}: languages {unknown} (etpkg ships C and C++ SDKs only)")
    return tuple(lang for lang in LANGUAGES if lang in langs)


def _linkage(comp: Any, package_type: str, where: str) -> str:
    """STATIC or SHARED from the component's type or the package type; "" when neither says
    (the probe then takes what is on disk)."""
    kind = str(getattr(comp, "type", None) or package_type or "")
    if kind in ("static-library",):
        return STATIC
    if kind in ("shared-library",):
        return SHARED
    if kind == "header-library" and comp.libs:
        raise LayoutError(f"{where}: a header-library lists libs {list(comp.libs)}")
    return ""


def _check_supported(comp: Any, where: str) -> None:
    for attr, meaning in _UNSUPPORTED_FIELDS.items():
        if getattr(comp, attr, None):
            raise LayoutError(
                f"{where}: cpp_info.{attr} ({meaning}) cannot be carried into a wheel: "
                f"{list(getattr(comp, attr))}"
            )
    sources = list(getattr(comp, "sources", None) or ())
    if sources:  # only the incubating CMakeConfigDeps compiles them into consumers
        log.warning(
            "note: %s: cpp_info.sources %s are not compiled into consumers "
            "(CMakeDeps and PkgConfigDeps ignore them too)",
            where,
            sources,
        )


def _to_sdk(conanfile: Any, forbidden: tuple[Path, ...], deps: tuple[Dependency, ...]) -> Sdk:
    name = str(conanfile.ref.name) if conanfile.ref else str(conanfile.name)
    package_folder = Path(conanfile.package_folder)
    info = conanfile.cpp_info
    package_type = str(conanfile.package_type or "")
    if package_type == "application":
        raise LayoutError(
            f"{name} is an application (package_type); etpkg ships SDKs (libraries and headers)"
        )
    root_pc = info.get_property("pkg_config_name") or name
    components: list[Component] = []
    sorted_components = info.get_sorted_components() if info.has_components else {}
    if not sorted_components:
        sorted_components = {name: info}
    bin_dirs: list[str] = []
    res_dirs: list[str] = []
    build_dirs: list[str] = []
    for comp_name, comp in sorted_components.items():
        where = f"component {comp_name}"
        _check_supported(comp, where)
        bin_dirs += _relative(package_folder, comp.bindirs or [], f"{where}: bin dir")
        res_dirs += _relative(package_folder, comp.resdirs or [], f"{where}: res dir")
        build_dirs += [
            d
            for d in _relative(package_folder, comp.builddirs or [], f"{where}: build dir")
            if (package_folder / d).is_dir() and d != "."
        ]
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
        if comp is info and not info.requires:
            # A package without components requires every direct dependency (Conan's rule).
            external = [f"{d.name}::{d.name}" for d in deps]
        where = f"component {comp_name}"
        target = comp.get_property("cmake_target_name") or f"{name}::{comp_name}"
        if comp is info:  # the package is its one component: its root target's name
            target = info.get_property("cmake_target_name") or f"{name}::{name}"
        pc = comp.get_property("pkg_config_name") or (
            root_pc if comp is info else f"{root_pc}-{comp_name}"
        )
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
                pkg_config_name=pc,
                languages=_languages(comp, conanfile, where),
                linkage=_linkage(comp, package_type, where),
                cflags=tuple(comp.cflags or ()),
                cxxflags=tuple(comp.cxxflags or ()),
                sharedlinkflags=tuple(comp.sharedlinkflags or ()),
                exelinkflags=tuple(comp.exelinkflags or ()),
                target_aliases=() if comp is info else _str_list(comp, "cmake_target_aliases"),
                module_target=str(comp.get_property("cmake_module_target_name") or "")
                if comp is not info
                else "",
                pkg_config_aliases=() if comp is info else _str_list(comp, "pkg_config_aliases"),
                # A package without components is its one .pc: the root's content goes there.
                pkg_config_custom_content=_custom_content(comp, package_folder),
                version=str(comp.get_property("component_version") or "")
                if comp is not info
                else "",
                languages_declared=bool(
                    getattr(comp, "languages", None) or getattr(conanfile, "languages", None)
                ),
                cmake_interface_libs=_str_list(comp, "cmake_extra_interface_libs"),
            )
        )
    comps = tuple(components)
    find_mode = str(info.get_property("cmake_find_mode") or "config").lower()
    if find_mode not in _FIND_MODES:
        raise LayoutError(f"cmake_find_mode {find_mode!r}: Conan knows {', '.join(_FIND_MODES)}")
    compat = str(info.get_property("cmake_config_version_compat") or "SameMajorVersion")
    if compat not in _VERSION_COMPAT:
        raise LayoutError(
            f"cmake_config_version_compat {compat!r}: Conan knows {', '.join(_VERSION_COMPAT)}"
        )
    python_packages = _str_list(info, properties.PYTHON_PACKAGES)
    python_requires = _str_list(info, properties.PYTHON_REQUIRES)
    cxx = info.get_property(properties.CXX_STANDARD.name)
    build_modules = _relative(
        package_folder, list(_str_list(info, "cmake_build_modules")), "cmake_build_modules entry"
    )
    return Sdk(
        name=name,
        version=str(conanfile.ref.version) if conanfile.ref else str(conanfile.version),
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
        import_name=_import_name(info, name),
        cmake_target=info.get_property("cmake_target_name") or f"{name}::{name}",
        pkg_config_name=root_pc,
        build_modules=build_modules,
        bin_dirs=tuple(dict.fromkeys(bin_dirs)),
        res_dirs=tuple(dict.fromkeys(res_dirs)),
        build_dirs=tuple(dict.fromkeys(build_dirs)),
        dependencies=deps,
        cmake_find_mode=find_mode,
        package_defines=tuple(dict.fromkeys(d for c in comps for d in c.defines)),
        cmake_module_file_name=str(info.get_property("cmake_module_file_name") or ""),
        cmake_module_target=str(info.get_property("cmake_module_target_name") or ""),
        cmake_target_aliases=_str_list(info, "cmake_target_aliases"),
        cmake_variable_prefixes=_str_list(info, "cmake_additional_variables_prefixes"),
        cmake_config_version_compat=compat,
        pkg_config_aliases=_str_list(info, "pkg_config_aliases"),
        pkg_config_custom_content=_custom_content(info, package_folder),
        system_package_version=str(info.get_property("system_package_version") or ""),
        depend=_str_list(info, properties.DEPEND),
        manylinux=str(info.get_property(properties.MANYLINUX.name) or ""),
        component_aliases=component_aliases(
            _str_list(info, properties.COMPONENT_ALIASES), comps, properties.COMPONENT_ALIASES.name
        ),
        run_env=run_env(getattr(conanfile, "runenv_info", None), package_folder),
        cmake_extra_dependencies=_str_list(info, "cmake_extra_dependencies"),
        cmake_extra_variables=extra_variables(info.get_property("cmake_extra_variables")),
    )


def run_env(env: Any, package_folder: Path) -> tuple[RunEnvEntry, ...]:
    """The package's runenv_info: a path inside the package folder package-relative; a
    variable naming a path outside it is left out, with a note (the wheel cannot carry it)."""
    values = getattr(env, "_values", None) or {}
    out: list[RunEnvEntry] = []
    for name, value in values.items():
        items = list(getattr(value, "_values", []))
        path = bool(getattr(value, "_path", False))
        sep = str(getattr(value, "_sep", " "))
        holder = [i for i, v in enumerate(items) if not isinstance(v, str)]
        if holder:  # the variable's previous value: what is before it is prepended
            parts = [("prepend", items[: holder[0]]), ("append", items[holder[0] + 1 :])]
        else:
            parts = [("define", items)]
        for op, vals in parts:
            strings = [str(v) for v in vals if isinstance(v, str)]
            if not strings and op != "define":
                continue
            if path:
                relative, outside = _package_relative(strings, package_folder)
                if outside is not None:
                    log.warning(
                        "note: runenv_info %s=%s is outside the package: not in the wheel",
                        name,
                        outside,
                    )
                if not relative:
                    continue
                strings = relative
            out.append(RunEnvEntry(str(name), op, tuple(strings), path, sep))
    return tuple(out)


def _package_relative(paths: list[str], package_folder: Path) -> tuple[list[str], str | None]:
    """Each path relative to the package folder; none and the first path outside it when one
    lies outside."""
    root = package_folder.resolve()
    out: list[str] = []
    for p in paths:
        try:
            out.append(Path(p).resolve().relative_to(root).as_posix())
        except ValueError:
            return [], p
    return out, None


_COMPONENT_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


def component_aliases(
    entries: Sequence[str], comps: Sequence[Component], source: str
) -> tuple[tuple[str, str], ...]:
    """ "<name>=<component>" entries as (name, component) pairs: the component one the package
    has, the name one find_package can be given and not already another component's name."""
    names = {c.name for c in comps}
    taken = {n: c.name for c in comps for n in (c.name, c.target, c.target.rpartition("::")[2])}
    out: dict[str, str] = {}
    for entry in entries:
        alias, sep, comp = entry.partition("=")
        if not sep or not _COMPONENT_NAME.fullmatch(alias) or not comp:
            raise PackageError(
                f"{source} {entry!r}: expected <name>=<component>, e.g. Enc=vorbisenc"
            )
        if comp not in names:
            raise PackageError(
                f"{source} {entry!r}: the package has no component {comp!r} "
                f"(it has: {', '.join(sorted(names))})"
            )
        if taken.get(alias, comp) != comp or out.get(alias, comp) != comp:
            other = taken.get(alias) or out[alias]
            raise PackageError(f"{source} {entry!r}: {alias!r} already names component {other!r}")
        out[alias] = comp
    return tuple(out.items())


def _import_name(info: Any, name: str) -> str:
    value = info.get_property(properties.IMPORT_NAME.name)
    import_name = str(value) if value else default_import_name(name)
    if not import_name.isidentifier() or keyword.iskeyword(import_name):
        source = properties.IMPORT_NAME.name if value else f"the default for {name!r}"
        raise LayoutError(
            f"import name {import_name!r} ({source}) is not a Python identifier; set "
            f"{properties.IMPORT_NAME.name} to one"
        )
    hidden = shadowed(import_name)
    if hidden is not None:
        raise LayoutError(
            f"import name {import_name!r} ({properties.IMPORT_NAME.name}) would shadow "
            f"{hidden}; set {properties.IMPORT_NAME.name} to another name (unset, etpkg "
            f"takes {default_import_name(name)!r})"
        )
    return import_name


_PC_VARIABLE = re.compile(r"^(.*)=(.*)")


def _custom_content(info: Any, package_folder: Path) -> str:
    """pkg_config_custom_content read as PkgConfigDeps reads it: a dict of variables, or text
    whose `key=value` lines are variables (other lines are dropped); one `key=value` line
    each. The package folder inside a value (hwdata's `pkgdatadir=<package folder>/res/...`)
    becomes ${prefix}, so the .pc stays relocatable."""
    value = info.get_property("pkg_config_custom_content")
    if not value:
        return ""
    pairs: dict[str, str] = {}
    if isinstance(value, dict):
        pairs = {str(k).strip(): str(v).strip() for k, v in value.items()}
    elif isinstance(value, str):
        for line in value.splitlines():
            m = _PC_VARIABLE.match(line)
            if m:
                pairs[m.group(1).strip()] = m.group(2).strip()
    else:
        raise PackageError(
            f"property pkg_config_custom_content must be a string or a dict, not {value!r}"
        )
    folders = sorted({str(package_folder), str(package_folder.resolve())}, key=len, reverse=True)
    lines = []
    for key, text in pairs.items():
        for folder in folders:
            text = text.replace(folder, "${prefix}")
        if key == "prefix" and text == "${prefix}":
            continue  # the wheel's own prefix already says it
        lines.append(f"{key}={text}")
    return "\n".join(lines)


_CACHE_TYPES = ("BOOL", "FILEPATH", "PATH", "STRING", "INTERNAL")


def extra_variables(value: object) -> tuple[CMakeVariable, ...]:
    """cmake_extra_variables as CMakeDeps reads it: name -> a string, a number, or a dict with
    `value` and optionally `cache` (with `type`, `docstring`), `force` (cache entries only)."""
    if not value:
        return ()
    what = "cmake_extra_variables"
    if not isinstance(value, dict):
        raise PackageError(f"{what} must be a dict of variable names to values, not {value!r}")
    out = []
    for name, entry in value.items():
        where = f"{what} {name!r}"
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
            raise PackageError(f"{where}: not a CMake variable name etpkg can write")
        spec = entry if isinstance(entry, dict) else {"value": entry}
        raw = spec.get("value")
        if isinstance(raw, str):
            if '"' in raw or "\n" in raw:
                raise PackageError(f"{where}: a value holding '\"' or a newline: {raw!r}")
        elif not isinstance(raw, (int, float)):
            raise PackageError(
                f"{where}: the value must be a string, a number or a dict with one, not {raw!r}"
            )
        cache, force = spec.get("cache") or False, spec.get("force") or False
        if not isinstance(cache, bool) or not isinstance(force, bool):
            raise PackageError(f"{where}: 'cache' and 'force' must be booleans")
        if force and not cache:
            raise PackageError(f"{where}: 'force' is only allowed for cache variables")
        cache_type = str(spec.get("type") or "") if cache else ""
        if cache and cache_type not in _CACHE_TYPES:
            raise PackageError(
                f"{where}: a cache variable needs a 'type' of {', '.join(_CACHE_TYPES)}, "
                f"not {cache_type or 'none'}"
            )
        docstring = str(spec.get("docstring") or name) if cache else ""
        if '"' in docstring or "\n" in docstring:
            raise PackageError(f"{where}: a docstring holding '\"' or a newline")
        out.append(
            CMakeVariable(name, str(raw), isinstance(raw, str), cache_type, docstring, force)
        )
    return tuple(out)


def _str_list(info: Any, prop: properties.Property | str) -> tuple[str, ...]:
    """A root property given as one string or a list of strings."""
    name = prop if isinstance(prop, str) else prop.name
    value = info.get_property(name)
    if not value:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    raise PackageError(f"property {name} must be a string or a list of strings, not {value!r}")


def _license(value: object) -> str | None:
    if not value:
        return None
    if isinstance(value, (list, tuple)):
        return " AND ".join(str(v) for v in value)
    return str(value)

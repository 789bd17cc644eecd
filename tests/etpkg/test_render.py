"""The generated CMake package and pkg-config files, as pure functions of an Sdk (fast)."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
from pathlib import Path

import pytest
from etpkg import Component, LayoutError, Sdk
from etpkg._internal.conan import extra_variables
from etpkg._internal.errors import PackageError
from etpkg._internal.facts import Library, PackageFiles, SourceFile
from etpkg._internal.plan import metadata
from etpkg._internal.plan.cmake import (
    cmake_quote,
    config_file_name,
    install_function_name,
    render_cmake_package,
    version_file_name,
)
from etpkg._internal.plan.pkgconfig import render_pkg_config
from etpkg._internal.plan.view import (
    relocate_flag,
    relocate_variable,
    relocation_table,
    wheel_sdk,
)
from etpkg._internal.verify.consumers import meson_link_args
from etpkg._internal.verify.tools import CMAKE_VERSIONS

BUILD_DIR = Path("/build/machine/conan/p/abc123")
CMAKE = Path(__file__).resolve().parents[2] / "build" / "cmake-venvs"


def sdk(version: str = "0.3.1", **overrides: object) -> Sdk:
    components = (
        Component("core", "toy::core", ("toy_core",), defines=("TOY_API=3", 'TOY_NAME="t y"')),
        Component(
            "plugin", "toy::plugin", ("toy_plugin",), requires=("core",), registration_only=True
        ),
        Component("extra", "toy::extra", ("toy_extra",), requires=("core",), system_libs=("m",)),
    )
    fields: dict[str, object] = dict(
        name="toy",
        version=version,
        package_folder=BUILD_DIR,
        components=components,
        cmake_file_name="toy",
        cmake_namespace="toy",
        cxx_standard="17",
        description="A toy\nSDK",
        homepage="https://example.invalid/toy",
    )
    fields.update(overrides)
    return Sdk(**fields)  # type: ignore[arg-type]


def text(files: dict[str, bytes], suffix: str) -> str:
    (name,) = [n for n in files if n.endswith(suffix)]
    return files[name].decode()


def config(s: Sdk) -> str:
    return text(render_cmake_package(s), config_file_name(s.cmake_file_name))


def test_config_file_names_follow_cmakes_rule() -> None:
    """CMake looks for <Name>Config.cmake and <lower-case-name>-config.cmake only; CMakeDeps
    picks the first for any name with upper case, the second for a lower-case one."""
    assert (config_file_name("toy"), version_file_name("toy")) == (
        "toy-config.cmake",
        "toy-config-version.cmake",
    )
    assert (config_file_name("GeoKit"), version_file_name("GeoKit")) == (
        "GeoKitConfig.cmake",
        "GeoKitConfigVersion.cmake",
    )
    files = render_cmake_package(sdk(cmake_file_name="GeoKit"))
    assert sorted(files) == [
        "toy/lib/cmake/GeoKit/GeoKit-etpkg-install.cmake",
        "toy/lib/cmake/GeoKit/GeoKitConfig.cmake",
        "toy/lib/cmake/GeoKit/GeoKitConfigVersion.cmake",
        "toy/lib/cmake/GeoKit/runpath-module.ldopts",
        "toy/lib/cmake/GeoKit/runpath.ldopts",
    ]


def test_the_install_function_is_named_after_the_cmake_file_name() -> None:
    """<cmake file name>_install_runtime, any character a CMake command name cannot hold
    made '_'; defined in its own file, which the config includes."""
    files = render_cmake_package(sdk(cmake_file_name="geo-kit.core"))
    install = text(files, "geo-kit.core-etpkg-install.cmake")
    assert "function(geo_kit_core_install_runtime)" in install
    assert install_function_name("GeoKit") == "GeoKit_install_runtime"
    config_text = text(files, config_file_name("geo-kit.core"))
    assert 'include("${CMAKE_CURRENT_LIST_DIR}/geo-kit.core-etpkg-install.cmake")' in config_text


def test_runpath_files_reach_the_sdk_from_apps_and_from_site_packages() -> None:
    files = render_cmake_package(sdk(name="geo-kit", import_name="geo_kit"))
    # No '$' may reach a command line: the runpaths live in these ld option files.
    assert files["geo_kit/lib/cmake/toy/runpath.ldopts"] == (
        b"--enable-new-dtags -rpath $ORIGIN -rpath $ORIGIN/../lib\n"
    )
    module = files["geo_kit/lib/cmake/toy/runpath-module.ldopts"].decode()
    # A Python extension in site-packages (or one package below it) finds the SDK's lib dir
    # and the libraries auditwheel grafted into <dist>.libs.
    for entry in ("$ORIGIN/geo_kit/lib", "$ORIGIN/../geo_kit/lib", "$ORIGIN/geo_kit.libs"):
        assert f"-rpath {entry} " in module + " "
    cfg = config(sdk())
    assert "$<IF:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,MODULE_LIBRARY>,${module_runpath}" in cfg


def test_config_holds_no_build_path_and_no_python() -> None:
    cfg = config(sdk())
    assert str(BUILD_DIR) not in cfg and "/build/machine" not in cfg
    for command in ("execute_process", "find_program", "find_package(Python", "PYTHON"):
        assert command not in cfg
    assert "cmake_minimum_required" not in cfg  # would set CMAKE_MINIMUM_REQUIRED_VERSION


def test_one_target_per_component_and_the_package_wide_target() -> None:
    cfg = config(sdk())
    for target in ("toy::core", "toy::plugin", "toy::extra"):
        assert f"if(NOT TARGET {target})" in cfg
        assert f"add_library({target} SHARED IMPORTED)" in cfg
    # CMakeDeps' <name>::<name>: an INTERFACE target linking every component.
    assert "add_library(toy::toy INTERFACE IMPORTED)" in cfg
    assert 'INTERFACE_LINK_LIBRARIES "toy::core;toy::plugin;toy::extra"' in cfg
    assert cfg.count("--push-state,--no-as-needed") == 2  # target option + variables item
    assert "LINKER:--push-state,--no-as-needed,${lib}/libtoy_plugin.so,--pop-state" in cfg
    assert 'INTERFACE_COMPILE_FEATURES "cxx_std_17"' in cfg
    assert 'INTERFACE_LINK_LIBRARIES "toy::core;m"' in cfg
    assert r'"TOY_NAME=\"t y\""' in cfg
    # A package without components: its one target is the package-wide one, defined once.
    single = sdk(components=(Component("toy", "toy::toy", ("toy",)),))
    assert config(single).count("add_library(toy::toy ") == 1


def test_header_only_and_static_components() -> None:
    comps = (
        Component("core", "geo::core", ("geo",), languages=("C",), linkage="static"),
        Component(
            "shapes",
            "geo::shapes",
            ("geo_shapes",),
            requires=("core",),
            registration_only=True,
            languages=("C",),
            linkage="static",
        ),
        Component("units", "geo::units", (), languages=("C",)),
    )
    cfg = config(sdk(components=comps))
    assert "add_library(geo::units INTERFACE IMPORTED)" in cfg
    assert "add_library(geo::core STATIC IMPORTED)" in cfg
    assert 'IMPORTED_LOCATION "${lib}/libgeo.a"' in cfg
    assert 'IMPORTED_LINK_INTERFACE_LANGUAGES "C"' in cfg
    # An archive that registers itself is kept whole, scoped.
    assert "LINKER:--push-state,--whole-archive,${lib}/libgeo_shapes.a,--pop-state" in cfg
    assert "cxx_std_17" not in cfg  # C components get no C++ feature
    assert "${runpath_for_type}" not in cfg  # nothing is found at run time
    assert not [f for f in render_cmake_package(sdk(components=comps)) if f.endswith(".ldopts")]
    pcs = render_pkg_config(sdk(components=comps))
    core = text(pcs, "toy-core.pc")
    assert "Libs: -L${libdir} -l:libgeo.a\n" in core and "-std=" not in core
    shapes = text(pcs, "toy-shapes.pc")
    assert "-Wl,--push-state,--whole-archive,${libdir}/libgeo_shapes.a,--pop-state" in shapes
    units = text(pcs, "toy-units.pc")
    assert "Libs:" not in units and "Cflags: -I${includedir}\n" in units


def test_the_cxx_standard_reaches_cxx_consumers_only() -> None:
    comps = (
        Component("c", "t::c", ("t_c",), languages=("C",)),
        Component("cxx", "t::cxx", ("t_cxx",), languages=("C++",), cxxflags=("-fno-rtti",)),
        Component("both", "t::both", ("t_both",), languages=("C", "C++"), cxxflags=("-fx",)),
    )
    pcs = render_pkg_config(sdk(components=comps))
    assert "Cflags: -I${includedir}\n" in text(pcs, "toy-c.pc")
    assert "Cflags: -I${includedir} -fno-rtti -std=c++17\n" in text(pcs, "toy-cxx.pc")
    both = text(pcs, "toy-both.pc")
    assert "Cflags: -I${includedir}\n" in both  # C consumers read Cflags too
    assert "cxxflags=-fx\n" in both and "cxx_std=-std=c++17\n" in both
    cfg = config(sdk(components=comps))
    assert cfg.count('INTERFACE_COMPILE_FEATURES "cxx_std_17"') == 2  # cxx and both
    assert '"$<$<COMPILE_LANGUAGE:CXX>:-fno-rtti>"' in cfg


def test_versions_agree_everywhere() -> None:
    """The wheel's PEP 440 normal form, the .pc Version and <NAME>_BUILD_VERSION are one
    version; CMake gets its numeric release (what it compares)."""
    for conan, pep440, numeric in (
        ("1.2.3-rc1", "1.2.3rc1", "1.2.3"),
        ("2024.05.1", "2024.5.1", "2024.5.1"),
    ):
        s = sdk(version=conan)
        files = render_cmake_package(s)
        assert f'set(PACKAGE_VERSION "{numeric}")' in text(files, "-config-version.cmake")
        assert f'set(PACKAGE_BUILD_VERSION "{pep440}")' in text(files, "-config-version.cmake")
        assert f'set(TOY_BUILD_VERSION "{pep440}" PARENT_SCOPE)' in text(files, "-config.cmake")
        assert f"Version: {pep440}\n" in text(render_pkg_config(s), "toy-core.pc")
        assert metadata.wheel_name(s, "any").filename == f"toy-{pep440}-py3-none-any.whl"
        assert f"\nVersion: {pep440}\n".lower() in metadata.render_metadata(s).decode().lower()
    assert sdk(version="2.0.post3").cmake_version == "2.0"


def test_bad_input_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match="not a PEP 440 version"):
        render_cmake_package(sdk(version="banana"))
    with pytest.raises(LayoutError, match="unknown component"):
        render_cmake_package(sdk(components=(Component("a", "t::a", ("a",), requires=("b",)),)))
    with pytest.raises(LayoutError, match="CMake list"):
        cmake_quote("A;B")


def test_pkg_config_files_are_relocatable_and_name_real_files() -> None:
    files = render_pkg_config(sdk())
    assert sorted(files) == [
        "toy/lib/pkgconfig/toy-core.pc",
        "toy/lib/pkgconfig/toy-extra.pc",
        "toy/lib/pkgconfig/toy-plugin.pc",
        "toy/lib/pkgconfig/toy.pc",  # PkgConfigDeps' package-wide .pc
    ]
    core = files["toy/lib/pkgconfig/toy-core.pc"].decode()
    plugin = files["toy/lib/pkgconfig/toy-plugin.pc"].decode()
    extra = files["toy/lib/pkgconfig/toy-extra.pc"].decode()
    assert "prefix=${pcfiledir}/../..\n" in core
    assert r"Cflags: -I${includedir} -DTOY_API=3 -DTOY_NAME=\"t\ y\" -std=c++17" in core
    assert "Libs: -L${libdir} -l:libtoy_core.so\n" in core
    assert "Requires: toy-core\n" in plugin
    # Retention names the file by path (Meson drops -L), right after -L (pkgconf 1.x quoting).
    assert (
        "Libs: -L${libdir} -Wl,--push-state,--no-as-needed,${libdir}/libtoy_plugin.so,--pop-state\n"
    ) in plugin
    assert "Libs: -L${libdir} -l:libtoy_extra.so -lm\n" in extra
    assert "Description: A toy SDK (component core)" in core
    assert str(BUILD_DIR) not in core
    whole = files["toy/lib/pkgconfig/toy.pc"].decode()
    assert "Requires: toy-core, toy-plugin, toy-extra\n" in whole and "Libs:" not in whole


def test_pkg_config_names_follow_pkgconfigdeps() -> None:
    """A component's default name is <package pc name>-<component>; the package's own is its
    pkg_config_name (default: the package name); "none" writes no package .pc."""
    bare = (Component("core", "x::core", ("x",)), Component("io", "x::io", ("x_io",)))
    named = render_pkg_config(sdk(components=bare, pkg_config_name="libtoy"))
    assert sorted(named) == [
        "toy/lib/pkgconfig/libtoy-core.pc",
        "toy/lib/pkgconfig/libtoy-io.pc",
        "toy/lib/pkgconfig/libtoy.pc",
    ]
    assert "toy/lib/pkgconfig/toy.pc" not in render_pkg_config(
        sdk(components=bare, pkg_config_name="none")
    )


def test_libraries_of_other_packages_are_typed_pairs() -> None:
    comp = Component(
        "extra",
        "toy::extra",
        ("toy_extra",),
        dependency_files=("toy.libs/libbz2-1a2b3c4d.so.1.0.4", "toy/lib/libtinyhash.a"),
    )
    pc = text(render_pkg_config(sdk(components=(comp,))), "toy-extra.pc")
    assert (
        "Libs: -L${libdir} -l:libtoy_extra.so -L${prefix}/../toy.libs "
        "-l:libbz2-1a2b3c4d.so.1.0.4 -l:libtinyhash.a\n"
    ) in pc
    cfg = config(sdk(components=(comp,)))
    assert (
        'INTERFACE_LINK_LIBRARIES "${site}/toy.libs/libbz2-1a2b3c4d.so.1.0.4;'
        '${site}/toy/lib/libtinyhash.a"'
    ) in cfg


def package_files(*libs: Library) -> PackageFiles:
    return PackageFiles(libraries=libs, include_trees=(), python_trees=())


def test_flags_are_relocated_or_refused_by_name() -> None:
    core = Library(
        "core",
        "toy_core",
        SourceFile(BUILD_DIR / "lib" / "libtoy_core.so.1.2", "d"),
        frozenset({"libtoy_core.so", "libtoy_core.so.1"}),
        (),
    )
    s = sdk(res_dirs=("share/toy",))
    table = relocation_table(s, package_files(core))
    assert relocate_flag(f"-I{BUILD_DIR}/include/toy/compat", s, table, "w") == (
        "-I${prefix}/include/toy/compat"
    )
    assert (
        relocate_flag(f"-Wl,--version-script={BUILD_DIR}/share/toy/v.map,-z,now", s, table, "w")
        == "-Wl,--version-script=${prefix}/share/toy/v.map,-z,now"
    )
    assert relocate_flag(f"-Wl,{BUILD_DIR}/lib/libtoy_core.so.1", s, table, "w") == (
        "-Wl,${prefix}/lib/libtoy_core.so"
    )
    with pytest.raises(LayoutError, match=r"flag '-Wl,-rpath,\$ORIGIN' holds a '\$'"):
        relocate_flag("-Wl,-rpath,$ORIGIN", s, table, "component core: exelinkflags")
    with pytest.raises(LayoutError, match=r"names src/x\.c in the package, which the wheel"):
        relocate_flag(f"-include {BUILD_DIR}/src/x.c", s, table, "w")
    s2 = dataclasses.replace(s, forbidden_paths=(Path("/home/builder/conan"),))
    with pytest.raises(LayoutError, match="holds the build-machine path /home/builder/conan"):
        relocate_flag("-I/home/builder/conan/p/zz/include", s2, table, "w")


def test_cmake_extra_variables_are_parsed_relocated_and_refused_as_cmakedeps_would() -> None:
    """Conan 2's cmake_extra_variables: strings (CMake expands ${...}, as in CMakeDeps'),
    numbers, cache entries; a package path becomes the wheel's root, the package folder
    itself too; a path the wheel does not ship or of the build machine is refused by name."""
    core = Library(
        "core",
        "toy_core",
        SourceFile(BUILD_DIR / "lib" / "libtoy_core.so.1.2", "d"),
        frozenset({"libtoy_core.so", "libtoy_core.so.1"}),
        (),
    )
    variables = extra_variables(
        {
            "TOY_DATA": f"{BUILD_DIR}/share/toy/data.bin",
            "TOY_ROOT": str(BUILD_DIR),
            "TOY_LIB": f"{BUILD_DIR}/lib/libtoy_core.so.1;${{CMAKE_GENERATOR}}",
            "TOY_LEVEL": 3,
            "TOY_MODE": {"value": "fast", "cache": True, "type": "STRING", "force": True},
        }
    )
    s = sdk(res_dirs=("share/toy",), forbidden_paths=(Path("/home/builder/conan"),))
    table = relocation_table(s, package_files(core))
    relocated = {v.name: relocate_variable(v, s, table, "w") for v in variables}
    assert [relocated[k].value for k in ("TOY_DATA", "TOY_ROOT", "TOY_LIB", "TOY_LEVEL")] == [
        "${prefix}/share/toy/data.bin",
        "${prefix}",
        "${prefix}/lib/libtoy_core.so;${CMAKE_GENERATOR}",
        "3",
    ]
    text = config(dataclasses.replace(s, cmake_extra_variables=tuple(relocated.values())))
    assert 'set(TOY_ROOT "${_toy_prefix}")' in text
    assert "set(TOY_LEVEL 3)" in text
    assert 'set(TOY_MODE "fast" CACHE STRING "TOY_MODE" FORCE)' in text
    assert str(BUILD_DIR) not in text
    refused = {
        f"{BUILD_DIR}/src/x.c": r"TOY_X = .* names src/x\.c in the package, which the wheel",
        "/home/builder/conan/p/zz/bin": "holds the build-machine path /home/builder/conan",
        "${prefix}/bin": r"names \$\{prefix\}, which the wheel's config sets",
    }
    for value, message in refused.items():
        (var,) = extra_variables({"TOY_X": value})
        with pytest.raises(LayoutError, match=message):
            relocate_variable(var, s, table, "w")
    malformed = [
        ([1], "the value must be a string, a number or a dict"),
        ('say "hi"', "holding '\"' or a newline"),
        ({"value": "x", "cache": True}, "a cache variable needs a 'type' of"),
        ({"value": "x", "force": True}, "'force' is only allowed for cache variables"),
    ]
    for value, message in malformed:
        with pytest.raises(PackageError, match=message):
            extra_variables({"TOY_X": value})


def test_extra_dependencies_and_interface_libs_reach_the_config() -> None:
    """cmake_extra_dependencies: find_dependency before the targets, as CMakeDeps;
    cmake_extra_interface_libs: the component's target links them (as its system_libs)."""
    s = sdk(cmake_extra_dependencies=("CUDAToolkit",))
    comps = tuple(
        dataclasses.replace(c, cmake_interface_libs=("CUDA::cudart",)) if c.name == "extra" else c
        for c in s.components
    )
    text = config(dataclasses.replace(s, components=comps))
    assert "if(NOT CUDAToolkit_FOUND)\n  find_dependency(CUDAToolkit REQUIRED)" in text
    assert text.index("find_dependency(CUDAToolkit") < text.index("add_library(toy::core")
    assert 'INTERFACE_LINK_LIBRARIES "toy::core;m;CUDA::cudart"' in text
    with pytest.raises(LayoutError, match="cmake_extra_dependencies entry 'a b'"):
        config(dataclasses.replace(s, cmake_extra_dependencies=("a b",)))


def test_link_flags_with_commas_and_angle_brackets_stay_one_generator_expression() -> None:
    """`-Wl,-z,now` in a $<...:...> genex: each ',' is $<COMMA>, whose own '>' stays."""
    core = Component("core", "toy::core", ("toy_core",), exelinkflags=("-Wl,-z,now", "-Wx>y"))
    cfg = config(sdk(components=(core,)))
    assert "$<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-Wl$<COMMA>-z$<COMMA>now;" in cfg
    assert ";-Wx$<ANGLE-R>y>" in cfg


def test_a_flag_repeating_etpkgs_retention_is_dropped() -> None:
    """etrt's recipe gives CMakeDeps users the retention etpkg writes itself: not twice."""
    plugin = Library(
        "plugin",
        "toy_plugin",
        SourceFile(BUILD_DIR / "lib" / "libtoy_plugin.so", "d"),
        frozenset({"libtoy_plugin.so"}),
        (),
    )
    flag = f"-Wl,--push-state,--no-as-needed,{BUILD_DIR}/lib/libtoy_plugin.so,--pop-state"
    comps = tuple(
        dataclasses.replace(c, exelinkflags=(flag, "-Wl,-z,now")) if c.name == "plugin" else c
        for c in sdk().components
    )
    view = wheel_sdk(sdk(components=comps), package_files(plugin))
    assert view.component("plugin").exelinkflags == ("-Wl,-z,now",)


def test_registration_only_component_keeps_all_its_libraries_in_one_token() -> None:
    two = Component("plugins", "toy::plugins", ("toy_a", "toy_b"), registration_only=True)
    files = render_pkg_config(sdk(components=(two,)))
    assert (
        "Libs: -L${libdir} -Wl,--push-state,--no-as-needed,${libdir}/libtoy_a.so,"
        "${libdir}/libtoy_b.so,--pop-state\n"
    ) in files["toy/lib/pkgconfig/toy-plugins.pc"].decode()
    bad = Component("bad", "toy::bad", ("toy,x",), registration_only=True)
    with pytest.raises(LayoutError, match="cannot be named in a pkg-config file"):
        render_pkg_config(sdk(components=(bad,)))


def test_pkg_config_reads_the_files_under_a_path_with_a_space(tmp_path: Path) -> None:
    """Debian's pkg-config (pkgconf 1.8) keeps every path whole for a shell and for Meson."""
    root = tmp_path / "site packages"
    for rel, data in render_pkg_config(sdk()).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    pc_dir = root / "toy" / "lib" / "pkgconfig"
    proc = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "toy-plugin", "toy-extra"],
        env={"PKG_CONFIG_PATH": str(pc_dir), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    flags = shlex.split(proc.stdout)
    assert "-DTOY_API=3" in flags  # through Requires: toy-core
    assert "-l:libtoy_core.so" in flags and "-l:libtoy_extra.so" in flags
    lib = pc_dir / ".." / ".." / "lib"
    assert f"-L{lib}" in flags and f"-I{pc_dir / '..' / '..' / 'include'}" in flags
    assert f"-Wl,--push-state,--no-as-needed,{lib}/libtoy_plugin.so,--pop-state" in flags
    # What Meson links: no -L, the libraries by path, the retention token as it is.
    meson = meson_link_args(flags)
    assert not [f for f in meson if f.startswith("-L")]
    assert str(lib / "libtoy_core.so") not in meson  # not shipped here: left as -l:
    (lib / "libtoy_core.so").write_bytes(b"")
    assert str(lib / "libtoy_core.so") in meson_link_args(flags)
    assert "-lm" in meson


def test_version_file_semantics(tmp_path: Path) -> None:
    """SameMajorVersion with ranges, evaluated by cmake -P the way find_package sets it up."""
    version_file = tmp_path / "v.cmake"
    version_file.write_bytes(text(render_cmake_package(sdk()), "-config-version.cmake").encode())
    cmake = CMAKE / CMAKE_VERSIONS[-1] / "bin" / "cmake"
    if not cmake.is_file():
        cmake = Path("cmake")

    def compatible(request: str) -> bool:
        lo, _, hi = request.partition("...")
        defs = {"PACKAGE_FIND_VERSION": lo}
        if hi:
            include = not hi.startswith("<")
            hi = hi.lstrip("<")
            defs.update(
                PACKAGE_FIND_VERSION_RANGE=request,
                PACKAGE_FIND_VERSION_MIN=lo,
                PACKAGE_FIND_VERSION_MIN_MAJOR=lo.split(".")[0],
                PACKAGE_FIND_VERSION_MAX=hi,
                PACKAGE_FIND_VERSION_MAX_MAJOR=hi.split(".")[0],
                PACKAGE_FIND_VERSION_RANGE_MAX="INCLUDE" if include else "EXCLUDE",
            )
        else:
            defs["PACKAGE_FIND_VERSION_MAJOR"] = lo.split(".")[0]
        script = tmp_path / "probe.cmake"
        script.write_text(
            "".join(f'set({k} "{v}")\n' for k, v in defs.items())
            + f'include("{version_file}")\n'
            + 'message("compatible=${PACKAGE_VERSION_COMPATIBLE}")\n'
        )
        out = subprocess.run(
            [str(cmake), "-P", str(script)], capture_output=True, text=True, check=True
        ).stderr
        return "compatible=TRUE" in out

    assert compatible("0.3.1") and compatible("0.1") and compatible("0.3...<0.4")
    assert compatible("0.1...0.3.1") and compatible("0.3...<1.0")
    assert not compatible("0.3.2") and not compatible("0.4") and not compatible("1.0")
    assert not compatible("0.1...<0.3.1")  # excludes the installed version
    assert not compatible("0.4...<0.5") and not compatible("0.3...<2.0")  # leaves the major


def test_build_modules_read_cmakedeps_data_variables(tmp_path: Path) -> None:
    """A build module may read CMakeDeps' data variables (openssl's sets OPENSSL_CRYPTO_LIBRARY
    from openssl_OpenSSL_Crypto_LIBS_RELEASE): <package>_<component's target, '::' as '_'>_
    LIBS/SYSTEM_LIBS/DEPENDENCIES/FRAMEWORKS_RELEASE, and the package's <package>_LIBS_RELEASE,
    defined (empty ones too) when it runs, with CMakeDeps' values: -l names, not files."""
    comps = (
        Component("crypto", "Toy::Crypto", ("tcrypto",), system_libs=("dl", "pthread")),
        Component("ssl", "Toy::SSL", ("tssl",), requires=("crypto",), system_libs=("dl",)),
    )
    s = sdk(components=comps, cmake_file_name="Toy", build_modules=("lib/cmake/toy-vars.cmake",))
    root = tmp_path / "site"
    for rel, data in render_cmake_package(s).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "toy" / "lib" / "cmake" / "toy-vars.cmake").write_text(
        "foreach(v toy_Toy_Crypto_LIBS toy_Toy_Crypto_SYSTEM_LIBS toy_Toy_Crypto_DEPENDENCIES\n"
        "        toy_Toy_Crypto_FRAMEWORKS toy_Toy_SSL_LIBS toy_Toy_SSL_DEPENDENCIES toy_LIBS\n"
        "        toy_SYSTEM_LIBS)\n"
        "  if(NOT DEFINED ${v}_RELEASE)\n"
        '    message(FATAL_ERROR "${v}_RELEASE not defined")\n'
        "  endif()\n"
        '  message(STATUS "${v}=[${${v}_RELEASE}]")\n'
        "endforeach()\n"
    )
    project = tmp_path / "consumer"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.15)\nproject(c NONE)\n"
        f'find_package(Toy REQUIRED CONFIG PATHS "{root}/toy" NO_DEFAULT_PATH)\n'
    )
    proc = subprocess.run(
        ["cmake", "-S", str(project), "-B", str(tmp_path / "b")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "toy_Toy_Crypto_LIBS=[tcrypto]" in out
    assert "toy_Toy_Crypto_SYSTEM_LIBS=[dl;pthread]" in out
    assert "toy_Toy_Crypto_DEPENDENCIES=[]" in out and "toy_Toy_Crypto_FRAMEWORKS=[]" in out
    assert "toy_Toy_SSL_LIBS=[tssl]" in out and "toy_Toy_SSL_DEPENDENCIES=[Toy::Crypto]" in out
    assert "toy_LIBS=[tssl;tcrypto]" in out and "toy_SYSTEM_LIBS=[dl;pthread]" in out

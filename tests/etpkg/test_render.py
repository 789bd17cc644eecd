"""The generated CMake package and pkg-config files, as pure functions of an Sdk (fast)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from etpkg import Component, LayoutError, Sdk
from etpkg._internal.plan.cmake import cmake_quote, render_cmake_package
from etpkg._internal.plan.pkgconfig import render_pkg_config
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


def test_cmake_package_paths_and_runpath_file() -> None:
    files = render_cmake_package(sdk())
    assert sorted(files) == [
        "toy/lib/cmake/toy/runpath.ldopts",
        "toy/lib/cmake/toy/toy-config-version.cmake",
        "toy/lib/cmake/toy/toy-config.cmake",
    ]
    # No '$' may reach a command line: the runpath lives in this ld option file.
    assert files["toy/lib/cmake/toy/runpath.ldopts"] == (
        b"--enable-new-dtags -rpath $ORIGIN -rpath $ORIGIN/../lib\n"
    )


def test_config_holds_no_build_path_and_no_python() -> None:
    config = text(render_cmake_package(sdk()), "-config.cmake")
    assert str(BUILD_DIR) not in config and "/build/machine" not in config
    for command in ("execute_process", "find_program", "find_package(Python", "PYTHON"):
        assert command not in config
    assert "cmake_minimum_required" not in config  # would set CMAKE_MINIMUM_REQUIRED_VERSION


def test_one_target_per_component_with_scoped_retention_for_registration_only() -> None:
    config = text(render_cmake_package(sdk()), "-config.cmake")
    for target in ("toy::core", "toy::plugin", "toy::extra"):
        assert f"if(NOT TARGET {target})" in config
        assert f"add_library({target} SHARED IMPORTED)" in config
    assert config.count("--push-state,--no-as-needed") == 2  # target option + variables item
    assert "LINKER:--push-state,--no-as-needed,${lib}/libtoy_plugin.so,--pop-state" in config
    assert 'INTERFACE_COMPILE_FEATURES "cxx_std_17"' in config
    assert 'INTERFACE_LINK_LIBRARIES "toy::core;m"' in config
    assert r'"TOY_NAME=\"t y\""' in config


def test_version_file_uses_the_numeric_release_and_config_the_full_version() -> None:
    files = render_cmake_package(sdk(version="1.2.0rc1"))
    assert 'set(PACKAGE_VERSION "1.2.0")' in text(files, "-config-version.cmake")
    assert 'set(TOY_BUILD_VERSION "1.2.0rc1" PARENT_SCOPE)' in text(files, "-config.cmake")
    assert sdk(version="2.0.post3").cmake_version == "2.0"


def test_bad_input_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match="not a valid version"):
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

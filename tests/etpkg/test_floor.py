"""The manylinux floor (issue 25): etpkg names the files and symbol versions that set a wheel's
tag, takes a target (--manylinux, the etpkg_manylinux property) and refuses a wheel needing more.

floorsdk is one C++ library whose only new symbol is std::condition_variable::wait, which GCC
12's libstdc++ exports at GLIBCXX_3.4.30 (manylinux_2_35): the diagnosis of etrt's old tag.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest
from etpkg import PolicyError
from etpkg._internal import policy
from etpkg._internal.build.elf import VersionedImport, versioned_imports
from etpkg._internal.tags import arch_for_conan
from etpkg_fixtures import conan, ensure, run_etpkg, write_tree

X86_64 = arch_for_conan("x86_64")
WAIT = "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE"
WAIT_DEMANGLED = "std::condition_variable::wait(std::unique_lock<std::mutex>&)"
WAIT_SOURCE = """
    #include <condition_variable>
    #include <mutex>
    std::mutex mu;
    std::condition_variable cv;
    bool ready = false;
    extern "C" void floor_wait() {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [] { return ready; });
    }
"""
RECIPE = {
    "conanfile.py": """
        import os

        from conan import ConanFile
        from conan.tools.files import copy


        class Floorsdk(ConanFile):
            name = "floorsdk"
            version = "1.0.0"
            license = "MIT"
            package_type = "shared-library"
            settings = "os", "arch", "compiler", "build_type"
            options = {"target": ["none", "2_36", "2_28"]}
            default_options = {"target": "none"}
            exports_sources = "src/*", "LICENSE"

            def build(self):
                src = os.path.join(self.source_folder, "src", "wait.cpp")
                self.run(f"c++ -shared -fPIC -O1 -o libfloor.so -Wl,-soname,libfloor.so {src}")

            def package(self):
                copy(self, "libfloor.so", self.build_folder,
                     os.path.join(self.package_folder, "lib"))
                copy(self, "LICENSE", self.source_folder,
                     os.path.join(self.package_folder, "licenses"))

            def package_info(self):
                self.cpp_info.libs = ["floor"]
                if self.options.target != "none":
                    self.cpp_info.set_property("etpkg_manylinux", str(self.options.target))
    """,
    "src/wait.cpp": WAIT_SOURCE,
    "LICENSE": "MIT (test fixture only)\n",
}
DIAGNOSIS = f"floorsdk/lib/libfloor.so needs GLIBCXX_3.4.30 ({WAIT_DEMANGLED}) -> manylinux_2_35"


def _need(file: str, version: str, *symbols: str) -> tuple[str, list[VersionedImport]]:
    library = "libstdc++.so.6" if version.startswith("GLIBCXX") else "libc.so.6"
    return file, [VersionedImport(library, version, symbols)]


def test_the_floor_is_the_newest_need_and_names_who_sets_it() -> None:
    imports = dict(
        [
            _need("a.so", "GLIBC_2.17", "memcpy"),
            _need("b.so", "GLIBCXX_3.4.30", WAIT),
            _need("c.so", "GLIBC_2.34", "pthread_once"),
            _need("d.so", "XNNPACK_1.0", "xnn_run"),  # not a policy's prefix: sets nothing
        ]
    )
    floor = policy.floor_of(imports, X86_64)
    assert floor.tag == "manylinux_2_35_x86_64"
    assert [(n.file, n.version) for n in floor.deciding()] == [("b.so", "GLIBCXX_3.4.30")]
    target = policy.policy_named("2_28", X86_64)
    assert [n.version for n in floor.above(target)] == ["GLIBCXX_3.4.30", "GLIBC_2.34"]
    line = policy.describe(floor.deciding()[0], X86_64, lambda s: s)
    assert line == f"b.so needs GLIBCXX_3.4.30 ({WAIT}) -> manylinux_2_35_x86_64"


def test_a_target_below_the_floor_is_refused_naming_each_need_above_it() -> None:
    floor = policy.floor_of(
        dict([_need("b.so", "GLIBCXX_3.4.30", WAIT), _need("c.so", "GLIBC_2.28", "fcntl64")]),
        X86_64,
    )
    target = policy.policy_named("manylinux_2_28_x86_64", X86_64)
    with pytest.raises(PolicyError, match=r"b\.so needs GLIBCXX_3\.4\.30 \(WAIT\)") as caught:
        policy.choose(floor, floor.tag, target, lambda s: "WAIT" if s == WAIT else s)
    assert "newer than the target manylinux_2_28_x86_64" in str(caught.value)
    assert "c.so" not in str(caught.value)  # GLIBC_2.28 is within the target
    # Met: the wheel gets the target even when its files would allow an older one.
    met = policy.choose(floor, floor.tag, policy.policy_named("2.36", X86_64), str)
    assert met.platform == "manylinux_2_36_x86_64"
    # No target: the floor, or auditwheel's finding when that is stricter.
    assert policy.choose(floor, "manylinux_2_38_x86_64", None, str).platform.endswith("2_38_x86_64")


def test_an_unknown_target_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(PolicyError, match=r"unknown manylinux target '2_29'.*2_28, 2_31"):
        policy.policy_named("2_29", X86_64)
    with pytest.raises(PolicyError, match="unknown manylinux target 'latest'"):
        policy.policy_named("latest", X86_64)


def test_versioned_imports_attribute_each_symbol_to_its_version(tmp_path: Path) -> None:
    (tmp_path / "wait.cpp").write_text(WAIT_SOURCE)
    lib = tmp_path / "libwait.so"
    subprocess.run(
        ["c++", "-shared", "-fPIC", "-O1", "-o", lib, tmp_path / "wait.cpp"], check=True
    )
    imports = {(i.library, i.version): i.symbols for i in versioned_imports(lib)}
    assert WAIT in imports[("libstdc++.so.6", "GLIBCXX_3.4.30")]
    others = [symbols for key, symbols in imports.items() if key[1] != "GLIBCXX_3.4.30"]
    assert all(WAIT not in symbols for symbols in others)


@pytest.fixture(scope="module")
def floorsdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("floorsdk")
    write_tree(root / "recipe", RECIPE)
    for target in ("none", "2_36"):
        conan("create", str(root / "recipe"), "-o", f"floorsdk/*:target={target}")
    return root


def test_wheelify_names_the_symbol_that_sets_the_tag(floorsdk: Path) -> None:
    proc = run_etpkg("wheelify", "floorsdk/1.0.0", "--output-dir", floorsdk / "plain", "-v")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).name == "floorsdk-1.0.0-py3-none-manylinux_2_35_x86_64.whl"
    assert DIAGNOSIS in proc.stderr


def test_wheelify_refuses_a_target_the_files_exceed(floorsdk: Path) -> None:
    out = floorsdk / "refused"
    proc = run_etpkg("wheelify", "floorsdk/1.0.0", "--output-dir", out, "--manylinux", "2_28")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "newer than the target manylinux_2_28_x86_64" in proc.stderr
    assert DIAGNOSIS in proc.stderr
    assert not out.exists() or not any(out.iterdir())


def test_the_packages_target_tags_the_wheel_and_the_sbom_records_the_floor(
    floorsdk: Path,
) -> None:
    proc = run_etpkg(
        "wheelify", "floorsdk/1.0.0", "--output-dir", floorsdk / "target", "-o", "*:target=2_36"
    )
    assert proc.returncode == 0, proc.stderr
    wheel = Path(proc.stdout.strip())
    assert wheel.name.endswith("-manylinux_2_36_x86_64.whl")
    with zipfile.ZipFile(wheel) as zf:
        sbom = json.loads(zf.read("floorsdk-1.0.0.dist-info/sboms/etpkg.cdx.json"))
    props = {(p["name"], p["value"]) for p in sbom["metadata"]["component"]["properties"]}
    assert ("etpkg:manylinux:floor", "manylinux_2_35_x86_64") in props
    assert ("etpkg:manylinux:target", "manylinux_2_36_x86_64") in props
    assert ("etpkg:manylinux:set-by", DIAGNOSIS + "_x86_64") in props
    # The command line overrides the package's target; --manylinux 2_28 is still refused.
    refused = run_etpkg(
        "wheelify", "floorsdk/1.0.0", "-of", floorsdk / "t2", "-o", "*:target=2_36",
        "--manylinux", "2_28",
    )  # fmt: skip
    assert refused.returncode == 1 and "GLIBCXX_3.4.30" in refused.stderr


def test_a_target_below_the_build_machines_glibc_refuses_static_archives(tmp_path: Path) -> None:
    """Archives bind glibc symbols when the consumer links, against this machine's headers
    (glibc 2.36): geokit's executable meets 2_34, its archives do not."""
    fixture = ensure("geokit")
    proc = run_etpkg(
        "wheelify", fixture.ref, "-of", tmp_path, "--manylinux", "2_34", *fixture.conan_args
    )
    assert proc.returncode == 1, proc.stderr
    assert "static archives" in proc.stderr
    assert "cannot be tagged manylinux_2_34_x86_64" in proc.stderr

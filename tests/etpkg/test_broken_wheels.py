"""Each contract of `etpkg verify` fails on a wheel broken on purpose, and names what broke.

A broken wheel is a copy of a fixture package's wheel with one generated file changed and its
RECORD brought in line (so only the consumer checks can catch it). Each case runs just the
checks its contract needs, on one CMake and generator. The intact wheels pass every one of
those checks in test_toysdk_consumers.py (toysdk) and test_packages.py (geo-kit).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from etpkg._internal.verify.suite import Suite
from etpkg._internal.verify.workspace import prepare
from etpkg_fixtures import REPO_ROOT, rewrite_wheel, run_etpkg

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
PLUGIN_PC = "toysdk-plugin.pc"
PLUGIN_RETAINED = "-Wl,--push-state,--no-as-needed,${libdir}/libtoysdk_plugin.so,--pop-state"


@dataclass(frozen=True)
class Broken:
    """One wheel broken on purpose: which package, which file, old -> new (a regex when
    `regex`), the checks to run (suite method names) and what the failing check must say."""

    package: str
    member: str
    old: str
    new: str
    checks: tuple[str, ...]
    expected: str
    regex: bool = False


# contract -> the breakage that contract, and only a check of it, must catch.
CASES = {
    "versions": Broken(
        "toysdk",
        "-config-version.cmake",
        'set(_major "0")',
        'set(_major "1")',
        ("check_versions",),
        "find_package(toysdk 0.3.1) found=False, expected True",
    ),
    "unknown component": Broken(
        "toysdk",
        "-config.cmake",
        "  if(unknown)\n",
        "  if(FALSE)\n",
        ("check_unknown_component",),
        "configure succeeded with an unknown required component",
    ),
    "targets (runpath)": Broken(
        "toysdk",
        "-config.cmake",
        'set(runpath "LINKER:@${dir}/runpath.ldopts")',
        'set(runpath "")',
        ("check_targets",),
        "DT_RUNPATH",
    ),
    "each component alone": Broken(
        "toysdk",
        "-config.cmake",
        'INTERFACE_LINK_LIBRARIES "toysdk::core;${site}',
        'INTERFACE_LINK_LIBRARIES "toysdk::core;toysdk::plugin;${site}',
        ("check_each_component_alone",),
        "toysdk::extra: app needs",
    ),
    "package-wide target": Broken(
        "toysdk",
        "-config.cmake",
        'INTERFACE_LINK_LIBRARIES "toysdk::core;toysdk::plugin;toysdk::extra"',
        'INTERFACE_LINK_LIBRARIES "toysdk::core;toysdk::plugin"',
        ("check_package_target",),
        "toysdk::toysdk: command failed",  # extra's functions: undefined references
    ),
    "executables and data": Broken(
        "geokit",
        "Config.cmake",
        'IMPORTED_LOCATION "${prefix}/bin/geokit-info"',
        'IMPORTED_LOCATION "${prefix}/bin/geokit"',
        ("check_files",),
        "GeoKit::geokit-info: IMPORTED_LOCATION",
    ),
    "headers": Broken(
        "toysdk",
        "include/toysdk/core.h",
        '#include "toysdk/export.h"\n',
        '#include "toysdk/export.h"\n#include "toysdk/not_shipped.h"\n',
        ("check_headers",),
        "headers that do not compile on their own: ['toysdk/core.h']",
    ),
    "variables (retention)": Broken(
        "toysdk",
        "-config.cmake",
        '--push-state,--no-as-needed,\\"${lib}',
        '--push-state,--as-needed,\\"${lib}',
        ("check_variables",),
        "retention",
    ),
    "variables (definitions)": Broken(
        "toysdk",
        "-config.cmake",
        'set(defs_core "TOYSDK_API_VERSION=3")',
        'set(defs_core "TOYSDK_API_VERSION=4")',
        ("check_variables",),
        "definitions as the app sees them {'TOYSDK_API_VERSION': '4'}",
    ),
    "variables (archive retention)": Broken(
        "geokit",
        "Config.cmake",
        '-Wl,--push-state,--whole-archive,\\"${lib}/libgeokit_shapes.a\\",--pop-state',
        "${lib}/libgeokit_shapes.a",
        ("check_variables",),
        "the app holds nothing of ['libgeokit_shapes.a'] (retention)",
    ),
    "pkg-config (retention)": Broken(
        "toysdk",
        PLUGIN_PC,
        PLUGIN_RETAINED,
        "-l:libtoysdk_plugin.so",
        ("check_pkg_config",),
        "expected ['libtoysdk_plugin.so']",
    ),
    "pkg-config (Meson)": Broken(
        # The token etpkg wrote before: fine for make, but Meson drops -L and ld cannot find it.
        "toysdk",
        PLUGIN_PC,
        PLUGIN_RETAINED,
        "-Wl,--push-state,--no-as-needed,-l:libtoysdk_plugin.so,--pop-state",
        ("check_pkg_config",),
        "cannot find -l:libtoysdk_plugin.so",
    ),
    "pkg-config (C++ flag for C)": Broken(
        "geokit",
        "geo-kit-core.pc",
        "Cflags: -I${includedir}",
        "Cflags: -I${includedir} -std=c++17",
        ("check_pkg_config",),
        "C++ flags ['-std=c++17'] for C",
    ),
    "entry points": Broken(
        "toysdk",
        "entry_points.txt",
        "[cmake.root]\ntoysdk = toysdk",
        "[cmake.root]\nToySdk = toysdk",
        ("check_entry_points",),
        "scikit-build-core sets ToySdk_ROOT, but find_package needs toysdk_ROOT",
    ),
    "relocation": Broken(
        # What an installed app needs beside it without the grafted libbz2.
        "toysdk",
        "-config.cmake",
        r'(  file\(GLOB runtime [^\n]*\n)|( "\$\{site\}/toysdk\.libs/[^"]*")',
        "",
        ("check_targets", "check_relocation"),
        "cmake --install did not install the grafted ['libbz2-",
        regex=True,
    ),
    "good citizen": Broken(
        "toysdk",
        "-config.cmake",
        "cmake_policy(POP)\n",
        "cmake_policy(POP)\nset(leaked_by_the_config 1)\n",
        ("check_good_citizen",),
        "find_package changed the caller's scope: set ['leaked_by_the_config']",
    ),
    "no python while configuring": Broken(
        "toysdk",
        "-config.cmake",
        "cmake_policy(PUSH)\n",
        'cmake_policy(PUSH)\nexecute_process(COMMAND python3 -c "print(1)")\n',
        ("check_unknown_component", "check_no_python"),
        "python was run while configuring or building",
    ),
}
CONTRACTS = sorted(CASES)


def run_checks(suite: Suite, checks: tuple[str, ...] | list[str]) -> None:
    """Runs suite.<check>() for each, on the suite's one CMake version and generator."""
    version, generator = suite.versions[0], suite.generators[0]
    for check in checks:
        method = getattr(suite, check)
        args: tuple[str, ...] = ()
        if check == "check_targets":
            args = (version, generator)
        elif check == "check_variables":
            args = (version,)
        suite.record(check, lambda m=method, a=args: str(m(*a)))


def broken_wheel(wheel: Path, out_dir: Path, case: Broken) -> Path:
    def change(data: bytes) -> bytes:
        text = data.decode()
        if case.regex:
            new = re.sub(case.old, case.new, text)
        else:
            assert case.old in text, f"{case.old!r} not in {case.member}"
            new = text.replace(case.old, case.new)
        assert new != text
        return new.encode()

    return rewrite_wheel(wheel, out_dir / wheel.name, case.member, change)


@pytest.fixture
def broken_suite(
    package_wheel: Callable[[str], Path], tmp_path: Path
) -> Iterator[Callable[[Broken], Suite]]:
    def make(case: Broken) -> Suite:
        wheel = broken_wheel(package_wheel(case.package), tmp_path / "dist", case)
        ws = prepare(wheel, tmp_path / "work", CMAKE_CACHE)
        # Strict headers: the headers contract is the one an SDK opts into (test_headers_* below
        # cover the lenient default).
        return Suite(ws, versions=("3.31.10",), generators=("Ninja",), strict_headers=True)

    yield make
    shutil.rmtree(tmp_path / "work", ignore_errors=True)


@pytest.mark.parametrize("contract", CONTRACTS)
def test_verify_fails_on_a_wheel_broken_for_the_contract(
    contract: str, broken_suite: Callable[[Broken], Suite]
) -> None:
    case = CASES[contract]
    suite = broken_suite(case)
    run_checks(suite, case.checks)
    last = suite.results[-1]  # the contract's own check runs last
    assert not last.ok, f"{contract}: {last.name} passed on a broken wheel: {last.detail}"
    assert case.expected in last.detail, last.detail


def test_headers_check_reports_an_exempt_header_that_compiles(
    package_wheel: Callable[[str], Path], tmp_path: Path
) -> None:
    ws = prepare(package_wheel("toysdk"), tmp_path, CMAKE_CACHE)
    s = Suite(ws, exempt_headers=("toysdk/core.h",), strict_headers=True)
    s.record("headers", s.check_headers)
    assert not s.results[-1].ok and "now compile" in s.results[-1].detail


def test_headers_check_notes_a_header_that_does_not_compile_alone_unless_strict(
    package_wheel: Callable[[str], Path], tmp_path: Path
) -> None:
    case = CASES["headers"]
    wheel = broken_wheel(package_wheel(case.package), tmp_path / "dist", case)
    ws = prepare(wheel, tmp_path / "work", CMAKE_CACHE)
    lenient = Suite(ws, versions=("3.31.10",), generators=("Ninja",))
    lenient.record("headers", lenient.check_headers)
    # The variables check compiles the headers together: the one that failed alone stays out.
    lenient.record("variables", lambda: lenient.check_variables("3.31.10"))
    headers, variables = lenient.results
    assert headers.ok, headers.detail
    assert "note: 1 do not" in headers.detail and "toysdk/core.h" in headers.detail, headers.detail
    assert variables.ok, variables.detail
    strict = Suite(ws, versions=("3.31.10",), generators=("Ninja",), strict_headers=True)
    strict.record("headers", strict.check_headers)
    assert not strict.results[-1].ok and "toysdk/core.h" in strict.results[-1].detail


def test_verify_cli_is_strict_with_an_exempt_file_or_strict_headers(
    package_wheel: Callable[[str], Path], tmp_path: Path
) -> None:
    """An exempt file, even an empty one (etrt's), opts into self-contained headers, as does
    --strict-headers; without either the same wheel passes (the lenient test above). Only the
    headers check runs (`--only`): the report holds it alone."""
    wheel = broken_wheel(package_wheel("toysdk"), tmp_path / "dist", CASES["headers"])
    empty = tmp_path / "exempt.txt"
    empty.write_text("# none\n")
    for flags in (["--exempt-headers", empty], ["--strict-headers"]):
        proc = run_etpkg(
            "verify", wheel, "--quick", "--only", "headers", "--work", tmp_path / "w",
            "--cmake-cache", CMAKE_CACHE, *flags,
        )  # fmt: skip
        assert proc.returncode == 1, proc.stdout
        assert "FAIL  headers" in proc.stdout and "['toysdk/core.h']" in proc.stdout, proc.stdout
        assert "0/1 checks passed for toysdk" in proc.stdout, proc.stdout

"""The consumer suite (etpkg verify) against the toysdk wheel, plus toysdk's own probe app.

The whole suite runs once per session on the gate's CMake versions (tests/suites.py, both
generators), and once more on the matrix's other versions for `ci/long.sh matrix`; each test
asserts one property from its results. That each check can fail is shown by
test_broken_wheels.py.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest
from etpkg import testing
from etpkg._internal.verify.suite import SBOM_CHECK, Suite
from etpkg_fixtures import REPO_ROOT, env, run_on_tty
from suites import GATE_CMAKE, REST_CMAKE, gate_subset

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
APP = REPO_ROOT / "tests" / "consumer" / "toysdk_app"


def _run_suite(wheel: Path, root: Path, versions: tuple[str, ...]) -> Suite:
    ws = testing.prepare(wheel, root, CMAKE_CACHE)
    s = Suite(ws, versions=versions, strict_headers=True)  # toysdk's headers are self-contained
    start = time.monotonic()
    s.run_all()
    print(
        f"\nconsumer suite ({len(s.results)} checks): {time.monotonic() - start:.1f} s",
        file=sys.stderr,
    )
    for r in s.results:
        print(f"  {'PASS' if r.ok else 'FAIL'} {r.name} {r.seconds:.1f} s", file=sys.stderr)
    return s


@pytest.fixture(scope="session")
def suite(toysdk_wheel_for_consumers: Path, tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return _run_suite(toysdk_wheel_for_consumers, tmp_path_factory.mktemp("consumers"), GATE_CMAKE)


@pytest.fixture(scope="session")
def suite_rest(toysdk_wheel_for_consumers: Path, tmp_path_factory: pytest.TempPathFactory) -> Suite:
    root = tmp_path_factory.mktemp("consumers-rest")
    return _run_suite(toysdk_wheel_for_consumers, root, REST_CMAKE)


def suite_for(request: pytest.FixtureRequest, version: str) -> Suite:
    return request.getfixturevalue("suite" if version in GATE_CMAKE else "suite_rest")  # type: ignore[no-any-return]


def result(s: Suite, name: str) -> testing.CheckResult:
    matches = [r for r in s.results if r.name == name]
    assert matches, f"the suite did not run {name!r}"
    assert matches[0].ok, f"{name}: {matches[0].detail}"
    return matches[0]


def test_manifest_describes_the_components(suite: Suite) -> None:
    m = suite.sdk
    assert (m.name, m.version, m.cmake_file_name, m.variable_prefix) == (
        "toysdk",
        "0.3.1",
        "toysdk",
        "TOYSDK",
    )
    assert [c.target for c in m.components] == ["toysdk::core", "toysdk::plugin", "toysdk::extra"]
    assert [c.name for c in m.components if c.registration_only] == ["plugin"]


def test_sbom_lists_every_file_with_its_hash(suite: Suite) -> None:
    assert "files, each with its SHA-256" in result(suite, SBOM_CHECK).detail


def test_prefix_path_cli_points_at_the_installed_package(suite: Suite) -> None:
    result(suite, "install: python -m <pkg> --cmake-prefix-path")


def test_version_requests_are_honoured(suite: Suite) -> None:
    detail = result(suite, "versions").detail
    assert (
        "0.2: accepted" in detail and "0.4: rejected" in detail and "0.3...<0.4: accepted" in detail
    )


def test_unknown_component_fails_at_configure_naming_it(suite: Suite) -> None:
    result(suite, "unknown component")


@pytest.mark.matrix
@pytest.mark.parametrize("generator", testing.GENERATORS)
@pytest.mark.parametrize("version", gate_subset(testing.CMAKE_VERSIONS, GATE_CMAKE))
def test_targets_give_deployable_runpath(
    request: pytest.FixtureRequest, version: str, generator: str
) -> None:
    """DT_RUNPATH $ORIGIN:$ORIGIN/../lib (installed: exactly), in-place run, shadowing, install."""
    detail = result(suite_for(request, version), f"targets {version} {generator}").detail
    assert "installed $ORIGIN:$ORIGIN/../lib;" in detail


def test_shadow_check_fails_for_a_dt_rpath_app(suite: Suite) -> None:
    result(suite, "shadow control (DT_RPATH)")


def test_installed_apps_run_moved_with_the_wheel_uninstalled(suite: Suite) -> None:
    detail = result(suite, "relocation (wheel uninstalled)").detail
    assert detail.startswith(f"{2 * len(GATE_CMAKE) * len(testing.GENERATORS)} moved apps")
    assert "grafted" in detail  # auditwheel grafted libbz2; the install carried it along


def test_each_component_links_only_its_dependencies(suite: Suite) -> None:
    result(suite, "each component alone")


def test_every_public_header_compiles_alone(suite: Suite) -> None:
    result(suite, "headers")


@pytest.mark.matrix
@pytest.mark.parametrize(
    "version",
    gate_subset(
        testing.OLD_CMAKE_VERSIONS, [v for v in testing.OLD_CMAKE_VERSIONS if v in GATE_CMAKE]
    ),
)
def test_variables_route_each_variable_necessary(
    request: pytest.FixtureRequest, version: str
) -> None:
    detail = result(suite_for(request, version), f"variables {version}").detail
    assert "drop INCLUDE_DIRS: compile error" in detail
    assert "TOYSDK_API_VERSION" in detail  # dropping the definitions hits the header's #error
    assert "needs C++17" in detail  # dropping the standard hits the C++17 check


def test_good_citizen(suite: Suite) -> None:
    result(suite, "good citizen")


def test_pkg_config_files_build_each_component(suite: Suite) -> None:
    detail = result(suite, "pkg-config").detail
    assert "each and all together and the package's toysdk.pc, as given and Meson-style" in detail
    assert "pkg-config 1." in detail and "pkg-config 3." in detail  # Debian's and PyPI's


def test_discovery_entry_points_lead_to_the_sdk(suite: Suite) -> None:
    detail = result(suite, "discovery entry points (cmake.root, cmake.prefix, pkg_config)").detail
    assert "cmake.root toysdk -> toysdk" in detail
    assert "pkg_config toysdk -> toysdk/lib/pkgconfig" in detail


def test_configure_runs_no_python(suite: Suite) -> None:
    result(suite, "no python while configuring")


# toysdk's own probe: the registry shows whether the registration-only plugin was retained --


def probe(suite: Suite, name: str, version: str, *args: str) -> str:
    ws = suite.ws
    tool = ws.tool(version)
    build = ws.root / "toysdk-app" / name
    ws.configure(tool, "Ninja", APP, build, *args)
    ws.build(tool, build)
    return testing.run([build / "app"], env=ws.env(tool)).stdout


def test_runtime_only_app_carries_no_plugin(suite: Suite) -> None:
    assert "plugins=0 toy_plugin=0" in probe(suite, "core", "3.31.10", "-DTOYSDK_LINK=core")


@pytest.mark.parametrize("version", ["3.24.3", "3.31.10"])
def test_plugin_target_registers_through_retention(suite: Suite, version: str) -> None:
    out = probe(suite, f"plugin-{version}", version, "-DTOYSDK_LINK=core;plugin;extra")
    assert "plugins=1 toy_plugin=1" in out
    assert "compressed=" in out and "compressed=0" not in out  # grafted bzip2 works


def test_variables_route_retains_the_plugin_on_old_cmake(suite: Suite) -> None:
    out = probe(suite, "variables", "3.24.3", "-DUSE_VARIABLES=ON")
    assert "plugins=1 toy_plugin=1" in out and "compressed=" in out


def test_verify_cli_quick_writes_nothing_where_it_runs(
    toysdk_wheel_for_consumers: Path, tmp_path: Path
) -> None:
    """On a terminal, from an empty directory, no --work and no --cmake-cache: progress with a
    bar on stderr, the report on stdout; the caller's directory stays empty, the temporary
    work directory is gone, and the CMake venvs come from $XDG_CACHE_HOME/etpkg."""
    caller, tmp, home, xdg = (tmp_path / d for d in ("caller", "tmp", "home", "xdg"))
    for d in (caller, tmp, home, xdg / "etpkg"):
        d.mkdir(parents=True)
    (xdg / "etpkg" / "cmake-venvs").symlink_to(CMAKE_CACHE)  # the venvs the suite already made
    run_env = dict(env(), TMPDIR=str(tmp), HOME=str(home), XDG_CACHE_HOME=str(xdg))
    run_env.pop("ETPKG_CACHE_DIR", None)
    argv: list[str | Path] = [sys.executable, "-m", "etpkg", "verify", toysdk_wheel_for_consumers]
    status, out, seen = run_on_tty([*argv, "--quick"], cwd=caller, env=run_env)
    assert status == 0, out + seen
    assert "checks passed for toysdk 0.3.1" in out and "FAIL" not in out
    assert "etpkg verify: installing the wheel in a fresh venv..." in seen, repr(seen[:300])
    assert re.search(r"etpkg verify: \[#*\.*\] \d+/\d+ targets", seen), repr(seen)
    assert list(caller.iterdir()) == [] and list(tmp.iterdir()) == []
    assert not (home / ".cache").exists()  # XDG_CACHE_HOME was set

"""Real consumers beyond CMake, each built from the INSTALLED wheel and run:

- a scikit-build-core project (a nanobind extension, tests/ecosystem/skbuild_probe) that does
  find_package(<pkg> REQUIRED COMPONENTS ...) with no path: scikit-build-core finds the SDK by
  the wheel's cmake.root / cmake.prefix entry points (site-packages search is off);
- a plain Makefile app whose flags come from `python -m pkgconf` (the pkgconf PyPI package finds
  the .pc files by the wheel's pkg_config entry point);
- a Meson app, dependency('<module>') with PKG_CONFIG_PATH from `python -m <pkg> --pkg-config-path`,
  and the README's route with no path: PKG_CONFIG=pkgconf-pypi, a system module beside (the
  control: the `pkg-config` the pkgconf package puts first on the venv's PATH finds nothing);
- the README's scikit-build-core example, built from the README's own text, imported after
  pip install with nothing else set.

One venv per SDK per session (etpkg.testing's Workspace: `pip install --no-deps` of the wheel under
a path with a space, plus the pinned tools of tests/ecosystem/requirements.txt). Generic over
the SDK: toysdk proves the registration-only plugin registers; etrt runs the MLP and matches
eager PyTorch (<= 1e-5). The Conan consumer is test_package (`conan create .`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from etpkg import testing
from etpkg_fixtures import REPO_ROOT
from suites import gate_subset

# The wheels come from conftest.py; the MLP from the etrt consumer suite.
from test_consumer_etrt import Mlp, mlp  # noqa: F401

pytestmark = pytest.mark.slow

ECOSYSTEM = REPO_ROOT / "tests" / "ecosystem"
CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
# From the top-level requirements.txt; the rest from tests/ecosystem/requirements.txt.
SHARED_PINS = ("cmake", "ninja", "numpy")


def read_pins(path: Path) -> dict[str, str]:
    """name -> "name==version" for every exact pin of a requirements file."""
    lines = (ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines())
    return {ln.split("==")[0].lower(): ln for ln in lines if "==" in ln}


def pins() -> list[str]:
    """The consumer venv's tools: the ecosystem pins plus cmake, ninja, numpy from the top."""
    top = read_pins(REPO_ROOT / "requirements.txt")
    return [top[name] for name in SHARED_PINS] + list(
        read_pins(ECOSYSTEM / "requirements.txt").values()
    )


# ----------------------------------------------------------------------------- per SDK


@dataclass(frozen=True)
class Flavor:
    """What the consumers of one SDK link, build and expect."""

    name: str  # Python package = find_package name = target namespace
    components: tuple[str, ...]
    pc_modules: tuple[str, ...]
    app_source: Path  # the C++ app the Makefile and Meson projects build
    app_defines: tuple[str, ...] = ()


FLAVORS = {
    "toysdk": Flavor(
        "toysdk",
        ("core", "plugin", "extra"),
        ("toysdk-core", "toysdk-plugin", "toysdk-extra"),
        REPO_ROOT / "tests" / "consumer" / "toysdk_app" / "main.cpp",
        ("-DTOYSDK_APP_EXTRA",),
    ),
    "etrt": Flavor(
        "etrt",
        ("runtime", "kernels_optimized"),
        ("etrt-runtime", "etrt-kernels_optimized"),
        REPO_ROOT / "tools" / "etrt_runner.cpp",
    ),
}


@dataclass
class Consumer:
    """One SDK wheel installed in a venv that also holds the consumers' build tools."""

    flavor: Flavor
    ws: testing.Workspace
    mlp: Mlp | None  # etrt only
    # testing.check_entry_points' result with the wheel alone in the venv (before the tools).
    bare_entry_points: str | testing.CheckFailed = ""
    extension_log: str = ""
    builds: dict[str, Path] = field(default_factory=dict)

    @property
    def python(self) -> Path:
        return self.ws.venv / "bin" / "python"

    @property
    def work(self) -> Path:
        return self.ws.root / "ecosystem"

    def env(self) -> dict[str, str]:
        """An activated consumer venv: its bin first; no PYTHONPATH, CMAKE_* or PKG_CONFIG_*."""
        env = self.ws.env(self.ws.tool(testing.MODERN[0]))
        env = {k: v for k, v in env.items() if not k.startswith("PKG_CONFIG")}
        env["PATH"] = f"{self.ws.venv / 'bin'}:{env['PATH']}"
        return env

    def run(self, argv: list[str | Path], **kw: object) -> subprocess.CompletedProcess[str]:
        return testing.run(argv, env=self.env(), cwd=self.work, **kw)  # type: ignore[arg-type]

    def pip(self, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run([sys.executable, "-m", "pip", "--python", self.python, *args], check=check)

    def wheel_lib_files(self) -> set[str]:
        return self.ws.sdk.files(list(self.flavor.components))

    # scikit-build-core ---------------------------------------------------------
    def build_extension(self, *, check: bool = True) -> subprocess.CompletedProcess[str]:
        f = self.flavor
        return self.pip(
            "install",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "--force-reinstall",
            "-v",
            ECOSYSTEM / "skbuild_probe",
            f"--config-settings=cmake.define.PROBE_SDK={f.name}",
            f"--config-settings=cmake.define.PROBE_COMPONENTS={';'.join(f.components)}",
            check=check,
        )

    def extension(self) -> Path:
        """The probe extension, built once per session; its path in site-packages."""
        if not self.extension_log:
            proc = self.build_extension()
            self.extension_log = proc.stdout + proc.stderr
        found = sorted(self.ws.site.glob("ecosystem_probe*.so"))
        assert len(found) == 1, f"expected one ecosystem_probe extension, found {found}"
        return found[0]

    # make / meson ----------------------------------------------------------------
    def project(self, name: str, template: Path) -> Path:
        """A copy of a consumer project with the flavor's app as main.cpp (under the space)."""
        src = self.work / name
        if src.exists():
            shutil.rmtree(src)
        shutil.copytree(template, src)
        shutil.copy2(self.flavor.app_source, src / "main.cpp")
        return src

    def make_app(self) -> Path:
        if "make" not in self.builds:
            src = self.project("make-app", ECOSYSTEM / "make_app")
            f = self.flavor
            self.run(
                [
                    "make",
                    "-C",
                    src,
                    f"PYTHON={self.python}",
                    f"MODULES={' '.join(f.pc_modules)}",
                    f"CPPFLAGS={' '.join(f.app_defines)}",
                    "CXXFLAGS=-O2",
                    # As Meson links by default (b_asneeded): retention must keep the plugins.
                    "LDFLAGS=-Wl,--as-needed",
                ]
            )
            self.builds["make"] = src / "app"
        return self.builds["make"]

    def meson_app(
        self, route: str = "pkg-config-path", system: tuple[str, ...] = (), check: bool = True
    ) -> tuple[Path, subprocess.CompletedProcess[str]]:
        """Meson's setup and compile of the app: with PKG_CONFIG_PATH from the package's CLI
        ("pkg-config-path"), with PKG_CONFIG=pkgconf-pypi and no path ("pkgconf-pypi"), or
        plainly in the activated venv ("plain")."""
        src = self.project(f"meson-app-{route}", ECOSYSTEM / "meson_app")
        f = self.flavor
        env = self.env()
        if route == "pkg-config-path":
            pc_path = self.run([self.python, "-m", f.name, "--pkg-config-path"]).stdout.strip()
            env["PKG_CONFIG_PATH"] = pc_path
        elif route == "pkgconf-pypi":
            env["PKG_CONFIG"] = "pkgconf-pypi"  # as the README writes it: found on PATH
        build = src / "build"
        setup = testing.run(
            [
                self.ws.venv / "bin" / "meson",
                "setup",
                build,
                f"-Dmodules={','.join(f.pc_modules)}",
                f"-Dsystem_modules={','.join(system)}",
                f"-Ddefines={','.join(f.app_defines)}",
                "--buildtype=release",
            ],
            cwd=src,
            env=env,
            check=check,
        )
        if setup.returncode == 0:
            testing.run([self.ws.venv / "bin" / "meson", "compile", "-C", build], cwd=src, env=env)
        return build / "app", setup

    # checks ---------------------------------------------------------------------
    def resolved(self, app: Path) -> dict[str, Path]:
        """file name -> path the loader takes for each of the app's wheel libraries (ldd)."""
        out = self.run(["ldd", app]).stdout
        found = {}
        for line in out.splitlines():
            match = re.match(r"\s*(\S+) => (.+) \(0x[0-9a-f]+\)$", line)
            if match and match.group(1) in self.wheel_lib_files():
                found[match.group(1)] = Path(match.group(2))
        return found

    def expect_links_wheel_libraries(self, app: Path) -> str:
        """DT_NEEDED names every linked component's file, each resolves into the wheel's lib/."""
        info = testing.read_elf(app)
        needed = set(info.needed) & self.wheel_lib_files()
        assert needed == self.wheel_lib_files(), (
            f"{app.name} needs {sorted(needed)}, expected {sorted(self.wheel_lib_files())} "
            "(a registration-only library missing here lost its retention)"
        )
        assert info.rpath is None, f"{app} has DT_RPATH {info.rpath}"
        resolved = self.resolved(app)
        wrong = {
            n: p for n, p in resolved.items() if p.resolve() != (self.ws.lib_dir / n).resolve()
        }
        assert resolved.keys() == needed and not wrong, f"resolved {resolved}"
        return f"needs {sorted(needed)}, all from the wheel's lib/"

    def expect_app_runs(self, app: Path, tag: str) -> str:
        """The flavor's proof that the SDK works in this app."""
        if self.flavor.name == "toysdk":
            out = self.run([app]).stdout
            assert "api=3 plugins=1 toy_plugin=1" in out, out
            assert re.search(r"compressed=[1-9]", out), out
            return out.strip().replace("\n", " ")
        assert self.mlp is not None
        program, inputs, expected, _ = self.mlp
        out_path = self.work / f"{tag}-out.bin"
        proc = self.run([app, program, "--inputs", inputs, "--outputs", out_path], check=False)
        assert proc.returncode == 0, proc.stderr
        got = np.fromfile(out_path, dtype=np.float32)
        assert got.size == expected.size
        diff = float(np.max(np.abs(got.reshape(expected.shape) - expected)))
        assert diff <= 1e-5, f"max abs diff {diff}"
        return f"MLP max abs diff {diff:.2g}"

    @contextmanager
    def without_entry_points(self) -> Iterator[None]:
        """The installed wheel without its entry_points.txt; reinstalled after."""
        eps = sorted(self.ws.site.glob(f"{self.ws.sdk.name}-*.dist-info/entry_points.txt"))
        assert len(eps) == 1, eps
        eps[0].unlink()
        try:
            yield
        finally:
            self.ws.reinstall()


FLAVOR_NAMES = list(FLAVORS)


@pytest.fixture(scope="session", params=FLAVOR_NAMES)
def consumer(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Consumer:
    flavor = FLAVORS[request.param]
    wheel = request.getfixturevalue(
        "toysdk_wheel_for_consumers" if flavor.name == "toysdk" else "etrt_wheel"
    )
    ws = testing.prepare(wheel, tmp_path_factory.mktemp(f"ecosystem-{flavor.name}"), CMAKE_CACHE)
    mlp_data = request.getfixturevalue("mlp") if flavor.name == "etrt" else None
    c = Consumer(flavor, ws, mlp_data)
    c.work.mkdir(parents=True, exist_ok=True)
    try:
        c.bare_entry_points = testing.check_entry_points(ws)
    except testing.CheckFailed as exc:
        c.bare_entry_points = exc
    c.pip("install", "--quiet", *pins())
    return c


def timed(label: str, fn: Callable[[], str]) -> str:
    start = time.monotonic()
    detail = fn()
    print(f"{label}: {time.monotonic() - start:.1f} s: {detail}", file=sys.stderr)
    return detail


# ----------------------------------------------------------------------------- entry points


def test_entry_points_import_and_lead_to_the_sdk(consumer: Consumer) -> None:
    """In a venv holding only the wheel (the check ran before the tools were installed)."""
    if isinstance(consumer.bare_entry_points, testing.CheckFailed):
        raise consumer.bare_entry_points
    assert consumer.bare_entry_points.count(" -> ") == len(testing.ENTRY_POINT_GROUPS)
    print(consumer.bare_entry_points, file=sys.stderr)


# ----------------------------------------------------------------------------- scikit-build-core

# The gate builds etrt's extension (and the README's); toysdk's, the same generic project on the
# fixture SDK, runs with `ci/long.sh matrix`.
SKBUILD_FLAVORS = pytest.mark.parametrize(
    "consumer", gate_subset(FLAVOR_NAMES, ["etrt"]), indirect=True
)



@SKBUILD_FLAVORS
@pytest.mark.matrix
def test_scikit_build_finds_sdk_by_entry_points_only(consumer: Consumer) -> None:
    timed("scikit-build-core build", lambda: str(consumer.extension()))
    name, version = consumer.ws.sdk.name, consumer.ws.sdk.cmake_version
    cmake_dir = consumer.ws.pkg_root / "lib" / "cmake" / consumer.ws.sdk.cmake_file_name
    assert f"-- probe: {name} {version} from {cmake_dir}" in consumer.extension_log


@SKBUILD_FLAVORS
@pytest.mark.matrix
def test_scikit_build_extension_links_the_wheel_libraries(consumer: Consumer) -> None:
    ext = consumer.extension()
    info = testing.read_elf(ext)
    assert info.rpath is None and info.runpath is not None
    # Installed beside the SDK's package: its lib/ through $ORIGIN, no build path left.
    assert f"$ORIGIN/{consumer.flavor.name}/lib" in info.runpath
    assert not [p for p in info.runpath if p.startswith("/")], info.runpath
    consumer.expect_links_wheel_libraries(ext)


@SKBUILD_FLAVORS
@pytest.mark.matrix
def test_scikit_build_extension_runs(consumer: Consumer) -> None:
    consumer.extension()
    driver = ECOSYSTEM / "drivers" / f"{consumer.flavor.name}_probe.py"
    if consumer.flavor.name == "toysdk":
        seen = json.loads(consumer.run([consumer.python, driver]).stdout)
        assert (seen["api"], seen["plugins"], seen["toy_plugin"]) == (3, 1, True), seen
        assert seen["compressed"] > 0
    else:
        assert consumer.mlp is not None
        program, inputs, expected, ops = consumer.mlp
        out = consumer.work / "extension-out.npy"
        proc = consumer.run([consumer.python, driver, program, inputs, out], check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        seen = json.loads(proc.stdout)
        got = np.load(out)
        assert got.shape == expected.shape
        assert float(np.max(np.abs(got - expected))) <= 1e-5
        # One registry: every operator of the program, each registered once.
        assert set(ops) <= set(seen["kernels"]), sorted(set(ops) - set(seen["kernels"]))
        assert len(seen["kernels"]) == len(set(seen["kernels"]))
    loaded = {Path(p).name: Path(p) for p in seen["loaded"]}
    for lib in consumer.wheel_lib_files():
        assert lib in loaded, f"{lib} not loaded: {sorted(loaded)}"
        assert loaded[lib].resolve() == (consumer.ws.lib_dir / lib).resolve()


def test_without_entry_points_nothing_finds_the_sdk(consumer: Consumer) -> None:
    """The control: strip entry_points.txt and scikit-build-core and pkgconf both fail."""
    module = consumer.flavor.pc_modules[0]
    with consumer.without_entry_points():
        proc = consumer.build_extension(check=False)
        assert proc.returncode != 0
        assert f'provided by "{consumer.ws.sdk.cmake_file_name}"' in proc.stdout + proc.stderr
        pc = consumer.run([consumer.python, "-m", "pkgconf", "--cflags", module], check=False)
        assert pc.returncode != 0 and module in pc.stdout + pc.stderr
    # Restored: found again.
    version = consumer.run([consumer.python, "-m", "pkgconf", "--modversion", module]).stdout
    assert version.strip() == consumer.ws.sdk.version


# ----------------------------------------------------------------------------- Makefile + pkgconf


def test_makefile_app_via_pkgconf_entry_points(consumer: Consumer) -> None:
    app = timed("make", lambda: str(consumer.make_app()))
    detail = consumer.expect_links_wheel_libraries(Path(app))
    info = testing.read_elf(Path(app))
    # The ones the Makefile adds: one per -L dir (the SDK's lib/, and <dist>.libs if linked).
    assert info.runpath and {Path(p).resolve() for p in info.runpath} <= {
        d.resolve() for d in consumer.ws.wheel_lib_dirs
    }, info.runpath
    print(detail, consumer.expect_app_runs(Path(app), "make"), file=sys.stderr)


# ----------------------------------------------------------------------------- Meson


def test_meson_app_via_pkg_config_path(consumer: Consumer) -> None:
    app, setup = consumer.meson_app()
    for module in consumer.flavor.pc_modules:
        assert f"Run-time dependency {module} found: YES" in setup.stdout
    consumer.expect_links_wheel_libraries(app)
    print(consumer.expect_app_runs(app, "meson"), file=sys.stderr)


def system_module() -> str:
    """A module the system's pkg-config knows (flatbuffers, which etrt's build installs, if
    there): what a plain Meson project also depends on."""
    listed = subprocess.run(
        ["pkg-config", "--list-all"], capture_output=True, text=True, check=True
    ).stdout
    modules = [line.split()[0] for line in listed.splitlines() if line.strip()]
    assert modules, "the system pkg-config knows no module at all"
    return "flatbuffers" if "flatbuffers" in modules else sorted(modules)[0]


def test_meson_finds_the_sdk_through_pkgconf_pypi_with_no_path(consumer: Consumer) -> None:
    """README: PKG_CONFIG=pkgconf-pypi meson setup build; the wheel's modules and a system
    one in the same project, no PKG_CONFIG_PATH anywhere."""
    # What the README tells Meson users to run (meson_app adds the project's options).
    assert readme_examples()["meson"].startswith("PKG_CONFIG=pkgconf-pypi meson setup build")
    system = system_module()
    app, setup = consumer.meson_app("pkgconf-pypi", (system,))
    for module in (*consumer.flavor.pc_modules, system):
        assert f"Run-time dependency {module} found: YES" in setup.stdout, setup.stdout
    consumer.expect_links_wheel_libraries(app)
    print(consumer.expect_app_runs(app, "meson-pkgconf-pypi"), file=sys.stderr)
    # The control: a plain `meson setup` takes the pkgconf package's own pkg-config, first on
    # the venv's PATH, which finds neither the wheel's modules nor the system's.
    shim = consumer.run(["sh", "-c", "command -v pkg-config"]).stdout.strip()
    assert Path(shim).parent == consumer.ws.venv / "bin", shim
    _, plain = consumer.meson_app("plain", (system,), check=False)
    assert plain.returncode != 0
    first = re.escape(consumer.flavor.pc_modules[0])
    log = plain.stdout + plain.stderr
    assert re.search(rf'Dependency "?{first}"? not found', log), log


# ----------------------------------------------------------------------------- README route

README_EXAMPLE = re.compile(r"<!-- readme-example: (\S+) -->\n```\w*\n(.*?)```", re.S)


def readme_examples() -> dict[str, str]:
    """name -> text of each block the README marks as an example."""
    return dict(README_EXAMPLE.findall((REPO_ROOT / "README.md").read_text()))


# The README's example is etrt's; toysdk's probe extension covers the same route.
@pytest.mark.parametrize("consumer", ["etrt"], indirect=True)
def test_readme_scikit_build_extension_imports_after_pip_install(consumer: Consumer) -> None:
    """The README's extension, written out from the README itself, built the README's way
    (pip install --no-build-isolation in the venv holding the wheel) and imported in a fresh
    process with nothing set: its runpath reaches the SDK from site-packages."""
    examples = readme_examples()
    project = consumer.work / "readme"
    if project.exists():
        shutil.rmtree(project)
    for name, text in examples.items():
        if name.startswith("count_outputs/"):
            path = project / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    install = examples["count_outputs-install"].splitlines()
    assert install[1].startswith("pip install --no-build-isolation ./count_outputs")
    proc = consumer.pip(
        "install", "--no-build-isolation", "--no-deps", "--no-index", project / "count_outputs"
    )
    assert "Successfully installed count-outputs" in proc.stdout, proc.stdout[-2000:]
    (ext,) = sorted(consumer.ws.site.glob("count_outputs*.so"))
    info = testing.read_elf(ext)
    assert info.rpath is None and "$ORIGIN/etrt/lib" in (info.runpath or ())
    assert not [p for p in info.runpath or () if p.startswith("/")], info.runpath
    assert consumer.mlp is not None
    program = consumer.mlp[0]
    call = f"import count_outputs; print(count_outputs.count_outputs({str(program)!r}))"
    out = consumer.run([consumer.python, "-c", call])
    assert out.stdout.strip() == "1", out.stdout + out.stderr


@pytest.mark.parametrize("consumer", ["etrt"], indirect=True)
def test_readme_meson_build_builds_and_runs_the_quick_start_app(consumer: Consumer) -> None:
    """The README's meson.build beside the quick start's app.cpp, built by the README's two
    Meson commands as written (pkgconf-pypi, no path), in the venv holding the wheel."""
    examples = readme_examples()
    src = consumer.work / "readme-meson"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir()
    (src / "meson.build").write_text(examples["meson_app/meson.build"])
    (src / "app.cpp").write_text(examples["quickstart/app/app.cpp"])
    testing.run(["bash", "-euo", "pipefail", "-c", examples["meson"]], cwd=src, env=consumer.env())
    import etrt.examples

    program = etrt.export(*etrt.examples.mlp()).save(src / "mlp.etrt")  # the quick start's
    out = consumer.run([src / "build" / "app", program]).stdout
    assert len(out.split()) == 10 and all(float(v) == float(v) for v in out.split()), out

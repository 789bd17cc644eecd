"""The aarch64 etrt wheel that ci/build-aarch64.sh cross-builds on this x86_64 machine
(dist/aarch64/, or $ETRT_AARCH64_WHEEL): its tag and grafted libraries, the README's C++ app
built against it with Debian's cross compiler and run under qemu-user on a program exported
here, matching eager PyTorch computed here, and etpkg verify's consumer suite under qemu; then
Debian's arm64 CPython (its .deb files unpacked, not installed) with numpy's aarch64 wheel
imports etrt under qemu and runs programs exported here (portable kernels and XNNPACK).

A long suite (`bash ci/long.sh cross`): the wheel takes the cross build, and qemu runs
every consumer program instruction by instruction. Without the wheel or the tools it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from etpkg._internal.verify.runner import elf_arch
from etpkg_fixtures import REPO_ROOT, env
from models import make

pytestmark = [pytest.mark.long, pytest.mark.cross]

EXAMPLE = re.compile(r"<!-- readme-example: (\S+) -->\n```\w*\n(.*?)```", re.S)
TOOLS = {"aarch64-linux-gnu-g++": "g++-aarch64-linux-gnu", "qemu-aarch64": "qemu-user"}
SYSROOT = "/usr/aarch64-linux-gnu"  # Debian's libc6-arm64-cross: qemu's -L


@pytest.fixture(scope="module")
def wheel() -> Path:
    missing = [pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None]
    assert not missing, f"apt-get install {' '.join(missing)} (ci/setup.sh installs them)"
    given = os.environ.get("ETRT_AARCH64_WHEEL")
    found = [Path(given)] if given else sorted((REPO_ROOT / "dist" / "aarch64").glob("etrt-*.whl"))
    assert found, "no aarch64 etrt wheel: bash ci/build-aarch64.sh makes dist/aarch64/etrt-*.whl"
    return found[-1]


@pytest.fixture(scope="module")
def site(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed as pip installs another platform's wheel: --platform --target."""
    target = tmp_path_factory.mktemp("aarch64-site")
    platform = wheel.name.rsplit("-", 1)[1].removesuffix(".whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--only-binary=:all:", "--platform", platform, "--target", str(target), str(wheel)],
        check=True,
    )  # fmt: skip
    return target


def _run(argv: list[str | Path], cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env(), capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, (
        f"{argv[:3]}: rc={proc.returncode}\n{proc.stdout[-3000:]}\n" + (proc.stderr[-3000:])
    )
    return proc.stdout


def test_aarch64_wheel_is_tagged_for_aarch64_and_grafts_the_arm64_libraries(
    wheel: Path, tmp_path: Path
) -> None:
    name = re.fullmatch(r"etrt-[\d.]+-py3-none-manylinux_(\d+)_(\d+)_aarch64\.whl", wheel.name)
    assert name, wheel.name
    show = " ".join(_run([sys.executable, "-m", "auditwheel", "show", wheel]).split())
    # auditwheel names the newest tag the files allow: the wheel's, or (a wheel tagged with a
    # target, ci/build-manylinux_2_28.sh armv8: 2_28) an older one that the tag then covers.
    allowed = re.search(r'platform tag: "manylinux_(\d+)_(\d+)_aarch64"', show)
    assert allowed, show
    assert (int(allowed[1]), int(allowed[2])) <= (int(name[1]), int(name[2])), show
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
    elves = {
        p.relative_to(tmp_path).as_posix(): elf_arch(p)
        for p in tmp_path.rglob("*")
        if p.is_file() and elf_arch(p) is not None
    }
    assert set(elves.values()) == {"aarch64"}, elves
    grafted = sorted(Path(k).name.split("-")[0] for k in elves if k.startswith("etrt.libs/"))
    assert grafted == ["libXNNPACK", "libcpuinfo", "libpthreadpool"], elves


def test_readme_app_cross_built_runs_under_qemu_and_matches_eager_pytorch(
    site: Path, tmp_path: Path
) -> None:
    from etrt import export
    from etrt.examples import mlp

    model, example = mlp()
    export(model, example).save(tmp_path / "mlp.etrt")
    with torch.no_grad():
        expected = model(torch.full((1, 784), 0.5)).flatten().tolist()

    blocks = dict(EXAMPLE.findall((REPO_ROOT / "README.md").read_text()))
    app = tmp_path / "app"
    app.mkdir()
    for name in ("app.cpp", "CMakeLists.txt"):
        (app / name).write_text(blocks[f"quickstart/app/{name}"])
    toolchain = tmp_path / "aarch64.cmake"
    toolchain.write_text(
        "set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR aarch64)\n"
        "set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)\n"
    )
    build = tmp_path / "build"
    _run(["cmake", "-S", app, "-B", build, "-G", "Ninja", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
          f"-DCMAKE_PREFIX_PATH={site / 'etrt'}"])  # fmt: skip
    _run(["cmake", "--build", build])
    _run(["cmake", "--install", build, "--prefix", tmp_path / "deploy"])
    for binary in (build / "app", tmp_path / "deploy" / "bin" / "app"):
        assert elf_arch(binary) == "aarch64"
        out = _run(["qemu-aarch64", "-L", SYSROOT, binary, tmp_path / "mlp.etrt"])
        got = [float(v) for v in out.split()]
        assert got == pytest.approx(expected, rel=1e-4, abs=1e-5), (got, expected)


def test_etpkg_verify_passes_for_the_aarch64_wheel_under_qemu(wheel: Path, tmp_path: Path) -> None:
    work = tmp_path / "verify"
    out = _run([sys.executable, "-m", "etpkg", "verify", "--quick", "--work", work, wheel])
    passed = re.search(r"(\d+)/(\d+) checks passed", out)
    assert passed is not None and passed.group(1) == passed.group(2), out
    apps = [p for p in work.rglob("app*") if p.is_file() and elf_arch(p) is not None]
    assert apps and {elf_arch(p) for p in apps} == {"aarch64"}, apps


# Debian's arm64 CPython 3.11 and the libraries its ctypes, zlib and ssl modules load.
PYTHON_DEBS = (
    "libc6", "libgcc-s1", "libstdc++6", "python3.11-minimal", "libpython3.11-minimal",
    "libpython3.11-stdlib", "libffi8", "zlib1g", "libexpat1", "libbz2-1.0", "liblzma5", "libssl3",
)  # fmt: skip
ARM64_PY = REPO_ROOT / "build" / "py-arm64"  # kept between runs: the downloads are the slow part

ARM64_SCRIPT = """
import sys, numpy as np, etrt
for name in sys.argv[1:]:
    module = etrt.load(name + ".etrt")
    count = len(module.method("forward").inputs)
    outs = module.forward(*[np.load(name + f".in{i}.npy") for i in range(count)])
    np.save(name + ".out.npy", outs[0])
print("etrt", etrt.__version__, "numpy", np.__version__)
"""


def _arm64_python() -> tuple[Path, Path]:
    """(root, site): Debian's arm64 python3.11 unpacked in root; numpy and flatbuffers for
    aarch64 cp311 in site."""
    root, debs, wheels = ARM64_PY / "root", ARM64_PY / "debs", ARM64_PY / "wheels"
    if not (root / "usr" / "bin" / "python3.11").is_file():
        debs.mkdir(parents=True, exist_ok=True)
        names = [f"{d}:arm64" for d in PYTHON_DEBS]
        proc = subprocess.run(["apt-get", "download", *names], cwd=debs, capture_output=True,
                              text=True, check=False)  # fmt: skip
        assert proc.returncode == 0, (
            f"apt-get download failed (dpkg --add-architecture arm64 && apt-get update): "
            f"{proc.stderr[-1500:]}"
        )
        for deb in sorted(debs.glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
    if not list(wheels.glob("numpy-*.whl")):
        from importlib.metadata import version

        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
             "--platform", "manylinux_2_28_aarch64", "--python-version", "3.11",
             "--implementation", "cp", "--abi", "cp311", "-d", str(wheels),
             f"numpy=={version('numpy')}", f"flatbuffers=={version('flatbuffers')}"],
            check=True,
        )  # fmt: skip
    return root, wheels


def test_arm64_python_under_qemu_imports_etrt_and_matches_eager_pytorch(
    wheel: Path, tmp_path: Path
) -> None:
    import numpy as np
    from etrt import export
    from etrt.examples import cnn, mlp

    root, wheels = _arm64_python()
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--only-binary=:all:", "--platform", "manylinux_2_28_aarch64", "--platform",
         wheel.name.rsplit("-", 1)[1].removesuffix(".whl"), "--python-version", "3.11",
         "--implementation", "cp", "--abi", "cp311", "--target", str(site),
         str(wheel), *map(str, sorted(wheels.glob("*.whl")))],
        check=True,
    )  # fmt: skip
    expected: dict[str, np.ndarray] = {}
    cases = {"mlp": (mlp, None), "cnn": (cnn, None), "mlp_xnnpack": (mlp, "xnnpack"),
             # Every XNNPACK node type, all delegated: the grafted XNNPACK's aarch64 kernels.
             "mobile_xnnpack": (lambda: make("mobile", 2), "xnnpack-all")}  # fmt: skip
    for name, (factory, backend) in cases.items():
        model, example = factory()
        export(model, example, backend=backend).save(tmp_path / f"{name}.etrt")
        torch.manual_seed(1)
        inputs = [torch.randn_like(t) for t in example]
        for i, t in enumerate(inputs):
            np.save(tmp_path / f"{name}.in{i}.npy", t.numpy())
        with torch.no_grad():
            expected[name] = model(*inputs).numpy()
    (tmp_path / "run.py").write_text(ARM64_SCRIPT)
    proc = subprocess.run(
        ["qemu-aarch64", "-L", str(root), str(root / "usr" / "bin" / "python3.11"),
         "run.py", *cases],
        cwd=tmp_path, capture_output=True, text=True, timeout=1200, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "PYTHONNOUSERSITE": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.startswith("etrt "), proc.stdout
    for name, want in expected.items():
        got = np.load(tmp_path / f"{name}.out.npy")
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)

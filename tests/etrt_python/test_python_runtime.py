"""etrt from Python through the installed wheel's own shared libraries (the Python path).

The wheel (conftest's `etrt_wheel`) is pip-installed with --no-deps into a fresh venv that sees
the project venv's numpy and torch through a .pth file (a venv made with
--system-site-packages from .venv's python would see the base interpreter's packages, not
.venv's). Every check runs a script in that venv, from a directory outside the repository,
with PYTHONPATH and ETRT_LIBRARY_DIR cleared: what it imports is the installed wheel.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from etpkg_fixtures import REPO_ROOT
from models import MODEL_NAMES

pytestmark = pytest.mark.slow

MODELS = MODEL_NAMES
BACKENDS = ("portable", "xnnpack")
REGISTRY_APP = REPO_ROOT / "tests" / "apps" / "python_registry"


def _clean_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "VIRTUAL_ENV", "ETRT_", "CONAN"))
    }
    env.pop("LD_LIBRARY_PATH", None)
    return env


@dataclass(frozen=True)
class WheelVenv:
    python: Path
    site: Path
    work: Path  # scripts, programs and arrays live here

    @property
    def pkg(self) -> Path:
        return self.site / "etrt"

    def run(
        self, *args: str | Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), *map(str, args)],
            cwd=self.work,
            env=env or _clean_env(),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    def script(self, name: str, code: str) -> Any:
        """Runs `code` in the venv; returns the JSON it prints on its last stdout line."""
        path = self.work / f"script_{name}.py"
        path.write_text(textwrap.dedent(code))
        proc = self.run(path)
        assert proc.returncode == 0, f"{name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["_stderr"] = proc.stderr
        return result


@pytest.fixture(scope="session")
def venv(etrt_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> WheelVenv:
    root = tmp_path_factory.mktemp("pyruntime")
    prefix = root / "wheel venv"  # a space: paths must be quoted everywhere
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", prefix], check=True)
    python = prefix / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # numpy and torch from the project venv, after the venv's own site-packages.
    (site / "zz_project_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            etrt_wheel,
        ],
        check=True,
    )
    work = root / "work"
    work.mkdir()
    shutil.copy(REPO_ROOT / "tests" / "models.py", work / "models.py")
    return WheelVenv(python, site, work)


_MODELS_SCRIPT = """
import json, re
import numpy as np, torch
import etrt
import etrt.runtime
from models import make

result = {"etrt_file": etrt.__file__, "libraries": [str(p) for p in etrt.runtime.library_paths()]}
diffs = {}
for name in %(models)r:
    model, inputs = make(name, 4)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    np.save(f"{name}_input.npy", inputs[0].numpy())
    np.save(f"{name}_expected.npy", expected)
    for backend in %(backends)r:
        program = etrt.export(model, inputs, backend=None if backend == "portable" else backend)
        path = program.save(f"{name}_{backend}.etrt")
        module = etrt.load(path)
        outputs = module.forward(*inputs)
        assert isinstance(outputs, list) and len(outputs) == 1, outputs
        out = outputs[0]
        assert isinstance(out, np.ndarray) and out.shape == expected.shape, out
        diffs[f"{name}-{backend}"] = float(np.max(np.abs(out - expected)))
result["diffs"] = diffs
result["kernels"] = etrt.registered_kernels()
result["backends"] = etrt.registered_backends()
maps = [l.split(None, 5) for l in open("/proc/self/maps").read().split("\\n")]
result["libetrt_mapped"] = sorted({m[5] for m in maps if m and re.search(r"/libetrt\\.so", m[-1])})
print(json.dumps(result))
"""


@pytest.fixture(scope="session")
def models_run(venv: WheelVenv) -> Any:
    """Exports and runs every model with and without XNNPACK in the venv, in one process."""
    return venv.script("models", _MODELS_SCRIPT % {"models": MODELS, "backends": BACKENDS})


def test_python_imports_the_installed_wheel_and_its_libraries(
    venv: WheelVenv, models_run: Any
) -> None:
    assert Path(models_run["etrt_file"]).is_relative_to(venv.pkg)
    libs = [Path(p) for p in models_run["libraries"]]
    assert libs[0] == venv.pkg / "lib" / "libetrt.so"
    assert all(p.parent == venv.pkg / "lib" for p in libs), libs
    names = {p.name for p in libs}
    assert {"libetrt_kernels_optimized.so", "libetrt_backend_xnnpack.so"} <= names, names
    # One copy of the runtime in the process: the wheel's.
    assert models_run["libetrt_mapped"] == [str(venv.pkg / "lib" / "libetrt.so")]
    assert not any(
        f.suffix in (".so", ".pyd") and "cpython" in f.name for f in venv.pkg.rglob("*")
    ), "the binding must stay a py3-none ctypes module, not a compiled extension"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MODELS)
def test_model_through_python_binding_matches_eager(
    models_run: Any, name: str, backend: str
) -> None:
    diff = models_run["diffs"][f"{name}-{backend}"]
    print(f"{name} {backend}: max abs diff {diff:.3g}")
    assert diff <= 1e-5


@pytest.fixture(scope="session")
def registry_app(venv: WheelVenv, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/apps/python_registry built against the installed wheel's CMake package."""
    build = tmp_path_factory.mktemp("registry-app")
    cmake = shutil.which("cmake", path=str(Path(sys.executable).parent)) or "cmake"
    env = _clean_env()
    for cmd in (
        [
            cmake,
            "-S",
            REGISTRY_APP,
            "-B",
            build,
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DCMAKE_PREFIX_PATH={venv.pkg}",
        ],
        [cmake, "--build", build, "-j2"],
    ):
        proc = subprocess.run(
            list(map(str, cmd)), env=env, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, f"{cmd}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return build


def test_one_registry_shared_with_cpp_each_kernel_once(
    venv: WheelVenv, models_run: Any, registry_app: Path
) -> None:
    runner = registry_app / "etrt_runner"
    cpp_kernels = subprocess.run(
        [runner, "--list-kernels"], capture_output=True, text=True, check=True
    ).stdout.split()
    cpp_backends = subprocess.run(
        [runner, "--list-backends"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert cpp_kernels and cpp_backends, "the runner links kernels_optimized and backend_xnnpack"

    # After running programs that need kernels_optimized and backend_xnnpack:
    py_kernels = models_run["kernels"]
    assert len(py_kernels) == len(set(py_kernels)), "a kernel is registered twice"
    assert sorted(py_kernels) == sorted(cpp_kernels)
    assert sorted(models_run["backends"]) == sorted(cpp_backends)
    assert "already registered" not in models_run["_stderr"], models_run["_stderr"]

    # C++ code loaded into the Python process first (it pulls libetrt.so in through its
    # RUNPATH), then the binding: both must see the one registry the components filled.
    probe = registry_app / "libregistry_probe.so"
    got = venv.script(
        "probe",
        f"""
        import ctypes, json, re
        probe = ctypes.CDLL({str(probe)!r})
        probe.probe_kernel_name.restype = ctypes.c_char_p
        probe.probe_num_kernels.restype = ctypes.c_size_t
        probe.probe_num_backends.restype = ctypes.c_size_t
        before = probe.probe_num_kernels()
        import etrt
        py = etrt.registered_kernels()
        cpp = [probe.probe_kernel_name(i).decode() for i in range(probe.probe_num_kernels())]
        maps = open("/proc/self/maps").read().split("\\n")
        mapped = sorted({{l.split(None, 5)[5] for l in maps if re.search(r"/libetrt\\.so", l)}})
        print(json.dumps({{"before": before, "py": py, "cpp": cpp, "mapped": mapped,
                          "cpp_backends": probe.probe_num_backends(),
                          "py_backends": etrt.registered_backends()}}))
        """,
    )
    assert got["before"] == 0, "the runtime alone registers no kernel"
    assert got["cpp"] == got["py"]
    assert sorted(got["py"]) == sorted(cpp_kernels)
    assert got["cpp_backends"] == len(got["py_backends"]) == len(cpp_backends)
    assert got["mapped"] == [str(venv.pkg / "lib" / "libetrt.so")]
    assert "already registered" not in got["_stderr"], got["_stderr"]


def test_matching_numpy_input_is_read_in_place(venv: WheelVenv, models_run: Any) -> None:
    # Bind an array, then change it before execute(): the output follows the change only if
    # the runtime reads the caller's memory. A float64 array (copied) is the control.
    got = venv.script(
        "zero_copy",
        """
        import json
        import numpy as np
        import etrt
        import etrt.runtime
        x = np.load("mlp_input.npy")
        expected = np.load("mlp_expected.npy")
        method = etrt.load("mlp_portable.etrt").method("forward")
        spec = method.inputs[0]

        def bind_then_fill(arr):
            method.set_input(0, arr)
            arr[...] = x
            method.execute()
            return float(np.max(np.abs(method.output(0) - expected)))

        check = lambda dt, shape: method.check_input(0, dt, shape)
        same = etrt.runtime.as_input_array(x, spec, 0, check)
        print(json.dumps({
            "in_place": bind_then_fill(np.zeros(x.shape, np.float32)),
            "copied": bind_then_fill(np.zeros(x.shape, np.float64)),
            "passthrough": same is x,
            "pointer": same.ctypes.data == x.ctypes.data,
        }))
        """,
    )
    assert got["passthrough"] and got["pointer"]
    assert got["in_place"] <= 1e-5, "the runtime did not read the caller's array in place"
    assert got["copied"] > 1e-3, "control: a converted (copied) input must not see later writes"


def test_non_contiguous_and_converted_inputs_work(venv: WheelVenv, models_run: Any) -> None:
    got = venv.script(
        "layouts",
        """
        import json
        import numpy as np, torch
        import etrt
        module = etrt.load("cnn_portable.etrt")
        x = np.load("cnn_input.npy")
        expected = np.load("cnn_expected.npy")
        t = torch.from_numpy(x).permute(3, 2, 1, 0).contiguous().permute(3, 2, 1, 0)
        assert not t.is_contiguous() and torch.equal(t, torch.from_numpy(x))
        strided = np.asfortranarray(x)
        cases = {
            "torch_non_contiguous": t,
            "torch_requires_grad": torch.from_numpy(x.copy()).requires_grad_(),
            "numpy_fortran": strided,
            "numpy_float64": x.astype(np.float64),
        }
        diffs = {k: float(np.abs(module.forward(v)[0] - expected).max()) for k, v in cases.items()}
        out = module.forward(x)[0]
        module.forward(np.zeros_like(x))  # reuses the method's memory
        diffs["earlier_output_unchanged"] = float(np.max(np.abs(out - expected)))
        print(json.dumps({"diffs": diffs}))
        """,
    )
    for case, diff in got["diffs"].items():
        assert diff <= 1e-5, f"{case}: {diff}"


def test_bad_programs_and_inputs_raise_etrt_error_with_runtime_message(
    venv: WheelVenv, models_run: Any
) -> None:
    got = venv.script(
        "errors",
        """
        import json
        import numpy as np
        import etrt
        good = open("mlp_portable.etrt", "rb").read()
        open("garbage.etrt", "wb").write(b"not a program at all" * 10)
        open("truncated.etrt", "wb").write(good[: len(good) // 2])
        out = {}

        def catch(key, fn):
            try:
                fn()
                out[key] = None
            except etrt.EtrtError as e:
                out[key] = [type(e).__name__, getattr(e, "code", ""), str(e)]

        catch("garbage", lambda: etrt.load("garbage.etrt"))
        catch("truncated", lambda: etrt.load("truncated.etrt"))
        catch("missing", lambda: etrt.load("does-not-exist.etrt"))
        m = etrt.load("mlp_portable.etrt")
        catch("method", lambda: m.method("nope"))
        catch("shape", lambda: m.forward(np.zeros((3, 784), np.float32)))
        catch("dtype", lambda: m.forward(np.zeros((4, 784), np.complex64)))
        catch("count", lambda: m.forward())
        print(json.dumps(out))
        """,
    )
    assert got["garbage"][:2] == ["EtrtRuntimeError", "InvalidProgram"], got["garbage"]
    assert "garbage.etrt" in got["garbage"][2]
    assert got["truncated"] is not None and got["truncated"][1] == "InvalidProgram", got[
        "truncated"
    ]
    assert got["missing"][1] == "IoError" and "does-not-exist.etrt" in got["missing"][2]
    assert got["method"][1] == "NotFound" and "nope" in got["method"][2]
    assert got["shape"][1] == "InvalidArgument" and "[3, 784]" in got["shape"][2], got["shape"]
    assert got["dtype"] is not None and "complex64" in got["dtype"][2]
    assert got["count"] is not None and "takes 1 inputs, got 0" in got["count"][2]


def test_a_method_beyond_the_memory_budget_is_refused_before_it_allocates(
    venv: WheelVenv, models_run: Any
) -> None:
    code = """
        import json, sys
        import numpy as np
        import etrt
        x = np.load("mlp_input.npy")
        out = {}
        try:
            etrt.load("mlp_portable.etrt", max_memory_bytes=4096).forward(x)
            out["small"] = None
        except etrt.EtrtError as e:
            out["small"] = [getattr(e, "code", ""), str(e)]
        # The same program within a budget it fits runs.
        out["fits"] = len(etrt.load("mlp_portable.etrt", max_memory_bytes=1 << 20).forward(x))
        try:
            etrt.load("mlp_portable.etrt").forward(x)
            out["env"] = None
        except etrt.EtrtError as e:
            out["env"] = [getattr(e, "code", ""), str(e)]
        print(json.dumps(out))
        """
    path = venv.work / "script_budget.py"
    path.write_text(textwrap.dedent(code))
    results = {}
    for env_value in ("2k", "lots"):
        proc = venv.run(path, env={**_clean_env(), "ETRT_MAX_MEMORY_BYTES": env_value})
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[env_value] = json.loads(proc.stdout.strip().splitlines()[-1])
    small = results["2k"]["small"]
    assert small is not None and small[0] == "OutOfMemory", small
    assert "more than the 4096-byte memory budget" in small[1], small
    assert results["2k"]["fits"] == 1
    # The environment's budget applies when the caller gives none; a bad value is named.
    env = results["2k"]["env"]
    assert env[0] == "OutOfMemory" and "2048-byte memory budget" in env[1], env
    assert results["lots"]["env"] == [
        "InvalidArgument",
        "InvalidArgument: ETRT_MAX_MEMORY_BYTES='lots' is not a byte count"
        " (digits, then optionally K, M, G or T)",
    ], results["lots"]["env"]


def test_c_abi_never_hands_out_an_output_without_memory(venv: WheelVenv) -> None:
    got = venv.script(
        "view_output",
        """
        import ctypes, json
        import numpy as np, torch
        import etrt, etrt.runtime

        class M(torch.nn.Module):
            def forward(self, x):
                return (x + 1).view(-1)  # the output is a view: no memory until it runs

        etrt.export(M(), (torch.zeros(2, 3),)).save("view_out.etrt")
        m = etrt.load("view_out.etrt")
        method = m.method("forward")
        lib = etrt.runtime._lib()
        dtype, ndim = ctypes.c_int32(), ctypes.c_size_t()
        sizes, strides = ctypes.POINTER(ctypes.c_int64)(), ctypes.POINTER(ctypes.c_int64)()
        data = ctypes.c_void_p()
        def out_tensor():
            return lib.etrt_method_output_tensor(
                method._handle, 0, ctypes.byref(dtype), ctypes.byref(ndim), ctypes.byref(sizes),
                ctypes.byref(strides), ctypes.byref(data))
        before = out_tensor()
        before_msg = lib.etrt_last_error().decode()
        (y,) = m.forward(np.ones((2, 3), np.float32))
        after = out_tensor()
        print(json.dumps({"before": [lib.etrt_status_name(before).decode(), before_msg],
                          "after": after, "data": bool(data.value), "y": y.tolist()}))
        """,
    )
    assert got["before"] == [
        "InvalidState",
        "InvalidState: output 0 has no data yet: execute the method first",
    ], got["before"]
    assert got["after"] == 0 and got["data"] and got["y"] == [2.0] * 6, got


def test_cli_run_summarizes_and_writes_outputs(venv: WheelVenv, models_run: Any) -> None:
    proc = venv.run("-m", "etrt", "--help")
    assert proc.returncode == 0 and "run" in proc.stdout and "export" in proc.stdout

    proc = venv.run("-m", "etrt", "run", "transformer_xnnpack.etrt")
    assert proc.returncode == 0, proc.stderr
    assert "random inputs" in proc.stdout
    assert "output 0: float32 [4, 16, 64]" in proc.stdout

    proc = venv.run(
        "-m", "etrt", "run", "cnn_portable.etrt", "--input", "cnn_input.npy", "--output", "out.npz"
    )
    assert proc.returncode == 0, proc.stderr
    assert "random" not in proc.stdout
    got = venv.script(
        "cli_check",
        """
        import json
        import numpy as np
        out = np.load("out.npz")["output_0"]
        print(json.dumps({"d": float(np.max(np.abs(out - np.load("cnn_expected.npy"))))}))
        """,
    )
    assert got["d"] <= 1e-5


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["garbage.etrt"], "InvalidProgram"),
        (["nothing-here.etrt"], "no such program"),
        (["mlp_portable.etrt", "--input", "cnn_input.npy"], "expected sizes"),
        (["mlp_portable.etrt", "--input", "a.npy", "--input", "b.npy"], "cannot read input"),
        (["mlp_portable.etrt", "--method", "nope"], "NotFound"),
    ],
)
def test_cli_run_errors_are_one_line(
    venv: WheelVenv, models_run: Any, args: list[str], expected: str
) -> None:
    (venv.work / "garbage.etrt").write_bytes(b"\0" * 64)
    proc = venv.run("-m", "etrt", "run", *args)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], proc.stderr


def test_missing_runtime_library_is_one_clear_error(tmp_path: Path) -> None:
    # The source tree's etrt (no etrt/_etpkg.py beside it) and no usable ETRT_LIBRARY_DIR.
    (tmp_path / "x.etrt").write_bytes(b"x")
    env = _clean_env()
    env["PYTHONPATH"] = str(REPO_ROOT / "python")
    cases = (
        ({}, "ETRT_LIBRARY_DIR is not set"),
        ({"ETRT_LIBRARY_DIR": str(tmp_path)}, "no libetrt.so in"),
    )
    for extra, expected in cases:
        proc = subprocess.run(
            [sys.executable, "-m", "etrt", "run", "x.etrt"],
            cwd=tmp_path,
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=False,
        )
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode != 0 and len(lines) == 1 and expected in lines[0], proc.stderr
    code = (
        "import etrt\ntry: etrt.load('x.etrt')\nexcept etrt.EtrtError as e: print(type(e).__name__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "LibraryNotFoundError", proc.stdout + proc.stderr


def test_c_abi_from_plain_c(registry_app: Path, models_run: Any, venv: WheelVenv) -> None:
    program = venv.work / "mlp_portable.etrt"
    ok = subprocess.run(
        [registry_app / "c_api_smoke_kernels", program], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "method forward" in ok.stdout and "output 0: dtype 0 [4, 10]" in ok.stdout, ok.stdout
    assert "bad index: InvalidArgument InvalidArgument: input 99 out of range" in ok.stdout

    # The runtime alone: the C caller gets OperatorMissing naming the operators.
    bare = subprocess.run(
        [registry_app / "c_api_smoke", program], capture_output=True, text=True, check=False
    )
    assert bare.returncode == 1
    assert "error: OperatorMissing" in bare.stdout and "aten::addmm" in bare.stdout, bare.stdout


def test_cli_flags_build_a_plain_compiler_app(venv: WheelVenv, models_run: Any) -> None:
    """`python -m etrt --includes/--libs` are all a plain g++ command needs to run the MLP."""
    import numpy as np

    def flags(flag: str) -> list[str]:
        proc = venv.run("-m", "etrt", flag)
        assert proc.returncode == 0, proc.stderr
        return shlex.split(proc.stdout)

    app = venv.work / "gxx_runner"
    build = subprocess.run(
        ["g++", *flags("--includes"), str(REPO_ROOT / "tools" / "etrt_runner.cpp"),
         "-o", str(app), *flags("--libs")],
        capture_output=True, text=True, check=False,
    )
    assert build.returncode == 0, build.stderr
    inputs, outputs = venv.work / "gxx_in.bin", venv.work / "gxx_out.bin"
    np.load(venv.work / "mlp_input.npy").tofile(inputs)
    proc = subprocess.run(
        [str(app), str(venv.work / "mlp_portable.etrt"), "--inputs", str(inputs),
         "--outputs", str(outputs)],
        capture_output=True, text=True, check=False, env=_clean_env(),
    )
    assert proc.returncode == 0, proc.stderr  # kernels retained, libraries found without help
    expected = np.load(venv.work / "mlp_expected.npy")
    got = np.fromfile(outputs, dtype=np.float32).reshape(expected.shape)
    assert float(np.max(np.abs(got - expected))) <= 1e-5


def test_quick_start_works_from_the_wheel_alone(venv: WheelVenv) -> None:
    # The README's quick start, in a directory holding nothing of the repository, with only the
    # installed wheel (and torch, for the exporter) importable.
    proc = venv.run("-m", "etrt", "export", "etrt.examples:mlp", "-o", "quick start.etrt")
    assert proc.returncode == 0, proc.stderr
    proc = venv.run("-m", "etrt", "run", "quick start.etrt")
    assert proc.returncode == 0, proc.stderr
    assert "output 0: float32 [1, 10]" in proc.stdout
    got = venv.script(
        "where", 'import json, etrt.examples; print(json.dumps({"f": etrt.examples.__file__}))'
    )
    assert Path(got["f"]).is_relative_to(venv.pkg)


def test_installed_wheel_imports_cheaply_and_knows_its_version(
    venv: WheelVenv, etrt_wheel: Path
) -> None:
    from test_user_path import import_cost_ms

    ms, log = import_cost_ms(str(venv.python), _clean_env(), venv.work)
    for heavy in ("importlib.metadata", "torch", "numpy"):
        assert not re.search(rf"\| +{re.escape(heavy)}$", log, re.M), f"import etrt loads {heavy}"
    assert ms <= 50, f"import etrt from the wheel took {ms:.1f} ms"
    got = venv.script("version", 'import json, etrt; print(json.dumps({"v": etrt.__version__}))')
    assert got["v"] == etrt_wheel.name.split("-")[1]  # the wheel's METADATA, not VERSION


CMAKE_CACHE_REL = Path("build") / "cmake-venvs"  # the consumer suites' CMake venvs


def _tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under `root`, but the venvs, and what the gate's other
    process writes meanwhile (ci/test.sh): build/, the Conan cache, pytest's and Python's caches."""
    skip = {".git", ".venv", ".venv-servers", "build", ".conan-home", ".pytest_cache"}
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = [
            d for d in dirnames if d != "__pycache__" and not (rel == Path(".") and d in skip)
        ]
        for name in filenames:
            st = (Path(dirpath) / name).lstat()
            state[str(rel / name)] = (st.st_size, st.st_mtime_ns)
    return state


def test_configure_benchmark_runs_from_the_installed_wheel_and_writes_nothing_here(
    venv: WheelVenv, etrt_wheel: Path
) -> None:
    before = _tree_state(REPO_ROOT)
    proc = venv.run(
        REPO_ROOT / "benchmarks" / "configure.py", "--wheel", etrt_wheel, "--runs", "1",
        "--cmake-cache", REPO_ROOT / CMAKE_CACHE_REL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"ratio \d+\.\d+ \(target <= 1\.15\)", proc.stdout), proc.stdout
    after = _tree_state(REPO_ROOT)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"configure.py wrote into the repository: {changed[:10]}"

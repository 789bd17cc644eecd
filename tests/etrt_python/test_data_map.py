"""Named data maps (.ptd): programs exported with external constants load their weights by name.

Programs run through the in-tree etrt_runner (release, then ASan and UBSan); malformed .ptd
files go through FlatTensorDataMap::load under ASan and UBSan, and through the Python reader.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import etrt
import numpy as np
import pytest
import runtime_build
import torch
from etrt.data_map import DataMapFormatError
from etrt.ir import StorageKind, TensorValue
from models import make
from runtime_build import ToolRunner, build_tools, sanitizer_env

pytestmark = pytest.mark.slow

ERROR_CODES = {"InvalidProgram", "UnsupportedVersion", "OutOfMemory", "IoError"}


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_external_constants_match_eager(tool_runner: ToolRunner, tmp_path: Path, name: str) -> None:
    model, inputs = make(name, 2)
    run = tool_runner.run_exported(tmp_path, model, inputs, external_constants=True)
    assert run.max_abs_diff() <= 1e-5
    # The weights live in the .ptd, by parameter name; the program holds none.
    plan = run.program.info.plan
    keys = {v.external_key for v in plan.values if isinstance(v, TensorValue) and v.external_key}
    assert keys == set(etrt.data_map.load(tmp_path / "m.ptd"))
    assert keys >= {n for n, _ in model.named_parameters()}
    assert not any(
        isinstance(v, TensorValue) and v.storage == StorageKind.CONSTANT for v in plan.values
    )


def _runner(*args: str | Path) -> subprocess.CompletedProcess[str]:
    exe = runtime_build.tool_runner("release").exe
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def mlp_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(program, its .ptd, an input file) of the MLP exported with external constants."""
    work = tmp_path_factory.mktemp("mlp")
    model, inputs = make("mlp", 3)
    program = etrt.export(model, inputs, external_constants=True)
    (work / "in.bin").write_bytes(inputs[0].numpy().tobytes())
    return program.save(work / "mlp.etrt"), program.save_data(work / "mlp.ptd"), work / "in.bin"


def test_a_program_without_its_data_map_names_every_missing_key(
    mlp_files: tuple[Path, Path, Path],
) -> None:
    program, _, inputs = mlp_files
    r = _runner(program, "--inputs", inputs)
    assert r.returncode == 1
    assert (
        "NotFound: method 'forward': no named data map given for external tensors: "
        "fc1.bias, fc1.weight, fc2.bias, fc2.weight" in r.stderr
    )


def test_split_data_maps_merge_and_a_duplicate_key_is_refused(
    mlp_files: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    program, data, inputs = mlp_files
    tensors = etrt.data_map.load(data)
    a = etrt.data_map.save({k: tensors[k] for k in ("fc1.weight", "fc1.bias")}, tmp_path / "a.ptd")
    b = etrt.data_map.save({k: tensors[k] for k in ("fc2.weight", "fc2.bias")}, tmp_path / "b.ptd")
    whole = _runner(program, "--data", data, "--inputs", inputs, "--outputs", tmp_path / "1.bin")
    split = _runner(
        program, "--data", a, "--data", b, "--inputs", inputs, "--outputs", tmp_path / "2.bin"
    )
    assert whole.returncode == 0 and split.returncode == 0, whole.stderr + split.stderr
    assert (tmp_path / "1.bin").read_bytes() == (tmp_path / "2.bin").read_bytes()

    half = _runner(program, "--data", a, "--inputs", inputs)
    assert "external tensors missing from the named data map: fc2.bias, fc2.weight" in half.stderr
    twice = _runner(program, "--data", a, "--data", a, "--inputs", inputs)
    assert "MergedDataMap: key 'fc1.weight' is in map 0 and map 1" in twice.stderr


def test_a_tensor_of_the_wrong_shape_or_dtype_is_named(
    mlp_files: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    program, data, inputs = mlp_files
    tensors = dict(etrt.data_map.load(data))
    tensors["fc2.bias"] = np.zeros(11, dtype=np.float32)
    r = _runner(
        program, "--data", etrt.data_map.save(tensors, tmp_path / "x.ptd"), "--inputs", inputs
    )
    want = "external tensor 'fc2.bias' is Float [11] in the data map, but the program expects"
    assert f"{want} Float [10]" in r.stderr
    tensors["fc2.bias"] = np.zeros(10, dtype=np.int64)
    r = _runner(
        program, "--data", etrt.data_map.save(tensors, tmp_path / "y.ptd"), "--inputs", inputs
    )
    assert "external tensor 'fc2.bias' is Long [10]" in r.stderr


def test_python_writer_and_reader_round_trip(tmp_path: Path) -> None:
    tensors = {
        "w": np.arange(24, dtype=np.float32).reshape(2, 3, 4),
        "ids": np.array([3, -1, 2**40], dtype=np.int64),
        "mask": np.array([[True, False]]),
        "scalar": np.float64(2.5),
        "empty": np.zeros((0, 3), dtype=np.int32),
        "torch": torch.ones(5, dtype=torch.float32),
    }
    back = etrt.data_map.load(etrt.data_map.save(tensors, tmp_path / "t.ptd"))
    assert list(back) == list(tensors)
    for key, value in tensors.items():
        want = value.numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        assert back[key].dtype == want.dtype and np.array_equal(back[key], want), key
    data = (tmp_path / "t.ptd").read_bytes()
    assert data[4:8] == b"ETDM"


def _corruptions(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    cases = [data[:n] for n in range(0, len(data), 7)]
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        cases.append(bytes(b))
    return cases


def test_malformed_data_maps_are_errors_never_crashes(tmp_path: Path) -> None:
    tensors = {"a": np.arange(10, dtype=np.float32), "b": np.ones((2, 3), dtype=np.int64)}
    data = etrt.data_map.to_bytes(tensors)
    cases = _corruptions(data, seed=5)
    # The Python reader: a DataMapFormatError or a successful read, nothing else; every
    # truncation short of the last tensor's bytes is one of the errors.
    rejected = 0
    for case in cases:
        try:
            etrt.data_map.from_bytes(case)
        except DataMapFormatError:
            rejected += 1
    truncations = len(range(0, len(data), 7))
    assert rejected >= truncations, (rejected, truncations)
    # The C++ loader under ASan and UBSan, with every loader kind.
    tools = runtime_build.asan_build(["etrt_load_check"])
    paths = []
    for i, case in enumerate(cases):
        path = tmp_path / f"{i:04d}.ptd"
        path.write_bytes(case)
        paths.append(str(path))
    (tmp_path / "good.ptd").write_bytes(data)
    for loader in ("mmap", "file", "buffer"):
        r = subprocess.run(
            [str(tools.load_check), "--data-map", "--loader", loader, str(tmp_path / "good.ptd"),
             *paths],
            capture_output=True, text=True, errors="replace", timeout=600, env=sanitizer_env(),
        )  # fmt: skip
        assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
        assert r.returncode == 0, r.stderr[-3000:]
        lines = r.stdout.splitlines()
        assert len(lines) == len(cases) + 1
        assert lines[0].split("\t")[1:] == [
            "Ok",
            f"2 tensors, 88 bytes (checksum {_checksum(tensors)})",
        ]
        codes = {line.split("\t")[1] for line in lines[1:]}
        assert codes <= ERROR_CODES | {"Ok"}, codes
        assert "InvalidProgram" in codes


def _checksum(tensors: dict[str, np.ndarray]) -> int:
    return sum(int(b) for a in tensors.values() for b in a.tobytes()) % 251


def test_cli_writes_the_data_map_next_to_the_program(tmp_path: Path) -> None:
    env = {
        **os.environ,
        # The in-tree runtime, kernels and profiler (etrt profile needs libetrt_etdump.so).
        "ETRT_LIBRARY_DIR": str(build_tools("runtime", ["etrt_runner", "etrt_etdump"]).build_dir),
    }
    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "mlp.etrt"
    r = subprocess.run(
        [sys.executable, "-m", "etrt", "export", f"{repo / 'tests' / 'models.py'}:mlp",
         "-o", str(out), "--external-constants"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert out.with_suffix(".ptd").is_file() and f"wrote {out.with_suffix('.ptd')}" in r.stdout
    ok = subprocess.run(
        [sys.executable, "-m", "etrt", "run", str(out), "--data", str(out.with_suffix(".ptd"))],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert ok.returncode == 0 and "output 0: float32 [1, 10]" in ok.stdout, ok.stderr
    prof = subprocess.run(
        [sys.executable, "-m", "etrt", "profile", str(out), "--data", str(out.with_suffix(".ptd")),
         "--runs", "2", "-o", str(tmp_path / "p.png")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert prof.returncode == 0 and "aten::addmm" in prof.stdout, prof.stderr
    found = subprocess.run(
        [sys.executable, "-m", "etrt", "run", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr  # the .ptd beside it, by name
    assert f"using the named data map {out.with_suffix('.ptd')}" in found.stdout
    out.with_suffix(".ptd").rename(tmp_path / "elsewhere.ptd")
    missing = subprocess.run(
        [sys.executable, "-m", "etrt", "run", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert (
        missing.returncode == 1 and "no named data map given for external tensors" in missing.stderr
    )

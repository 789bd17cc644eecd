"""`python -m etrt run`: inputs from .npy files (or random), one run, a summary, outputs to .npz."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import EtrtError
from .runtime import IOSpec, Module, Output


@dataclass(frozen=True)
class RunResult:
    method: str
    random_inputs: bool
    outputs: list[Output]
    seconds: float


def load_inputs(paths: Sequence[Path]) -> list[npt.NDArray[Any]]:
    arrays = []
    for path in paths:
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except OSError as exc:
            raise EtrtError(f"cannot read input {path}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise EtrtError(f"cannot read input {path}: not a .npy array ({exc})") from exc
    return arrays


def random_inputs(specs: Sequence[IOSpec], seed: int = 0) -> list[object]:
    """Values matching each input's dtype and shape: normal floats, small ints, random bools."""
    rng = np.random.default_rng(seed)
    values: list[object] = []
    for i, spec in enumerate(specs):
        if spec.kind == "tensor":
            assert spec.dtype is not None and spec.shape is not None
            if spec.dtype.kind == "f":
                values.append(rng.standard_normal(spec.shape).astype(spec.dtype))
            elif spec.dtype.kind == "b":
                values.append(rng.integers(0, 2, spec.shape).astype(np.bool_))
            else:
                values.append(rng.integers(0, 10, spec.shape).astype(spec.dtype))
        elif spec.kind == "int":
            values.append(int(rng.integers(0, 10)))
        elif spec.kind == "double":
            values.append(float(rng.standard_normal()))
        elif spec.kind == "bool":
            values.append(bool(rng.integers(0, 2)))
        else:
            raise EtrtError(f"input {i} is {spec.kind}: give it with --input")
    return values


def method_inputs(
    method: str, specs: Sequence[IOSpec], input_paths: Sequence[Path]
) -> list[object]:
    """The --input files, checked against the method, or seeded random inputs when none."""
    if not input_paths:
        return random_inputs(specs)
    inputs: list[object] = list(load_inputs(input_paths))
    if len(inputs) != len(specs):
        raise EtrtError(
            f"method '{method}' takes {len(specs)} inputs, got {len(inputs)} --input files"
        )
    return inputs


def run(
    program: Path, method: str, input_paths: Sequence[Path], data: Path | None = None
) -> RunResult:
    if not program.is_file():
        raise EtrtError(f"no such program: {program}")
    if data is not None and not data.is_file():
        raise EtrtError(f"no such data map: {data}")
    with Module(program, data) as module:
        m = module.method(method)
        inputs = method_inputs(method, m.inputs, input_paths)
        start = time.perf_counter()
        outputs = m(*inputs)
        seconds = time.perf_counter() - start
    return RunResult(method, not input_paths, outputs, seconds)


def describe(i: int, value: Output) -> str:
    """'output 0: float32 [4, 10]  min -1.2 max 3.4 mean 0.05' (or the scalar's value)."""
    if not isinstance(value, np.ndarray):
        return f"output {i}: {type(value).__name__} {value}"
    head = f"output {i}: {value.dtype} {list(value.shape)}"
    if value.size == 0:
        return head + "  (empty)"
    data = value.astype(np.float64)
    return f"{head}  min {data.min():.6g}  max {data.max():.6g}  mean {data.mean():.6g}"


def save_outputs(path: Path, outputs: Sequence[Output]) -> Path:
    """Writes output_<i> arrays into an .npz (scalars as 0-d arrays; None is skipped)."""
    arrays = {f"output_{i}": np.asarray(v) for i, v in enumerate(outputs) if v is not None}
    if not path.parent.is_dir():
        raise EtrtError(f"cannot write {path}: directory {path.parent} does not exist")
    try:
        with path.open("wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
    except OSError as exc:
        raise EtrtError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path

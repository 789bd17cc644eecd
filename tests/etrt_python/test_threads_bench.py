"""benchmarks/threads.py's arguments, thread counts, missing-export error and table arithmetic
(the sweep itself is a benchmark, run by hand: README's Performance section)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "threads.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("threads_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["threads_bench"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_thread_counts_double_up_to_the_cpus(bench: ModuleType) -> None:
    assert bench.default_threads(1) == [1]
    assert bench.default_threads(2) == [1, 2]
    assert bench.default_threads(6) == [1, 2, 4, 6]
    assert bench.default_threads(16) == [1, 2, 4, 8, 16]


def test_bad_arguments_are_usage_errors(bench: ModuleType) -> None:
    for argv in (["--isa", "avx3"], ["--export-only", "--run-only"], ["--models", "alexnet"]):
        with pytest.raises(SystemExit) as exc:
            bench.main(argv)
        assert exc.value.code == 2, argv


def test_run_only_without_an_export_names_what_is_missing(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = bench.main(["--run-only", "--dir", str(tmp_path), "--models", "resnet18"])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lacks resnet18.pt2" in err[0] and "--export-only" in err[0]


def test_table_ratios_and_speed_ups(bench: ModuleType) -> None:
    ms = {"eager": 40.0, "ort": 10.0, "etrt": 12.0, "etrt+xnn": 9.0}
    one = bench.Cell("resnet18", 1, ms)
    two = bench.Cell("resnet18", 2, {"eager": 20.0, "ort": 5.0, "etrt": 8.0, "etrt+xnn": 6.0})
    rows = bench.format_table([one, two]).splitlines()
    assert rows[2] == "| resnet18 | 1 | 40.00 | 10.00 | 12.00 | 9.00 | 0.90 | 1.00 | 1.00 | 1.00 |"
    assert rows[3] == "| resnet18 | 2 | 20.00 | 5.00 | 8.00 | 6.00 | 1.20 | 2.00 | 2.00 | 1.50 |"


def test_decode_rows_give_tokens_per_second(bench: ModuleType) -> None:
    # Decoders are timed per decoded token: 2 ms a token is 500 tokens/s.
    one = bench.Cell("gpt2-decode", 1, {"eager": 2.0, "etrt": 0.5})
    two = bench.Cell("gpt2-decode", 2, {"eager": 1.0, "etrt": 0.4})
    vision = bench.Cell("resnet18", 1, {"eager": 40.0, "ort": 10.0, "etrt": 12.0, "etrt+xnn": 9.0})
    rows = bench.format_table([vision, one, two]).splitlines()
    assert rows[2].startswith("| resnet18 | 1 |") and rows[3] == ""
    assert rows[4].startswith("| decoder | threads | eager tok/s | etrt tok/s |")
    assert rows[6] == "| gpt2-decode | 1 | 500 | 2000 | 4.00 | 1.00 | 1.00 |"
    assert rows[7] == "| gpt2-decode | 2 | 1000 | 2500 | 2.50 | 2.00 | 1.25 |"
    only = bench.format_table([one]).splitlines()
    assert only[0].startswith("| decoder |") and len(only) == 3


def test_decode_timing_counts_decoded_tokens_only(bench: ModuleType) -> None:
    calls: list[int] = []

    def step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        calls.append(tokens.shape[1])
        assert positions.tolist() == list(range(sum(calls) - tokens.shape[1], sum(calls)))
        return np.zeros((1, tokens.shape[1], 8), np.float32)

    ms = bench.decode_ms_per_token(step)
    assert calls == [len(bench.PROMPT)] + [1] * (bench.NEW_TOKENS - 1)
    assert ms > 0
    # A decode call times itself: its median and fastest are the ms per token it reports.
    assert bench._median_ms(lambda: bench.SelfTimed(3.5), 3, 0) == (3.5, 3.5)


def test_executorch_column_and_ratio_when_it_ran(bench: ModuleType) -> None:
    ms = {"eager": 40.0, "ort": 10.0, "etrt": 12.0, "etrt+xnn": 9.0, bench.EXECUTORCH: 7.5}
    no_et = {k: v for k, v in ms.items() if k != bench.EXECUTORCH}  # ExecuTorch did not export it
    mixed = [bench.Cell("resnet18", 1, ms), bench.Cell("vit_b_16", 1, no_et)]
    rows = bench.format_table(mixed).splitlines()
    assert "| ExecuTorch | best etrt / ORT | best etrt / ExecuTorch |" in rows[0]
    assert rows[1].count("---:") == 11
    assert rows[2] == (
        "| resnet18 | 1 | 40.00 | 10.00 | 12.00 | 9.00 | 7.50 | 0.90 | 1.20 | 1.00 | 1.00 | 1.00 |"
    )
    blank = "| vit_b_16 | 1 | 40.00 | 10.00 | 12.00 | 9.00 |  | 0.90 |  | 1.00 | 1.00 | 1.00 |"
    assert rows[3] == blank


def test_a_missing_cpuid_cap_library_is_one_line(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("resnet18.pt2", "resnet18.etrt", "resnet18.xnn.etrt", "resnet18.onnx",
                 "resnet18.inputs.npz"):  # fmt: skip
        (tmp_path / name).write_bytes(b"")
    argv = ["--run-only", "--dir", str(tmp_path), "--models", "resnet18"]
    assert bench.main([*argv, "--cpuid-cap", str(tmp_path / "cap.so")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: --cpuid-cap {tmp_path / 'cap.so'}: no such file"]

"""Each defect class found by fuzzing and crafted inputs (tests/hostile_cases.py) gives the one
clear error the runtime must give for it, never a crash, hang, UB report or write fault. The
inputs run through the fuzz targets, which link the real kernels and the XNNPACK delegate and
name each stage's outcome; the same inputs are committed in tools/fuzz/regressions/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import hostile_cases as hc
import hostile_quantized
import pytest
from fuzz_build import REPO_ROOT, Fuzzers, build_fuzzers

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fuzzers() -> Fuzzers:
    return build_fuzzers()


def replay(
    fuzzers: Fuzzers, target: str, tmp_path: Path, cases: dict[str, bytes]
) -> dict[str, list[str]]:
    files = []
    for name, data in cases.items():
        path = tmp_path / f"{name}.{target}"
        path.write_bytes(data)
        files.append(path)
    return {Path(k).stem: v for k, v in fuzzers.replay(target, files).items()}


def assert_refused(out: dict[str, list[str]], expected: dict[str, str]) -> None:
    assert set(out) >= set(expected), sorted(set(expected) - set(out))
    for name, words in expected.items():
        assert any(words in line for line in out[name]), (name, out[name])
        assert "execute: ok" not in out[name], (name, out[name])


def test_hostile_programs_fail_with_one_clear_error(fuzzers: Fuzzers, tmp_path: Path) -> None:
    cases = hc.program_cases()
    assert set(cases) == set(hc.EXPECTED_PROGRAM)
    # the int8 kernels' valid calls, which the int8 cases break one argument of, run
    valid = {f"valid_{k}": v for k, v in hostile_quantized.valid_cases().items()}
    out = replay(fuzzers, "program", tmp_path, {**valid, **cases})
    for name in valid:
        assert set(out[name]) == {"load: ok", "load_method: ok", "execute: ok"}, (name, out[name])
    assert_refused(out, hc.EXPECTED_PROGRAM)


def test_hostile_blobs_fail_with_one_clear_error(fuzzers: Fuzzers, tmp_path: Path) -> None:
    cases = hc.blob_cases()
    assert set(cases) == set(hc.EXPECTED_BLOB)
    valid = {"valid": hc.valid_blob(), "valid_qs8": hc.qs8_blob()}
    out = replay(fuzzers, "xnnpack", tmp_path, {**valid, **cases})
    # libFuzzer may run an input twice (to tell a leak from lazy initialisation).
    for name in valid:
        assert out[name][:3] == ["init: ok", "execute: ok", "execute: ok"], out[name]
        assert set(out[name]) == {"init: ok", "execute: ok"}, out[name]
    assert_refused(out, hc.EXPECTED_BLOB)


def test_hostile_data_maps_fail_with_one_clear_error(fuzzers: Fuzzers, tmp_path: Path) -> None:
    cases = hc.data_map_cases()
    assert set(cases) == set(hc.EXPECTED_DATA_MAP)
    out = replay(fuzzers, "data_map", tmp_path, {"valid": hc.valid_data_map(), **cases})
    assert out["valid"][:2] == ["load: ok", "load program: ok"], out["valid"]
    assert "execute: ok" in out["valid"], out["valid"]
    assert_refused(out, hc.EXPECTED_DATA_MAP)


def test_committed_regression_corpus_holds_every_crafted_case() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "fuzz" / "regressions.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

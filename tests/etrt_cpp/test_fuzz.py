"""Coverage-guided fuzzing of the three untrusted formats (program, .ptd data map, XNNPACK
delegate blob) with libFuzzer, ASan and UBSan, linked with the real kernels and delegate.

Builds the targets with tools/fuzz/build.sh, checks that every seed from a real export loads
and executes (so the fuzzers start from inputs that reach the kernels), replays the committed
regression inputs, and runs each target for a bounded time: any crash, timeout, UB report or
leak fails."""

from __future__ import annotations

import importlib
import os
import re
import subprocess

import pytest
from fuzz_build import REPO_ROOT, TARGETS, Fuzzers, build_fuzzers

pytestmark = [pytest.mark.slow, pytest.mark.fuzz]

# Per target: a smoke run in the gate; `bash ci/long.sh fuzz` sets 600, and the campaigns of
# docs/SECURITY.md go deeper still.
FUZZ_SECONDS = int(os.environ.get("ETRT_FUZZ_SECONDS", "5"))


@pytest.fixture(scope="module")
def fuzzers() -> Fuzzers:
    return build_fuzzers()


def test_seeds_from_real_exports_load_and_execute(fuzzers: Fuzzers) -> None:
    for target in TARGETS:
        files = sorted(fuzzers.seeds(target).iterdir())
        assert len(files) >= 4, (target, files)
        stages = fuzzers.replay(target, files)
        for name, lines in stages.items():
            if target == "program" and "external" in name:
                # No data map beside it: the method refuses to load and names the keys.
                assert any("no named data map given" in line for line in lines), (name, lines)
                continue
            if name.startswith("opset-") and any("is out of bounds" in line for line in lines):
                # An index input filled by the harness, not torch's sample: the kernel refuses
                # it, after everything before it loaded and ran.
                assert lines[:2] == ["load: ok", "load_method: ok"], (name, lines)
                continue
            assert lines and all(
                line.endswith(": ok") or "method 'fixed'" in line for line in lines
            ), (
                name,
                lines,
            )
            assert "execute: ok" in lines, (name, lines)


def test_program_seeds_reach_every_integer_kernel(fuzzers: Fuzzers) -> None:
    """The PT2E, weight-only and dynamic int8 seeds (make_seeds.py) call every etrt_quant kernel
    the registry holds, so the program fuzzer mutates each one's arguments from valid ones."""
    import etrt

    register = (REPO_ROOT / "src" / "kernels" / "register.cpp").read_text()
    kernels = set(re.findall(r'"(etrt_quant::\w+)"', register))
    assert len(kernels) >= 10, kernels
    reached: set[str] = set()
    for path in fuzzers.seeds("program").glob("*.etrt"):
        reached |= set(etrt.load_program_info(path).instruction_ops)
    assert not kernels - reached, sorted(kernels - reached)


def test_regression_inputs_replay_cleanly(fuzzers: Fuzzers) -> None:
    for target in TARGETS:
        directory = REPO_ROOT / "tools" / "fuzz" / "regressions" / target
        files = sorted(directory.iterdir())
        assert files, f"{directory} holds no regression inputs"
        stages = fuzzers.replay(target, files)
        # The crafted ones are hostile by construction: refused somewhere, never run through.
        # A crash fuzzing found may be a valid input that runs once fixed; it must replay cleanly.
        for name, lines in stages.items():
            assert lines, (name, lines)
            if name.startswith("crafted-"):
                assert not all(line.endswith(": ok") for line in lines), (name, lines)


@pytest.mark.parametrize("target", TARGETS)
def test_fuzzer_finds_nothing_in_bounded_run(fuzzers: Fuzzers, target: str) -> None:
    proc = subprocess.run(
        [
            "bash",
            str(REPO_ROOT / "tools" / "fuzz" / "run.sh"),
            target,
            str(FUZZ_SECONDS),
            str(fuzzers.build_dir),
        ],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=FUZZ_SECONDS + 120,
    )
    found = [
        marker
        for marker in (
            "ERROR: AddressSanitizer",
            "ERROR: LeakSanitizer",
            "runtime error:",
            "ERROR: libFuzzer",
            "deadly signal",
            "timeout",
        )
        if marker in proc.stderr
    ]
    artifacts = re.findall(r"Test unit written to (\S+)", proc.stderr)
    # The report, not the tail: a flood of allocator warnings must not hide what happened.
    reports = [
        line for line in proc.stderr.splitlines() if re.search(r"ERROR|SUMMARY|runtime error", line)
    ]
    assert not found and proc.returncode == 0, (
        f"{target}: {found or ['exit ' + str(proc.returncode)]} in a {FUZZ_SECONDS} s run;"
        f" inputs kept: {artifacts} (minimize and keep with tools/fuzz/keep.sh)\n"
        + "\n".join(reports[:20])
        + "\n"
        + proc.stderr[-3000:]
    )
    runs = re.search(r"stat::number_of_executed_units: (\d+)", proc.stderr)
    assert runs is not None and int(runs.group(1)) > 2000, proc.stderr[-3000:]


def test_build_script_installs_from_debian_and_names_its_packages() -> None:
    script = (REPO_ROOT / "tools" / "fuzz" / "build.sh").read_text()
    assert "apt-get install" in script
    for package in ("clang-14", "libclang-rt-14-dev", "libfuzzer-14-dev"):
        assert package in script


def test_dictionary_comes_from_the_schemas_and_kernels(fuzzers: Fuzzers) -> None:
    words = (fuzzers.build_dir / "seeds" / "etrt.dict").read_text().splitlines()
    for word in ('"ETRT"', '"ETDM"', '"EXNN"', '"XnnpackBackend"', '"aten::convolution"'):
        assert word in words
    # Format version 1 as a uint32, the last ValueUnion tag (11) and NodeUnion tag (10) as
    # bytes, StorageKind External (4).
    for word in ('"\\x01\\x00\\x00\\x00"', '"\\x0b"', '"\\x0a"', '"\\x04"'):
        assert word in words, word


def test_seeds_hold_every_delegate_node_type(fuzzers: Fuzzers) -> None:
    xfb = importlib.import_module("etrt.xnnpack._schema.xnnpack_delegate_generated")
    types = set()
    for path in fuzzers.seeds("xnnpack").iterdir():
        g = xfb.Graph.GetRootAs(path.read_bytes(), 0)
        types |= {g.Nodes(i).NodeType() for i in range(g.NodesLength())}
    names = {v: k for k, v in vars(xfb.NodeUnion).items() if not k.startswith("_")}
    missing = set(names) - types - {xfb.NodeUnion.NONE}
    assert not missing, sorted(names[t] for t in missing)

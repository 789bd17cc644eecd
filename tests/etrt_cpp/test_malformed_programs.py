"""Malformed programs must fail to load with a clear error: never a crash, hang or
sanitizer report. Runs the load driver (Program::load, load_method, execute) built with
ASan and UBSan over truncated, bit-flipped and precisely broken programs, many files per
process."""

from __future__ import annotations

import random
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import runtime_programs as rp
from runtime_build import Tools, asan_build, sanitizer_env

pytestmark = pytest.mark.slow

ERROR_CODES = {
    "InvalidProgram",
    "UnsupportedVersion",
    "OperatorMissing",
    "BackendMissing",
    "InvalidArgument",
    "OutOfMemory",
    "IoError",
    "InvalidState",
    "KernelFailed",
    "NotFound",
}


@pytest.fixture(scope="module")
def asan_tools() -> Tools:
    return asan_build(["etrt_load_check", "etrt_runtime_selftest"])


def run_driver(
    tools: Tools, tmp_path: Path, cases: list[rp.Case], *args: str
) -> dict[str, tuple[str, str]]:
    """Writes each case to a file and runs them all in one driver process."""
    paths = []
    for i, case in enumerate(cases):
        path = tmp_path / f"{i:04d}.etrt"
        path.write_bytes(case.data)
        paths.append(str(path))
    result = subprocess.run(
        [str(tools.load_check), *args, *paths],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=600,
        env=sanitizer_env(),
    )
    assert "Sanitizer" not in result.stderr and "runtime error" not in result.stderr, result.stderr
    assert result.returncode == 0, f"driver exited {result.returncode}:\n{result.stderr[-4000:]}"
    lines = result.stdout.splitlines()
    assert len(lines) == len(cases), result.stdout[-2000:]
    outcomes = {}
    for case, line in zip(cases, lines, strict=True):
        _, code, message = line.split("\t", 2)
        outcomes[case.name] = (code, message)
    return outcomes


def test_valid_program_loads_and_executes(asan_tools: Tools, tmp_path: Path) -> None:
    cases = [rp.Case("valid", rp.program())]
    for loader in ("mmap", "file", "buffer"):
        out = run_driver(asan_tools, tmp_path, cases, "--test-kernels", "--loader", loader)
        assert out["valid"] == (
            "Ok",
            "executed; outputs: Tensor [2,3]; allocations in a warm run: 0",
        ), loader


def test_truncation_at_every_97th_byte_is_invalid(asan_tools: Tools, tmp_path: Path) -> None:
    data = rp.program()
    needed = len(data) - 40  # the padding after the 24-byte constant is optional
    cases = [rp.Case(f"cut{n}", data[:n]) for n in range(0, len(data), 97)]
    out = run_driver(asan_tools, tmp_path, cases, "--test-kernels", "--loader", "file")
    for n in range(0, len(data), 97):
        code, message = out[f"cut{n}"]
        assert code == ("Ok" if n >= needed else "InvalidProgram"), (n, code, message)
    assert "too short" in out["cut0"][1]


def test_random_byte_flips_never_crash(asan_tools: Tools, tmp_path: Path) -> None:
    data = rp.program()
    rng = random.Random(20240611)
    cases = []
    for i in range(300):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] ^= rng.randint(1, 255)
        cases.append(rp.Case(f"flip{i}", bytes(mutated)))
    out = run_driver(asan_tools, tmp_path, cases, "--test-kernels")
    codes = {code for code, _ in out.values()}
    assert codes <= ERROR_CODES | {"Ok"}, codes
    assert "InvalidProgram" in codes  # the mutations do reach the verifier


def test_systematic_byte_flips_never_crash(asan_tools: Tools, tmp_path: Path) -> None:
    data = rp.program()
    head = data.index(b"\x00" * 8, 64) if b"\x00" * 8 in data[64:] else len(data)
    cases = []
    for pos in range(min(head + 64, len(data))):
        for mask in (0xFF, 0x01):
            mutated = bytearray(data)
            mutated[pos] ^= mask
            cases.append(rp.Case(f"sys{pos}_{mask}", bytes(mutated)))
    out = run_driver(asan_tools, tmp_path, cases, "--test-kernels", "--loader", "buffer")
    codes = {code for code, _ in out.values()}
    assert codes <= ERROR_CODES | {"Ok"}, codes


def _targeted_cases() -> list[rp.Case]:
    plan = rp.add_alias_mul_plan()
    seg = rp.constant_segment()
    big = 2**62
    x = rp.TensorValue((2, 3), rp.INPUT)
    out_value = plan.values[5]
    assert isinstance(out_value, rp.TensorValue)
    valid = rp.program()
    return [
        rp.Case("magic", valid[:4] + b"XXXX" + valid[8:], ("InvalidProgram", "bad magic")),
        rp.Case("empty", b"", ("InvalidProgram", "too short")),
        rp.Case(
            "version3",
            rp.program(version=3),
            ("UnsupportedVersion", "version 3", "versions 1 to 2"),
        ),
        rp.Case("version0", rp.program(version=0), ("UnsupportedVersion", "version 0")),
        rp.Case(
            "segment_offset_past_end",
            rp.program(segments=(replace(seg, offset=1 << 20),)),
            ("InvalidProgram", "segment 0", "past the end"),
        ),
        rp.Case(
            "segment_size_past_end",
            rp.program(segments=(replace(seg, size=1 << 62),)),
            ("InvalidProgram", "segment 0", "past the end"),
        ),
        rp.Case(
            "segment_overflow",
            rp.program(segments=(replace(seg, offset=2**64 - 64, size=128),)),
            ("InvalidProgram", "segment 0"),
        ),
        rp.Case("base_unaligned", rp.program(base_offset=8), ("InvalidProgram", "multiple of 64")),
        rp.Case(
            "base_past_end", rp.program(base_offset=1 << 40), ("InvalidProgram", "past the end")
        ),
        rp.Case(
            "base_huge", rp.program(base_offset=2**64 - 64), ("InvalidProgram", "past the end")
        ),
        rp.Case(
            "constant_misaligned",
            rp.program(segments=(replace(seg, offset=8),)),
            ("InvalidProgram", "not 64-byte aligned"),
        ),
        rp.Case(
            "constant_segment_missing",
            rp.program(rp.with_value(plan, 1, replace(x, storage=rp.CONSTANT, constant_segment=5))),
            ("InvalidProgram", "segment 5 does not exist"),
        ),
        rp.Case(
            "constant_segment_small",
            rp.program(rp.with_value(plan, 1, rp.TensorValue((4, 3), rp.CONSTANT))),
            ("InvalidProgram", "holds 24 bytes", "needs 48"),
        ),
        rp.Case(
            "arg_index_out_of_range",
            rp.program(replace(plan, instructions=(rp.KernelCall(0, (0, 1, 2, 99)),))),
            ("InvalidProgram", "instruction 0", "value 99"),
        ),
        rp.Case(
            "arg_index_negative",
            rp.program(replace(plan, instructions=(rp.KernelCall(0, (0, -1, 2, 3)),))),
            ("InvalidProgram", "value -1"),
        ),
        rp.Case(
            "input_index_out_of_range",
            rp.program(replace(plan, inputs=(0, 6))),
            ("InvalidProgram", "value 6"),
        ),
        rp.Case(
            "output_index_out_of_range",
            rp.program(replace(plan, outputs=(1 << 30,))),
            ("InvalidProgram", "an output"),
        ),
        rp.Case(
            "op_index_out_of_range",
            rp.program(replace(plan, instructions=(rp.KernelCall(7, (0, 1, 2, 3)),))),
            ("InvalidProgram", "operator 7"),
        ),
        rp.Case(
            "list_item_not_tensor",
            rp.program(replace(plan, values=(*plan.values, rp.TensorListValue((2,))))),
            ("InvalidProgram", "not a tensor"),
        ),
        rp.Case(
            "absurd_numel",
            rp.program(rp.with_value(plan, 0, rp.TensorValue((big,), rp.INPUT))),
            ("InvalidProgram", "value 0"),
        ),
        rp.Case(
            "numel_overflow",
            rp.program(rp.with_value(plan, 0, rp.TensorValue((2**40, 2**40, 0), rp.INPUT))),
            ("InvalidProgram", "too many elements"),
        ),
        rp.Case(
            "negative_size",
            rp.program(rp.with_value(plan, 0, rp.TensorValue((-1, 3), rp.INPUT))),
            ("InvalidProgram", "negative size"),
        ),
        rp.Case(
            "too_many_dims",
            rp.program(rp.with_value(plan, 0, rp.TensorValue((1,) * 9, rp.INPUT))),
            ("InvalidProgram", "9 dimensions"),
        ),
        rp.Case(
            "dim_order_not_permutation",
            rp.program(rp.with_value(plan, 0, replace(x, dim_order=(0, 0)))),
            ("InvalidProgram", "permutation"),
        ),
        rp.Case(
            "unknown_dtype",
            rp.program(rp.with_value(plan, 0, replace(x, dtype=42))),
            ("InvalidProgram", "scalar type"),
        ),
        rp.Case(
            "unknown_storage",
            rp.program(rp.with_value(plan, 0, replace(x, storage=9))),
            ("InvalidProgram", "storage"),
        ),
        rp.Case(
            "planned_outside_arena",
            rp.program(rp.with_value(plan, 5, replace(out_value, mem_offset=120))),
            ("InvalidProgram", "outside", "arena"),
        ),
        rp.Case(
            "planned_offset_overflow",
            rp.program(rp.with_value(plan, 5, replace(out_value, mem_offset=2**64 - 8))),
            ("InvalidProgram", "arena"),
        ),
        rp.Case(
            "planned_misaligned",
            rp.program(rp.with_value(plan, 5, replace(out_value, mem_offset=2))),
            ("InvalidProgram", "aligned"),
        ),
        rp.Case(
            "arena_huge",
            rp.program(replace(plan, arena_size=2**60)),
            ("InvalidProgram", "arena_size"),
        ),
        rp.Case(
            "input_storage_not_an_input",
            rp.program(replace(plan, values=(*plan.values, x))),
            ("InvalidProgram", "not a method input"),
        ),
        rp.Case(
            "input_not_input_storage",
            rp.program(replace(plan, inputs=(0, 3))),
            ("InvalidProgram", "without Input storage"),
        ),
        rp.Case("no_methods", rp.build(rp.ProgramSpec(plans=())), ("InvalidProgram", "no methods")),
        rp.Case(
            "duplicate_methods",
            rp.build(rp.ProgramSpec(plans=(plan, plan), segments=(seg,))),
            ("InvalidProgram", "defined twice"),
        ),
    ]


def test_targeted_corruptions_report_specific_errors(asan_tools: Tools, tmp_path: Path) -> None:
    cases = _targeted_cases()
    out = run_driver(asan_tools, tmp_path, cases, "--test-kernels")
    for case in cases:
        code, message = out[case.name]
        assert code == case.expect[0], (case.name, code, message)
        for word in case.expect[1:]:
            assert word in message, (case.name, message)


def test_missing_operators_are_listed_in_one_error(asan_tools: Tools, tmp_path: Path) -> None:
    out = run_driver(asan_tools, tmp_path, [rp.Case("valid", rp.program())])
    assert out["valid"] == (
        "OperatorMissing",
        "missing operators: aten::add.Tensor, aten::alias, aten::mul.Tensor"
        " (link etrt::kernels_optimized)",
    )


def test_registering_an_operator_twice_fails_clearly(asan_tools: Tools) -> None:
    result = subprocess.run(
        [str(asan_tools.load_check), "--test-kernels", "--test-kernels", "unused.etrt"],
        capture_output=True,
        text=True,
        timeout=60,
        env=sanitizer_env(),
    )
    assert result.returncode == 1
    assert "error: AlreadyRegistered: a kernel for operator 'aten::add.Tensor'" in result.stderr
    # Logged as well, for registrations in static initializers where nobody sees the Error.
    assert "etrt error: kernel registration failed" in result.stderr


def test_runtime_selftest_passes_under_sanitizers(asan_tools: Tools) -> None:
    result = subprocess.run(
        [str(asan_tools.selftest)],
        capture_output=True,
        text=True,
        timeout=120,
        env=sanitizer_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed" in result.stdout


def test_exported_mlp_survives_corruption(asan_tools: Tools, tmp_path: Path) -> None:
    import etrt
    import models

    model, inputs = models.make("mlp", 1)
    data = etrt.export(model, inputs).to_bytes()
    rng = random.Random(7)
    cases = [rp.Case("valid", data)]
    head = min(len(data), 4096)  # the FlatBuffer; the rest is weights
    for i in range(200):
        mutated = bytearray(data)
        mutated[rng.randrange(head)] ^= rng.randint(1, 255)
        cases.append(rp.Case(f"flip{i}", bytes(mutated)))
    cases += [rp.Case(f"cut{n}", data[:n]) for n in range(0, head, 97)]
    out = run_driver(asan_tools, tmp_path, cases)
    assert out["valid"][0] == "OperatorMissing"  # runtime only: the kernels are not linked
    assert "aten::addmm" in out["valid"][1]
    assert {code for code, _ in out.values()} <= ERROR_CODES | {"Ok"}

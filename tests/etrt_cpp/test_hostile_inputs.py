"""Each defect class found by fuzzing and crafted inputs, as a precise input and the one clear
error the runtime must give for it (never a crash, hang, UB report or write fault). The
inputs run through the fuzz targets, which link the real kernels and the XNNPACK delegate and
name each stage's outcome."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import flatbuffers
import pytest
import runtime_programs as rp
from fuzz_build import Fuzzers, build_fuzzers

pytestmark = pytest.mark.slow

xfb: Any = importlib.import_module("etrt.xnnpack._schema.xnnpack_delegate_generated")


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


def one_plan(
    values: tuple[rp.Value, ...],
    operators: tuple[str, ...],
    calls: tuple[rp.KernelCall, ...],
    outputs: tuple[int, ...],
    arena: int = 4096,
    inputs: tuple[int, ...] = (0,),
) -> bytes:
    plan = rp.Plan("forward", values, inputs, outputs, operators, calls, arena)
    return rp.program(plan)


X = rp.TensorValue((2, 3), rp.INPUT)
HUGE = 2**40


def _program_cases() -> dict[str, bytes]:
    base = rp.add_alias_mul_plan()
    return {
        # expand to 2^40 elements, then sum: a view larger than its plan (it used to hang).
        "expand_then_sum": one_plan(
            (
                rp.TensorValue((1,), rp.INPUT),
                rp.IntListValue((HUGE,)),
                rp.BoolValue(False),
                rp.TensorValue((1,), rp.VIEW),
                rp.NullValue(),
                rp.TensorValue((), rp.PLANNED),
            ),
            ("aten::expand", "aten::sum"),
            (rp.KernelCall(0, (0, 1, 2, 3)), rp.KernelCall(1, (3, 4, 5))),
            (5,),
        ),
        # view sizes whose product overflows int64 (a zero hides the others from a plain product).
        "view_size_overflow": one_plan(
            (X, rp.IntListValue((2**62, 4, 0)), rp.TensorValue((2, 3), rp.VIEW)),
            ("aten::view",),
            (rp.KernelCall(0, (0, 1, 2)),),
            (2,),
        ),
        # convolution padding that overflows the output-size arithmetic.
        "conv_padding_overflow": one_plan(
            (
                rp.TensorValue((1, 1, 4, 4), rp.INPUT),
                rp.TensorValue((1, 1, 2, 2), rp.PLANNED),
                rp.NullValue(),
                rp.IntListValue((1, 1)),
                rp.IntListValue((2**62, 2**62)),
                rp.IntListValue((1, 1)),
                rp.BoolValue(False),
                rp.IntListValue((0, 0)),
                rp.IntValue(1),
                rp.TensorValue((1, 1, 3, 3), rp.PLANNED, mem_offset=64),
            ),
            ("aten::convolution",),
            (rp.KernelCall(0, (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)),),
            (9,),
        ),
        # pooling dilation that overflows the same arithmetic.
        "pool_dilation_overflow": one_plan(
            (
                rp.TensorValue((1, 1, 4, 4), rp.INPUT),
                rp.IntListValue((2, 2)),
                rp.IntListValue((1, 1)),
                rp.IntListValue((0, 0)),
                rp.IntListValue((2**62, 2**62)),
                rp.BoolValue(False),
                rp.TensorValue((1, 1, 3, 3), rp.PLANNED),
                rp.TensorValue((1, 1, 3, 3), rp.PLANNED, mem_offset=64, dtype=1),
            ),
            ("aten::max_pool2d_with_indices",),
            (rp.KernelCall(0, (0, 1, 2, 3, 4, 5, 6, 7)),),
            (6,),
        ),
        # a zero-size dimension beside two 2^62 ones: zero bytes, but no sane tensor.
        "zero_dim_hides_huge_ones": rp.program(
            rp.with_value(base, 0, rp.TensorValue((0, 2**62, 2**62), rp.INPUT))
        ),
        # a kernel whose output (the last argument) is a constant.
        "output_into_constant": rp.program(
            replace(base, instructions=(rp.KernelCall(0, (0, 1, 2, 1)),), outputs=(1,))
        ),
        # the same, for an output that is not the last argument: caught when the kernel runs.
        "indices_before_constant_output": one_plan(
            (
                rp.TensorValue((1, 1, 4, 4), rp.INPUT),
                rp.IntListValue((2, 2)),
                rp.IntListValue((2, 2)),
                rp.IntListValue((0, 0)),
                rp.IntListValue((1, 1)),
                rp.BoolValue(False),
                rp.TensorValue((1, 1, 2, 2), rp.CONSTANT),
                rp.TensorValue((1, 1, 2, 2), rp.PLANNED, dtype=1),
            ),
            ("aten::max_pool2d_with_indices",),
            (rp.KernelCall(0, (0, 1, 2, 3, 4, 5, 6, 7)),),
            (7,),
        ),
        # an output no instruction writes: a view has no memory, planned memory is uninitialised.
        "unwritten_view_output": rp.program(
            replace(base, outputs=(5, 4), instructions=base.instructions[:1])
        ),
        "unwritten_planned_output": rp.program(replace(base, instructions=base.instructions[:2])),
    }


EXPECTED_PROGRAM = {
    "expand_then_sum": "aten::expand: the view has shape [1099511627776] but was planned as [1]",
    "view_size_overflow": "shape [4611686018427387904, 4, 0] has more than 68719476736 elements",
    "conv_padding_overflow": "padding [4611686018427387904, 4611686018427387904] and dilation"
    " [1, 1] does not fit the input [1, 1, 4, 4]",
    "pool_dilation_overflow": "output size is empty for input [1, 1, 4, 4]",
    "zero_dim_hides_huge_ones": "InvalidProgram: method 'forward': value 0: tensor has too many",
    "output_into_constant": "InvalidProgram: method 'forward': instruction 0 writes its output"
    " into value 1, a read-only constant",
    "indices_before_constant_output": "max_pool2d_with_indices: output 'out' is read-only memory",
    "unwritten_view_output": "method 'forward': output 1 (value 4) is never written",
    "unwritten_planned_output": "method 'forward': output 0 (value 5) is never written",
}


def test_hostile_programs_fail_with_one_clear_error(fuzzers: Fuzzers, tmp_path: Path) -> None:
    out = replay(fuzzers, "program", tmp_path, _program_cases())
    for name, expected in EXPECTED_PROGRAM.items():
        assert any(expected in line for line in out[name]), (name, out[name])
        assert not any(line == "execute: ok" for line in out[name]), (name, out[name])


# --- XNNPACK delegate blobs ----------------------------------------------------------------------

INPUT, OUTPUT, INTERNAL = 2, 3, 0


def blob(
    values: list[tuple[tuple[int, ...], int, int]],
    nodes: list[tuple[int, int] | None] | None,
    num_inputs: int = 1,
    num_outputs: int = 1,
    misalign_dims: bool = False,
    table_less_node: bool = False,
) -> bytes:
    """values: (dims, kind, io_index); nodes: Clamp (input, output) pairs; None leaves `nodes`
    out. table_less_node adds a node whose type says Clamp but has no table."""
    b = flatbuffers.Builder(256)
    offsets = []
    for dims, kind, io in values:
        if misalign_dims:
            b.Prep(8, 4 + 8 * len(dims))
            b.PrependUint32(0)  # the vector's data now starts 4 bytes past an 8-byte boundary
            b.StartVector(8, len(dims), 4)
        else:
            b.StartVector(8, len(dims), 8)
        for d in reversed(dims):
            b.PrependUint64(d)
        vec = b.EndVector()
        xfb.XValueStart(b)
        xfb.XValueAddDims(b, vec)
        xfb.XValueAddKind(b, kind)
        xfb.XValueAddIoIndex(b, io)
        offsets.append(xfb.XValueEnd(b))
    node_offsets = []
    for pair in nodes or []:
        assert pair is not None
        xfb.ClampStart(b)
        xfb.ClampAddInput(b, pair[0])
        xfb.ClampAddOutput(b, pair[1])
        clamp = xfb.ClampEnd(b)
        xfb.NodeStart(b)
        xfb.NodeAddNodeType(b, xfb.NodeUnion.Clamp)
        xfb.NodeAddNode(b, clamp)
        xfb.NodeAddOutputMin(b, -1.0)
        xfb.NodeAddOutputMax(b, 1.0)
        node_offsets.append(xfb.NodeEnd(b))
    if table_less_node:
        xfb.NodeStart(b)
        xfb.NodeAddNodeType(b, xfb.NodeUnion.Clamp)
        node_offsets.append(xfb.NodeEnd(b))
    xfb.GraphStartValuesVector(b, len(offsets))
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    values_vec = b.EndVector()
    nodes_vec = None
    if nodes is not None:
        xfb.GraphStartNodesVector(b, len(node_offsets))
        for o in reversed(node_offsets):
            b.PrependUOffsetTRelative(o)
        nodes_vec = b.EndVector()
    xfb.GraphStart(b)
    xfb.GraphAddVersion(b, 1)
    xfb.GraphAddValues(b, values_vec)
    if nodes_vec is not None:
        xfb.GraphAddNodes(b, nodes_vec)
    xfb.GraphAddNumInputs(b, num_inputs)
    xfb.GraphAddNumOutputs(b, num_outputs)
    b.Finish(xfb.GraphEnd(b), file_identifier=b"EXNN")
    return bytes(b.Output())


def _dims_misaligned(data: bytes) -> bool:
    g = xfb.Graph.GetRootAs(data, 0)
    v = g.Values(0)
    return v._tab.Vector(v._tab.Offset(4)) % 8 != 0


IO = [((1, 4), INPUT, 0), ((1, 4), OUTPUT, 0)]


def test_hostile_blobs_fail_with_one_clear_error(fuzzers: Fuzzers, tmp_path: Path) -> None:
    misaligned = blob(IO, [(0, 1)], misalign_dims=True)
    if not _dims_misaligned(misaligned):  # the builder's padding decides where the data lands
        misaligned = blob([IO[0], IO[1], ((4,), INTERNAL, 0)], [(0, 1)], misalign_dims=True)
    assert _dims_misaligned(misaligned)
    cases = {
        "valid": blob(IO, [(0, 1)]),
        "nodes_absent": blob([((1, 4), INPUT, 0)], None, num_outputs=0),
        "node_without_table": blob(IO, [(0, 1)], table_less_node=True),
        # A value written and read by nothing: XNNPACK never allocates it and asserts.
        "dangling_value": blob([IO[0], ((1, 4), INTERNAL, 0), IO[1]], [(0, 1), (0, 2)]),
        "misaligned_dims": misaligned,
        # More bytes of values than any tensor may have.
        "workspace_too_large": blob(
            [
                IO[0],
                ((2**34,), INTERNAL, 0),
                ((2**34,), INTERNAL, 0),
                ((2**34,), INTERNAL, 0),
                ((2**34,), INTERNAL, 0),
                ((2**34,), OUTPUT, 0),
            ],
            [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)],
        ),
    }
    out = replay(fuzzers, "xnnpack", tmp_path, cases)
    assert out["valid"] == ["init: ok", "execute: ok", "execute: ok"], out["valid"]
    expected = {
        "nodes_absent": "the graph has no nodes",
        "node_without_table": "node 1 has type 4 but no table",
        "dangling_value": "internal value 1 is written but never read",
        "misaligned_dims": "misaligned dims",
        "workspace_too_large": "the values need more than 1099511627776 bytes",
    }
    for name, words in expected.items():
        assert out[name] == [f"init: InvalidProgram: XNNPACK blob: {words}"] or any(
            words in line and line.startswith("init: InvalidProgram") for line in out[name]
        ), (name, out[name])

"""Each defect class found by fuzzing and crafted inputs, as a precise input and the one clear
error the runtime must give for it, as the fuzz targets name each stage's outcome ("load: ok",
"load_method: OutOfMemory: ..."). tests/etrt_cpp/test_hostile_inputs.py replays them;
tools/fuzz/regressions.py writes them into the committed regression corpus, so the fuzzers
start from every one."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace
from typing import Any

import etrt
import flatbuffers
import hostile_quantized
import numpy as np
import runtime_programs as rp
import torch
from etrt import ir
from etrt.reader import read_program
from etrt.serialize import serialize
from models import StepCache

xfb: Any = importlib.import_module("etrt.xnnpack._schema.xnnpack_delegate_generated")

# The fuzz targets load every method under this budget (tools/fuzz/fuzz_common.h).
FUZZ_MEMORY_BUDGET = 64 << 20


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
# etrt_quant::weight_only_linear's arguments up to group_size: x [1, 32], int4 weights of 16
# channels (uint8 [16, 16]), one scale per channel, no zero points or bias, 4 bits, groups of 32.
_WEIGHT_ONLY_ARGS = (
    rp.TensorValue((1, 32), rp.INPUT),
    rp.TensorValue((16, 16), rp.PLANNED, dtype=int(ir.ScalarType.BYTE)),
    rp.TensorValue((16, 1), rp.PLANNED, mem_offset=256),
    rp.NullValue(),
    rp.NullValue(),
    rp.IntValue(4),
    rp.IntValue(32),
)
HUGE = 2**40


def program_cases() -> dict[str, bytes]:
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
        # avg_pool2d padding that overflowed ATen's "at most half the kernel" check (found by
        # the program fuzzer: UBSan, signed overflow in pad * 2).
        "avg_pool_padding_overflow": one_plan(
            (
                rp.TensorValue((1, 1, 4, 4), rp.INPUT),
                rp.IntListValue((2, 2)),
                rp.IntListValue((1, 1)),
                rp.IntListValue((2**62, 2**62)),
                rp.BoolValue(False),
                rp.BoolValue(True),
                rp.NullValue(),
                rp.TensorValue((1, 1, 3, 3), rp.PLANNED),
            ),
            ("aten::avg_pool2d",),
            (rp.KernelCall(0, (0, 1, 2, 3, 4, 5, 6, 7)),),
            (7,),
        ),
        # col2im with a zero stride: an integer division by zero (SIGFPE) in the block count.
        "col2im_zero_stride": one_plan(
            (
                rp.TensorValue((1, 4, 9), rp.INPUT),
                rp.IntListValue((4, 4)),
                rp.IntListValue((2, 2)),
                rp.IntListValue((1, 1)),
                rp.IntListValue((0, 0)),
                rp.IntListValue((0, 0)),
                rp.TensorValue((1, 1, 4, 4), rp.PLANNED),
            ),
            ("aten::col2im",),
            (rp.KernelCall(0, (0, 1, 2, 3, 4, 5, 6)),),
            (6,),
        ),
        # upsampling an empty input to a planned non-empty output read from before the input.
        "upsample_empty_input": one_plan(
            (
                rp.TensorValue((1, 1, 0, 4), rp.INPUT),
                rp.NullValue(),
                rp.NullValue(),
                rp.TensorValue((1, 1, 2, 4), rp.PLANNED),
            ),
            ("aten::upsample_nearest2d.vec",),
            (rp.KernelCall(0, (0, 1, 2, 3)),),
            (3,),
        ),
        # adaptive pooling of an input with an empty extent beside a huge one: zero bytes, but
        # every output walked the huge extent (it used to hang), and empty windows divide by 0.
        "adaptive_pool2d_empty_extent": one_plan(
            (
                rp.TensorValue((1, 2, 2**27, 0), rp.INPUT),
                rp.IntListValue((5, 4)),
                rp.TensorValue((1, 2, 5, 4), rp.PLANNED),
            ),
            ("aten::_adaptive_avg_pool2d",),
            (rp.KernelCall(0, (0, 1, 2)),),
            (2,),
        ),
        "adaptive_pool3d_empty_extent": one_plan(
            (
                rp.TensorValue((8, 8, 2**27, 0), rp.INPUT),
                rp.IntListValue((5, 7, 4)),
                rp.TensorValue((8, 5, 7, 4), rp.PLANNED),
            ),
            ("aten::_adaptive_avg_pool3d",),
            (rp.KernelCall(0, (0, 1, 2)),),
            (2,),
            arena=8192,
        ),
        # int4 weight-only linears as an earlier etrt wrote them (rows, no `tile` argument), and
        # with a tile this etrt does not read: refused, never read in the wrong order.
        "weight_only_rows_layout": one_plan(
            (*_WEIGHT_ONLY_ARGS, rp.TensorValue((1, 16), rp.PLANNED, mem_offset=512)),
            ("etrt_quant::weight_only_linear",),
            (rp.KernelCall(0, tuple(range(8))),),
            (7,),
        ),
        "weight_only_other_tile": one_plan(
            (
                *_WEIGHT_ONLY_ARGS,
                rp.IntValue(8),
                rp.TensorValue((1, 16), rp.PLANNED, mem_offset=512),
            ),
            ("etrt_quant::weight_only_linear",),
            (rp.KernelCall(0, tuple(range(9))),),
            (8,),
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
        # max_pool3d_with_indices writes `out` (not its last argument) into a constant.
        "pool3d_out_into_constant": one_plan(
            (
                rp.TensorValue((1, 1, 4, 4, 2), rp.INPUT),
                rp.IntListValue((2, 2, 2)),
                rp.IntListValue((2, 2, 2)),
                rp.IntListValue((0, 0, 0)),
                rp.IntListValue((1, 1, 1)),
                rp.BoolValue(False),
                rp.TensorValue((1, 1, 2, 2, 1), rp.CONSTANT),
                rp.TensorValue((1, 1, 2, 2, 1), rp.PLANNED, dtype=1),
            ),
            ("aten::max_pool3d_with_indices",),
            (rp.KernelCall(0, (0, 1, 2, 3, 4, 5, 6, 7)),),
            (7,),
        ),
        # outputs no instruction writes: a view has no memory, planned memory nothing in it.
        # Every one is named.
        "unwritten_view_output": rp.program(
            replace(base, outputs=(5, 4), instructions=base.instructions[:1])
        ),
        "unwritten_planned_output": rp.program(replace(base, instructions=base.instructions[:2])),
        # an arena far larger than its planned tensors reach: the size field alone would
        # commit 128 GiB.
        "arena_beyond_its_tensors": rp.program(replace(base, arena_size=2**37)),
        # an arena its tensors do reach, beyond the memory budget (64 MiB in the fuzzers).
        "arena_over_budget": rp.program(
            replace(
                rp.with_value(base, 5, rp.TensorValue((2, 3), rp.PLANNED, mem_offset=2**27)),
                arena_size=2**27 + 4096,
            )
        ),
        # a view of 4 GiB of floats that needs no memory, beyond the budget all the same: a
        # kernel's work follows the sizes it is given.
        "view_over_budget": one_plan(
            (
                rp.TensorValue((1,), rp.INPUT),
                rp.IntListValue((2**30,)),
                rp.BoolValue(False),
                rp.TensorValue((2**30,), rp.VIEW),
                rp.NullValue(),
                rp.TensorValue((), rp.PLANNED),
            ),
            ("aten::expand", "aten::sum"),
            (rp.KernelCall(0, (0, 1, 2, 3)), rp.KernelCall(1, (3, 4, 5))),
            (5,),
        ),
        **stateful_dynamic_cases(),
        **hostile_quantized.program_cases(),
    }


def _step_cache() -> ir.ProgramData:
    """A format-2 program: two State tensors, dynamic inputs, symbolic sizes (etrt_prim::mul
    feeding an int list's item_values)."""
    torch.manual_seed(0)
    seq = torch.export.Dim("seq", min=1, max=7)
    program = etrt.export(
        StepCache().eval(),
        (torch.randn(3, 4), torch.arange(3)),
        dynamic_shapes=({0: seq}, {0: seq}),
    )
    return read_program(bytes(program))[0]


def _changed(program: ir.ProgramData, changes: dict[int, ir.Value]) -> bytes:
    plan = program.plans[0]
    values = list(plan.values)
    for index, value in changes.items():
        values[index] = value
    return serialize(replace(program, plans=[replace(plan, values=values)]))


def stateful_dynamic_cases() -> dict[str, bytes]:
    program = _step_cache()
    plan = program.plans[0]
    values = plan.values
    states = [
        i
        for i, v in enumerate(values)
        if isinstance(v, ir.TensorValue) and v.storage == ir.StorageKind.STATE
    ]
    lists = [i for i, v in enumerate(values) if isinstance(v, ir.IntListValue) and v.item_values]
    mul = next(
        c for c in plan.instructions
        if isinstance(c, ir.KernelCall) and plan.operators[c.op_index] == "etrt_prim::mul"
    )  # fmt: skip
    written = {c.args[-1] for c in plan.instructions}
    factor = next(
        a for a in mul.args[:2] if isinstance(values[a], ir.IntValue) and a not in written
    )
    listed = values[lists[0]]
    assert isinstance(listed, ir.IntListValue)
    tensor = next(
        i
        for i, v in enumerate(values)
        if isinstance(v, ir.TensorValue) and v.storage == ir.StorageKind.PLANNED
    )
    counter = values[states[1]]
    assert isinstance(counter, ir.TensorValue)
    addmm = next(
        c for c in plan.instructions
        if isinstance(c, ir.KernelCall) and plan.operators[c.op_index] == "aten::addmm"
    )  # fmt: skip
    mm_out = values[addmm.args[-1]]
    assert isinstance(mm_out, ir.TensorValue) and mm_out.dynamic
    return {
        # a state's initial value from a segment of another size than the state's
        "state_initial_value_size": _changed(
            program, {states[1]: replace(counter, zero_initial=False, constant_segment=1)}
        ),
        # state is memory the method keeps: its sizes are fixed
        "state_marked_dynamic": _changed(program, {states[1]: replace(counter, dynamic=True)}),
        # a symbolic int-list item naming a tensor, and an item count that differs
        "int_list_item_not_an_int": _changed(
            program, {lists[0]: replace(listed, item_values=(tensor, *listed.item_values[1:]))}
        ),
        "int_list_item_count": _changed(
            program, {lists[0]: replace(listed, item_values=listed.item_values[:1])}
        ),
        # size arithmetic that overflows int64 at run time
        "symbolic_size_overflow": _changed(program, {factor: ir.IntValue(2**62)}),
        # a symbolic view size beyond the view's planned capacity
        "symbolic_view_beyond_plan": _changed(
            program,
            {factor: ir.IntValue(4), lists[0]: replace(listed, items=(listed.items[0], -1))},
        ),
        # a dynamic output planned smaller than what its kernel computes from the inputs
        "dynamic_output_beyond_capacity": _changed(
            program, {addmm.args[-1]: replace(mm_out, sizes=(1, *mm_out.sizes[1:]))}
        ),
    }


EXPECTED_PROGRAM = {
    "expand_then_sum": "aten::expand: the view has shape [1099511627776] but was planned as [1]",
    "view_size_overflow": "shape [4611686018427387904, 4, 0] has more than 68719476736 elements",
    "conv_padding_overflow": "padding [4611686018427387904, 4611686018427387904] and dilation"
    " [1, 1] does not fit the input [1, 1, 4, 4]",
    "pool_dilation_overflow": "output size is empty for input [1, 1, 4, 4]",
    "avg_pool_padding_overflow": "aten::avg_pool2d: invalid window: kernel [2, 2], stride [1, 1],"
    " padding [4611686018427387904, 4611686018427387904]",
    "col2im_zero_stride": "aten::col2im: kernel_size, dilation, padding and stride do not fit"
    " output_size [4, 4]",
    "upsample_empty_input": "aten::upsample_nearest2d.vec: cannot resample an empty input to a"
    " non-empty output",
    "adaptive_pool2d_empty_extent": "aten::_adaptive_avg_pool2d: expects non-zero spatial sizes,"
    " got 'self' of shape [1, 2, 134217728, 0]",
    "adaptive_pool3d_empty_extent": "aten::_adaptive_avg_pool3d: expects non-zero spatial sizes,"
    " got 'self' of shape [8, 8, 134217728, 0]",
    "weight_only_rows_layout": "etrt_quant::weight_only_linear: the program stores its weights"
    " in rows, an earlier etrt's layout: export it again",
    "weight_only_other_tile": "etrt_quant::weight_only_linear: weights tiled by 8 channels; this"
    " etrt reads tiles of 16: export the program again",
    "zero_dim_hides_huge_ones": "InvalidProgram: method 'forward': value 0: tensor has too many",
    "output_into_constant": "InvalidProgram: method 'forward': instruction 0 writes its output"
    " into value 1, a read-only constant",
    "indices_before_constant_output": "max_pool2d_with_indices: output 'out' is read-only memory",
    "pool3d_out_into_constant": "max_pool3d_with_indices: output 'out' is read-only memory",
    "unwritten_view_output": "method 'forward': output 0 (value 5), output 1 (value 4): never"
    " written by an instruction",
    "unwritten_planned_output": "method 'forward': output 0 (value 5): never written",
    "arena_beyond_its_tensors": "load: InvalidProgram: method 'forward': arena_size 137438953472"
    " is larger than its planned tensors need (88 bytes)",
    "arena_over_budget": "load_method: OutOfMemory: method 'forward': the arena needs 134221824"
    " bytes, more than the 67108864-byte memory budget",
    "view_over_budget": "load_method: OutOfMemory: method 'forward': value 3 needs 4294967296"
    " bytes, more than the 67108864-byte memory budget",
    "state_initial_value_size": "load: InvalidProgram: method 'forward': value 3: the initial"
    " value's segment 1 holds 16 bytes, the state needs 8",
    "state_marked_dynamic": "load: InvalidProgram: method 'forward': value 3: only computed"
    " tensors and inputs can have a dynamic shape",
    "int_list_item_not_an_int": "int list item refers to value 12, which is not an Int",
    "int_list_item_count": "value 48: int list has 2 items but 1 item values",
    "symbolic_size_overflow": "(etrt_prim::mul) failed: etrt_prim::mul: integer overflow",
    "symbolic_view_beyond_plan": "aten::view: the view has shape [28, 1] but was planned as"
    " [14, 2]",
    "dynamic_output_beyond_capacity": "aten::addmm: output 'out' has shape [7, 4], beyond the"
    " shape planned for it: [1, 4]",
    **hostile_quantized.EXPECTED_PROGRAM,
}


INPUT, OUTPUT, INTERNAL = 2, 3, 0


def blob(
    values: list[tuple[tuple[int, ...], int, int]],
    nodes: list[tuple[int, int] | None] | None,
    num_inputs: int = 1,
    num_outputs: int = 1,
    misalign_dims: int | None = None,
    table_less_node: bool = False,
) -> bytes:
    """values: (dims, kind, io_index); nodes: Clamp (input, output) pairs; None leaves `nodes`
    out. table_less_node adds a node whose type says Clamp but has no table. misalign_dims
    writes every dims vector with 4-byte alignment only, after that many bytes of padding."""
    b = flatbuffers.Builder(256)
    offsets = []
    for dims, kind, io in values:
        if misalign_dims is not None:
            # Each ulong as two uint32 words, so the builder aligns the data to 4 bytes only.
            b.Prep(8, 0)
            for _ in range(misalign_dims // 4):
                b.PrependUint32(0)
            b.StartVector(4, 2 * len(dims), 4)
            for d in reversed(dims):
                b.PrependUint32(d >> 32)
                b.PrependUint32(d & 0xFFFFFFFF)
            b.vectorNumElems = len(dims)
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


def dims_misaligned(data: bytes) -> bool:
    g = xfb.Graph.GetRootAs(data, 0)
    v = g.Values(0)
    return v._tab.Vector(v._tab.Offset(4)) % 8 != 0


IO = [((1, 4), INPUT, 0), ((1, 4), OUTPUT, 0)]


def blob_cases() -> dict[str, bytes]:
    # One of the two paddings puts the first value's dims 4 bytes off an 8-byte boundary.
    misaligned = next(
        data
        for data in (blob(IO, [(0, 1)], misalign_dims=pad) for pad in (0, 4))
        if dims_misaligned(data)
    )
    return {
        "nodes_absent": blob([((1, 4), INPUT, 0)], None, num_outputs=0),
        "node_without_table": blob(IO, [(0, 1)], table_less_node=True),
        # A value written and read by nothing: XNNPACK never allocates it and asserts.
        "dangling_value": blob([IO[0], ((1, 4), INTERNAL, 0), IO[1]], [(0, 1), (0, 2)]),
        "misaligned_dims": misaligned,
        # A valid chain whose values are legal tensors but need 448 GiB: beyond the memory
        # budget (64 MiB in the fuzzers), refused before XNNPACK allocates anything.
        "workspace_over_budget": blob(
            [((2**34,), INPUT, 0)] + [((2**34,), INTERNAL, 0)] * 4 + [((2**34,), OUTPUT, 0)],
            [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)],
        ),
        # More bytes of values than any delegate may describe, whatever the budget.
        "workspace_beyond_format_cap": blob(
            [((2**36,), INPUT, 0)] + [((2**36,), INTERNAL, 0)] * 4 + [((2**36,), OUTPUT, 0)],
            [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)],
        ),
        **qs8_cases(),
    }


def valid_blob() -> bytes:
    return blob(IO, [(0, 1)])


# An int8 (qs8) 1x1 convolution as the int8 delegate writes it: QInt8 input and output, a QCInt8
# filter with one scale per output channel, a QCInt32 bias whose scales are input scale x
# filter scale. Each case below breaks one of its quantization fields.
_QS8_BIAS_SCALES = [float(np.float32(0.5) * np.float32(s)) for s in (0.1, 0.2)]
QS8_VALUES: list[dict[str, Any]] = [
    {"dims": (1, 4, 4, 2), "kind": INPUT, "datatype": 1, "scale": 0.5, "zero_point": 1},
    {"dims": (2, 1, 1, 2), "kind": 1, "datatype": 2, "channel_scales": [0.1, 0.2], "offset": 0,
     "data": np.array([1, -2, 3, -4], dtype=np.int8).tobytes()},
    {"dims": (2,), "kind": 1, "datatype": 3, "channel_scales": _QS8_BIAS_SCALES, "offset": 64,
     "data": np.array([10, -20], dtype="<i4").tobytes()},
    {"dims": (1, 4, 4, 2), "kind": OUTPUT, "datatype": 1, "scale": 0.25, "zero_point": -3},
]  # fmt: skip


def qs8_blob(changes: dict[int, dict[str, Any]] | None = None) -> bytes:
    """QS8_VALUES (value index -> fields replaced by `changes`) and one Conv2d node, with the
    data area after the FlatBuffer at a 64-byte boundary."""
    values = [{**v, **(changes or {}).get(i, {})} for i, v in enumerate(QS8_VALUES)]
    data = bytearray(128)
    for v in values:
        if "data" in v:
            data[v["offset"] : v["offset"] + len(v["data"])] = v["data"]
    del data[128:]  # a constant placed past the end stays past it

    def flatbuffer(data_offset: int) -> bytes:
        b = flatbuffers.Builder(512)
        offsets = []
        for v in values:
            b.StartVector(8, len(v["dims"]), 8)
            for d in reversed(v["dims"]):
                b.PrependUint64(d)
            dims = b.EndVector()
            scales = None
            if "channel_scales" in v:
                scales = b.CreateNumpyVector(np.asarray(v["channel_scales"], dtype=np.float32))
            xfb.XValueStart(b)
            xfb.XValueAddDims(b, dims)
            xfb.XValueAddKind(b, v["kind"])
            xfb.XValueAddDatatype(b, v["datatype"])
            if "scale" in v:
                xfb.XValueAddScale(b, v["scale"])
                xfb.XValueAddZeroPoint(b, v["zero_point"])
            if scales is not None:
                xfb.XValueAddChannelScales(b, scales)
                xfb.XValueAddChannelDim(b, v.get("channel_dim", 0))
            xfb.XValueAddDataOffset(b, v.get("offset", 0))
            offsets.append(xfb.XValueEnd(b))
        xfb.Conv2dStart(b)
        for add in (xfb.Conv2dAddKernelH, xfb.Conv2dAddKernelW, xfb.Conv2dAddStrideH,
                    xfb.Conv2dAddStrideW, xfb.Conv2dAddDilationH, xfb.Conv2dAddDilationW,
                    xfb.Conv2dAddGroups):  # fmt: skip
            add(b, 1)
        xfb.Conv2dAddGroupInputChannels(b, 2)
        xfb.Conv2dAddGroupOutputChannels(b, 2)
        xfb.Conv2dAddInput(b, 0)
        xfb.Conv2dAddFilter(b, 1)
        xfb.Conv2dAddBias(b, 2)
        xfb.Conv2dAddOutput(b, 3)
        conv = xfb.Conv2dEnd(b)
        xfb.NodeStart(b)
        xfb.NodeAddNodeType(b, xfb.NodeUnion.Conv2d)
        xfb.NodeAddNode(b, conv)
        xfb.NodeAddOutputMin(b, -math.inf)
        xfb.NodeAddOutputMax(b, math.inf)
        node = xfb.NodeEnd(b)
        xfb.GraphStartValuesVector(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        values_vec = b.EndVector()
        xfb.GraphStartNodesVector(b, 1)
        b.PrependUOffsetTRelative(node)
        nodes_vec = b.EndVector()
        xfb.GraphStart(b)
        xfb.GraphAddVersion(b, 1)
        xfb.GraphAddValues(b, values_vec)
        xfb.GraphAddNodes(b, nodes_vec)
        xfb.GraphAddNumInputs(b, 1)
        xfb.GraphAddNumOutputs(b, 1)
        xfb.GraphAddDataOffset(b, data_offset)
        xfb.GraphAddDataSize(b, len(data))
        b.Finish(xfb.GraphEnd(b), file_identifier=b"EXNN")
        return bytes(b.Output())

    offset = 64
    while (needed := -(-len(flatbuffer(offset)) // 64) * 64) != offset:
        offset = needed
    head = flatbuffer(offset)
    return head + bytes(offset - len(head)) + bytes(data)


def qs8_cases() -> dict[str, bytes]:
    return {
        "qint8_scale_zero": qs8_blob({0: {"scale": 0.0}}),
        "qint8_scale_nan": qs8_blob({3: {"scale": math.nan}}),
        "qint8_zero_point_out_of_range": qs8_blob({0: {"zero_point": 200}}),
        "qint8_constant": qs8_blob({1: {"datatype": 1, "scale": 0.1, "zero_point": 0}}),
        "unknown_datatype": qs8_blob({0: {"datatype": 9}}),
        "channel_scales_short": qs8_blob({1: {"channel_scales": [0.1]}}),
        "channel_scale_infinite": qs8_blob({1: {"channel_scales": [math.inf, 0.2]}}),
        "channel_dim_out_of_range": qs8_blob({1: {"channel_dim": 7}}),
        "bias_scale_mismatch": qs8_blob({2: {"channel_scales": [_QS8_BIAS_SCALES[0], 0.3]}}),
        "int8_filter_on_float_input": qs8_blob({0: {"datatype": 0}}),
        "int8_output_of_float_conv": qs8_blob(
            {0: {"datatype": 0}, 1: {"datatype": 0, "data": bytes(16)}, 2: {"datatype": 0}}
        ),
        "int8_constant_outside_data": qs8_blob({2: {"offset": 124}}),
    }


_BAD_BLOB = "init: InvalidProgram: XNNPACK blob: "
EXPECTED_BLOB = {
    "nodes_absent": _BAD_BLOB + "the graph has no nodes",
    "node_without_table": _BAD_BLOB + "node 1 has type 4 but no table",
    "dangling_value": _BAD_BLOB + "internal value 1 is written but never read",
    "misaligned_dims": _BAD_BLOB + "value 0: misaligned dims",
    "workspace_over_budget": "init: OutOfMemory: XNNPACK blob: the delegate needs 481036337216"
    " bytes (values, packed weights, indirection and scratch), more than the 67108864 bytes its"
    " method's memory budget leaves",
    "workspace_beyond_format_cap": _BAD_BLOB + "the values need more than 1099511627776 bytes",
    "qint8_scale_zero": _BAD_BLOB + "value 0: QInt8 scale must be finite, normal and positive",
    "qint8_scale_nan": _BAD_BLOB + "value 3: QInt8 scale must be finite, normal and positive",
    "qint8_zero_point_out_of_range": _BAD_BLOB + "value 0: QInt8 zero point outside [-128, 127]",
    "qint8_constant": _BAD_BLOB + "value 1: QInt8 values cannot be constants",
    "unknown_datatype": _BAD_BLOB + "value 0 has an unknown datatype",
    "channel_scales_short": _BAD_BLOB
    + "value 1: needs one channel scale per channel of dimension 0",
    "channel_scale_infinite": _BAD_BLOB
    + "value 1: channel scale 0 must be finite, normal and positive",
    "channel_dim_out_of_range": _BAD_BLOB + "value 1: channel_dim out of range",
    "bias_scale_mismatch": _BAD_BLOB
    + "node 0: bias scale of channel 1 is not input scale x filter scale",
    "int8_filter_on_float_input": _BAD_BLOB + "node 0: value 1 must be float32 for this node",
    "int8_output_of_float_conv": _BAD_BLOB + "node 0: value 3 must be float32 for this node",
    "int8_constant_outside_data": _BAD_BLOB + "value 2: constant data lies outside the data area",
}


# --- named data maps (.ptd) ------------------------------------------------------------------

dm: Any = importlib.import_module("etrt._schema.data_map_generated")


def ptd(
    tensors: list[tuple[str, int, tuple[int, ...], tuple[int, ...], int]],
    segments: list[tuple[int, int]],
    payload: int = 64,
    version: int = 1,
) -> bytes:
    """A .ptd whose tensors are (key, scalar type, sizes, dim order, segment) and segments
    (offset, size), both as given (no check), then `payload` bytes of segment area."""

    def flatbuffer(base: int) -> bytes:
        b = flatbuffers.Builder(256)
        b.ForceDefaults(True)  # the size must not depend on `base`
        entries = []
        for key, dtype, sizes, order, segment in tensors:
            name = b.CreateString(key)
            b.StartVector(8, len(sizes), 8)
            for s in reversed(sizes):
                b.PrependInt64(s)
            sizes_vec = b.EndVector()
            order_vec = b.CreateByteVector(bytes(order)) if order else None
            dm.NamedTensorStart(b)
            dm.NamedTensorAddKey(b, name)
            dm.NamedTensorAddScalarType(b, dtype)
            dm.NamedTensorAddSizes(b, sizes_vec)
            if order_vec is not None:
                dm.NamedTensorAddDimOrder(b, order_vec)
            dm.NamedTensorAddSegment(b, segment)
            entries.append(dm.NamedTensorEnd(b))
        dm.DataMapStartTensorsVector(b, len(entries))
        for e in reversed(entries):
            b.PrependUOffsetTRelative(e)
        tensor_vec = b.EndVector()
        dm.DataMapStartSegmentsVector(b, len(segments))
        for offset, size in reversed(segments):
            dm.CreateTensorSegment(b, offset, size)
        seg_vec = b.EndVector()
        dm.DataMapStart(b)
        dm.DataMapAddVersion(b, version)
        dm.DataMapAddTensors(b, tensor_vec)
        dm.DataMapAddSegments(b, seg_vec)
        dm.DataMapAddSegmentBaseOffset(b, base)
        b.Finish(dm.DataMapEnd(b), file_identifier=b"ETDM")
        return bytes(b.Output())

    base = (len(flatbuffer(0)) + 63) // 64 * 64
    head = flatbuffer(base)
    return (
        head + bytes(base - len(head)) + bytes(range(256)) * (payload // 256) + bytes(payload % 256)
    )


F32, I64 = 0, 1


def valid_data_map() -> bytes:
    return ptd([("w", F32, (2, 3), (), 0), ("ids", I64, (4,), (), 1)], [(0, 24), (64, 32)], 128)


def data_map_cases() -> dict[str, bytes]:
    return {
        # a zero-size dimension beside two 2^62 ones: zero bytes, but no sane tensor.
        "zero_dim_hides_huge_ones": ptd([("w", F32, (0, 2**62, 2**62), (), 0)], [(0, 0)]),
        # segments that lie outside the file or hold less than their tensor.
        "segment_outside_the_file": ptd([("w", I64, (4, 4), (), 0)], [(2**63, 128)]),
        "segment_smaller_than_its_tensor": ptd([("w", F32, (4, 4), (), 0)], [(0, 32)]),
        "segment_index_out_of_range": ptd([("w", F32, (2,), (), 7)], [(0, 8)]),
        "dim_order_not_a_permutation": ptd([("w", F32, (2, 2), (1, 1), 0)], [(0, 16)]),
        "key_twice": ptd([("w", F32, (2,), (), 0), ("w", F32, (2,), (), 0)], [(0, 8)]),
        "unknown_scalar_type": ptd([("w", 99, (2,), (), 0)], [(0, 8)]),
        "newer_version": ptd([("w", F32, (2,), (), 0)], [(0, 8)], version=2),
    }


_BAD_MAP = "load: InvalidProgram: data map: "
EXPECTED_DATA_MAP = {
    "zero_dim_hides_huge_ones": _BAD_MAP + "tensor 0 ('w') is too large",
    "segment_outside_the_file": _BAD_MAP + "tensor 0 ('w'): segment 0 (offset 9223372036854775808,"
    " size 128) does not hold its 128 bytes inside the file",
    "segment_smaller_than_its_tensor": _BAD_MAP + "tensor 0 ('w'): segment 0 (offset 0, size 32)"
    " does not hold its 64 bytes inside the file",
    "segment_index_out_of_range": _BAD_MAP + "tensor 0 ('w') refers to segment 7, but the file"
    " has 1",
    "dim_order_not_a_permutation": _BAD_MAP + "tensor 0 ('w'): dim_order is not a permutation",
    "key_twice": _BAD_MAP + "key 'w' appears twice",
    "unknown_scalar_type": _BAD_MAP + "tensor 0 ('w') has unknown scalar type 99",
    "newer_version": "load: UnsupportedVersion: data map version 2, but this runtime reads"
    " version 1",
}

"""ProgramData -> bytes: the FlatBuffer, then 64-byte aligned constant segments after it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._fb import fb, flatbuffers
from .ir import (
    FILE_IDENTIFIER,
    SEGMENT_ALIGNMENT,
    BackendDelegate,
    BoolListValue,
    BoolValue,
    DataSegment,
    DelegateCall,
    DoubleListValue,
    DoubleValue,
    ExecutionPlan,
    IntListValue,
    IntValue,
    NullValue,
    OptionalTensorListValue,
    ProgramData,
    StringValue,
    TensorListValue,
    TensorValue,
    Value,
    align,
)


def _vector(builder: Any, array: np.ndarray[Any, Any]) -> int:
    return int(builder.CreateNumpyVector(array))


def _offsets_vector(builder: Any, start_fn: Any, offsets: list[int]) -> int:
    start_fn(builder, len(offsets))
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return int(builder.EndVector())


# The list values differ only in element type and generated builder functions.
_LISTS: dict[type, tuple[Any, Any, Any, Any, int]] = {
    IntListValue: (
        np.int64,
        fb.IntListStart,
        fb.IntListAddItems,
        fb.IntListEnd,
        fb.ValueUnion.IntList,
    ),
    DoubleListValue: (
        np.float64,
        fb.DoubleListStart,
        fb.DoubleListAddItems,
        fb.DoubleListEnd,
        fb.ValueUnion.DoubleList,
    ),
    BoolListValue: (
        np.bool_,
        fb.BoolListStart,
        fb.BoolListAddItems,
        fb.BoolListEnd,
        fb.ValueUnion.BoolList,
    ),
    TensorListValue: (
        np.int32,
        fb.TensorListStart,
        fb.TensorListAddItems,
        fb.TensorListEnd,
        fb.ValueUnion.TensorList,
    ),
    OptionalTensorListValue: (
        np.int32,
        fb.OptionalTensorListStart,
        fb.OptionalTensorListAddItems,
        fb.OptionalTensorListEnd,
        fb.ValueUnion.OptionalTensorList,
    ),
}


def _write_value(builder: Any, value: Value) -> int:
    kind: int
    body: int
    if isinstance(value, TensorValue):
        sizes = _vector(builder, np.asarray(value.sizes, dtype=np.int64))
        dim_order = _vector(builder, np.asarray(value.dim_order, dtype=np.uint8))
        key = builder.CreateString(value.external_key) if value.external_key else None
        bounds = [
            _vector(builder, np.asarray(b, dtype=np.int64)) if b else None
            for b in (value.min_sizes, value.max_sizes)
        ]
        fb.TensorStart(builder)
        fb.TensorAddScalarType(builder, int(value.scalar_type))
        fb.TensorAddSizes(builder, sizes)
        fb.TensorAddDimOrder(builder, dim_order)
        fb.TensorAddStorage(builder, int(value.storage))
        fb.TensorAddConstantSegment(builder, value.constant_segment)
        fb.TensorAddMemOffset(builder, value.mem_offset)
        if key is not None:
            fb.TensorAddExternalKey(builder, key)
        fb.TensorAddDynamic(builder, value.dynamic)
        if bounds[0] is not None:
            fb.TensorAddMinSizes(builder, bounds[0])
        if bounds[1] is not None:
            fb.TensorAddMaxSizes(builder, bounds[1])
        fb.TensorAddZeroInitial(builder, value.zero_initial)
        kind, body = fb.ValueUnion.Tensor, fb.TensorEnd(builder)
    elif isinstance(value, NullValue):
        fb.NullStart(builder)
        kind, body = fb.ValueUnion.Null, fb.NullEnd(builder)
    elif isinstance(value, BoolValue):
        fb.BoolStart(builder)
        fb.BoolAddVal(builder, value.val)
        kind, body = fb.ValueUnion.Bool, fb.BoolEnd(builder)
    elif isinstance(value, IntValue):
        fb.IntStart(builder)
        fb.IntAddVal(builder, value.val)
        kind, body = fb.ValueUnion.Int, fb.IntEnd(builder)
    elif isinstance(value, DoubleValue):
        fb.DoubleStart(builder)
        # FlatBuffers leaves out a field equal to its default, and -0.0 == 0.0: write it anyway
        negative_zero = value.val == 0.0 and math.copysign(1.0, value.val) < 0
        builder.ForceDefaults(negative_zero)
        fb.DoubleAddVal(builder, value.val)
        builder.ForceDefaults(False)
        kind, body = fb.ValueUnion.Double, fb.DoubleEnd(builder)
    elif isinstance(value, StringValue):
        s = builder.CreateString(value.val)
        fb.StringStart(builder)
        fb.StringAddVal(builder, s)
        kind, body = fb.ValueUnion.String, fb.StringEnd(builder)
    elif isinstance(value, IntListValue) and value.item_values:
        items = _vector(builder, np.asarray(value.items, dtype=np.int64))
        symbolic = _vector(builder, np.asarray(value.item_values, dtype=np.int32))
        fb.IntListStart(builder)
        fb.IntListAddItems(builder, items)
        fb.IntListAddItemValues(builder, symbolic)
        kind, body = fb.ValueUnion.IntList, fb.IntListEnd(builder)
    elif type(value) in _LISTS:
        dtype, start, add_items, end, kind = _LISTS[type(value)]
        items = _vector(builder, np.asarray(value.items, dtype=dtype))
        start(builder)
        add_items(builder, items)
        body = end(builder)
    else:  # pragma: no cover - the Value union is closed
        raise TypeError(f"cannot serialize {value!r}")
    fb.ValueStart(builder)
    fb.ValueAddValType(builder, kind)
    fb.ValueAddVal(builder, body)
    return int(fb.ValueEnd(builder))


def _write_delegate(builder: Any, delegate: BackendDelegate) -> int:
    spec_offsets = []
    for spec in delegate.compile_specs:
        key = builder.CreateString(spec.key)
        value = _vector(builder, np.frombuffer(spec.value, dtype=np.uint8))
        fb.CompileSpecStart(builder)
        fb.CompileSpecAddKey(builder, key)
        fb.CompileSpecAddValue(builder, value)
        spec_offsets.append(fb.CompileSpecEnd(builder))
    specs = _offsets_vector(builder, fb.BackendDelegateStartCompileSpecsVector, spec_offsets)
    ident = builder.CreateString(delegate.id)
    fb.BackendDelegateStart(builder)
    fb.BackendDelegateAddId(builder, ident)
    fb.BackendDelegateAddSegment(builder, delegate.segment)
    fb.BackendDelegateAddCompileSpecs(builder, specs)
    return int(fb.BackendDelegateEnd(builder))


def _write_plan(builder: Any, plan: ExecutionPlan) -> int:
    name = builder.CreateString(plan.name)
    values = _offsets_vector(
        builder, fb.ExecutionPlanStartValuesVector, [_write_value(builder, v) for v in plan.values]
    )
    inputs = _vector(builder, np.asarray(plan.inputs, dtype=np.int32))
    outputs = _vector(builder, np.asarray(plan.outputs, dtype=np.int32))

    op_offsets = []
    for op in plan.operators:
        op_name = builder.CreateString(op)
        fb.OperatorStart(builder)
        fb.OperatorAddName(builder, op_name)
        op_offsets.append(fb.OperatorEnd(builder))
    operators = _offsets_vector(builder, fb.ExecutionPlanStartOperatorsVector, op_offsets)

    instr_offsets = []
    for instr in plan.instructions:
        args = _vector(builder, np.asarray(instr.args, dtype=np.int32))
        if isinstance(instr, DelegateCall):
            fb.DelegateCallStart(builder)
            fb.DelegateCallAddDelegateIndex(builder, instr.delegate_index)
            fb.DelegateCallAddArgs(builder, args)
            call, call_type = fb.DelegateCallEnd(builder), fb.InstructionUnion.DelegateCall
        else:
            fb.KernelCallStart(builder)
            fb.KernelCallAddOpIndex(builder, instr.op_index)
            fb.KernelCallAddArgs(builder, args)
            call, call_type = fb.KernelCallEnd(builder), fb.InstructionUnion.KernelCall
        fb.InstructionStart(builder)
        fb.InstructionAddCallType(builder, call_type)
        fb.InstructionAddCall(builder, call)
        instr_offsets.append(fb.InstructionEnd(builder))
    instructions = _offsets_vector(builder, fb.ExecutionPlanStartInstructionsVector, instr_offsets)
    delegates = _offsets_vector(
        builder,
        fb.ExecutionPlanStartDelegatesVector,
        [_write_delegate(builder, d) for d in plan.delegates],
    )

    fb.ExecutionPlanStart(builder)
    fb.ExecutionPlanAddName(builder, name)
    fb.ExecutionPlanAddValues(builder, values)
    fb.ExecutionPlanAddInputs(builder, inputs)
    fb.ExecutionPlanAddOutputs(builder, outputs)
    fb.ExecutionPlanAddOperators(builder, operators)
    fb.ExecutionPlanAddInstructions(builder, instructions)
    fb.ExecutionPlanAddDelegates(builder, delegates)
    fb.ExecutionPlanAddArenaSize(builder, plan.arena_size)
    return int(fb.ExecutionPlanEnd(builder))


def segment_layout(segments: list[bytes]) -> list[DataSegment]:
    layout = []
    offset = 0
    for data in segments:
        layout.append(DataSegment(offset, len(data)))
        offset = align(offset + len(data), SEGMENT_ALIGNMENT)
    return layout


def _build_flatbuffer(program: ProgramData, layout: list[DataSegment], base: int) -> bytes:
    builder = flatbuffers.Builder(4096)
    plans = [_write_plan(builder, p) for p in program.plans]
    plans_vec = _offsets_vector(builder, fb.ProgramStartExecutionPlansVector, plans)
    fb.ProgramStartSegmentsVector(builder, len(layout))
    for seg in reversed(layout):
        fb.CreateDataSegment(builder, seg.offset, seg.size)
    segments_vec = builder.EndVector()
    fb.ProgramStart(builder)
    fb.ProgramAddVersion(builder, program.version)
    fb.ProgramAddExecutionPlans(builder, plans_vec)
    fb.ProgramAddSegments(builder, segments_vec)
    fb.ProgramAddSegmentBaseOffset(builder, base)
    root = fb.ProgramEnd(builder)
    builder.Finish(root, file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def serialize(program: ProgramData) -> bytes:
    layout = segment_layout(program.segments)
    # The base offset is stored inside the buffer it follows: rebuild until it is consistent
    # (a non-zero ulong field has a fixed size, so the second pass always settles).
    base = SEGMENT_ALIGNMENT
    while True:
        head = _build_flatbuffer(program, layout, base)
        needed = align(len(head), SEGMENT_ALIGNMENT)
        if needed == base:
            break
        base = needed
    out = bytearray(head)
    out.extend(b"\0" * (base - len(head)))
    for seg, data in zip(layout, program.segments, strict=True):
        pad = base + seg.offset - len(out)
        out.extend(b"\0" * pad)
        out.extend(data)
    return bytes(out)

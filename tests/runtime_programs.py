"""Hand-made etrt programs written with the flatbuffers package directly (no exporter).

Mirrors schema/program.fbs field by field so tests can build valid programs and programs
that are wrong in one precise way (index out of range, absurd size, bad segment, ...).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace

import flatbuffers

# Scalar types, storage kinds and union tags as numbered in schema/program.fbs.
FLOAT = 0
PLANNED, CONSTANT, INPUT, VIEW = 0, 1, 2, 3
_VALUE_NULL, _VALUE_INT, _VALUE_DOUBLE, _VALUE_BOOL, _VALUE_INT_LIST = (1, 2, 3, 4, 6)
_VALUE_TENSOR, _VALUE_TENSOR_LIST = (9, 10)
_CALL_KERNEL = 1
ALIGNMENT = 64


@dataclass(frozen=True)
class TensorValue:
    sizes: tuple[int, ...]
    storage: int
    dtype: int = FLOAT
    constant_segment: int = 0
    mem_offset: int = 0
    dim_order: tuple[int, ...] | None = None


@dataclass(frozen=True)
class IntValue:
    val: int


@dataclass(frozen=True)
class DoubleValue:
    val: float


@dataclass(frozen=True)
class BoolValue:
    val: bool


@dataclass(frozen=True)
class IntListValue:
    items: tuple[int, ...]


@dataclass(frozen=True)
class NullValue:
    pass


@dataclass(frozen=True)
class TensorListValue:
    items: tuple[int, ...]


Value = (
    TensorValue | IntValue | DoubleValue | BoolValue | IntListValue | NullValue | TensorListValue
)


@dataclass(frozen=True)
class KernelCall:
    op_index: int
    args: tuple[int, ...]


@dataclass(frozen=True)
class Plan:
    name: str
    values: tuple[Value, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    operators: tuple[str, ...]
    instructions: tuple[KernelCall, ...]
    arena_size: int


@dataclass(frozen=True)
class Segment:
    data: bytes
    # Overrides of what the table says, to describe segments that lie about themselves.
    offset: int | None = None
    size: int | None = None


@dataclass(frozen=True)
class ProgramSpec:
    plans: tuple[Plan, ...]
    segments: tuple[Segment, ...] = ()
    version: int = 1
    base_offset: int | None = None  # None: the real, 64-aligned start of the segment area


def _align(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _vector(b: flatbuffers.Builder, fmt: str, items: tuple[int, ...] | list[int]) -> int:
    size = struct.calcsize(fmt)
    b.StartVector(size, len(items), size)
    prepend = {"q": b.PrependInt64, "i": b.PrependInt32, "B": b.PrependUint8}[fmt]
    for item in reversed(items):
        prepend(item)
    return int(b.EndVector())


def _offsets(b: flatbuffers.Builder, offsets: list[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return int(b.EndVector())


def _value(b: flatbuffers.Builder, v: Value) -> int:
    if isinstance(v, TensorValue):
        sizes = _vector(b, "q", v.sizes)
        order = _vector(b, "B", v.dim_order) if v.dim_order is not None else None
        b.StartObject(6)
        b.PrependInt8Slot(0, v.dtype, 0)
        b.PrependUOffsetTRelativeSlot(1, sizes, 0)
        if order is not None:
            b.PrependUOffsetTRelativeSlot(2, order, 0)
        b.PrependInt8Slot(3, v.storage, 0)
        b.PrependUint32Slot(4, v.constant_segment, 0)
        b.PrependUint64Slot(5, v.mem_offset, 0)
        payload, tag = b.EndObject(), _VALUE_TENSOR
    elif isinstance(v, IntValue):
        b.StartObject(1)
        b.PrependInt64Slot(0, v.val, 0)
        payload, tag = b.EndObject(), _VALUE_INT
    elif isinstance(v, DoubleValue):
        b.StartObject(1)
        b.PrependFloat64Slot(0, v.val, 0.0)
        payload, tag = b.EndObject(), _VALUE_DOUBLE
    elif isinstance(v, BoolValue):
        b.StartObject(1)
        b.PrependBoolSlot(0, v.val, False)
        payload, tag = b.EndObject(), _VALUE_BOOL
    elif isinstance(v, IntListValue):
        items = _vector(b, "q", v.items)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, items, 0)
        payload, tag = b.EndObject(), _VALUE_INT_LIST
    elif isinstance(v, TensorListValue):
        items = _vector(b, "i", v.items)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, items, 0)
        payload, tag = b.EndObject(), _VALUE_TENSOR_LIST
    else:
        b.StartObject(0)
        payload, tag = b.EndObject(), _VALUE_NULL
    b.StartObject(2)
    b.PrependUint8Slot(0, tag, 0)
    b.PrependUOffsetTRelativeSlot(1, payload, 0)
    return int(b.EndObject())


def _plan(b: flatbuffers.Builder, p: Plan) -> int:
    name = b.CreateString(p.name)
    values = _offsets(b, [_value(b, v) for v in p.values])
    inputs = _vector(b, "i", p.inputs)
    outputs = _vector(b, "i", p.outputs)
    ops = []
    for op in p.operators:
        s = b.CreateString(op)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, s, 0)
        ops.append(b.EndObject())
    operators = _offsets(b, ops)
    instrs = []
    for call in p.instructions:
        args = _vector(b, "i", call.args)
        b.StartObject(2)
        b.PrependUint32Slot(0, call.op_index, 0)
        b.PrependUOffsetTRelativeSlot(1, args, 0)
        kernel_call = b.EndObject()
        b.StartObject(2)
        b.PrependUint8Slot(0, _CALL_KERNEL, 0)
        b.PrependUOffsetTRelativeSlot(1, kernel_call, 0)
        instrs.append(b.EndObject())
    instructions = _offsets(b, instrs)
    b.StartObject(8)
    b.PrependUOffsetTRelativeSlot(0, name, 0)
    b.PrependUOffsetTRelativeSlot(1, values, 0)
    b.PrependUOffsetTRelativeSlot(2, inputs, 0)
    b.PrependUOffsetTRelativeSlot(3, outputs, 0)
    b.PrependUOffsetTRelativeSlot(4, operators, 0)
    b.PrependUOffsetTRelativeSlot(5, instructions, 0)
    b.PrependUint64Slot(7, p.arena_size, 0)
    return int(b.EndObject())


def _flatbuffer(spec: ProgramSpec, base: int, layout: list[tuple[int, int]]) -> bytes:
    b = flatbuffers.Builder(1024)
    b.ForceDefaults(True)  # same size whatever the values, so the base offset is stable
    plans = _offsets(b, [_plan(b, p) for p in spec.plans])
    b.StartVector(16, len(layout), 8)
    for offset, size in reversed(layout):
        b.Prep(8, 16)
        b.PrependUint64(size)
        b.PrependUint64(offset)
    segments = int(b.EndVector())
    b.StartObject(4)
    b.PrependUint32Slot(0, spec.version, 0)
    b.PrependUOffsetTRelativeSlot(1, plans, 0)
    b.PrependUOffsetTRelativeSlot(2, segments, 0)
    b.PrependUint64Slot(3, base, 0)
    b.Finish(b.EndObject(), file_identifier=b"ETRT")
    return bytes(b.Output())


def build(spec: ProgramSpec) -> bytes:
    """Serializes `spec`: the FlatBuffer, then each segment on a 64-byte boundary."""
    layout: list[tuple[int, int]] = []
    area = b""
    for seg in spec.segments:
        offset = len(area)
        area += seg.data + b"\0" * (_align(len(seg.data)) - len(seg.data))
        layout.append(
            (
                seg.offset if seg.offset is not None else offset,
                seg.size if seg.size is not None else len(seg.data),
            )
        )
    head = _flatbuffer(spec, 0, layout)
    base = _align(len(head))
    head = _flatbuffer(spec, spec.base_offset if spec.base_offset is not None else base, layout)
    assert _align(len(head)) == base, "FlatBuffer size changed between passes"
    return head + b"\0" * (base - len(head)) + area


CONSTANT_VALUES = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)


def add_alias_mul_plan(**changes: object) -> Plan:
    """forward(x[2,3]) = alias(x + c) * c, c = CONSTANT_VALUES: three operators, one a view."""
    plan = Plan(
        name="forward",
        values=(
            TensorValue((2, 3), INPUT),  # 0 x
            TensorValue((2, 3), CONSTANT, constant_segment=0),  # 1 c
            IntValue(1),  # 2 alpha
            TensorValue((2, 3), PLANNED, mem_offset=0),  # 3 x + c
            TensorValue((2, 3), VIEW),  # 4 alias
            TensorValue((2, 3), PLANNED, mem_offset=64),  # 5 out
        ),
        inputs=(0,),
        outputs=(5,),
        operators=("aten::add.Tensor", "aten::alias", "aten::mul.Tensor"),
        instructions=(KernelCall(0, (0, 1, 2, 3)), KernelCall(1, (3, 4)), KernelCall(2, (4, 1, 5))),
        arena_size=128,
    )
    return replace(plan, **changes)  # type: ignore[arg-type]


def add_mul_plan() -> Plan:
    """forward(x[2,3]) = (x + c) * c with only aten::add.Tensor and aten::mul.Tensor."""
    return add_alias_mul_plan(
        operators=("aten::add.Tensor", "aten::mul.Tensor"),
        instructions=(KernelCall(0, (0, 1, 2, 3)), KernelCall(1, (3, 1, 5))),
    )


def constant_segment() -> Segment:
    return Segment(struct.pack("<6f", *CONSTANT_VALUES))


def program(plan: Plan | None = None, **changes: object) -> bytes:
    spec = ProgramSpec(plans=(plan or add_alias_mul_plan(),), segments=(constant_segment(),))
    return build(replace(spec, **changes))  # type: ignore[arg-type]


def with_value(plan: Plan, index: int, value: Value) -> Plan:
    values = list(plan.values)
    values[index] = value
    return replace(plan, values=tuple(values))


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    expect: tuple[str, ...] = field(default=())  # error code, then words its message must hold

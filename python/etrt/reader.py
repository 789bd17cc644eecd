"""bytes -> ProgramData, through the flatc-generated reader classes (for tests and debugging)."""

from __future__ import annotations

from typing import Any

from ._fb import fb
from .errors import ProgramFormatError
from .ir import (
    FILE_IDENTIFIER,
    BackendDelegate,
    BoolListValue,
    BoolValue,
    CompileSpec,
    DataSegment,
    DelegateCall,
    DoubleListValue,
    DoubleValue,
    ExecutionPlan,
    Instruction,
    IntListValue,
    IntValue,
    KernelCall,
    NullValue,
    OptionalTensorListValue,
    ProgramData,
    ScalarType,
    StorageKind,
    StringValue,
    TensorListValue,
    TensorValue,
    Value,
)


def _table(cls: Any, union_table: Any) -> Any:
    obj = cls()
    obj.Init(union_table.Bytes, union_table.Pos)
    return obj


def _ints(obj: Any, length: int) -> tuple[int, ...]:
    return tuple(int(obj.Items(i)) for i in range(length))


def _read_value(v: Any) -> Value:
    kind = v.ValType()
    t = v.Val()
    if t is None or kind == fb.ValueUnion.NONE:
        raise ProgramFormatError("value without a payload")
    if kind == fb.ValueUnion.Tensor:
        tt = _table(fb.Tensor, t)
        return TensorValue(
            scalar_type=ScalarType(tt.ScalarType()),
            sizes=tuple(int(tt.Sizes(i)) for i in range(tt.SizesLength())),
            dim_order=tuple(int(tt.DimOrder(i)) for i in range(tt.DimOrderLength())),
            storage=StorageKind(tt.Storage()),
            constant_segment=int(tt.ConstantSegment()),
            mem_offset=int(tt.MemOffset()),
            external_key=(tt.ExternalKey() or b"").decode("utf-8", errors="replace"),
            dynamic=bool(tt.Dynamic()),
            min_sizes=tuple(int(tt.MinSizes(i)) for i in range(tt.MinSizesLength())),
            max_sizes=tuple(int(tt.MaxSizes(i)) for i in range(tt.MaxSizesLength())),
            zero_initial=bool(tt.ZeroInitial()),
        )
    if kind == fb.ValueUnion.Null:
        return NullValue()
    if kind == fb.ValueUnion.Int:
        return IntValue(int(_table(fb.Int, t).Val()))
    if kind == fb.ValueUnion.Double:
        return DoubleValue(float(_table(fb.Double, t).Val()))
    if kind == fb.ValueUnion.Bool:
        return BoolValue(bool(_table(fb.Bool, t).Val()))
    if kind == fb.ValueUnion.String:
        raw = _table(fb.String, t).Val()
        return StringValue(raw.decode() if isinstance(raw, bytes) else str(raw))
    if kind == fb.ValueUnion.IntList:
        o = _table(fb.IntList, t)
        symbolic = tuple(int(o.ItemValues(i)) for i in range(o.ItemValuesLength()))
        return IntListValue(_ints(o, o.ItemsLength()), symbolic)
    if kind == fb.ValueUnion.DoubleList:
        o = _table(fb.DoubleList, t)
        return DoubleListValue(tuple(float(o.Items(i)) for i in range(o.ItemsLength())))
    if kind == fb.ValueUnion.BoolList:
        o = _table(fb.BoolList, t)
        return BoolListValue(tuple(bool(o.Items(i)) for i in range(o.ItemsLength())))
    if kind == fb.ValueUnion.TensorList:
        o = _table(fb.TensorList, t)
        return TensorListValue(_ints(o, o.ItemsLength()))
    if kind == fb.ValueUnion.OptionalTensorList:
        o = _table(fb.OptionalTensorList, t)
        return OptionalTensorListValue(_ints(o, o.ItemsLength()))
    raise ProgramFormatError(f"unknown value kind {kind}")


def _read_plan(p: Any) -> ExecutionPlan:
    operators = [p.Operators(i).Name().decode() for i in range(p.OperatorsLength())]
    instructions: list[Instruction] = []
    for i in range(p.InstructionsLength()):
        ins = p.Instructions(i)
        if ins.CallType() == fb.InstructionUnion.KernelCall:
            call = _table(fb.KernelCall, ins.Call())
            args = tuple(int(call.Args(j)) for j in range(call.ArgsLength()))
            instructions.append(KernelCall(int(call.OpIndex()), args))
        elif ins.CallType() == fb.InstructionUnion.DelegateCall:
            dcall = _table(fb.DelegateCall, ins.Call())
            args = tuple(int(dcall.Args(j)) for j in range(dcall.ArgsLength()))
            instructions.append(DelegateCall(int(dcall.DelegateIndex()), args))
        else:
            raise ProgramFormatError(f"instruction {i}: unknown call type {ins.CallType()}")
    delegates = []
    for i in range(p.DelegatesLength()):
        d = p.Delegates(i)
        specs = []
        for j in range(d.CompileSpecsLength()):
            spec = d.CompileSpecs(j)
            specs.append(
                CompileSpec(
                    spec.Key().decode(),
                    bytes(spec.ValueAsNumpy().tobytes()) if spec.ValueLength() else b"",
                )
            )
        delegates.append(BackendDelegate(d.Id().decode(), int(d.Segment()), tuple(specs)))
    name = p.Name()
    return ExecutionPlan(
        name=name.decode() if name is not None else "",
        values=[_read_value(p.Values(i)) for i in range(p.ValuesLength())],
        inputs=[int(p.Inputs(i)) for i in range(p.InputsLength())],
        outputs=[int(p.Outputs(i)) for i in range(p.OutputsLength())],
        operators=operators,
        instructions=instructions,
        arena_size=int(p.ArenaSize()),
        delegates=delegates,
    )


def read_program(data: bytes) -> tuple[ProgramData, list[DataSegment], int]:
    """Parse a program file: (program with segment bytes, segment table, segment base)."""
    if len(data) < 8 or data[4:8] != FILE_IDENTIFIER:
        raise ProgramFormatError("not an etrt program (bad magic)")
    try:
        root = fb.Program.GetRootAs(data, 0)
        plans = [_read_plan(root.ExecutionPlans(i)) for i in range(root.ExecutionPlansLength())]
        table = []
        for i in range(root.SegmentsLength()):
            s = root.Segments(i)
            table.append(DataSegment(int(s.Offset()), int(s.Size())))
        base = int(root.SegmentBaseOffset())
        version = int(root.Version())
    except ProgramFormatError:
        raise
    except Exception as exc:  # the generated reader raises anything on corrupt input
        raise ProgramFormatError(f"malformed program: {exc}") from exc
    segments = []
    for i, seg in enumerate(table):
        start = base + seg.offset
        if start + seg.size > len(data):
            raise ProgramFormatError(f"segment {i} extends past the end of the file")
        segments.append(bytes(data[start : start + seg.size]))
    return ProgramData(plans=plans, segments=segments, version=version), table, base

"""Who produces and who reads each value of a lowered plan: what the export passes that rewrite
kernel calls (fold.py, fuse.py, channels_last.py) ask before they change one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .ir import (
    DoubleValue,
    ExecutionPlan,
    Instruction,
    IntValue,
    KernelCall,
    NullValue,
    ScalarType,
    StorageKind,
    TensorValue,
    tensor_indices,
)


class PlanGraph:
    """A snapshot of `plan`'s instructions; build a new one after changing them."""

    def __init__(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self.producer: dict[int, int] = {}  # value -> the step writing it
        self.readers: dict[int, list[int]] = {}  # value -> steps reading it, in order
        for step, instr in enumerate(plan.instructions):
            for out in instr.outputs:
                for t in tensor_indices(plan.values, out):
                    self.producer.setdefault(t, step)
            for arg in instr.inputs:
                for t in tensor_indices(plan.values, arg):
                    self.readers.setdefault(t, []).append(step)
        self.plan_outputs = set(plan.outputs)

    def instruction(self, step: int) -> Instruction:
        return self.plan.instructions[step]

    def op(self, step: int) -> str | None:
        """The operator of a kernel call, None for a delegate call."""
        instr = self.plan.instructions[step]
        return self.plan.operators[instr.op_index] if isinstance(instr, KernelCall) else None

    def producer_op(self, value: int) -> str | None:
        step = self.producer.get(value)
        return self.op(step) if step is not None else None

    def uses(self, value: int) -> int:
        """Reads by instructions, plus one if the plan returns it."""
        return len(self.readers.get(value, ())) + (value in self.plan_outputs)

    def only_reader(self, value: int) -> int | None:
        """The one step reading `value` when nothing else (the plan's outputs included) does."""
        readers = self.readers.get(value, [])
        if len(readers) != 1 or value in self.plan_outputs:
            return None
        return readers[0]

    def only_call_reading(self, value: int, ops: tuple[str, ...]) -> tuple[int, KernelCall] | None:
        """The step and kernel call that alone read `value`, when its operator is one of `ops`."""
        step = self.only_reader(value)
        if step is None or self.op(step) not in ops:
            return None
        instr = self.instruction(step)
        assert isinstance(instr, KernelCall)
        return step, instr

    def tensor(self, index: int) -> TensorValue | None:
        v = self.plan.values[index]
        return v if isinstance(v, TensorValue) else None

    def float_tensor(self, index: int, ndim: int | None = None) -> TensorValue | None:
        t = self.tensor(index)
        if t is None or t.scalar_type != ScalarType.FLOAT:
            return None
        return t if ndim is None or len(t.sizes) == ndim else None

    def scalar(self, index: int) -> float | None:
        v = self.plan.values[index]
        return float(v.val) if isinstance(v, IntValue | DoubleValue) else None

    def operator_index(self, name: str) -> int:
        if name not in self.plan.operators:
            self.plan.operators.append(name)
        return self.plan.operators.index(name)


def drop_unused_operators(plan: ExecutionPlan) -> None:
    """Operators no kernel call names any more (a rewrite replaced their calls) leave the
    operator table, so loading never asks for a kernel the program does not call."""
    used = sorted({i.op_index for i in plan.instructions if isinstance(i, KernelCall)})
    if len(used) == len(plan.operators):
        return
    index = {old: new for new, old in enumerate(used)}
    plan.operators = [plan.operators[i] for i in used]
    plan.instructions = [
        replace(i, op_index=index[i.op_index]) if isinstance(i, KernelCall) else i
        for i in plan.instructions
    ]


Rewrite = tuple[frozenset[int], int, KernelCall]  # (a chain's steps, the step it takes, its call)


def replace_chains(plan: ExecutionPlan, rewrites: list[Rewrite]) -> None:
    """Each rewrite (steps, at, call): the chain of `steps` gives way to `call` at step `at` (one
    of them); the values its steps wrote that `call` does not are read by nothing any more.
    Operators no call names then leave the table."""
    replace_at: dict[int, KernelCall] = {}
    dropped: set[int] = set()
    for steps, at, call in rewrites:
        kept = set(call.outputs)
        for step in steps:
            for v in plan.instructions[step].outputs:
                if v not in kept:
                    plan.values[v] = NullValue()
        replace_at[at] = call
        dropped |= steps
    dropped -= set(replace_at)
    plan.instructions = [
        replace_at.get(s, i) for s, i in enumerate(plan.instructions) if s not in dropped
    ]
    drop_unused_operators(plan)


def constant_array(plan: ExecutionPlan, segments: list[bytes], index: int) -> np.ndarray | None:
    """A contiguous float32 constant's data as float64 (None for anything else)."""
    v = plan.values[index]
    if not isinstance(v, TensorValue) or v.storage != StorageKind.CONSTANT:
        return None
    if v.scalar_type != ScalarType.FLOAT or v.dim_order != tuple(range(len(v.sizes))):
        return None
    data = np.frombuffer(segments[v.constant_segment], dtype="<f4")
    return data.reshape(v.sizes).astype(np.float64) if data.size == v.numel else None


def add_constant(
    plan: ExecutionPlan,
    segments: list[bytes],
    array: np.ndarray,
    dim_order: tuple[int, ...] = (),
    name: str = "",
) -> int:
    """A new float32 constant holding `array`, stored in `dim_order` (contiguous by default)."""
    order = dim_order or tuple(range(array.ndim))
    stored = np.ascontiguousarray(np.transpose(array, order), dtype="<f4")
    segments.append(stored.tobytes())
    plan.values.append(
        TensorValue(ScalarType.FLOAT, tuple(array.shape), StorageKind.CONSTANT,
                    dim_order=order, constant_segment=len(segments) - 1, name=name)
    )  # fmt: skip
    return len(plan.values) - 1


def drop_unread_constants(plan: ExecutionPlan, segments: list[bytes]) -> None:
    """Constants no instruction reads any more (weights a pass replaced): no data left behind."""
    read: set[int] = set(plan.outputs)
    for instr in plan.instructions:
        for a in instr.args:
            read.add(a)
            read.update(tensor_indices(plan.values, a))
    for i, v in enumerate(plan.values):
        if isinstance(v, TensorValue) and v.storage == StorageKind.CONSTANT and i not in read:
            segments[v.constant_segment] = b""
            plan.values[i] = NullValue()

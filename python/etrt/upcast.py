"""float16 and bfloat16 through the float32 kernels, the way ATen computes them on CPU.

ATen's CPU kernels compute a half-precision op in float32 ("opmath") and round the result
once. This pass does the same around every kernel that does not read and write the two types
itself (`_ops.HALF_NATIVE_OPS`): each float16/bfloat16 input is converted by aten::_to_copy
into a planned float32 temporary, the kernel computes a float32 result, and a second
aten::_to_copy rounds it into the planned float16/bfloat16 output. A dtype argument that names
float16 or bfloat16 becomes float32 for the kernel. Temporaries live only around their call,
so the memory planner reuses their space.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from . import _ops
from .ir import (
    BoolValue,
    ExecutionPlan,
    Instruction,
    IntValue,
    KernelCall,
    NullValue,
    OptionalTensorListValue,
    ScalarType,
    StorageKind,
    TensorListValue,
    TensorValue,
)

HALF_TYPES = frozenset({ScalarType.HALF, ScalarType.BFLOAT16})
_TO_COPY = "aten::_to_copy"


@functools.cache
def _dtype_arguments(name: str) -> frozenset[int]:
    """Positions of the schema arguments of op `name` that are a ScalarType (dtype=)."""
    base, _, overload = name.removeprefix("aten::").partition(".")
    op: Any = getattr(getattr(torch.ops.aten, base), overload or "default")
    return frozenset(
        i for i, a in enumerate(op._schema.arguments) if "ScalarType" in str(a.real_type)
    )


class _Rewriter:
    def __init__(self, plan: ExecutionPlan) -> None:
        self.plan = plan

    def add(self, value: Any) -> int:
        self.plan.values.append(value)
        return len(self.plan.values) - 1

    def op_index(self, name: str) -> int:
        if name not in self.plan.operators:
            self.plan.operators.append(name)
        return self.plan.operators.index(name)

    def is_half(self, index: int) -> bool:
        v = self.plan.values[index]
        return isinstance(v, TensorValue) and v.scalar_type in HALF_TYPES

    def touches_half(self, call: KernelCall) -> bool:
        for index in call.args:
            v = self.plan.values[index]
            if isinstance(v, (TensorListValue, OptionalTensorListValue)):
                if any(self.is_half(i) for i in v.items):
                    return True
            elif self.is_half(index):
                return True
        return False

    def float_temp(self, index: int, suffix: str) -> int:
        t = self.plan.values[index]
        assert isinstance(t, TensorValue)
        return self.add(
            TensorValue(
                ScalarType.FLOAT,
                t.sizes,
                StorageKind.PLANNED,
                dynamic=t.dynamic,  # sized at run time like the tensor it copies
                name=f"{t.name}.{suffix}",
            )
        )

    def to_copy(self, src: int, dst: int, dtype: ScalarType, node: str) -> KernelCall:
        # _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format)
        args = (
            src,
            self.add(IntValue(int(dtype))),
            self.add(NullValue()),
            self.add(NullValue()),
            self.add(NullValue()),
            self.add(BoolValue(False)),
            self.add(NullValue()),
            dst,
        )
        return KernelCall(self.op_index(_TO_COPY), args, num_outputs=1, node=node)

    def rewrite(self, call: KernelCall) -> list[Instruction]:
        before: list[Instruction] = []
        after: list[Instruction] = []
        converted: dict[int, int] = {}  # a half input -> its float32 copy

        def upcast(index: int) -> int:
            if not self.is_half(index):
                return index
            if index not in converted:
                converted[index] = self.float_temp(index, "f32")
                before.append(self.to_copy(index, converted[index], ScalarType.FLOAT, call.node))
            return converted[index]

        def round_back(index: int) -> int:
            if not self.is_half(index):
                return index
            final = self.plan.values[index]
            assert isinstance(final, TensorValue)
            temp = self.float_temp(index, "f32")
            after.append(self.to_copy(temp, index, final.scalar_type, call.node))
            return temp

        name = self.plan.operators[call.op_index]
        dtype_args = _dtype_arguments(name)
        n_in = len(call.args) - call.num_outputs
        args: list[int] = []
        for pos, index in enumerate(call.args):
            fix = upcast if pos < n_in else round_back
            v = self.plan.values[index]
            if isinstance(v, (TensorListValue, OptionalTensorListValue)):
                items = tuple(fix(i) for i in v.items)
                args.append(index if items == v.items else self.add(type(v)(items)))
            elif pos in dtype_args and isinstance(v, IntValue) and v.val in set(HALF_TYPES):
                args.append(self.add(IntValue(int(ScalarType.FLOAT))))
            else:
                args.append(fix(index))
        middle = KernelCall(call.op_index, tuple(args), call.num_outputs, node=call.node)
        return [*before, middle, *after]

    def run(self) -> None:
        out: list[Instruction] = []
        for instr in self.plan.instructions:
            if (
                isinstance(instr, KernelCall)
                and self.plan.operators[instr.op_index] not in _ops.HALF_NATIVE_OPS
                and self.touches_half(instr)
            ):
                out += self.rewrite(instr)
            else:
                out.append(instr)
        self.plan.instructions = out


def upcast_half_precision(plan: ExecutionPlan) -> None:
    """Rewrites, in place, every call of a kernel without float16/bfloat16 support that reads
    or writes such tensors into a float32 call between conversions."""
    _Rewriter(plan).run()


__all__ = ["HALF_TYPES", "upcast_half_precision"]

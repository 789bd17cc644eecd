"""Weights stored in the layout their kernels read, at export.

`nn.Linear` exports as `addmm(bias, x, permute(W))`: the matrix multiply reads W transposed,
and for every call it would copy the transposed weight into its panels with strided reads
(for 128 rows of activations, about as long as the multiply itself). A permute (or t,
transpose) of a float32 constant that nothing else reads becomes the constant itself, stored
permuted and contiguous: the kernels then copy rows. Runs after delegation, which reads the
layouts it wants itself, and not for external constants, whose data live in the named data
map under their parameter names.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .ir import (
    ExecutionPlan,
    IntListValue,
    IntValue,
    KernelCall,
    OptionalTensorListValue,
    ScalarType,
    StorageKind,
    TensorListValue,
    TensorValue,
)

_PERMUTES = frozenset({"aten::permute", "aten::t", "aten::transpose.int"})


def _order(plan: ExecutionPlan, name: str, call: KernelCall, ndim: int) -> tuple[int, ...] | None:
    """The permutation a permute-like call applies to its input's dimensions."""
    if name == "aten::t":
        return (1, 0) if ndim == 2 else tuple(range(ndim))
    if name == "aten::permute":
        dims = plan.values[call.args[1]]
        return tuple(d % ndim for d in dims.items) if isinstance(dims, IntListValue) else None
    d0, d1 = plan.values[call.args[1]], plan.values[call.args[2]]
    if not isinstance(d0, IntValue) or not isinstance(d1, IntValue):
        return None
    order = list(range(ndim))
    a, b = d0.val % ndim, d1.val % ndim
    order[a], order[b] = order[b], order[a]
    return tuple(order)


def _uses(plan: ExecutionPlan) -> dict[int, int]:
    """How many times each value is read: by an instruction (in a list too) or as an output."""
    count: dict[int, int] = {}

    def read(index: int) -> None:
        count[index] = count.get(index, 0) + 1
        v = plan.values[index]
        if isinstance(v, (TensorListValue, OptionalTensorListValue)):
            for item in v.items:
                count[item] = count.get(item, 0) + 1

    for instr in plan.instructions:
        for a in instr.inputs:
            read(a)
    for o in plan.outputs:
        read(o)
    return count


def _redirect(plan: ExecutionPlan, to: dict[int, int]) -> None:
    """Every read of value k reads to[k] instead: instruction inputs, lists, plan outputs."""
    for k, v in enumerate(plan.values):
        if isinstance(v, (TensorListValue, OptionalTensorListValue)):
            plan.values[k] = type(v)(tuple(to.get(i, i) for i in v.items))
    for k, instr in enumerate(plan.instructions):
        n_in = len(instr.args) - instr.num_outputs
        args = tuple(to.get(a, a) if j < n_in else a for j, a in enumerate(instr.args))
        plan.instructions[k] = replace(instr, args=args)
    plan.outputs = [to.get(o, o) for o in plan.outputs]


def store_permuted_weights(plan: ExecutionPlan, segments: list[bytes]) -> int:
    """Folds every permute of a constant only it reads into the constant (mutates both);
    returns how many."""
    uses = _uses(plan)
    to: dict[int, int] = {}
    kept = []
    for instr in plan.instructions:
        name = plan.operators[instr.op_index] if isinstance(instr, KernelCall) else ""
        if name in _PERMUTES and isinstance(instr, KernelCall):
            src, (out,) = instr.args[0], instr.outputs
            c = plan.values[src]
            if (
                isinstance(c, TensorValue)
                and c.storage == StorageKind.CONSTANT
                and c.scalar_type == ScalarType.FLOAT
                and c.dim_order == tuple(range(len(c.sizes)))
                and uses.get(src, 0) == 1
                and (order := _order(plan, name, instr, len(c.sizes))) is not None
            ):
                data = np.frombuffer(segments[c.constant_segment], dtype="<f4").reshape(c.sizes)
                segments[c.constant_segment] = np.ascontiguousarray(data.transpose(order)).tobytes()
                c.sizes = tuple(c.sizes[d] for d in order)
                to[out] = src
                continue
        kept.append(instr)
    plan.instructions = kept
    _redirect(plan, to)
    return len(to)

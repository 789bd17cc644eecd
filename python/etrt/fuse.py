"""Kernel calls merged at export where etrt has one kernel for what the decomposition spread over
several: fewer passes over the activations, the same arithmetic.

torch's core ATen decompositions turn activations into chains of elementwise ops, each a full
pass over its tensor. Chains whose intermediate values nothing else reads become one call:

- `x * clamp(x + 3, 0, 6) / 6` -> `aten::hardswish(x)` (MobileNetV3);
- `clamp(x + 3, 0, 6) / 6` -> `aten::hardsigmoid(x)` (its squeeze-excitation gates);
- `x * sigmoid(x)` -> `aten::silu(x)` (EfficientNet);
- `max_pool2d_with_indices` whose indices nothing reads -> `aten::max_pool2d`, which does not
  compute or store them.

The clamp may be one `clamp`/`hardtanh` or a `clamp` to 0 then one to 6, as decompositions write
it. etrt's kernels take the same steps (and so round the same way) as the chains they replace.
Runs after the XNNPACK partitioner, which matches the decomposed forms itself.
"""

from __future__ import annotations

from .ir import ExecutionPlan, KernelCall, NullValue
from .plan_graph import PlanGraph, drop_unused_operators

MAX_POOL = "aten::max_pool2d_with_indices"


Rewrite = tuple[int, set[int], KernelCall]  # (step replaced, steps dropped, its replacement)
Chain = tuple[int, set[int], str, int, int]  # (first step, steps dropped, op, input, output)


def fuse_kernel_calls(plan: ExecutionPlan) -> int:
    """Rewrites the chains above in place; returns how many it merged."""
    merged = 0
    while True:
        graph = PlanGraph(plan)
        found = _find(graph)
        if found is None:
            drop_unused_operators(plan)
            return merged
        first, dropped, call = found
        kept = set(call.outputs)
        for step in dropped | {first}:
            for v in plan.instructions[step].outputs:
                if v not in kept:
                    plan.values[v] = NullValue()  # nothing reads it any more
        plan.instructions[first] = call
        plan.instructions = [i for s, i in enumerate(plan.instructions) if s not in dropped]
        merged += 1


def _find(graph: PlanGraph) -> Rewrite | None:
    """The first chain of the plan, as a rewrite."""
    for step, instr in enumerate(graph.plan.instructions):
        if not isinstance(instr, KernelCall):
            continue
        op = graph.op(step)
        found: Chain | None = None
        if op == MAX_POOL and graph.uses(instr.outputs[1]) == 0:
            args = instr.args[:-1]  # the same arguments and values, no indices
            call = KernelCall(graph.operator_index("aten::max_pool2d"), args, 1, node=instr.node)
            return step, set(), call
        if op == "aten::sigmoid":
            found = _silu(graph, step, instr)
        elif op in ("aten::add.Tensor", "aten::add.Scalar"):
            found = _hard(graph, step, instr)
        if found is not None:
            first, dropped, name, x, out = found
            call = KernelCall(graph.operator_index(name), (x, out), 1, node=instr.node)
            return first, dropped, call
    return None


def _next(graph: PlanGraph, value: int, ops: tuple[str, ...]) -> tuple[int, KernelCall] | None:
    """The one reader of a float value, when it is one of `ops`."""
    if graph.float_tensor(value) is None:
        return None
    return graph.only_call_reading(value, ops)


def _silu(graph: PlanGraph, step: int, sig: KernelCall) -> Chain | None:
    x, s = sig.inputs[0], sig.outputs[0]
    found = _next(graph, s, ("aten::mul.Tensor",))
    if found is None or graph.float_tensor(x) is None or set(found[1].inputs) != {x, s}:
        return None
    return step, {found[0]}, "aten::silu", x, found[1].outputs[0]


def _bounds(graph: PlanGraph, instr: KernelCall) -> tuple[float | None, float | None]:
    """A clamp's (min, max); None where it has none (or one that is not a number)."""
    lo, hi = instr.inputs[1], instr.inputs[2]
    return graph.scalar(lo), graph.scalar(hi)


def _hard(graph: PlanGraph, step: int, add: KernelCall) -> Chain | None:
    """add(x, 3) -> clamp to [0, 6] -> [mul by x] -> div by 6."""
    ins = add.inputs
    if graph.scalar(ins[1]) != 3.0 or graph.scalar(ins[2]) != 1.0:
        return None
    if graph.float_tensor(ins[0]) is None:
        return None
    x = ins[0]
    steps: list[int] = []
    value = add.outputs[0]
    lo = hi = None
    while lo != 0.0 or hi != 6.0:
        found = _next(graph, value, ("aten::clamp", "aten::hardtanh"))
        if found is None:
            return None
        c_lo, c_hi = _bounds(graph, found[1])
        # Each clamp sets one bound (or both); none may loosen one already set.
        if c_lo is not None:
            if lo is not None or c_lo != 0.0:
                return None
            lo = c_lo
        if c_hi is not None:
            if hi is not None or c_hi != 6.0:
                return None
            hi = c_hi
        if c_lo is None and c_hi is None:
            return None
        steps.append(found[0])
        value = found[1].outputs[0]
    op = "aten::hardsigmoid"
    found = _next(graph, value, ("aten::mul.Tensor", "aten::div.Tensor"))
    if found is not None and graph.op(found[0]) == "aten::mul.Tensor":
        if set(found[1].inputs) != {x, value}:
            return None
        steps.append(found[0])
        value = found[1].outputs[0]
        op = "aten::hardswish"
        found = _next(graph, value, ("aten::div.Tensor",))
    if found is None or found[1].inputs[0] != value or graph.scalar(found[1].inputs[1]) != 6.0:
        return None
    steps.append(found[0])
    return step, set(steps), op, x, found[1].outputs[0]

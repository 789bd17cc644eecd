"""Channel concatenations of convolutions written in place: where every tensor an `aten::cat`
along channels joins is a convolution's output that nothing else reads, each convolution writes
its channels of the concatenation directly (an `etrt_fused::conv2d` call with `out_channel`) and
the concatenation's copy goes away. SqueezeNet's fire modules (two expands joined), Inception's
and GoogLeNet's branches end this way; at one thread SqueezeNet 1.1's eight copies were 314 us of
about 8.4 ms (docs/SCALING.md, part X).

Runs after fuse_conv_epilogues (a convolution keeps its clamp and activation; one with a residual
is left alone) and only where the kernels write channels-last tiles: 2-D convolutions (any
groups), float32, fixed shapes, the concatenation laid out channels-last (or of
one pixel, where both layouts are the same bytes). The concatenation's buffer then lives from its
first convolution on; the memory plan sees that from the calls that write it.
"""

from __future__ import annotations

from .channels_last import NHWC
from .fuse_conv import CONVOLUTION, FUSED
from .ir import (
    BoolValue,
    ExecutionPlan,
    IntValue,
    KernelCall,
    NullValue,
    StorageKind,
    TensorListValue,
)
from .plan_graph import PlanGraph, replace_chains

CAT = "aten::cat"


def write_concatenations_in_place(plan: ExecutionPlan) -> int:
    """Rewrites every such concatenation; returns how many went away."""
    graph = PlanGraph(plan)
    rewrites = []
    lists: list[int] = []
    for step, instr in enumerate(plan.instructions):
        if isinstance(instr, KernelCall) and graph.op(step) == CAT:
            calls = _writers(graph, step, instr)
            if calls is None:
                continue
            for n, (conv_step, call) in enumerate(calls):
                steps = {conv_step} | ({step} if n == len(calls) - 1 else set())
                rewrites.append((frozenset(steps), conv_step, call))
            lists.append(instr.inputs[0])
    if not rewrites:
        return 0
    fused = graph.operator_index(FUSED)
    rewrites = [
        (steps, at, KernelCall(fused, call.args, 1, node=call.node)) for steps, at, call in rewrites
    ]
    replace_chains(plan, rewrites)
    for index in lists:
        plan.values[index] = NullValue()
    return len(lists)


def _writers(graph: PlanGraph, step: int, cat: KernelCall) -> list[tuple[int, KernelCall]] | None:
    """For each joined tensor, its convolution's step and the call that writes its channels of
    the concatenation instead (op_index still to set); None where the rewrite does not apply."""
    plan = graph.plan
    items, dim, out = plan.values[cat.inputs[0]], graph.scalar(cat.inputs[1]), cat.outputs[0]
    whole = graph.float_tensor(out, 4)
    if not isinstance(items, TensorListValue) or len(items.items) < 2 or dim not in (1, -3):
        return None
    if whole is None or whole.dynamic or whole.storage != StorageKind.PLANNED:
        return None
    if whole.view_of is not None:
        return None
    if whole.dim_order != NHWC and whole.sizes[2] * whole.sizes[3] != 1:
        return None
    if len(set(items.items)) != len(items.items):
        return None
    n, _, h, w = whole.sizes
    calls: list[tuple[int, KernelCall]] = []
    first = 0
    for item in items.items:
        t = graph.float_tensor(item, 4)
        conv_step = graph.producer.get(item)
        if t is None or conv_step is None or graph.only_reader(item) != step:
            return None
        if t.dynamic or t.storage != StorageKind.PLANNED or t.view_of is not None:
            return None
        if (t.sizes[0], t.sizes[2], t.sizes[3]) != (n, h, w):
            return None
        conv = graph.instruction(conv_step)
        if not isinstance(conv, KernelCall) or conv.outputs != (item,):
            return None
        args = _slice_args(graph, conv_step, conv, first, out)
        if args is None:
            return None
        calls.append((conv_step, KernelCall(-1, args, 1, node=conv.node)))
        first += t.sizes[1]
    return calls if first == whole.sizes[1] else None


def _slice_args(
    graph: PlanGraph, step: int, conv: KernelCall, first: int, out: int
) -> tuple[int, ...] | None:
    """The 15 arguments of `conv` writing channels from `first` of `out`."""
    op = graph.op(step)
    if op not in (CONVOLUTION, FUSED):
        return None
    inputs = conv.inputs
    values = graph.plan.values
    weight = graph.float_tensor(inputs[1], 4)
    x = graph.float_tensor(inputs[0], 4)
    transposed = values[inputs[6]]
    if weight is None or x is None or not isinstance(transposed, BoolValue) or transposed.val:
        return None

    def new(value: IntValue | NullValue) -> int:
        values.append(value)
        return len(values) - 1

    if op == CONVOLUTION:
        epilogue = (new(NullValue()), new(NullValue()), new(NullValue()), new(NullValue()))
    else:
        if len(inputs) > 13 or not isinstance(values[inputs[9]], NullValue):
            return None  # a slice already, or a residual: laid out like a tensor of its own
        activation = inputs[12] if len(inputs) == 13 else new(NullValue())
        epilogue = (inputs[9], inputs[10], inputs[11], activation)
    return (*inputs[:9], *epilogue, new(IntValue(first)), out)

"""Convolution epilogues folded at export: a channels-last convolution followed by a residual
addition, a clamp (relu, relu6, hardtanh, clamp) and/or a hardswish, SiLU, sigmoid or leaky ReLU
becomes one
`etrt_fused::conv2d` call, which adds the residual, clamps and applies the activation to each
output tile while it is still in registers (src/kernels/conv.cpp). ResNet's blocks
(conv -> add -> relu), SqueezeNet's and MobileNet's conv -> relu and MobileNetV3's
conv -> hardswish then make no separate pass over their activations, as ONNX Runtime's FusedConv
does. Hardswish per tile is no slower than the separate op at one thread (MobileNetV3-small
3-5% faster); at two it keeps the activation on the core that wrote the tile (the separate op
split its rows otherwise, so half its input crossed cores: docs/SCALING.md, part J). SiLU
and sigmoid (EfficientNet-B0's squeeze-excitation gate) run aten::silu's / aten::sigmoid's own
loop over what each kernel step (an image row, a tile of pixels) has just stored (part L), and
leaky ReLU (CSPDarknet's, YOLO's) the same way.

    conv(x) -> [add.Tensor(., r), alpha 1] -> [relu | hardtanh(lo, hi) | clamp(lo, hi)]
            -> [hardswish | silu | sigmoid | leaky_relu(slope)] -> [add.Tensor(., r), alpha 1]

A residual is added before the clamp (ResNet's conv -> add -> relu) or, where none came before,
after the activation (CSPDarknet's and YOLO's blocks, x + act(conv(...))): the call then says
`residual_last`, and the drivers add it in the pass that applies SiLU, sigmoid and leaky ReLU.

The call's arguments are aten::convolution's, then the residual (or None), min and max (or
None), then "hardswish", "silu" or "sigmoid" where the chain ends in one, or leaky ReLU's negative
slope as a number (left out otherwise, so such calls keep the 13 arguments runtimes from before
it read), with a residual after the activation also `out_channel` (None) and `residual_last`
(true), then the output: the chain's
last value. Runs after plan_channels_last and only where the convolution's output, the residual
and the result are the same 4-D float tensor shape laid out channels-last, or of one pixel (both
layouts are the same bytes: squeeze-excitation's 1x1 layers), what the NHWC kernels apply tile
by tile; intermediate values must have no other reader. The fused call takes the place of the
chain's last step, so a residual computed after the convolution (ResNet's downsampling branch)
is ready when it runs. Hardswish is applied in aten::hardswish's own steps, x * clamp(x + 3, 0,
6) / 6, leaky ReLU as x > 0 ? x : x * slope, and SiLU and sigmoid by their ops' loops, so the
fused program gives the separate op's bits.
"""

from __future__ import annotations

from dataclasses import dataclass

from .channels_last import NHWC
from .ir import (
    BoolValue,
    DoubleValue,
    ExecutionPlan,
    KernelCall,
    NullValue,
    StringValue,
    TensorValue,
    tensor_indices,
)
from .plan_graph import PlanGraph, Rewrite, replace_chains

FUSED = "etrt_fused::conv2d"
CONVOLUTION = "aten::convolution"
CLAMPS = ("aten::relu", "aten::hardtanh", "aten::clamp")
ADD = "aten::add.Tensor"
# Whether a residual added after the clamp and activation joins the call (`residual_last`).
RESIDUAL_LAST = True
# Activations applied after the clamp, by the name the fused call's `activation` gives them
# (leaky ReLU's is its slope).
ACTIVATIONS = {
    "aten::hardswish": "hardswish",
    "aten::silu": "silu",
    "aten::sigmoid": "sigmoid",
    "aten::leaky_relu": "leaky_relu",
}
LEAKY_RELU_DEFAULT_SLOPE = 0.01


@dataclass(frozen=True)
class _Chain:
    conv: int  # step of the convolution
    last: int  # step whose output the fused call writes
    dropped: frozenset[int]  # every step of the chain
    residual: int | None
    residual_last: bool  # added after the activation, not before the clamp
    lo: float | None
    hi: float | None
    activation: str | float | None  # "hardswish", "silu", "sigmoid", leaky ReLU's slope, None
    out: int


def fuse_conv_epilogues(plan: ExecutionPlan) -> int:
    """Rewrites every chain above in place; returns how many convolutions took an epilogue."""
    graph = PlanGraph(plan)
    chains: list[_Chain] = []
    claimed: set[int] = set()
    for step, instr in enumerate(plan.instructions):
        if isinstance(instr, KernelCall) and graph.op(step) == CONVOLUTION:
            chain = _chain(graph, step, instr)
            if chain is not None and not (chain.dropped & claimed):
                chains.append(chain)
                claimed |= chain.dropped
    if not chains:
        return 0
    fused = graph.operator_index(FUSED)
    rewrites: list[Rewrite] = []
    for chain in chains:
        conv = plan.instructions[chain.conv]
        assert isinstance(conv, KernelCall)
        args = (*conv.inputs, _optional(plan, chain.residual), _bound(plan, chain.lo),
                _bound(plan, chain.hi), *_activation(plan, chain.activation, chain.residual_last),
                chain.out)  # fmt: skip
        rewrites.append((chain.dropped, chain.last, KernelCall(fused, args, 1, node=conv.node)))
    replace_chains(plan, rewrites)
    return len(chains)


def _optional(plan: ExecutionPlan, value: int | None) -> int:
    if value is not None:
        return value
    plan.values.append(NullValue())
    return len(plan.values) - 1


def _bound(plan: ExecutionPlan, bound: float | None) -> int:
    plan.values.append(NullValue() if bound is None else DoubleValue(bound))
    return len(plan.values) - 1


def _activation(
    plan: ExecutionPlan, activation: str | float | None, residual_last: bool
) -> tuple[int, ...]:
    """The optional `activation` argument, and after it `out_channel` (None) and `residual_last`
    where the residual comes after the activation: left out when there is nothing to say, so such
    calls keep the 13 arguments that runtimes from before them read."""
    if activation is None and not residual_last:
        return ()
    if isinstance(activation, float):
        plan.values.append(DoubleValue(activation))
    else:
        plan.values.append(NullValue() if activation is None else StringValue(activation))
    if not residual_last:
        return (len(plan.values) - 1,)
    plan.values += [NullValue(), BoolValue(True)]
    return (len(plan.values) - 3, len(plan.values) - 2, len(plan.values) - 1)


def _activation_of(graph: PlanGraph, call: KernelCall, name: str) -> str | float | None:
    """The fused call's `activation` for this call: its name, or leaky ReLU's slope (None where
    the slope is not a number fixed in the program)."""
    if name != "leaky_relu":
        return name
    slope = graph.plan.values[call.inputs[1]] if len(call.inputs) > 1 else NullValue()
    if isinstance(slope, NullValue):
        return LEAKY_RELU_DEFAULT_SLOPE
    number = graph.scalar(call.inputs[1])
    return None if number is None else float(number)


def _nhwc_like(graph: PlanGraph, value: int, like: TensorValue) -> bool:
    t = graph.float_tensor(value, 4)
    return (
        t is not None
        and t.sizes == like.sizes
        and (t.dim_order == NHWC or t.sizes[2] * t.sizes[3] == 1)
        and not t.dynamic
        and t.view_of is None
    )


def _chain(graph: PlanGraph, step: int, conv: KernelCall) -> _Chain | None:
    out = graph.float_tensor(conv.outputs[0], 4)
    if out is None or not _nhwc_like(graph, conv.outputs[0], out):
        return None
    transposed = graph.plan.values[conv.inputs[6]]
    if not isinstance(transposed, BoolValue) or transposed.val:
        return None
    value, last, steps = conv.outputs[0], step, {step}
    residual: int | None = None
    nxt = graph.only_call_reading(value, (ADD, *CLAMPS, *ACTIVATIONS))
    if nxt is not None and graph.op(nxt[0]) == ADD:
        residual = _residual(graph, value, nxt[0], nxt[1], out)
        if residual is not None:
            value, last = nxt[1].outputs[0], nxt[0]
            steps.add(nxt[0])
            nxt = graph.only_call_reading(value, (*CLAMPS, *ACTIVATIONS))
        else:
            nxt = None
    lo = hi = None
    if nxt is not None and graph.op(nxt[0]) in CLAMPS and _nhwc_like(graph, nxt[1].outputs[0], out):
        bounds = _clamp_bounds(graph, nxt[0], nxt[1])
        if bounds is not None:
            lo, hi = bounds
            value, last = nxt[1].outputs[0], nxt[0]
            steps.add(nxt[0])
        nxt = graph.only_call_reading(value, (*ACTIVATIONS,)) if bounds is not None else None
    activation = None
    op = graph.op(nxt[0]) if nxt is not None else None
    if nxt is not None and op in ACTIVATIONS:
        activation = _activation_of(graph, nxt[1], ACTIVATIONS[op])
        if activation is not None and _nhwc_like(graph, nxt[1].outputs[0], out):
            value, last = nxt[1].outputs[0], nxt[0]
            steps.add(nxt[0])
        else:
            activation = None
    # A residual added after the activation (CSPDarknet's and YOLO's blocks: x + act(conv(...))).
    residual_last = False
    nxt = graph.only_call_reading(value, (ADD,)) if residual is None and last != step else None
    if nxt is not None and RESIDUAL_LAST:
        residual = _residual(graph, value, nxt[0], nxt[1], out)
        if residual is not None:
            value, last, residual_last = nxt[1].outputs[0], nxt[0], True
            steps.add(nxt[0])
    if last == step or not _inputs_unchanged(graph, conv, step, last):
        return None
    return _Chain(step, last, frozenset(steps), residual, residual_last, lo, hi, activation, value)


def _residual(
    graph: PlanGraph, value: int, step: int, add: KernelCall, out: TensorValue
) -> int | None:
    """The other operand of `add` (value + other, alpha 1), where the kernels can add it tile by
    tile."""
    a, b = add.inputs[0], add.inputs[1]
    other = b if a == value else a
    if (
        other != value
        and value in (a, b)
        and graph.scalar(add.inputs[2]) == 1.0
        and _nhwc_like(graph, other, out)
        and _nhwc_like(graph, add.outputs[0], out)
        and _ready_by(graph, other, step)
    ):
        return other
    return None


def _clamp_bounds(
    graph: PlanGraph, step: int, instr: KernelCall
) -> tuple[float | None, float | None] | None:
    """(min, max) of a relu / hardtanh / clamp with number bounds; None otherwise."""
    op = graph.op(step)
    if op == "aten::relu":
        return 0.0, None
    lo_arg, hi_arg = instr.inputs[1], instr.inputs[2]
    lo, hi = graph.scalar(lo_arg), graph.scalar(hi_arg)
    null = [isinstance(graph.plan.values[a], NullValue) for a in (lo_arg, hi_arg)]
    if (lo is None and not null[0]) or (hi is None and not null[1]):
        return None  # a tensor or symbolic bound
    if op == "aten::hardtanh":  # its defaults are -1 and 1
        lo = -1.0 if null[0] else lo
        hi = 1.0 if null[1] else hi
    return lo, hi


def _ready_by(graph: PlanGraph, value: int, step: int) -> bool:
    producer = graph.producer.get(value)
    return producer is None or producer < step


def _inputs_unchanged(graph: PlanGraph, conv: KernelCall, first: int, last: int) -> bool:
    """No step between the convolution and the chain's end writes what the convolution reads
    (it now runs at `last`)."""
    values = graph.plan.values
    reads = {t for a in conv.inputs for t in tensor_indices(values, a)}
    return all(
        not reads & {t for a in graph.instruction(s).outputs for t in tensor_indices(values, a)}
        for s in range(first + 1, last)
    )

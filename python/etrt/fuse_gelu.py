"""The tanh GELU written out by hand, folded at export into one `aten::gelu(x, "tanh")` call.

transformers' NewGELU (GPT-2's `gelu_new`) and models that spell out
`F.gelu(x, approximate="tanh")` export as a chain of elementwise ops, each a full pass over the
activations (GPT-2's MLP: a pow, a tanh, two adds and four muls per layer):

    0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))

The chain is matched from its tanh, in any operand order torch.export writes: each side of
the tanh is read as a polynomial in x built from numbers, x, products, sums and integer powers
(the cube as `pow(x, 3)` or as products, scalars on either side, products grouped any way, and
transformers' FastGELU `x * c * (1 + 0.044715 * x * x)`), which must equal
sqrt(2/pi) * x + sqrt(2/pi) * 0.044715 * x^3 inside and 0.5 * x times (1 + tanh) outside.
Coefficients match within a relative 1e-6 (sqrt(2/pi) is often written to 10 digits). Every
intermediate must have no reader outside the chain, and no returned one, or the chain stays as
it is. The call takes the place of the chain's last step; etrt's kernel computes the same
formula in float32 (elementwise.cpp, gelu_tanh_lanes), so the result matches the chain's within
rounding (rtol 2e-6, atol 1e-6: the tolerance the gelu tests hold the kernel to against eager).
Runs after the XNNPACK partitioner (only chains left to etrt's kernels fold), before fuse.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .ir import ExecutionPlan, KernelCall, StringValue, tensor_indices
from .plan_graph import PlanGraph, Rewrite, replace_chains

GELU = "aten::gelu"
MUL = "aten::mul.Tensor"
ADD = "aten::add.Tensor"
POW = "aten::pow.Tensor_Scalar"
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
CUBE = 0.044715
REL_TOL = 1e-6


Poly = dict[int, float]  # power of x -> coefficient
MAX_DEGREE = 4


@dataclass(frozen=True)
class _Part:
    """A value as a polynomial in x, and the steps computing it."""

    poly: Poly
    steps: frozenset[int]


@dataclass(frozen=True)
class _Chain:
    x: int
    out: int
    steps: frozenset[int]


def fuse_tanh_gelu(plan: ExecutionPlan) -> int:
    """Rewrites every written-out tanh GELU in place; returns how many it folded."""
    graph = PlanGraph(plan)
    chains: list[_Chain] = []
    claimed: set[int] = set()
    for step, instr in enumerate(plan.instructions):
        if isinstance(instr, KernelCall) and graph.op(step) == "aten::tanh":
            chain = _chain(graph, step, instr)
            if chain is not None and not chain.steps & claimed:
                chains.append(chain)
                claimed |= chain.steps
    if not chains:
        return 0
    gelu = graph.operator_index(GELU)
    rewrites: list[Rewrite] = []
    for chain in chains:
        plan.values.append(StringValue("tanh"))
        last = max(chain.steps)
        args = (chain.x, len(plan.values) - 1, chain.out)
        call = KernelCall(gelu, args, 1, node=_call(graph, last).node)
        rewrites.append((chain.steps, last, call))
    replace_chains(plan, rewrites)
    return len(chains)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL)


def _call(graph: PlanGraph, step: int) -> KernelCall:
    instr = graph.instruction(step)
    assert isinstance(instr, KernelCall)
    return instr


def _read_once_by(graph: PlanGraph, value: int, step: int) -> bool:
    """`value` is read by `step` alone (and not returned)."""
    return graph.only_reader(value) == step


def _times(a: Poly, b: Poly) -> Poly | None:
    out: Poly = {}
    for i, c in a.items():
        for j, d in b.items():
            out[i + j] = out.get(i + j, 0.0) + c * d
    return out if max(out, default=0) <= MAX_DEGREE else None


def _plus(a: Poly, b: Poly, alpha: float) -> Poly:
    out = dict(a)
    for j, d in b.items():
        out[j] = out.get(j, 0.0) + alpha * d
    return out


def _matches(poly: Poly, want: Poly) -> bool:
    terms = {k: c for k, c in poly.items() if c != 0.0}
    return terms.keys() == want.keys() and all(_close(c, want[k]) for k, c in terms.items())


def _part(graph: PlanGraph, value: int, x: int, reader: int, depth: int = 0) -> _Part | None:
    """`value` as a polynomial in x when numbers, x, products, sums and integer powers compute
    it, each intermediate read only by the next step."""
    number = graph.scalar(value)
    if number is not None:
        return _Part({0: number}, frozenset())
    if value == x:
        return _Part({1: 1.0}, frozenset())
    step = graph.producer.get(value)
    if step is None or depth > 12 or not _read_once_by(graph, value, reader):
        return None
    call = graph.instruction(step)
    if not isinstance(call, KernelCall) or graph.float_tensor(value) is None:
        return None
    op = graph.op(step)
    if op not in (MUL, ADD, POW):
        return None
    a = _part(graph, call.inputs[0], x, step, depth + 1)
    if a is None:
        return None
    if op == POW:
        exp = graph.scalar(call.inputs[1])
        if exp is None or exp != int(exp) or not 0 < exp <= MAX_DEGREE:
            return None
        poly: Poly | None = a.poly
        for _ in range(int(exp) - 1):
            poly = _times(poly, a.poly) if poly is not None else None
        return _Part(poly, a.steps | {step}) if poly is not None else None
    b = _part(graph, call.inputs[1], x, step, depth + 1)
    if b is None or a.steps & b.steps:
        return None
    if op == MUL:
        poly = _times(a.poly, b.poly)
    else:
        alpha = graph.scalar(call.inputs[2])
        poly = _plus(a.poly, b.poly, alpha) if alpha is not None else None
    return _Part(poly, a.steps | b.steps | {step}) if poly is not None else None


def _inner(graph: PlanGraph, tanh_step: int, value: int) -> tuple[int, frozenset[int]] | None:
    """x and the steps computing `value` = sqrt(2/pi) * (x + 0.044715 * x^3), found as the
    operand of its first sum or product that is read more than once (x is read by the chain's
    ends, and here, at least twice)."""
    want = {1: SQRT_2_OVER_PI, 3: SQRT_2_OVER_PI * CUBE}
    for x in _leaves(graph, value, tanh_step):
        part = _part(graph, value, x, tanh_step)
        if part is not None and _matches(part.poly, want):
            return x, part.steps
    return None


def _leaves(graph: PlanGraph, value: int, reader: int, depth: int = 0) -> list[int]:
    """Float tensors under `value` that are not computed by a step read only by the chain: the
    candidates for x."""
    step = graph.producer.get(value)
    if graph.scalar(value) is not None or graph.float_tensor(value) is None:
        return []
    if step is None or depth > 12 or not _read_once_by(graph, value, reader):
        return [value]
    if graph.op(step) not in (MUL, ADD, POW):
        return [value]
    call = _call(graph, step)
    found: list[int] = []
    for arg in call.inputs[:2]:
        found += [v for v in _leaves(graph, arg, step, depth + 1) if v not in found]
    return found


def _chain(graph: PlanGraph, step: int, tanh: KernelCall) -> _Chain | None:
    found = _inner(graph, step, tanh.inputs[0])
    if found is None:
        return None
    x, steps = found
    like = graph.float_tensor(x)
    assert like is not None
    # 1 + tanh(...)
    nxt = graph.only_call_reading(tanh.outputs[0], (ADD,))
    if nxt is None:
        return None
    add_step, add = nxt
    one = add.inputs[1] if add.inputs[0] == tanh.outputs[0] else add.inputs[0]
    if graph.scalar(one) != 1.0 or graph.scalar(add.inputs[2]) != 1.0:
        return None
    steps |= {step, add_step}
    # ... times 0.5 * x, the products grouped any way: the first product that reaches it ends.
    value, factor = add.outputs[0], {0: 1.0}
    while not _matches(factor, {1: 0.5}):
        nxt = graph.only_call_reading(value, (MUL,))
        if nxt is None or nxt[1].inputs[0] == nxt[1].inputs[1]:
            return None
        mul_step, mul = nxt
        other = mul.inputs[1] if mul.inputs[0] == value else mul.inputs[0]
        part = _part(graph, other, x, mul_step)
        times = _times(factor, part.poly) if part is not None else None
        if part is None or times is None or part.steps & steps or max(times) > 1:
            return None
        factor, steps = times, steps | part.steps | {mul_step}
        value = mul.outputs[0]
    out = graph.float_tensor(value)
    if out is None or out.sizes != like.sizes or out.dynamic != like.dynamic:
        return None
    if not _x_unchanged(graph, x, min(steps), max(steps)):
        return None
    return _Chain(x, value, frozenset(steps))


def _x_unchanged(graph: PlanGraph, x: int, first: int, last: int) -> bool:
    """No step of the chain's span writes x (the call reads it at the chain's last step)."""
    values = graph.plan.values
    reads = set(tensor_indices(values, x))
    return all(
        not reads & {t for a in graph.instruction(s).outputs for t in tensor_indices(values, a)}
        for s in range(first, last + 1)
    )

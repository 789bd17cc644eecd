"""Groups the kernel calls XNNPACK can run into connected subgraphs and plans their layouts.

Walks the plan in order. A supported call joins the partition of one of its producers when that
cannot create a cycle (no path leaves the partition and comes back into the call) and the layouts
agree; otherwise it starts a new partition. Views only extend partitions, they never start one.
Inside a partition, 4-D values around convolution and pooling are NHWC ("spatial"); everything
else keeps etrt's contiguous layout ("plain"). With `cost_rule` (the default), only nodes and
partitions cost.py finds faster on XNNPACK are delegated; without it, every supported subgraph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import KernelCall, tensor_indices
from .cost import is_heavy, may_delegate, worth_delegating
from .match import Match, PlanView, match
from .nodes import Const, FullyConnected, Layout, Reshape
from .rewrite import rewrite


@dataclass
class Partition:
    id: int
    members: list[int] = field(default_factory=list)  # instruction indices, in plan order
    matches: list[Match] = field(default_factory=list)
    produced: set[int] = field(default_factory=set)
    layout: dict[int, Layout] = field(default_factory=dict)  # every activation it touches
    # Values only the delegate has (rewrite.py makes them), by id past the plan's: NCHW sizes.
    synthetic: dict[int, tuple[int, ...]] = field(default_factory=dict)
    inputs: list[int] = field(default_factory=list)  # filled by finish()
    outputs: list[int] = field(default_factory=list)

    def finish(self, view: PlanView) -> None:
        """Compute the external inputs and outputs, in first-use / production order."""
        members = set(self.members)
        self.inputs, self.outputs = [], []
        for m in self.matches:
            for v in m.node.activations:
                if v not in self.produced and v not in self.inputs:
                    self.inputs.append(v)
        for m in self.matches:
            v = m.node.output
            if v in view.plan_outputs or view.users.get(v, set()) - members:
                self.outputs.append(v)


def _ndim(view: PlanView, index: int) -> int:
    t = view.tensor(index)
    return len(t.sizes) if t is not None else 0


def _spatial_reshape_layouts(
    view: PlanView, node: Reshape, cost_rule: bool
) -> dict[int, Layout] | None:
    """A flatten of a spatial value. Of one pixel ([N, C, 1, 1] -> [N, C]): the same bytes in
    either layout. Else only when every reader is a fully connected layer: no NCHW round trip,
    the layers' weights are permuted instead."""
    if not isinstance(node.input, int):
        return None
    src, out = view.tensor(node.input), view.tensor(node.output)
    if src is None or out is None:
        return None
    n, c, h, w = src.sizes
    if h * w == 1 and out.sizes == (n, c):
        return {node.input: Layout.SPATIAL, node.output: Layout.PLAIN}
    if out.sizes != (n, c * h * w) or node.output in view.plan_outputs:
        return None
    for step in view.users.get(node.output, set()):
        instr = view.plan.instructions[step]
        reader = match(view, instr) if isinstance(instr, KernelCall) else None
        if reader is None or not isinstance(reader.node.body, FullyConnected):
            return None
        if cost_rule and not may_delegate(view, reader):
            return None
        if reader.node.body.input != node.output:
            return None
    return {node.input: Layout.SPATIAL, node.output: Layout.FLAT}


def _layouts(
    view: PlanView, part: Partition | None, m: Match, cost_rule: bool
) -> dict[int, Layout] | None:
    """The layouts `m` gives its activations and output inside `part`, or None on a conflict."""
    known = part.layout if part is not None else {}
    acts = m.node.activations
    out = m.node.output
    body = m.node.body
    source = body.input if isinstance(body, Reshape | FullyConnected) else None
    if isinstance(source, int) and m.input_layout == Layout.PLAIN:
        if isinstance(body, Reshape) and known.get(source) == Layout.SPATIAL:
            return _spatial_reshape_layouts(view, body, cost_rule)
        if isinstance(body, FullyConnected) and known.get(source) == Layout.FLAT:
            return {source: Layout.FLAT, out: Layout.PLAIN}

    def want(v: int, layout: Layout) -> Layout:
        return layout if _ndim(view, v) == 4 else Layout.PLAIN

    if m.input_layout is not None:
        inner, outer = m.input_layout, m.output_layout or m.input_layout
    else:
        seen = {known[v] for v in acts if v in known and _ndim(view, v) == 4}
        if len(seen) > 1:
            return None
        inner = seen.pop() if seen else Layout.PLAIN
        outer = inner
        if inner == Layout.SPATIAL:
            # NCHW broadcasting between 4-D values is NHWC broadcasting of the same values.
            for o in m.node.operands:
                if isinstance(o, Const):
                    if o.array.size != 1:
                        return None
                elif _ndim(view, o) != 4:
                    return None
    result: dict[int, Layout] = {}
    for v in acts:
        layout = want(v, inner)
        if known.get(v, layout) != layout:
            return None
        result[v] = layout
    result[out] = want(out, outer)
    return result


def find_partitions(view: PlanView, cost_rule: bool = True) -> list[Partition]:
    parts: list[Partition] = []
    owner: dict[int, Partition] = {}  # value -> partition producing it
    # Partitions each value depends on, through any path.
    anc: dict[int, frozenset[int]] = {}
    for step, instr in enumerate(view.plan.instructions):
        if not isinstance(instr, KernelCall):
            continue
        reads = [t for a in instr.inputs for t in tensor_indices(view.values, a)]
        base = frozenset().union(*(anc.get(v, frozenset()) for v in reads))
        m = match(view, instr)
        if m is not None and cost_rule and not may_delegate(view, m):
            m = None
        chosen: Partition | None = None
        layouts: dict[int, Layout] | None = None
        if m is not None:
            for v in m.node.activations:
                part = owner.get(v)
                if part is None or part is chosen:
                    continue
                # Joining is a cycle if another input already depends on the partition.
                if any(part.id in anc.get(u, frozenset()) for u in reads if u not in part.produced):
                    continue
                layouts = _layouts(view, part, m, cost_rule)
                if layouts is not None:
                    chosen = part
                    break
            if chosen is None and not m.is_reshape:
                layouts = _layouts(view, None, m, cost_rule)
                if layouts is not None:
                    chosen = Partition(len(parts))
                    parts.append(chosen)
        if chosen is not None and m is not None and layouts is not None:
            chosen.members.append(step)
            chosen.matches.append(m)
            chosen.produced.add(m.node.output)
            chosen.layout.update(layouts)
            owner[m.node.output] = chosen
            base = base | {chosen.id}
        for out in instr.outputs:
            for t in tensor_indices(view.values, out):
                anc[t] = base
    for part in parts:
        _trim_trailing_reshapes(part)
        if not rewrite(view, part):
            part.matches = []  # a concatenation XNNPACK cannot express: etrt runs it all
            continue
        part.finish(view)
        if any(part.layout.get(v) == Layout.FLAT for v in part.outputs):
            part.matches = []  # cannot happen by construction; never leak NHWC order
    # A partition with no node XNNPACK runs faster than etrt's kernels (cost.py) would only add
    # a delegate call; one of elementwise ops only, even without the cost rule. Dropping a
    # partition cannot create a cycle: it only splits a node of an acyclic graph back into its
    # acyclic parts.
    worth = worth_delegating if cost_rule else is_heavy
    return [p for p in parts if any(worth(view, m) for m in p.matches)]


def _trim_trailing_reshapes(part: Partition) -> None:
    """Views whose results only leave the partition stay outside: there they cost nothing."""
    changed = True
    while changed:
        changed = False
        for i in range(len(part.matches) - 1, -1, -1):
            m = part.matches[i]
            if not m.is_reshape:
                continue
            out = m.node.output
            if any(out in other.node.activations for other in part.matches):
                continue
            del part.matches[i]
            del part.members[i]
            part.produced.discard(out)
            changed = True

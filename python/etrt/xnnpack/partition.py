"""Groups the kernel calls XNNPACK can run into connected subgraphs and plans their layouts.

Walks the plan in order. A supported call joins the partitions of its producers: all of them at
once when it reads several (the two branches of a residual block, a squeeze-excitation gate and
its input, the arms of a concatenation meet there), as many as can merge with it without a cycle
(no path may leave the merged partition and come back into it) and with their layouts agreeing;
when none can, it starts a new partition. Views only extend partitions, they never start one.
Inside a partition, 4-D values around convolution and pooling are NHWC ("spatial"); everything
else keeps etrt's contiguous layout ("plain"). With `cost_rule` (the default), only nodes and
partitions cost.py finds faster on XNNPACK are delegated; without it, every supported subgraph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import KernelCall, tensor_indices
from .cost import is_heavy, may_delegate, worth_delegating
from .match import Match, PlanView, match
from .nodes import Const, FullyConnected, Layout, QuantParams, Reshape
from .rewrite import rewrite


@dataclass
class Partition:
    id: int
    members: list[int] = field(default_factory=list)  # instruction indices, in plan order
    matches: list[Match] = field(default_factory=list)
    produced: set[int] = field(default_factory=set)
    layout: dict[int, Layout] = field(default_factory=dict)  # every activation it touches
    quant: dict[int, QuantParams] = field(default_factory=dict)  # its int8 activations
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
        # Nothing decided yet (an elementwise op on the program's inputs): the layout its
        # readers want, so a convolution after it can join.
        inner = seen.pop() if seen else _wanted_by_readers(view, out, cost_rule)
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


class _Merger:
    """The partitions built so far, with which partition each instruction and value belongs to
    (partitions merged into another are forwarded to it)."""

    def __init__(self, view: PlanView) -> None:
        self.view = view
        self.parts: list[Partition] = []
        self.into: dict[int, int] = {}  # a merged partition's id -> the one it joined
        self.owner: dict[int, int] = {}  # value -> id of the partition producing it
        self.member: dict[int, int] = {}  # instruction -> id of its partition

    def find(self, pid: int) -> int:
        while pid in self.into:
            pid = self.into[pid]
        return pid

    def part_of_value(self, v: int) -> Partition | None:
        pid = self.owner.get(v)
        return self.parts[self.find(pid)] if pid is not None else None

    def creates_cycle(self, group: list[Partition], step: int) -> bool:
        """Whether merging `group` and instruction `step` closes a cycle: a path from a member out
        through other instructions and partitions (each one node: it runs as one call) and back
        into a member (or into `step`). Plan order is topological, so such a path only passes
        instructions before `step`."""
        ids = {p.id for p in group}
        inside = {s for p in group for s in p.members}
        seen: set[int] = set()
        # The call itself reads the group directly; reaching it again through others is a cycle.
        frontier = [r for s in inside for r in self._readers(s) if r not in inside and r != step]
        while frontier:
            s = frontier.pop()
            if s in seen:
                continue
            seen.add(s)
            pid = self.member.get(s)
            if s == step or (pid is not None and self.find(pid) in ids):
                return True
            if s >= step:
                continue
            # Another partition runs as one call: reaching one member reaches all its outputs.
            sources = self.parts[self.find(pid)].members if pid is not None else [s]
            seen.update(sources)
            for src in sources:
                frontier.extend(r for r in self._readers(src) if r not in seen)  # members too
        return False

    def _readers(self, step: int) -> set[int]:
        instr = self.view.plan.instructions[step]
        out: set[int] = set()
        for o in instr.outputs:
            for t in tensor_indices(self.view.values, o):
                out.update(self.view.users.get(t, set()))
        return out

    def merge(self, group: list[Partition]) -> Partition:
        """One partition holding every member of `group` (in plan order), under the first's id."""
        head = group[0]
        for other in group[1:]:
            pairs = sorted(
                zip(head.members + other.members, head.matches + other.matches, strict=True),
                key=lambda pair: pair[0],
            )
            head.members = [p for p, _ in pairs]
            head.matches = [m for _, m in pairs]
            head.produced |= other.produced
            head.layout.update(other.layout)
            head.quant.update(other.quant)
            self.into[other.id] = head.id
        return head

    def add(self, part: Partition, step: int, m: Match, layouts: dict[int, Layout]) -> None:
        part.members.append(step)
        part.matches.append(m)
        part.produced.add(m.node.output)
        part.layout.update(layouts)
        part.quant.update(m.quant)
        self.owner[m.node.output] = part.id
        self.member[step] = part.id

    def live(self) -> list[Partition]:
        return [p for p in self.parts if p.id not in self.into]


def _combined_layout(group: list[Partition]) -> dict[int, Layout] | None:
    """The layouts of a merged group, or None when two members lay a value out differently."""
    combined: dict[int, Layout] = {}
    for p in group:
        for v, layout in p.layout.items():
            if combined.setdefault(v, layout) != layout:
                return None
    return combined


def _quant_agrees(group: list[Partition], m: Match) -> bool:
    """Every int8 value has one quantization across the group and the call (and a value is int8
    in all of them or in none)."""
    seen: dict[int, QuantParams | None] = {}
    for p in group:
        for v in p.layout:
            if seen.setdefault(v, p.quant.get(v)) != p.quant.get(v):
                return False
    return all(
        seen.get(v, m.quant.get(v)) == m.quant.get(v) for v in (*m.node.activations, m.node.output)
    )


def _wanted_by_readers(view: PlanView, value: int, cost_rule: bool, depth: int = 0) -> Layout:
    """SPATIAL when a 4-D value is read by a node that wants its input spatial (directly or
    through a few elementwise nodes), else PLAIN."""
    if _ndim(view, value) != 4 or depth > 4:
        return Layout.PLAIN
    for step in sorted(view.users.get(value, set())):
        instr = view.plan.instructions[step]
        reader = match(view, instr) if isinstance(instr, KernelCall) else None
        if reader is None or (cost_rule and not may_delegate(view, reader)):
            continue
        if reader.input_layout == Layout.SPATIAL:
            return Layout.SPATIAL
        if reader.input_layout is None and not reader.is_reshape:
            if _wanted_by_readers(view, reader.node.output, cost_rule, depth + 1) == Layout.SPATIAL:
                return Layout.SPATIAL
    return Layout.PLAIN


def find_partitions(view: PlanView, cost_rule: bool = True) -> list[Partition]:
    merger = _Merger(view)
    for step, instr in enumerate(view.plan.instructions):
        if not isinstance(instr, KernelCall):
            continue
        m = match(view, instr)
        if m is None or (cost_rule and not may_delegate(view, m)):
            continue
        candidates: list[Partition] = []
        for v in m.node.activations:
            part = merger.part_of_value(v)
            if part is not None and part not in candidates:
                candidates.append(part)
        # The producers' partitions that can merge with the call, greedily in operand order.
        group: list[Partition] = []
        layouts: dict[int, Layout] | None = None
        for part in candidates:
            trial = [*group, part]
            known = _combined_layout(trial)
            if known is None or not _quant_agrees(trial, m) or merger.creates_cycle(trial, step):
                continue
            scratch = Partition(-1, layout=known)
            found = _layouts(view, scratch, m, cost_rule)
            if found is not None:
                group, layouts = trial, found
        if group and layouts is not None:
            merger.add(merger.merge(group), step, m, layouts)
        elif not m.is_reshape:
            layouts = _layouts(view, None, m, cost_rule)
            if layouts is not None:
                part = Partition(len(merger.parts))
                merger.parts.append(part)
                merger.add(part, step, m, layouts)
    parts = merger.live()
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

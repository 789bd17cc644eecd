"""Rewrites a lowered plan so its XNNPACK partitions run as delegate calls.

Each partition becomes one DelegateCall (its inputs, then its outputs) whose blob is a new
segment. The plan is then put back into a valid execution order, kernel calls nobody needs any
more (e.g. the permute of a weight now baked into a blob) are dropped, and so are the tensors
no instruction reads (with their constant data).
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass

from ..ir import (
    BackendDelegate,
    DelegateCall,
    ExecutionPlan,
    Instruction,
    KernelCall,
    NullValue,
    OptionalTensorListValue,
    StorageKind,
    TensorListValue,
    TensorValue,
    tensor_indices,
)
from ..memory_plan import storage_root
from .blob import build_blob
from .match import PlanView
from .nodes import Layout
from .partition import Partition, find_partitions

log = logging.getLogger(__name__)

BACKEND_ID = "XnnpackBackend"


@dataclass(frozen=True)
class DelegationSummary:
    delegates: int
    delegated_instructions: int
    remaining_instructions: int


def _order(view: PlanView, parts: list[Partition]) -> list[Instruction]:
    """Instructions with each partition contracted into one DelegateCall, topologically sorted
    (plan order where it is free to choose)."""
    plan = view.plan
    unit_of: dict[int, int] = {}  # instruction -> unit (units: partitions, then kernel calls)
    for part in parts:
        for step in part.members:
            unit_of[step] = part.id
    units: list[tuple[int, Instruction, list[int]]] = []  # (priority, instruction, reads)
    for part in parts:
        call = DelegateCall(
            len(plan.delegates) + part.id,
            tuple(part.inputs + part.outputs),
            num_outputs=len(part.outputs),
        )
        units.append((min(part.members), call, list(part.inputs)))
    for step, instr in enumerate(plan.instructions):
        if step in unit_of:
            continue
        unit_of[step] = len(units)
        reads = [t for a in instr.inputs for t in tensor_indices(plan.values, a)]
        units.append((step, instr, reads))

    deps: list[set[int]] = [set() for _ in units]
    for u, (_, _, reads) in enumerate(units):
        for v in reads:
            producer = view.producer.get(v)
            if producer is not None and unit_of[producer] != u:
                deps[u].add(unit_of[producer])
    # State is written in place: the calls touching one state's memory keep their order.
    last_touch: dict[int, int] = {}
    for step, instr in enumerate(plan.instructions):
        for state in _states_touched(plan, instr):
            u = unit_of[step]
            if state in last_touch and last_touch[state] != u:
                deps[u].add(last_touch[state])
            last_touch[state] = u
    dependents: list[list[int]] = [[] for _ in units]
    for u, ds in enumerate(deps):
        for d in ds:
            dependents[d].append(u)
    pending = [len(ds) for ds in deps]
    ready = [(units[u][0], u) for u in range(len(units)) if pending[u] == 0]
    heapq.heapify(ready)
    order: list[Instruction] = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(units[u][1])
        for d in dependents[u]:
            pending[d] -= 1
            if pending[d] == 0:
                heapq.heappush(ready, (units[d][0], d))
    if len(order) != len(units):
        raise AssertionError("partitioning created a cycle")
    return order


def _states_touched(plan: ExecutionPlan, instr: Instruction) -> set[int]:
    """The State tensors whose memory `instr` reads or writes (through views too)."""
    roots = set()
    for arg in instr.args:
        for t in tensor_indices(plan.values, arg):
            root = plan.values[storage_root(plan, t)]
            if isinstance(root, TensorValue) and root.storage == StorageKind.STATE:
                roots.add(storage_root(plan, t))
    return roots


def _drop_dead_kernels(plan: ExecutionPlan) -> None:
    """Kernel calls are pure but for state: one whose outputs nobody reads and that writes no
    state can go."""
    while True:
        read: set[int] = set(plan.outputs)
        for instr in plan.instructions:
            for a in instr.inputs:
                read.update(tensor_indices(plan.values, a))
        keep = [
            i
            for i in plan.instructions
            if not isinstance(i, KernelCall)
            or any(t in read for o in i.outputs for t in tensor_indices(plan.values, o))
            or _states_touched(plan, KernelCall(i.op_index, i.outputs))
        ]
        if len(keep) == len(plan.instructions):
            return
        plan.instructions = keep


def _drop_unused_tensors(plan: ExecutionPlan, segments: list[bytes]) -> None:
    """Tensors only a delegate's insides used: no memory, and no constant data left behind."""
    used: set[int] = set(plan.outputs) | set(plan.inputs)
    for instr in plan.instructions:
        for a in instr.args:
            used.add(a)
            used.update(tensor_indices(plan.values, a))
    for i, v in enumerate(plan.values):
        if isinstance(v, TensorValue) and i not in used:
            if v.storage == StorageKind.CONSTANT:
                segments[v.constant_segment] = b""
            plan.values[i] = NullValue()
        elif isinstance(v, TensorListValue | OptionalTensorListValue) and i not in used:
            plan.values[i] = NullValue()  # e.g. a concatenation's inputs, now inside a blob


def delegate_to_xnnpack(
    plan: ExecutionPlan, segments: list[bytes], *, cost_rule: bool = True
) -> DelegationSummary:
    """Lower XNNPACK-supported subgraphs of `plan` to delegate calls (mutates both): those the
    cost rule (cost.py) finds faster there, or with cost_rule=False every one."""
    view = PlanView(plan, segments)
    parts = find_partitions(view, cost_rule)
    for i, part in enumerate(parts):
        part.id = i
    delegated = sum(len(p.members) for p in parts)
    if not parts:
        return DelegationSummary(0, 0, len(plan.instructions))
    blobs = [build_blob(view, part) for part in parts]
    plan.instructions = _order(view, parts)
    for part, blob in zip(parts, blobs, strict=True):
        plan.delegates.append(BackendDelegate(BACKEND_ID, len(segments)))
        segments.append(blob)
        # A view the delegate now computes needs memory of its own.
        for v in part.outputs:
            t = plan.values[v]
            if isinstance(t, TensorValue) and t.storage == StorageKind.VIEW:
                t.storage, t.view_of = StorageKind.PLANNED, None
            # A spatial output is stored as XNNPACK computes it (NHWC), so no permute follows
            # the call; etrt's kernels read it channels-last (channels_last.py plans around it).
            spatial = part.layout.get(v) == Layout.SPATIAL
            if isinstance(t, TensorValue) and spatial and not t.dynamic:
                _n, c, h, w = t.sizes
                if v not in plan.outputs and c > 1 and h * w > 1:
                    t.dim_order = (0, 2, 3, 1)
    _drop_dead_kernels(plan)
    _drop_unused_tensors(plan, segments)
    kernels = sum(1 for i in plan.instructions if isinstance(i, KernelCall))
    log.info(
        "xnnpack: %d delegate calls cover %d instructions; %d kernel calls remain",
        len(parts), delegated, kernels,
    )  # fmt: skip
    return DelegationSummary(len(parts), delegated, kernels)

"""Static memory planning: every planned tensor gets an offset in one arena.

A buffer lives from the instruction producing it to its last use, where a use of any view derived
from it (transitively) counts as a use of the buffer; graph outputs live to the end. State
tensors live through the whole method and across calls, so no other buffer ever shares their
bytes. Dynamic tensors are planned at their upper bounds. Offsets are assigned greedily, largest
buffer first, into the smallest gap among the buffers whose lifetimes overlap (best fit), each
aligned to ARENA_ALIGNMENT.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ir import ARENA_ALIGNMENT, ExecutionPlan, StorageKind, TensorValue, align, tensor_indices


@dataclass(frozen=True)
class Buffer:
    value: int  # index of the planned tensor value
    size: int  # bytes
    start: int  # first instruction using it (its producer)
    end: int  # last instruction using it; len(instructions) for graph outputs

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class MemoryPlan:
    offsets: dict[int, int]  # value index -> byte offset in the arena
    arena_size: int


def storage_root(plan: ExecutionPlan, index: int) -> int:
    """The value that owns the memory `index` refers to (follows views to their base)."""
    seen = 0
    v = plan.values[index]
    while isinstance(v, TensorValue) and v.storage == StorageKind.VIEW:
        if v.view_of is None:
            raise ValueError(f"view value {index} has no base")
        index = v.view_of
        v = plan.values[index]
        seen += 1
        if seen > len(plan.values):
            raise ValueError("cycle in view chain")
    return index


def buffer_lifetimes(plan: ExecutionPlan) -> list[Buffer]:
    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def touch(value: int, step: int) -> None:
        for t in tensor_indices(plan.values, value):
            root = storage_root(plan, t)
            rv = plan.values[root]
            if isinstance(rv, TensorValue) and rv.storage == StorageKind.PLANNED:
                first[root] = min(first.get(root, step), step)
                last[root] = max(last.get(root, step), step)

    for step, instr in enumerate(plan.instructions):
        for arg in instr.args:
            touch(arg, step)
    for out in plan.outputs:
        touch(out, len(plan.instructions))
    for index, v in enumerate(plan.values):
        if isinstance(v, TensorValue) and v.storage == StorageKind.STATE:
            first[index], last[index] = 0, len(plan.instructions)

    buffers = []
    for value in sorted(first):
        tv = plan.values[value]
        assert isinstance(tv, TensorValue)
        buffers.append(Buffer(value, tv.nbytes, first[value], last[value]))
    return buffers


def assign_offsets(buffers: list[Buffer], alignment: int = ARENA_ALIGNMENT) -> MemoryPlan:
    placed: list[tuple[int, Buffer]] = []  # (offset, buffer)
    offsets: dict[int, int] = {}
    arena = 0
    for buf in sorted(buffers, key=lambda b: (-b.size, b.start, b.value)):
        if buf.size == 0:
            offsets[buf.value] = 0
            continue
        live = sorted(
            ((off, b) for off, b in placed if b.overlaps_in_time(buf)), key=lambda p: p[0]
        )
        best: tuple[int, int] | None = None  # (gap size, offset)
        cursor = 0
        for off, b in live:
            start = align(cursor, alignment)
            gap = off - start
            if gap >= buf.size and (best is None or gap < best[0]):
                best = (gap, start)
            cursor = max(cursor, off + b.size)
        offset = best[1] if best is not None else align(cursor, alignment)
        placed.append((offset, buf))
        offsets[buf.value] = offset
        arena = max(arena, offset + buf.size)
    return MemoryPlan(offsets, align(arena, alignment))


def plan_memory(plan: ExecutionPlan) -> MemoryPlan:
    """Give each planned tensor of `plan` an arena offset (mutates them) and size the arena."""
    result = assign_offsets(buffer_lifetimes(plan))
    for value, offset in result.offsets.items():
        tv = plan.values[value]
        assert isinstance(tv, TensorValue)
        tv.mem_offset = offset
    plan.arena_size = result.arena_size
    return result

"""What a program's bytes are: its constants grouped by the kind of tensor (quantized weights,
their scales and zero points, float weights of linears and embeddings, everything else) and
the plan around them. `python -m etrt export --quantize` and benchmarks/quantized_decode.py
print it, so a program's size can be traced to the tensors that make it."""

from __future__ import annotations

from dataclasses import dataclass

from .ir import KernelCall, ScalarType
from .program import ProgramInfo

_DTYPE = {
    ScalarType.FLOAT: "float32",
    ScalarType.HALF: "float16",
    ScalarType.BFLOAT16: "bfloat16",
    ScalarType.CHAR: "int8",
    ScalarType.INT: "int32",
}

# operator -> {argument index: what the constant there is}; "{bits}" is int4 for a uint8 weight
# (two values a byte), int8 for an int8 one.
_ROLES: dict[str, dict[int, str]] = {
    "etrt_quant::weight_only_linear": {1: "{bits} linear weights", 2: "scales", 3: "zero points"},
    "etrt_quant::weight_only_embedding": {
        0: "{bits} embedding tables",
        1: "scales",
        2: "zero points",
    },
    "etrt_quant::int8_mm": {1: "int8 linear weights", 2: "int8 weight sums"},
    "etrt_quant::dynamic_int4_linear": {
        3: "{bits} linear weights",
        4: "scales",
        5: "zero points",
        6: "weight sums",
    },
    "aten::embedding": {0: "{dtype} embedding tables"},
    "aten::mm": {1: "{dtype} linear weights"},
    "aten::addmm": {2: "{dtype} linear weights"},
}


@dataclass(frozen=True)
class SizeBreakdown:
    """A program's size: (kind, bytes) of its constants, largest first, and the whole file."""

    total: int
    parts: tuple[tuple[str, int], ...]

    @property
    def rest(self) -> int:
        """The plan, the file's headers and padding: what no constant accounts for."""
        return self.total - sum(n for _, n in self.parts)

    def lines(self) -> list[str]:
        rows = [*self.parts, ("plan, headers and padding", self.rest)]
        return [
            f"  {name:<34}{n / 1e6:>10.2f} MB {100 * n / max(self.total, 1):>5.1f}%"
            for name, n in rows
        ]


def _kind(op: str, index: int, dtype: ScalarType) -> str | None:
    role = _ROLES.get(op, {}).get(index)
    if role is None:
        return None
    name = _DTYPE.get(dtype, dtype.name.lower())
    bits = "int4" if dtype == ScalarType.BYTE else "int8"
    return role.format(bits=bits, dtype=name) + (
        f" ({name})" if role in ("scales", "zero points") else ""
    )


def size_breakdown(info: ProgramInfo) -> SizeBreakdown:
    """Each constant segment counted once, under the kind of its first reader that names it
    (a norm's weight, a bias, a rotary table: "other constants")."""
    plan = info.plan
    kinds: dict[int, str] = {}
    for instruction in plan.instructions:
        if not isinstance(instruction, KernelCall):
            continue
        op = plan.operators[instruction.op_index]
        for index, value in enumerate(instruction.args):
            tensor = plan.values[value]
            kind = _kind(op, index, getattr(tensor, "scalar_type", ScalarType.FLOAT))
            if kind is not None:
                kinds.setdefault(value, kind)
    totals: dict[str, int] = {}
    seen: set[int] = set()
    for value, tensor in info.constant_tensors():
        if tensor.external_key or tensor.constant_segment in seen:
            continue
        seen.add(tensor.constant_segment)
        kind = kinds.get(value, f"other constants ({_DTYPE.get(tensor.scalar_type, 'other')})")
        totals[kind] = totals.get(kind, 0) + len(info.constant_bytes(tensor))
    parts = tuple(sorted(totals.items(), key=lambda kv: -kv[1]))
    return SizeBreakdown(info.size, parts)


__all__ = ["SizeBreakdown", "size_breakdown"]

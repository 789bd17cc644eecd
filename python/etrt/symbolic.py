"""Symbolic sizes of a program exported with dynamic shapes (torch.export.Dim).

Every tensor is planned for the largest size it can take: each symbolic dimension's upper bound
comes from torch's value ranges (`bound_sympy` over the symbols' ranges, as ExecuTorch's memory
planning does). Inputs record each dimension's [min, max]. The integer arithmetic torch.export
leaves on sizes (operator.mul, torch.sym_max, ...) runs as etrt_prim kernels on Int values.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import sympy  # type: ignore[import-untyped]
import torch
from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

from .errors import ExportError

SymScalar = torch.SymInt | torch.SymFloat | torch.SymBool

# Python operators and torch.sym_* functions on sizes -> the etrt kernel computing each.
PRIM_OPS: dict[Any, str] = {
    operator.add: "etrt_prim::add",
    operator.sub: "etrt_prim::sub",
    operator.mul: "etrt_prim::mul",
    operator.floordiv: "etrt_prim::floordiv",
    operator.mod: "etrt_prim::mod",
    operator.truediv: "etrt_prim::truediv",
    operator.pow: "etrt_prim::pow",
    operator.neg: "etrt_prim::neg",
    operator.eq: "etrt_prim::eq",
    operator.ne: "etrt_prim::ne",
    operator.lt: "etrt_prim::lt",
    operator.le: "etrt_prim::le",
    operator.gt: "etrt_prim::gt",
    operator.ge: "etrt_prim::ge",
    torch.sym_max: "etrt_prim::sym_max",
    torch.sym_min: "etrt_prim::sym_min",
    torch.sym_float: "etrt_prim::sym_float",
    torch.sym_int: "etrt_prim::sym_int",
    torch.sym_not: "etrt_prim::sym_not",
    math.ceil: "etrt_prim::ceil",
    math.floor: "etrt_prim::floor",
}

# ATen's shape queries, computed from the tensor's actual sizes when the program runs.
SHAPE_QUERIES = frozenset({"aten::sym_size.int", "aten::sym_numel", "aten::sym_stride.int"})


def is_symbolic(value: object) -> bool:
    return isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool))


class SymbolBounds:
    """The range of every symbol of one exported program: what the user declared
    (range_constraints) over what torch's ShapeEnv derived."""

    def __init__(self, ranges: dict[sympy.Symbol, ValueRanges[Any]]) -> None:
        self.ranges = ranges

    @classmethod
    def of(cls, ep: torch.export.ExportedProgram) -> SymbolBounds:
        ranges: dict[sympy.Symbol, ValueRanges[Any]] = {}
        for node in ep.graph.nodes:
            val = node.meta.get("val")
            sizes = list(val.shape) if isinstance(val, torch.Tensor) else [val]
            env = next((s.node.shape_env for s in sizes if isinstance(s, torch.SymInt)), None)
            if env is not None:
                ranges.update(env.var_to_range)
                break
        ranges.update(ep.range_constraints)
        return cls(ranges)

    def range(self, expr: Any) -> tuple[int | None, int | None]:
        """(lower, upper) of an integer expression; None where unbounded."""
        r = bound_sympy(sympy.sympify(expr), self.ranges)
        return _finite(r.lower), _finite(r.upper)

    def size_range(self, size: int | torch.SymInt) -> tuple[int | None, int | None]:
        if isinstance(size, int):
            return size, size
        return self.range(size.node.expr)

    def upper(self, size: int | torch.SymInt, what: str) -> int:
        """The largest value `size` takes; refuses an unbounded one."""
        _, hi = self.size_range(size)
        if hi is None:
            raise ExportError(
                f"{what} has no upper bound ({size}); give its torch.export.Dim a max: etrt "
                "plans memory for the largest size"
            )
        return hi

    def concrete(self, size: int | torch.SymInt) -> int:
        """`size` where every symbol takes its largest value (its example value if unbounded):
        for the strides of a layout planned at the upper bounds."""
        if isinstance(size, int):
            return size
        expr = size.node.expr
        subs = {}
        for sym in expr.free_symbols:
            r = self.ranges.get(sym)
            hi = _finite(r.upper) if r is not None else None
            subs[sym] = hi if hi is not None else size.node.shape_env.var_to_val.get(sym, 1)
        return int(expr.xreplace(subs))


def _finite(bound: Any) -> int | None:
    if isinstance(bound, bool):
        return None
    try:
        value = float(bound)
    except (TypeError, OverflowError):
        return None
    return math.floor(value) if math.isfinite(value) else None


__all__ = ["PRIM_OPS", "SHAPE_QUERIES", "SymbolBounds", "is_symbolic"]

"""torchao's per-row activation quantization as one kernel call: etrt_quant::quantize_rows.

8da4w (Int8DynamicActivationIntxWeightConfig) quantizes each linear's input at run time, row by
row: the row's min and max, each widened to include 0, give an asymmetric scale and zero point,
and the values are rounded into int8. Exported and decomposed, that is some twenty ATen calls
per input (amin, amax, full_like, minimum, maximum, sub, div, clamp, round, reciprocal, mul,
add, _to_copy and views), each a kernel dispatch on a [1, 1024] row while decoding. The
exporter replaces such a chain with one call computing the same float32 steps in the same
order, so the int8 values, scales and zero points are the same bits; a chain that differs in
any step or constant is left as it is.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.fx import Node

from .graph_edit import is_call, shape_names, through_views

_LIB: Any = torch.library.Library("etrt_quant", "FRAGMENT")  # type: ignore[no-untyped-call]
_LIB.define(
    "quantize_rows(Tensor input, float eps, int quant_min, int quant_max) "
    "-> (Tensor, Tensor, Tensor)"
)


def _quantize_rows_reference(
    input: torch.Tensor, eps: float, quant_min: int, quant_max: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ATen steps of torchao's chain: int8 values, float32 scales and int8 zero points."""
    lo = torch.minimum(input.amin(-1), torch.zeros((), dtype=input.dtype))
    hi = torch.maximum(input.amax(-1), torch.zeros((), dtype=input.dtype))
    scale = ((hi - lo) / float(quant_max - quant_min)).clamp(min=eps)
    zero = (quant_min - torch.round(lo / scale)).clamp(quant_min, quant_max).to(torch.int8)
    inv = torch.reciprocal(scale).unsqueeze(-1)
    values = torch.round(input * inv) + zero.unsqueeze(-1)
    return values.clamp(quant_min, quant_max).to(torch.int8), scale, zero


_LIB.impl("quantize_rows", _quantize_rows_reference, "CompositeExplicitAutograd")
QUANTIZE_ROWS = torch.ops.etrt_quant.quantize_rows.default
_ATEN = torch.ops.aten



def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _to_int8(node: Any) -> Node | None:
    """The argument of `node` when it is a plain conversion to int8."""
    if is_call(node, _ATEN._to_copy.default) and node.kwargs == {"dtype": torch.int8}:
        arg: Node = node.args[0]
        return arg
    return None


def _clamp(node: Any) -> tuple[Node, float | None, float | None] | None:
    """(input, min, max) of clamp(input, min, max) with numbers or None as bounds."""
    if not is_call(node, _ATEN.clamp.default) or node.kwargs:
        return None
    bounds = [*node.args[1:], None, None][:2]
    lo, hi = (None if b is None else _number(b) for b in bounds)
    if any(b is not None and n is None for b, n in zip(bounds, (lo, hi), strict=True)):
        return None
    return node.args[0], lo, hi


def _binary(node: Any, target: Any) -> tuple[Any, Any] | None:
    if not is_call(node, target) or node.kwargs or len(node.args) != 2:
        return None
    return node.args[0], node.args[1]


@dataclass
class _Chain:
    x: Node
    eps: float
    qmin: int
    qmax: int
    values: Node  # the int8 values (as torchao views them)
    scales: Node
    zeros: Node
    nodes: list[Node]  # every call of the chain
    view_shape: Any  # the shape torchao viewed the values to, or None where it kept x's


def _row_extreme(node: Any, wide: Any, reduce: Any, x: Node | None) -> Node | None:
    """x when `node` is wide(reduce(x, [last dim]), full_like(that, 0))."""
    pair = _binary(node, wide)
    if pair is None:
        return None
    red, zero = pair
    if not is_call(zero, _ATEN.full_like.default) or zero.args[0] is not red or zero.args[1] != 0:
        return None
    if zero.kwargs.get("dtype") not in (None, torch.float32):
        return None
    if not is_call(red, reduce) or red.kwargs or len(red.args) not in (2, 3):
        return None
    src, dims = red.args[0], red.args[1]
    if not isinstance(src, Node) or (len(red.args) == 3 and red.args[2]):
        return None
    rank = len(src.meta["val"].shape)
    if list(dims) not in ([rank - 1], [-1]) or (x is not None and src is not x):
        return None
    return src


def _match(values: Node) -> _Chain | None:
    """The chain whose int8 values node `values` is, when every step is torchao's."""
    clamped = _clamp(through_views(_to_int8(values)))
    if clamped is None:
        return None
    added, qmin_f, qmax_f = clamped
    if qmin_f is None or qmax_f is None:
        return None
    qmin, qmax = int(qmin_f), int(qmax_f)
    if (qmin, qmax) != (qmin_f, qmax_f) or not -128 <= qmin < qmax <= 127:
        return None
    pair = _binary(added, _ATEN.add.Tensor)
    if pair is None or not is_call(pair[0], _ATEN.round.default) or len(pair[0].args) != 1:
        return None
    rounded, zero_view = pair
    product = _binary(rounded.args[0], _ATEN.mul.Tensor)
    if product is None or not isinstance(product[0], Node):
        return None
    x, inverse = product
    one = _binary(inverse, _ATEN.mul.Tensor)
    if one is not None and _number(one[1]) == 1.0:
        inverse = one[0]
    if not is_call(inverse, _ATEN.reciprocal.default):
        return None
    scales = through_views(inverse.args[0])
    scale_clamp = _clamp(scales)
    if scale_clamp is None or scale_clamp[2] is not None:
        return None
    quotient, eps, _ = scale_clamp
    if eps is None:
        return None
    ratio = _binary(quotient, _ATEN.div.Tensor)
    if ratio is None or _number(ratio[1]) != float(qmax - qmin):
        return None
    span = _binary(ratio[0], _ATEN.sub.Tensor)
    if span is None:
        return None
    hi, lo = span
    if _row_extreme(hi, _ATEN.maximum.default, _ATEN.amax.default, x) is None:
        return None
    if _row_extreme(lo, _ATEN.minimum.default, _ATEN.amin.default, x) is None:
        return None
    zeros = through_views(zero_view)
    zero_clamp = _clamp(_to_int8(zeros))
    if zero_clamp is None or zero_clamp[1:] != (qmin_f, qmax_f):
        return None
    shifted = _binary(zero_clamp[0], _ATEN.sub.Tensor)
    if shifted is None or _number(shifted[0]) != qmin_f:
        return None
    if not is_call(shifted[1], _ATEN.round.default):
        return None
    if _binary(shifted[1].args[0], _ATEN.div.Tensor) != (lo, scales):
        return None
    val = x.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dtype != torch.float32 or val.dim() < 1:
        return None
    view_shape = None
    if shape_names(values) != shape_names(x):
        view = values.args[0]
        if not isinstance(view, Node) or not is_call(view, _ATEN.view.default):
            return None  # other dimensions than x's only through a view, which the fold repeats
        view_shape = view.args[1]
    nodes = _calls_between(x, [values, scales, zeros])
    return _Chain(x, eps, qmin, qmax, values, scales, zeros, nodes, view_shape)


def _calls_between(x: Node, outputs: list[Node]) -> list[Node]:
    """The calls `outputs` are computed by from `x` (x excluded; not the symbolic sizes the
    views read, which come from elsewhere)."""
    seen: dict[Node, None] = {}
    pending = list(outputs)
    while pending:
        node = pending.pop()
        if node is x or node in seen or node.op != "call_function":
            continue
        seen[node] = None
        pending.extend(a for a in node.all_input_nodes)
    reaches: dict[Node, bool] = {x: True}

    def from_x(node: Node) -> bool:
        if node not in reaches:
            reaches[node] = any(from_x(a) for a in node.all_input_nodes if a in seen or a is x)
        return reaches[node]

    return [node for node in seen if from_x(node)]


def fuse_row_quantization(ep: ExportedProgram) -> int:
    """Rewrites `ep`'s graph in place; the number of chains replaced."""
    graph = ep.graph_module.graph
    order = {node: i for i, node in enumerate(graph.nodes)}
    fused = 0
    erased: set[Node] = set()
    for node in list(graph.nodes):
        if node in erased:
            continue
        chain = _match(node)
        if chain is None:
            continue
        first = min(chain.nodes, key=order.__getitem__)
        with graph.inserting_before(first):
            call = graph.call_function(QUANTIZE_ROWS, (chain.x, chain.eps, chain.qmin, chain.qmax))
            parts = [graph.call_function(operator.getitem, (call, i)) for i in range(3)]
        vals = (
            chain.x.meta["val"].to(torch.int8),
            chain.scales.meta["val"],
            chain.zeros.meta["val"],
        )
        call.meta["val"] = vals
        call.meta["stack_trace"] = chain.values.meta.get("stack_trace")
        for part, val in zip(parts, vals, strict=True):
            part.meta["val"] = val
        values: Node = parts[0]
        if chain.view_shape is not None:  # torchao viewed them: view alike
            with graph.inserting_before(chain.values):
                values = graph.call_function(_ATEN.view.default, (parts[0], chain.view_shape))
            values.meta["val"] = chain.values.meta["val"]
        chain.values.replace_all_uses_with(values)
        chain.scales.replace_all_uses_with(parts[1])
        chain.zeros.replace_all_uses_with(parts[2])
        for dead in sorted(chain.nodes, key=order.__getitem__, reverse=True):
            for check in [
                u for u in dead.users if u.target == _ATEN._assert_tensor_metadata.default
            ]:
                graph.erase_node(check)  # a check of a value no longer computed
            if not dead.users:
                graph.erase_node(dead)
                erased.add(dead)
        fused += 1
    if fused:
        ep.graph_module.recompile()
    return fused


__all__ = ["QUANTIZE_ROWS", "fuse_row_quantization"]

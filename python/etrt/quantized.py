"""PT2E static int8: fold dq -> convolution/linear [-> relu/hardtanh/clamp] -> q patterns into
integer kernels.

`convert_pt2e` leaves `quantized_decomposed` quantize/dequantize ops around float operators. The
exporter rewrites the core ATen graph before lowering: a convolution or linear whose input is a
per-tensor int8 dequantize, whose weight is a per-channel symmetric int8 dequantize of a constant
and whose only user (through an optional ReLU, ReLU6 or clamp) is a per-tensor int8 quantize
becomes one `etrt_quant::conv2d` / `etrt_quant::linear` call: int8 x int8 products summed in
int32, then requantized as the reference module computes it (docs/quantization.md). A clamp
between a dequantize and a quantize of the same parameters becomes a clamp of the int8 values.
Between the products (quantized_ops.py): elementwise chains of one int8 value and
requantizations become 256-entry tables, squeeze-excite products, spatial means, average and
max pooling and channel cats int8 kernels, each computing the reference's own float32 steps.
Everything else keeps its quantize/dequantize ops, which run as kernels of their own, so any
PT2E program runs.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, fields
from operator import getitem
from typing import Any

import torch
import torch.ao.quantization.fx._decomposed  # defines torch.ops.quantized_decomposed
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from torch.fx import Node

from .graph_edit import add_constant, is_call, replace_node
from .quantized_ops import (
    AVG_POOL2D,
    LOOKUP,
    MAX_POOL2D,
    MEAN,
    MUL,
    dequantized_binary_reference,
)

_LIB: Any = torch.library.Library("etrt_quant", "DEF")  # type: ignore[no-untyped-call]
_COMMON = (
    "Tensor input, Tensor weight, Tensor weight_scale, Tensor? bias, float input_scale, "
    "int input_zero_point, float output_scale, int output_zero_point, int output_min, "
    "int output_max"
)
_LIB.define(
    f"conv2d({_COMMON}, int[2] stride, int[2] padding, int[2] dilation, int groups) -> Tensor"
)
_LIB.define(f"linear({_COMMON}) -> Tensor")
_LIB.define(
    "add(Tensor a, float a_scale, int a_zero_point, Tensor b, float b_scale, int b_zero_point, "
    "float output_scale, int output_zero_point, int output_min, int output_max) -> Tensor"
)


def _requantize(
    acc: torch.Tensor,
    weight_scale: torch.Tensor,
    bias: torch.Tensor | None,
    input_scale: float,
    output_scale: float,
    output_zero_point: int,
    output_min: int,
    output_max: int,
    channel_dim: int,
) -> torch.Tensor:
    shape = [1] * acc.dim()
    shape[channel_dim] = -1
    mult = (torch.tensor(input_scale, dtype=torch.float32) * weight_scale).view(shape)
    y = acc.to(torch.float32) * mult
    if bias is not None:
        y = y + bias.view(shape)
    q = torch.round(y * (1.0 / output_scale)) + output_zero_point
    return torch.clamp(q, output_min, output_max).to(torch.int8)


def _conv2d_reference(
    input: torch.Tensor,
    weight: torch.Tensor,
    weight_scale: torch.Tensor,
    bias: torch.Tensor | None,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    output_min: int,
    output_max: int,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    groups: int,
) -> torch.Tensor:
    # float64 sums of int8 products are exact: the kernel's int32 accumulation.
    x = input.to(torch.float64) - input_zero_point
    acc = torch.nn.functional.conv2d(
        x, weight.to(torch.float64), None, stride, padding, dilation, groups
    )
    return _requantize(
        acc.to(torch.int32), weight_scale, bias, input_scale, output_scale,
        output_zero_point, output_min, output_max, 1,
    )  # fmt: skip


def _linear_reference(
    input: torch.Tensor,
    weight: torch.Tensor,
    weight_scale: torch.Tensor,
    bias: torch.Tensor | None,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    output_min: int,
    output_max: int,
) -> torch.Tensor:
    x = input.to(torch.float64) - input_zero_point
    acc = x @ weight.to(torch.float64).t()
    return _requantize(
        acc.to(torch.int32), weight_scale, bias, input_scale, output_scale,
        output_zero_point, output_min, output_max, acc.dim() - 1,
    )  # fmt: skip


_LIB.impl("conv2d", _conv2d_reference, "CompositeExplicitAutograd")
_LIB.impl(
    "add",
    functools.partial(dequantized_binary_reference, operator.add),
    "CompositeExplicitAutograd",
)
_LIB.impl("linear", _linear_reference, "CompositeExplicitAutograd")

_QD = torch.ops.quantized_decomposed
QUANTIZE = _QD.quantize_per_tensor.default
DEQUANTIZE = _QD.dequantize_per_tensor.default
DEQUANTIZE_CHANNEL = _QD.dequantize_per_channel.default
CONV2D = torch.ops.etrt_quant.conv2d.default
LINEAR = torch.ops.etrt_quant.linear.default
ADD = torch.ops.etrt_quant.add.default
_ATEN = torch.ops.aten
# Elementwise float ops a dequantize -> ... -> quantize chain may hold and still be a table:
# every other operand a number or a node of the same chain.
_UNARY = (
    "clamp", "clamp_min", "clamp_max", "relu", "hardtanh", "hardswish", "hardsigmoid", "sigmoid",
    "tanh", "gelu", "silu", "elu", "leaky_relu", "neg", "abs", "exp", "log", "sqrt", "rsqrt",
    "reciprocal", "erf", "maximum", "minimum", "clone",
)  # fmt: skip
_ELEMENTWISE = frozenset(
    [getattr(_ATEN, op).default for op in _UNARY]
    + [
        getattr(getattr(_ATEN, op), o)
        for op in ("add", "sub", "mul", "div")
        for o in ("Tensor", "Scalar")
    ]
    + [_ATEN.pow.Tensor_Scalar]
)
_CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


@dataclass(frozen=True)
class _Activation:
    """A per-tensor int8 dequantize: the int8 node and its parameters."""

    node: Node
    scale: float
    zero_point: int


@dataclass(frozen=True)
class _Weight:
    node: Node  # the int8 constant
    scale: Node  # its per-output-channel float32 scales


@dataclass(frozen=True)
class _Output:
    scale: float
    zero_point: int
    low: int
    high: int


@dataclass(frozen=True)
class FoldReport:
    """How many patterns became integer kernels."""

    conv2d: int
    linear: int
    clamp: int = 0  # relu/hardtanh/clamp between dq and q, now on the int8 values
    add: int = 0
    lookup: int = 0  # elementwise chains (hardswish, hardsigmoid, ...) as 256-entry tables
    mul: int = 0
    mean: int = 0
    max_pool: int = 0
    avg_pool: int = 0
    cat: int = 0
    view: int = 0  # views and clones between a dequantize and a quantize of one parameter set

    def total(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self))


def _pair(value: Any) -> list[int]:
    """A pooling argument (an int, or a list of 1 or 2) as [h, w]."""
    if isinstance(value, int):
        return [value, value]
    return [int(value[0]), int(value[-1])]



@dataclass(frozen=True)
class _Clamp:
    """relu, hardtanh (ReLU6) or clamp between a product and its quantize: its float bounds."""

    low: float | None
    high: float | None


def _bound(value: Any) -> float | bool | None:
    """A clamp bound as a float, None for none, False when it is not a constant number."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return False


def _clamp(node: Any) -> _Clamp | None:
    """The bounds of a clamping activation whose only user is the quantize after it."""
    if not isinstance(node, Node) or len(node.users) != 1 or node.kwargs:
        return None
    args = list(node.args)
    if is_call(node, _ATEN.relu.default):
        return _Clamp(0.0, None)
    if is_call(node, _ATEN.hardtanh.default):
        defaults: list[Any] = [-1.0, 1.0]  # hardtanh's min_val, max_val
    elif is_call(node, _ATEN.clamp.default):
        defaults = [None, None]
    else:
        return None
    low, high = (_bound(v) for v in [*args[1:3], *defaults[len(args) - 1 :]][:2])
    if low is False or high is False:
        return None
    assert not isinstance(low, bool) and not isinstance(high, bool)
    if low is not None and high is not None and low > high:
        return None  # torch's clamp then returns `high` everywhere: not a range
    return _Clamp(low, high)


def _quantize_scalar(value: float, scale: float, zero_point: int, low: int, high: int) -> int:
    """quantize_per_tensor of one float32 value, with the reference's own arithmetic."""
    x = torch.tensor([value], dtype=torch.float32)
    return int(QUANTIZE(x, scale, zero_point, low, high, torch.int8).item())


def _int8_activation(node: Any) -> _Activation | None:
    if not is_call(node, DEQUANTIZE) or len(node.args) < 6 or node.args[5] != torch.int8:
        return None
    if node.kwargs.get("out_dtype") not in (None, torch.float32):
        return None
    scale, zp = node.args[1], node.args[2]
    if (
        not isinstance(scale, float)
        or not isinstance(zp, int)
        or not isinstance(node.args[0], Node)
    ):
        return None
    return _Activation(node.args[0], scale, zp)


class _Folder:
    def __init__(self, ep: ExportedProgram) -> None:
        self.ep = ep
        self.graph = ep.graph_module.graph
        self.specs = {s.arg.name: s for s in ep.graph_signature.input_specs}

    def constant(self, node: Any) -> torch.Tensor | None:
        if not isinstance(node, Node) or node.op != "placeholder":
            return None
        spec = self.specs.get(node.name)
        if spec is None or spec.kind not in _CONSTANT_KINDS or spec.target is None:
            return None
        value = self.ep.state_dict.get(spec.target, self.ep.constants.get(spec.target))
        return value if isinstance(value, torch.Tensor) else None

    def weight(self, node: Any) -> _Weight | None:
        """A per-channel (axis 0) symmetric int8 dequantize of a constant."""
        if not is_call(node, DEQUANTIZE_CHANNEL) or len(node.args) < 7:
            return None
        if node.args[3] != 0 or node.args[6] != torch.int8:
            return None
        if node.kwargs.get("out_dtype") not in (None, torch.float32):
            return None
        q, scale, zp = node.args[0], node.args[1], node.args[2]
        qv, sv = self.constant(q), self.constant(scale)
        if qv is None or sv is None or qv.dtype != torch.int8 or sv.dtype != torch.float32:
            return None
        if zp is not None:
            zv = self.constant(zp)
            if zv is None or bool(zv.any()):
                return None
        assert isinstance(q, Node) and isinstance(scale, Node)
        return _Weight(q, scale)

    def bias(self, node: Any) -> tuple[bool, Node | None]:
        if node is None:
            return True, None
        value = self.constant(node)
        if value is None or value.dtype != torch.float32 or value.dim() != 1:
            return False, None
        return True, node

    @staticmethod
    def output(q: Node, clamp: _Clamp | None) -> _Output | None:
        if len(q.args) < 6 or q.args[5] != torch.int8:
            return None
        scale, zp, low, high = q.args[1], q.args[2], q.args[3], q.args[4]
        if not isinstance(scale, float) or not all(isinstance(v, int) for v in (zp, low, high)):
            return None
        assert isinstance(zp, int) and isinstance(low, int) and isinstance(high, int)
        if clamp is None:
            return _Output(scale, zp, low, high)
        # Quantizing is monotone, so quantize(clamp(y, a, b)) = clamp(quantize(y), quantize(a),
        # quantize(b)): a clamp before the quantize is a narrower output range (relu: a floor
        # at the zero point, the quantized 0).
        if clamp.low is not None:
            low = max(low, _quantize_scalar(clamp.low, scale, zp, low, high))
        if clamp.high is not None:
            high = min(high, _quantize_scalar(clamp.high, scale, zp, low, high))
        return _Output(scale, zp, low, high) if low <= high else None

    def fold(self) -> FoldReport:
        convs = linears = adds = 0
        for q in list(self.graph.nodes):
            if not is_call(q, QUANTIZE):
                continue
            src, clamp = q.args[0], _clamp(q.args[0])
            if clamp is not None:
                src = src.args[0]
            if not isinstance(src, Node) or len(src.users) != 1:
                continue
            out = self.output(q, clamp)
            if out is None:
                continue
            if is_call(src, _ATEN.convolution.default):
                convs += self.fold_conv(q, src, out)
            elif is_call(src, _ATEN.add.Tensor):
                adds += self.fold_add(q, src, out)
            else:
                linears += self.fold_linear(q, src, out)
        clamps = sum(self.fold_clamp(q) for q in list(self.graph.nodes) if is_call(q, QUANTIZE))
        between = {k: 0 for k in ("lookup", "mul", "mean", "max_pool", "avg_pool", "cat", "view")}
        for q in list(self.graph.nodes):
            kind = self.fold_between(q) if is_call(q, QUANTIZE) else None
            if kind is not None:
                between[kind] += 1
        report = FoldReport(convs, linears, clamps, adds, **between)
        if report.total():
            self.graph.eliminate_dead_code()
            self.ep.graph_module.recompile()
        return report

    def fold_between(self, q: Node) -> str | None:
        """The patterns between the products (quantized_ops.py): what was folded, or None."""
        out = self.output(q, None)
        src = q.args[0]
        act = _int8_activation(src)
        if out is not None and act is not None and act.scale > 0:
            # quantize(dequantize(x)) of other parameters: a requantization, so a table
            self.replace_uses(q, self.requantize(act, out, q))
            return "lookup"
        if out is None or not isinstance(src, Node) or len(src.users) != 1:
            return None
        args: list[Any] = list(src.args)
        if self.selects(src, True):
            kind = "max_pool" if self.pools(src) else "cat"
            self.replace_uses(q, self.select_int8(src, out, q))
            return kind
        if is_call(src, _ATEN.mean.dim) and not src.kwargs:
            return self.fold_mean(q, src, out)
        if is_call(src, _ATEN.avg_pool2d.default) and not src.kwargs:
            return self.fold_avg_pool(q, src, out)
        if is_call(src, _ATEN.mul.Tensor) and not src.kwargs:
            if self.fold_mul(q, src, out):
                return "mul"
        elif is_call(src, _ATEN.view.default) or is_call(src, _ATEN.clone.default):
            act = _int8_activation(args[0])
            if act is None or not self.unchanged(act, out):
                # a clone requantizing (dropout observed apart): a table
                return self.fold_lookup(q, out) if is_call(src, _ATEN.clone.default) else None
            if is_call(src, _ATEN.clone.default):  # eval-mode dropout: the values themselves
                q.replace_all_uses_with(act.node)
                self.graph.erase_node(q)
            else:
                self.replace(q, _ATEN.view.default, (act.node, *args[1:]))
            return "view"
        return self.fold_lookup(q, out)

    @staticmethod
    def unchanged(act: _Activation, out: _Output) -> bool:
        """Whether quantize(dequantize(x)) is x: the same parameters, int8's whole range."""
        return (act.scale, act.zero_point, out.low, out.high) == (
            out.scale, out.zero_point, -128, 127,
        )  # fmt: skip

    def add_constant(self, value: torch.Tensor) -> Node:
        target = f"_etrt_quant_table_{len(self.ep.constants)}"
        node, spec = add_constant(self.ep, self.graph, target, value)
        self.specs[node.name] = spec
        return node

    def requantize(self, act: _Activation, out: _Output, before: Node) -> Node:
        """x itself when quantize(dequantize(x)) is x, else a lookup of its 256 requantized
        values (the reference's own quantize and dequantize)."""
        if self.unchanged(act, out):
            return act.node
        values = torch.arange(-128, 128, dtype=torch.int32).to(torch.int8)
        deq = DEQUANTIZE(values, act.scale, act.zero_point, -128, 127, torch.int8)
        table = QUANTIZE(deq, out.scale, out.zero_point, out.low, out.high, torch.int8)
        node = self.add_constant(table)
        with self.graph.inserting_before(before):
            lookup: Node = self.graph.call_function(LOOKUP, (act.node, node))
        lookup.meta["val"] = act.node.meta.get("val")
        return lookup

    @staticmethod
    def max_pool(node: Any) -> Node | None:
        """The max_pool2d_with_indices whose values `node` is (getitem 0), when nothing else
        reads it."""
        if not is_call(node, getitem) or node.args[1] != 0:
            return None
        pool = node.args[0]
        if not is_call(pool, _ATEN.max_pool2d_with_indices.default) or len(pool.users) != 1:
            return None
        return None if pool.kwargs else pool

    def selects(self, node: Any, root: bool = False) -> bool:
        """Whether `node` only selects among dequantized int8 values: a dequantize, or a max
        pooling or channel cat of such (nothing else reading the intermediate ones). Quantizing
        and dequantizing (positive scale) are nondecreasing, so they commute with max and cat:
        quantize(max_pool(cat(dequantize(x_i)))) is max_pool(cat(requantize(x_i)))."""
        act = _int8_activation(node)
        if act is not None:
            return not root and act.scale > 0
        if not isinstance(node, Node) or (not root and len(node.users) != 1):
            return False
        pool = self.max_pool(node)
        if pool is not None:
            val = pool.args[0].meta.get("val") if isinstance(pool.args[0], Node) else None
            return isinstance(val, torch.Tensor) and val.dim() == 4 and self.selects(pool.args[0])
        if is_call(node, _ATEN.cat.default) and not node.kwargs and isinstance(node.args[0], list):
            return all(self.selects(t) for t in node.args[0])
        return False

    def pools(self, node: Any) -> bool:
        if self.max_pool(node) is not None:
            return True
        return is_call(node, _ATEN.cat.default) and any(self.pools(t) for t in node.args[0])

    def select_int8(self, node: Node, out: _Output, before: Node) -> Node:
        """`node` (selects(node)) computed on int8 values in `out`'s parameters."""
        act = _int8_activation(node)
        if act is not None:
            return self.requantize(act, out, before)
        pool = self.max_pool(node)
        val = node.meta.get("val")
        assert isinstance(val, torch.Tensor)
        if pool is not None:
            assert isinstance(pool.args[0], Node)
            x = self.select_int8(pool.args[0], out, before)
            given = list(pool.args[1:])  # kernel, then stride, padding, dilation, ceil_mode
            kernel, stride, padding, dilation, ceil = given + [[], 0, 1, False][len(given) - 1 :]
            k = _pair(kernel)
            target: Any = MAX_POOL2D
            args: tuple[Any, ...] = (
                x, k, _pair(stride) if stride else k, _pair(padding), _pair(dilation), ceil,
            )  # fmt: skip
        else:
            tensors: Any = node.args[0]
            parts = [self.select_int8(t, out, before) for t in tensors]
            target, args = _ATEN.cat.default, (parts, *node.args[1:])
        with self.graph.inserting_before(before):
            new: Node = self.graph.call_function(target, args)
        new.meta["val"] = val.to(torch.int8)
        return new

    def replace_uses(self, q: Node, new: Node) -> None:
        new.meta.setdefault("stack_trace", q.meta.get("stack_trace"))  # a new node's
        q.replace_all_uses_with(new)
        self.graph.erase_node(q)

    def fold_mean(self, q: Node, mean: Node, out: _Output) -> str | None:
        """quantize(mean(dequantize(x), [H, W])): the exact int32 sum, then the float32 steps."""
        act = _int8_activation(mean.args[0])
        val = act.node.meta.get("val") if act is not None else None
        if act is None or not isinstance(val, torch.Tensor) or val.dim() != 4:
            return None
        dim_arg: Any = mean.args[1]
        dims = sorted(d % 4 for d in dim_arg)
        keepdim = bool(mean.args[2]) if len(mean.args) > 2 else False
        if dims != [2, 3]:
            return None
        self.replace(q, MEAN, (
            act.node, act.scale, act.zero_point, out.scale, out.zero_point, out.low, out.high,
            keepdim,
        ))  # fmt: skip
        return "mean"

    def fold_avg_pool(self, q: Node, pool: Node, out: _Output) -> str | None:
        """quantize(avg_pool2d(dequantize(x))): exact int32 window sums, then the float32
        steps (ATen's windows and divisors)."""
        act = _int8_activation(pool.args[0])
        val = act.node.meta.get("val") if act is not None else None
        if act is None or not isinstance(val, torch.Tensor) or val.dim() != 4:
            return None
        given = list(pool.args[1:])  # kernel, then stride, padding, ceil_mode, ...
        kernel, stride, padding, ceil, include_pad, divisor = (
            given + [[], 0, False, True, None][len(given) - 1 :]
        )
        k = _pair(kernel)
        self.replace(q, AVG_POOL2D, (
            act.node, act.scale, act.zero_point, out.scale, out.zero_point, out.low, out.high, k,
            _pair(stride) if stride else k, _pair(padding), ceil, include_pad, divisor,
        ))  # fmt: skip
        return "avg_pool"

    def fold_mul(self, q: Node, mul: Node, out: _Output) -> bool:
        """dq(a) * dq(b) -> q: one shape, or one a [N, C, 1, 1] gate of the other (SE)."""
        a, b = (_int8_activation(v) for v in mul.args[:2])
        if a is None or b is None or a.node is b.node:
            return False
        va, vb = a.node.meta.get("val"), b.node.meta.get("val")
        if not isinstance(va, torch.Tensor) or not isinstance(vb, torch.Tensor):
            return False

        def gate(g: torch.Tensor, full: torch.Tensor) -> bool:
            return (
                g.dim() == full.dim() >= 3
                and g.shape[:2] == full.shape[:2]
                and all(s == 1 for s in g.shape[2:])
            )

        if va.shape != vb.shape and not gate(va, vb) and not gate(vb, va):
            return False
        self.replace(q, MUL, (
            a.node, a.scale, a.zero_point, b.node, b.scale, b.zero_point, out.scale,
            out.zero_point, out.low, out.high,
        ))  # fmt: skip
        return True

    def fold_lookup(self, q: Node, out: _Output) -> str | None:
        """Elementwise float ops of one int8 dequantize (and numbers) before a quantize: 256
        possible inputs, so a table, computed by running the graph's own nodes on them."""
        chain = self.elementwise_chain(q)
        if chain is None:
            return None
        dq, nodes = chain
        act = _int8_activation(dq)
        assert act is not None
        env: dict[Node, Any] = {act.node: torch.arange(-128, 128, dtype=torch.int32).to(torch.int8)}
        for node in [dq, *nodes, q]:
            args = torch.fx.map_arg(node.args, lambda n: env[n])
            kwargs = torch.fx.map_arg(node.kwargs, lambda n: env[n])
            assert callable(node.target)
            env[node] = node.target(*args, **kwargs)
        table = env[q]
        if not isinstance(table, torch.Tensor) or table.shape != (256,):
            return None
        self.replace(q, LOOKUP, (act.node, self.add_constant(table.to(torch.int8))))
        return "lookup"

    def elementwise_chain(self, q: Node) -> tuple[Node, list[Node]] | None:
        """(the dequantize, the nodes in graph order) when everything q quantizes is computed
        elementwise from one int8 dequantize and numbers, and read by nothing else."""
        dqs: set[Node] = set()
        nodes: set[Node] = set()
        stack: list[Any] = [q.args[0]]
        while stack:
            node = stack.pop()
            if not isinstance(node, Node):
                if not isinstance(node, (int, float, bool)) and node is not None:
                    return None
                continue
            if node in nodes or node in dqs:
                continue
            if _int8_activation(node) is not None:
                dqs.add(node)
                continue
            if node.op != "call_function" or node.target not in _ELEMENTWISE:
                return None
            nodes.add(node)
            stack.extend(node.args)
            stack.extend(node.kwargs.values())
        if len(dqs) != 1 or not nodes:
            return None
        (dq,) = dqs
        shape = dq.meta.get("val")
        for node in nodes:
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor) or not isinstance(shape, torch.Tensor):
                return None
            if val.dtype != torch.float32 or val.shape != shape.shape:
                return None
            if any(u not in nodes and u is not q for u in node.users):
                return None
        order = {n: i for i, n in enumerate(self.graph.nodes)}
        return dq, sorted(nodes, key=order.__getitem__)

    def fold_clamp(self, q: Node) -> int:
        """dq -> relu/hardtanh/clamp -> q with the same parameters (how PT2E quantizes a ReLU6
        after a convolution): quantize(dequantize(x)) is x, so this is a clamp of the int8
        values, folded into the range of the integer kernel that produced them when it has no
        other reader."""
        clamp, out = _clamp(q.args[0]), None
        dq = q.args[0].args[0] if clamp is not None else None  # type: ignore[union-attr]
        act = _int8_activation(dq)
        if clamp is not None and act is not None:
            out = self.output(q, clamp)
        if out is None or act is None or (out.scale, out.zero_point) != (act.scale, act.zero_point):
            return 0
        assert isinstance(dq, Node)
        src = act.node
        fusable = is_call(src, CONV2D) or is_call(src, LINEAR)
        if fusable and len(src.users) == 1 and len(dq.users) == 1:
            args: list[Any] = list(src.args)
            args[8], args[9] = max(out.low, args[8]), min(out.high, args[9])
            src.args = tuple(args)
            q.replace_all_uses_with(src)
            self.graph.erase_node(q)
            return 1
        self.replace(q, _ATEN.clamp.default, (src, out.low, out.high))
        return 1

    def replace(self, q: Node, target: Any, args: tuple[Any, ...]) -> None:
        replace_node(self.graph, q, target, args)

    def fold_conv(self, q: Node, conv: Node, out: _Output) -> int:
        conv_args: Any = conv.args[:9]
        x, w, b, stride, padding, dilation, transposed, _, groups = conv_args
        act, weight = _int8_activation(x), self.weight(w)
        ok, bias = self.bias(b)
        val = conv.meta.get("val")
        if act is None or weight is None or not ok or transposed:
            return 0
        if not isinstance(val, torch.Tensor) or val.dim() != 4:
            return 0
        self.replace(q, CONV2D, (
            act.node, weight.node, weight.scale, bias, act.scale, act.zero_point, out.scale,
            out.zero_point, out.low, out.high, list(stride), list(padding), list(dilation), groups,
        ))  # fmt: skip
        return 1

    def fold_add(self, q: Node, add: Node, out: _Output) -> int:
        """dq(a) + dq(b) [-> relu/clamp] -> q, both int8 of one shape (a residual connection)."""
        if add.kwargs or len(add.args) != 2:  # alpha
            return 0
        a, b = _int8_activation(add.args[0]), _int8_activation(add.args[1])
        if a is None or b is None:
            return 0
        va, vb = a.node.meta.get("val"), b.node.meta.get("val")
        if not isinstance(va, torch.Tensor) or not isinstance(vb, torch.Tensor):
            return 0
        if va.dtype != torch.int8 or vb.dtype != torch.int8 or va.shape != vb.shape:
            return 0
        self.replace(q, ADD, (
            a.node, a.scale, a.zero_point, b.node, b.scale, b.zero_point, out.scale,
            out.zero_point, out.low, out.high,
        ))  # fmt: skip
        return 1

    def fold_linear(self, q: Node, src: Node, out: _Output) -> int:
        """addmm(bias, x, permute(w)) or mm(x, permute(w)), 2-D or between the views of a
        linear over more dimensions."""
        mm: Any = src
        b: Any
        x: Any
        wt: Any
        if is_call(src, _ATEN.view.default) and isinstance(src.args[0], Node):
            mm = src.args[0]
            if len(mm.users) != 1:
                return 0
        if is_call(mm, _ATEN.addmm.default):
            b, x, wt = mm.args[:3]
            if mm.kwargs or len(mm.args) > 3:  # beta / alpha
                return 0
        elif is_call(mm, _ATEN.mm.default):
            b, (x, wt) = None, mm.args[:2]
        else:
            return 0
        if is_call(x, _ATEN.view.default) and mm is not src:
            x = x.args[0]
        if not is_call(wt, _ATEN.permute.default) or list(wt.args[1]) != [1, 0]:
            return 0
        act, weight = _int8_activation(x), self.weight(wt.args[0])
        ok, bias = self.bias(b)
        if act is None or weight is None or not ok:
            return 0
        in_val, out_val = act.node.meta.get("val"), q.meta.get("val")
        if not isinstance(in_val, torch.Tensor) or not isinstance(out_val, torch.Tensor):
            return 0
        if in_val.shape[:-1] != out_val.shape[:-1] or (mm is src and in_val.dim() != 2):
            return 0
        self.replace(q, LINEAR, (
            act.node, weight.node, weight.scale, bias, act.scale, act.zero_point, out.scale,
            out.zero_point, out.low, out.high,
        ))  # fmt: skip
        return 1


def fold_quantized(ep: ExportedProgram) -> FoldReport:
    """Rewrites `ep`'s graph in place; a program without q/dq ops is left as it was."""
    if not any(is_call(n, QUANTIZE) for n in ep.graph.nodes):
        return FoldReport(0, 0)
    return _Folder(ep).fold()


__all__ = ["FoldReport", "fold_quantized"]

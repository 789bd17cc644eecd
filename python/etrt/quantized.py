"""PT2E static int8: fold dq -> convolution/linear [-> relu] -> q patterns into integer kernels.

`convert_pt2e` leaves `quantized_decomposed` quantize/dequantize ops around float operators. The
exporter rewrites the core ATen graph before lowering: a convolution or linear whose input is a
per-tensor int8 dequantize, whose weight is a per-channel symmetric int8 dequantize of a constant
and whose only user (through an optional ReLU) is a per-tensor int8 quantize becomes one
`etrt_quant::conv2d` / `etrt_quant::linear` call: int8 x int8 products summed in int32, then
requantized as the reference module computes it (docs/quantization.md). Everything else keeps
its quantize/dequantize ops, which run as kernels of their own, so any PT2E program runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.ao.quantization.fx._decomposed  # defines torch.ops.quantized_decomposed
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from torch.fx import Node

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
_LIB.impl("linear", _linear_reference, "CompositeExplicitAutograd")

_QD = torch.ops.quantized_decomposed
QUANTIZE = _QD.quantize_per_tensor.default
DEQUANTIZE = _QD.dequantize_per_tensor.default
DEQUANTIZE_CHANNEL = _QD.dequantize_per_channel.default
CONV2D = torch.ops.etrt_quant.conv2d.default
LINEAR = torch.ops.etrt_quant.linear.default
_ATEN = torch.ops.aten
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


def _is(node: Any, target: Any) -> bool:
    return isinstance(node, Node) and node.op == "call_function" and node.target == target


def _int8_activation(node: Any) -> _Activation | None:
    if not _is(node, DEQUANTIZE) or len(node.args) < 6 or node.args[5] != torch.int8:
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
        if not _is(node, DEQUANTIZE_CHANNEL) or len(node.args) < 7:
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
    def output(q: Node, relu: bool) -> _Output | None:
        if len(q.args) < 6 or q.args[5] != torch.int8:
            return None
        scale, zp, low, high = q.args[1], q.args[2], q.args[3], q.args[4]
        if not isinstance(scale, float) or not all(isinstance(v, int) for v in (zp, low, high)):
            return None
        assert isinstance(zp, int) and isinstance(low, int) and isinstance(high, int)
        # relu then quantize: the zero point is the quantized 0, so relu is a floor at it.
        return _Output(scale, zp, max(low, zp) if relu else low, high)

    def fold(self) -> FoldReport:
        convs = linears = 0
        for q in list(self.graph.nodes):
            if not _is(q, QUANTIZE):
                continue
            src, relu = q.args[0], False
            if _is(src, _ATEN.relu.default) and len(src.users) == 1:
                src, relu = src.args[0], True
            if not isinstance(src, Node) or len(src.users) != 1:
                continue
            out = self.output(q, relu)
            if out is None:
                continue
            if _is(src, _ATEN.convolution.default):
                convs += self.fold_conv(q, src, out)
            else:
                linears += self.fold_linear(q, src, out)
        if convs or linears:
            self.graph.eliminate_dead_code()
            self.ep.graph_module.recompile()
        return FoldReport(convs, linears)

    def replace(self, q: Node, target: Any, args: tuple[Any, ...]) -> None:
        with self.graph.inserting_before(q):
            new = self.graph.call_function(target, args)
        new.meta["val"] = q.meta.get("val")
        new.meta["stack_trace"] = q.meta.get("stack_trace")
        q.replace_all_uses_with(new)
        self.graph.erase_node(q)

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

    def fold_linear(self, q: Node, src: Node, out: _Output) -> int:
        """addmm(bias, x, permute(w)) or mm(x, permute(w)), 2-D or between the views of a
        linear over more dimensions."""
        mm: Any = src
        b: Any
        x: Any
        wt: Any
        if _is(src, _ATEN.view.default) and isinstance(src.args[0], Node):
            mm = src.args[0]
            if len(mm.users) != 1:
                return 0
        if _is(mm, _ATEN.addmm.default):
            b, x, wt = mm.args[:3]
            if mm.kwargs or len(mm.args) > 3:  # beta / alpha
                return 0
        elif _is(mm, _ATEN.mm.default):
            b, (x, wt) = None, mm.args[:2]
        else:
            return 0
        if _is(x, _ATEN.view.default) and mm is not src:
            x = x.args[0]
        if not _is(wt, _ATEN.permute.default) or list(wt.args[1]) != [1, 0]:
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
    if not any(_is(n, QUANTIZE) for n in ep.graph.nodes):
        return FoldReport(0, 0)
    return _Folder(ep).fold()


__all__ = ["FoldReport", "fold_quantized"]

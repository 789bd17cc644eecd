"""Channels-last (NHWC) activations for etrt's own kernels, planned at export.

etrt's convolution kernels run fastest channels-last (src/kernels/conv_nhwc.h): a pixel's channels
are one contiguous row, so a tile of output pixels is a small matrix product over the taps with
nothing unfolded, and a depthwise tap is one vector multiply-add per pixel. This pass stores NHWC
every convolution output it can, and what elementwise ops, pooling, constant padding, batch norm,
resampling and channel concatenation compute from NHWC values alone, by giving their
tensors the dim_order (0, 2, 3, 1). PT2E int8 convolutions (etrt_quant::conv2d) and the integer
additions, products, tables, max pooling, clamps and quantize/dequantize ops between them go NHWC
the same way. Their logical shapes stay NCHW and every kernel reads any strides, so the program
computes what it computed before; only the bytes move. Those convolutions' weights are stored
[kh][kw][cin][cout] (dim_order (2, 3, 1, 0)), the layout the NHWC kernels read in place.

Outputs of XNNPACK delegate calls that XNNPACK computes NHWC are NHWC already (the delegate
writes them straight into the tensor, and reads NHWC inputs as they are): etrt's kernels and
the delegate hand activations over without a permute.

What stays as it was: convolutions with a reduction shorter than 16 (a group's input channels
x taps: a single-channel 3x3 layer runs better as im2col + SGEMM), program inputs and outputs
(the first convolution gathers its NCHW input; one whose result the program returns computes
NHWC into a tensor of its own, copied out, when that pays: _returned_nhwc_pays), values of one
pixel or one channel (both layouts are the same bytes), tensors of dynamic shape, and the outputs
of every other op.
A view of NHWC memory that keeps each pixel's channels adjacent (a channel split or slice:
CSPDarknet's, ShuffleNetV2's and YOLO's halves) counts as an NHWC operand for the elementwise
ops and concatenations that read it: their outputs are NHWC (they were NCHW, gathered back by
every convolution after them).
A view that cannot express its result over NHWC memory (a flatten of C with H and W) reads an
NCHW copy (aten::clone) instead; views that can (ViT's [N, C, H, W] -> [N, C, H*W] ->
[N, H*W, C]) come out cheaper. Weights kept outside the program (external_constants) stay as
they are and the kernel repacks them per call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from . import _ops
from .ir import (
    BoolValue,
    ExecutionPlan,
    Instruction,
    IntListValue,
    IntValue,
    KernelCall,
    NullValue,
    ScalarType,
    StorageKind,
    TensorValue,
    Value,
    tensor_indices,
)
from .plan_graph import PlanGraph, add_constant, constant_array, drop_unread_constants

NHWC = (0, 2, 3, 1)
OHWI = NHWC  # a weight [O, I, kh, kw] stored [O][kh][kw][I]
HWIO = (2, 3, 1, 0)
CONVOLUTION = "aten::convolution"
# Ops whose output takes their input's layout: pooling (the int8 ones: quantized_ops.py),
# constant padding (TensorFlow's "same" padding where it is uneven: fold_pad.py takes the rest),
# batch norms no convolution took (DenseNet's, after each concatenation) and resampling
# (HRNet's and GhostNetV2's nearest, segmentation heads' bilinear).
KEEPS_INPUT_LAYOUT = (
    "aten::constant_pad_nd",
    "aten::_native_batch_norm_legit_no_training",
    "aten::upsample_nearest2d.vec",
    "aten::upsample_bilinear2d.vec",
    "aten::max_pool2d_with_indices",
    "aten::max_pool2d",
    "aten::avg_pool2d",
    "etrt_quant::max_pool2d",
    "etrt_quant::avg_pool2d",
)
# PT2E int8 (quantized.py): the integer convolution reads and writes either layout; the
# integer elementwise ops and the quantize/dequantize between them keep their input's.
QUANT_CONVOLUTION = "etrt_quant::conv2d"
QUANT_ELEMENTWISE = (
    "etrt_quant::add",
    "etrt_quant::lookup",
    "etrt_quant::mul",  # its [N, C, 1, 1] gate is not of the output's shape: the full input decides
    "quantized_decomposed::quantize_per_tensor",
    "quantized_decomposed::dequantize_per_tensor",
    "aten::clamp",
)
# Input channels x taps below which a convolution stays NCHW (see _nhwc_convolution).
MIN_NHWC_DEPTH = 16


def plan_channels_last(plan: ExecutionPlan, segments: list[bytes]) -> int:
    """Lays out `plan`'s activations as above (mutates both); returns how many convolutions run
    channels-last."""
    graph = PlanGraph(plan)
    nhwc: set[int] = set()
    # Views of memory laid out here, any rank, with their strides: those of 4-D NHWC order (a
    # channel split or slice: CSPDarknet's and YOLO's halves) are operands as good as NHWC ones.
    views: dict[int, tuple[int, ...]] = {}
    # Copies of rank 5 or more laid out with their channel dimensions innermost (ShuffleNet's
    # channel shuffle), by dim order: the 4-D view read after them is NHWC.
    inner: dict[int, tuple[int, ...]] = {}
    laid = _Laid(nhwc, inner, views)
    convs: list[int] = []
    returned: list[int] = []  # convolutions computing a program output (see _copy_to_output)
    quant_convs: list[int] = []  # int8 convolutions writing NHWC
    for step, instr in enumerate(plan.instructions):
        if not isinstance(instr, KernelCall):
            # XNNPACK's spatial outputs are NHWC already (xnnpack/lowering.py).
            nhwc.update(v for v in instr.outputs if _delegate_wrote_nhwc(graph, v))
            continue
        op = graph.op(step)
        outs = instr.outputs
        if op == CONVOLUTION:
            if _nhwc_convolution(graph, segments, instr):
                convs.append(step)
                if _may_be_nhwc(graph, outs[0]):
                    nhwc.add(outs[0])
                elif _returned_nhwc_pays(graph, instr, instr.inputs[0] in nhwc):
                    returned.append(step)
        elif op == QUANT_CONVOLUTION:
            if _nhwc_quant_convolution(graph, instr) and _may_be_nhwc(graph, outs[0], True):
                nhwc.add(outs[0])
                quant_convs.append(step)
        elif op in QUANT_ELEMENTWISE and len(outs) == 1:
            # int8 values and their quantize/dequantize: as the float elementwise ops below
            full = [t for a in instr.inputs for t in tensor_indices(plan.values, a)]
            full = [t for t in full if _sizes(graph, t) == _sizes(graph, outs[0])]
            if full and all(t in nhwc for t in full) and _may_be_nhwc(graph, outs[0], True):
                nhwc.add(outs[0])
        elif op in KEEPS_INPUT_LAYOUT:
            if instr.inputs[0] in nhwc:
                nhwc.update(v for v in outs if _may_be_nhwc(graph, v, any_dtype=True))
        elif op in VIEWS and instr.inputs:
            base = laid.strides(graph, instr.inputs[0])
            if base is not None:
                views.update(_view_results(graph, op, instr, base))
        elif op == "aten::clone" and (order := _channels_inner_copy(graph, instr, laid)):
            inner[outs[0]] = order
        elif op is not None and _ops.writes_any_layout(op) and len(outs) == 1:
            out = graph.tensor(outs[0])
            if out is None or not _may_be_nhwc(graph, outs[0]):
                continue
            # The operands of the output's full shape (a concatenation: all of them) decide.
            full = [
                t
                for a in instr.inputs
                for t in tensor_indices(plan.values, a)
                if _sizes(graph, t) == out.sizes or op == "aten::cat"
            ]
            if full and all(t in nhwc or laid.nhwc_view(graph, t) for t in full):
                nhwc.add(outs[0])
    for v in nhwc:
        t = graph.tensor(v)
        assert t is not None
        plan.values[v] = replace(t, dim_order=NHWC)
    for v, order in inner.items():
        t = graph.tensor(v)
        assert t is not None
        plan.values[v] = replace(t, dim_order=order)
    copies = {step: _write_nhwc_then_copy(plan, step, nhwc) for step in returned}
    count = 0
    for step in convs:
        instr = plan.instructions[step]
        assert isinstance(instr, KernelCall)
        out = graph.tensor(instr.outputs[0])
        assert out is not None
        if _same_bytes_both_ways(out) or instr.outputs[0] in nhwc:
            if constant_array(plan, segments, instr.inputs[1]) is not None:
                _store_weight_hwio(plan, segments, step, instr)
            count += 1
    for step in quant_convs:
        _store_int8_weight_ohwi(plan, segments, step)
    _copy_after(plan, copies)
    _copy_before_views(graph, laid)
    drop_unread_constants(plan, segments)
    return count


def _clone_operator(plan: ExecutionPlan) -> int:
    if "aten::clone" not in plan.operators:
        plan.operators.append("aten::clone")
    return plan.operators.index("aten::clone")


def _copy_after(plan: ExecutionPlan, copies: dict[int, tuple[int, int]]) -> None:
    """After each instruction `step` in `copies`, an aten::clone of src into dst."""
    if not copies:
        return
    clone = _clone_operator(plan)
    out: list[Instruction] = []
    for step, instr in enumerate(plan.instructions):
        out.append(instr)
        if step in copies and isinstance(instr, KernelCall):
            src, dst = copies[step]
            plan.values.append(NullValue())  # clone's memory_format
            out.append(KernelCall(clone, (src, len(plan.values) - 1, dst), 1, node=instr.node))
    plan.instructions = out


# A convolution whose result the program returns (NCHW) runs channels-last into a tensor of its
# own and is copied out. After an NHWC layer, one thread: 1.1-1.4x faster for 1x1 layers (64
# channels in at 64x64, 256 at 14x14, 576 at 7x7), 2.2-2.5x for 3x3 ones. With fewer output
# channels the NCHW product, vectorised over pixels, wins; so does a 1x1 layer reading the
# program's NCHW input, which is already the product's column matrix (NHWC paid a transpose each
# way: 2x slower at 64 channels over 64x64).
MIN_RETURNED_NHWC_CHANNELS = 16


def _returned_nhwc_pays(graph: PlanGraph, conv: KernelCall, input_nhwc: bool) -> bool:
    v = conv.outputs[0]
    t, wt = graph.float_tensor(v, 4), graph.float_tensor(conv.inputs[1], 4)
    return (
        t is not None
        and wt is not None
        and v in graph.plan_outputs
        and t.storage == StorageKind.PLANNED
        and not t.dynamic
        and t.dim_order == (0, 1, 2, 3)
        and t.view_of is None
        and t.sizes[1] >= MIN_RETURNED_NHWC_CHANNELS
        and not _same_bytes_both_ways(t)
        and (input_nhwc or wt.sizes[2] * wt.sizes[3] > 1)
    )


def _write_nhwc_then_copy(plan: ExecutionPlan, step: int, nhwc: set[int]) -> tuple[int, int]:
    """Points the convolution at `step` to a new NHWC tensor; returns (it, the program output)."""
    conv = plan.instructions[step]
    assert isinstance(conv, KernelCall)
    dst = conv.outputs[0]
    t = plan.values[dst]
    assert isinstance(t, TensorValue)
    src = len(plan.values)
    plan.values.append(replace(t, dim_order=NHWC, name=f"{t.name}.nhwc" if t.name else ""))
    nhwc.add(src)
    args = list(conv.args)
    args[len(args) - conv.num_outputs] = src
    plan.instructions[step] = replace(conv, args=tuple(args))
    return src, dst


def _delegate_wrote_nhwc(graph: PlanGraph, v: int) -> bool:
    t = graph.tensor(v)  # float32, or int8 from an int8 partition
    return t is not None and t.storage == StorageKind.PLANNED and t.dim_order == NHWC


def _sizes(graph: PlanGraph, v: int) -> tuple[int, ...] | None:
    t = graph.tensor(v)
    return t.sizes if t is not None else None


def _same_bytes_both_ways(t: TensorValue) -> bool:
    """One channel or one pixel: NCHW and NHWC strides address the same bytes."""
    return len(t.sizes) == 4 and (t.sizes[1] == 1 or t.sizes[2] * t.sizes[3] == 1)


def _may_be_nhwc(graph: PlanGraph, v: int, any_dtype: bool = False) -> bool:
    t = graph.tensor(v) if any_dtype else graph.float_tensor(v, 4)
    return (
        t is not None
        and len(t.sizes) == 4
        and t.storage == StorageKind.PLANNED
        and not t.dynamic  # sizes known only at run time: left as torch traced them
        and t.dim_order == (0, 1, 2, 3)
        and v not in graph.plan_outputs
        and not _same_bytes_both_ways(t)
    )


def _nhwc_convolution(graph: PlanGraph, segments: list[bytes], conv: KernelCall) -> bool:
    """A 2-D convolution the NHWC kernels run: a constant weight, a reduction deep enough."""
    x, w, _bias, _stride, _padding, _dilation, transposed, _opad, groups = conv.inputs
    xt, wt = graph.float_tensor(x, 4), graph.float_tensor(w, 4)
    flag, g = graph.plan.values[transposed], graph.plan.values[groups]
    ot = graph.float_tensor(conv.outputs[0], 4)
    if xt is None or wt is None or ot is None or xt.dynamic or ot.dynamic:
        return False
    if not isinstance(flag, BoolValue) or flag.val or not isinstance(g, IntValue):
        return False
    external = wt.storage == StorageKind.EXTERNAL and wt.dim_order == (0, 1, 2, 3)
    if constant_array(graph.plan, segments, w) is None and not external:
        return False
    cin, cout = xt.sizes[1], wt.sizes[0]
    if g.val == cin == cout and wt.sizes[1] == 1:
        return True  # depthwise
    # A reduction this short (one input channel, 3x3) runs better as NCHW im2col + SGEMM: the
    # NHWC tiles would be all overhead (the test CNN's layer: 2x slower channels-last). Other
    # groups (ResNeXt's, RegNet's) run per group: the reduction is a group's.
    return (
        g.val >= 1
        and cin % g.val == 0
        and wt.sizes[1] * wt.sizes[2] * wt.sizes[3] >= MIN_NHWC_DEPTH
    )


def _nhwc_quant_convolution(graph: PlanGraph, conv: KernelCall) -> bool:
    """An int8 convolution of static shape, groups 1 or one per channel (its NHWC kernels)."""
    x, w, groups = conv.inputs[0], conv.inputs[1], conv.inputs[13]
    xt, wt, ot = graph.tensor(x), graph.tensor(w), graph.tensor(conv.outputs[0])
    g = graph.plan.values[groups]
    if xt is None or wt is None or ot is None or xt.dynamic or ot.dynamic:
        return False
    if not isinstance(g, IntValue) or len(xt.sizes) != 4 or len(wt.sizes) != 4:
        return False
    cin, cout = xt.sizes[1], wt.sizes[0]
    return g.val == 1 or (g.val == cin == cout and wt.sizes[1] == 1)


def _store_int8_weight_ohwi(plan: ExecutionPlan, segments: list[bytes], step: int) -> None:
    """An int8 kxk convolution's weight stored [cout][kh][kw][cin] (dim_order (0, 2, 3, 1)):
    the order of the NHWC kernel's unfolded rows, so it is not permuted per call."""
    conv = plan.instructions[step]
    assert isinstance(conv, KernelCall)
    w = conv.inputs[1]
    t = plan.values[w]
    if not isinstance(t, TensorValue) or t.storage != StorageKind.CONSTANT:
        return
    if t.scalar_type != ScalarType.CHAR or t.dim_order != (0, 1, 2, 3):
        return
    if t.sizes[2] * t.sizes[3] == 1 or t.sizes[1] == 1:  # already in that order
        return
    data = np.frombuffer(segments[t.constant_segment], dtype=np.int8)
    if data.size != t.numel:
        return
    stored = np.ascontiguousarray(np.transpose(data.reshape(t.sizes), OHWI))
    segments.append(stored.tobytes())
    plan.values.append(replace(t, dim_order=OHWI, constant_segment=len(segments) - 1))
    args = list(conv.args)
    args[1] = len(plan.values) - 1
    plan.instructions[step] = replace(conv, args=tuple(args))


def _store_weight_hwio(
    plan: ExecutionPlan, segments: list[bytes], step: int, conv: KernelCall
) -> None:
    w = conv.inputs[1]
    array = constant_array(plan, segments, w)
    assert array is not None
    old = plan.values[w]
    name = old.name if isinstance(old, TensorValue) else ""
    stored = add_constant(plan, segments, array, dim_order=HWIO, name=name)
    args = list(conv.args)
    args[1] = stored
    plan.instructions[step] = replace(conv, args=tuple(args))


# How each view op computes its result, so its strides over NHWC memory can be worked out (or
# found impossible) the way the runtime will: with torch on meta tensors.
ViewFn = Callable[[torch.Tensor, list[Value]], torch.Tensor | list[torch.Tensor]]


def _ints(v: Value) -> list[int]:
    assert isinstance(v, IntListValue)
    return list(v.items)


def _int(v: Value) -> int | None:
    return v.val if isinstance(v, IntValue) else None


VIEWS: dict[str, ViewFn] = {
    "aten::view": lambda t, a: t.view(_ints(a[0])),
    "aten::_unsafe_view": lambda t, a: t.view(_ints(a[0])),
    "aten::permute": lambda t, a: t.permute(_ints(a[0])),
    "aten::expand": lambda t, a: t.expand(_ints(a[0])),
    "aten::alias": lambda t, a: t,
    "aten::select.int": lambda t, a: t.select(_int(a[0]) or 0, _int(a[1]) or 0),
    "aten::squeeze.dims": lambda t, a: t.squeeze(_ints(a[0])),
    "aten::squeeze.dim": lambda t, a: t.squeeze(_int(a[0]) or 0),
    "aten::unsqueeze": lambda t, a: t.unsqueeze(_int(a[0]) or 0),
    "aten::t": lambda t, a: t.t(),
    "aten::transpose.int": lambda t, a: t.transpose(_int(a[0]) or 0, _int(a[1]) or 0),
    "aten::slice.Tensor": lambda t, a: torch.ops.aten.slice.Tensor(
        t, _int(a[0]) or 0, _int(a[1]), _int(a[2]), _int(a[3]) or 1
    ),
    "aten::split_with_sizes": lambda t, a: list(
        torch.ops.aten.split_with_sizes.default(t, _ints(a[0]), _int(a[1]) or 0)
    ),
}


def _meta(t: TensorValue, strides: tuple[int, ...]) -> torch.Tensor:
    return torch.empty_strided(t.sizes, strides, dtype=torch.float32, device="meta")


def _nhwc_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return _strides_of_order(sizes, NHWC)


def _strides_of_order(sizes: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    strides = [0] * len(sizes)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= sizes[d]
    return tuple(strides)


@dataclass(frozen=True)
class _Laid:
    """What the pass lays out so far: NHWC tensors, copies with their channel dimensions
    innermost (by dim order), and views of either (by strides)."""

    nhwc: set[int]
    inner: dict[int, tuple[int, ...]]
    views: dict[int, tuple[int, ...]]

    def strides(self, graph: PlanGraph, v: int) -> tuple[int, ...] | None:
        """The strides of `v` where it is such memory, or a view of it."""
        t = graph.tensor(v)
        if t is None or t.dynamic:
            return None
        if v in self.nhwc:
            return _nhwc_strides(t.sizes)
        if v in self.inner:
            return _strides_of_order(t.sizes, self.inner[v])
        return self.views.get(v)

    def nhwc_view(self, graph: PlanGraph, v: int) -> bool:
        """A 4-D view whose pixels keep their channels adjacent, in NHWC order (dimensions of
        size 1, whose strides say nothing, aside)."""
        s, t = self.views.get(v), graph.tensor(v)
        if s is None or t is None or len(t.sizes) != 4 or (t.sizes[1] > 1 and s[1] != 1):
            return False
        reach = 1
        for d in (1, 3, 2, 0):
            if t.sizes[d] > 1:
                if s[d] < reach:
                    return False
                reach = s[d] * t.sizes[d]
        return True


def _view_results(
    graph: PlanGraph, op: str, instr: KernelCall, strides: tuple[int, ...]
) -> dict[int, tuple[int, ...]]:
    """The strides of each result of a view op over a tensor with `strides`."""
    xt = graph.tensor(instr.inputs[0])
    assert xt is not None
    targets = [t for v in instr.outputs for t in tensor_indices(graph.plan.values, v)]
    results = _view_strides(VIEWS[op], _meta(xt, strides), graph.plan, instr)
    if results is None or len(results) != len(targets):
        return {}
    return {
        t: s
        for t, s in zip(targets, results, strict=True)
        if (tv := graph.tensor(t)) is not None and not tv.dynamic and len(tv.sizes) == len(s)
    }


def _channels_inner_copy(
    graph: PlanGraph, instr: KernelCall, laid: _Laid
) -> tuple[int, ...] | None:
    """The dim order (0, k-2, k-1, 1, ..., k-3) for a copy of NHWC memory of shape [N, c1, ...,
    H, W] (rank k > 4) that a view makes [N, C, H, W] alone reads: ShuffleNet's channel shuffle
    (view [N, g, C/g, H, W], transpose, contiguous, view back). So laid out, the copy permutes
    each pixel's channels and the view after it is NHWC, where the NCHW copy made every layer
    after it gather its input back."""
    out = instr.outputs[0]
    t = graph.tensor(out)
    if t is None or len(t.sizes) < 5 or t.dynamic or t.storage != StorageKind.PLANNED:
        return None
    if out in graph.plan_outputs or t.dim_order != tuple(range(len(t.sizes))):
        return None
    if laid.strides(graph, instr.inputs[0]) is None:
        return None
    step = graph.only_reader(out)
    if step is None or graph.op(step) not in ("aten::view", "aten::_unsafe_view"):
        return None
    viewed = graph.tensor(graph.instruction(step).outputs[0])
    if viewed is None or len(viewed.sizes) != 4:
        return None
    n, c, h, w = viewed.sizes
    if (t.sizes[0], *t.sizes[-2:]) != (n, h, w) or int(np.prod(t.sizes[1:-2])) != c:
        return None
    k = len(t.sizes)
    return (0, k - 2, k - 1, *range(1, k - 2))


def _copy_before_views(graph: PlanGraph, laid: _Laid) -> None:
    """Gives every view of NHWC memory (or of the copies laid out channels innermost) that the
    runtime could not compute an NCHW copy to view."""
    plan = graph.plan
    strides: dict[int, tuple[int, ...]] = {}
    for v in (*laid.nhwc, *laid.inner):
        s = laid.strides(graph, v)
        assert s is not None
        strides[v] = s
    out: list[Instruction] = []
    clone = None
    for instr in plan.instructions:
        op = plan.operators[instr.op_index] if isinstance(instr, KernelCall) else None
        if not isinstance(instr, KernelCall) or op not in VIEWS or instr.inputs[0] not in strides:
            out.append(instr)
            continue
        x = instr.inputs[0]
        xt = plan.values[x]
        assert isinstance(xt, TensorValue)
        targets = [t for v in instr.outputs for t in tensor_indices(plan.values, v)]
        results = _view_strides(VIEWS[op], _meta(xt, strides[x]), plan, instr)
        if results is not None and len(results) == len(targets):
            strides.update(zip(targets, results, strict=True))
            out.append(instr)
            continue
        if clone is None:
            clone = _clone_operator(plan)
        copy = len(plan.values)
        # x may itself be a view (an expand of a permuted NHWC tensor): its copy is a planned
        # tensor of its own, whatever x's storage.
        plan.values.append(
            replace(
                xt, dim_order=(), storage=StorageKind.PLANNED, view_of=None, name=f"{xt.name}.nchw"
            )
        )
        plan.values.append(NullValue())  # clone's memory_format
        out.append(KernelCall(clone, (x, copy + 1, copy), 1, node=instr.node))
        args = list(instr.args)
        args[0] = copy
        out.append(replace(instr, args=tuple(args)))
        for target in targets:  # the views' memory is the copy's now
            tv = plan.values[target]
            if isinstance(tv, TensorValue) and tv.view_of == x:
                plan.values[target] = replace(tv, view_of=copy)
    plan.instructions = out


def _view_strides(
    fn: ViewFn, t: torch.Tensor, plan: ExecutionPlan, instr: KernelCall
) -> list[tuple[int, ...]] | None:
    """The strides of each result of a view op over `t`, or None if it cannot view them."""
    args = [plan.values[a] for a in instr.inputs[1:]]
    try:
        r = fn(t, args)
    except (RuntimeError, AssertionError, TypeError):
        return None
    results = r if isinstance(r, list) else [r]
    return [tuple(x.stride()) for x in results]

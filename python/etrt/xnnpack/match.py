"""Which kernel calls XNNPACK can run, and the subgraph node each one becomes."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..ir import (
    NUMPY_NAMES,
    BoolValue,
    DoubleValue,
    ExecutionPlan,
    IntListValue,
    IntValue,
    KernelCall,
    NullValue,
    ScalarType,
    StorageKind,
    TensorListValue,
    TensorValue,
    Value,
    tensor_indices,
)
from .nodes import (
    AvgPool2d,
    Binary,
    BinaryOp,
    Clamp,
    Concat,
    Const,
    Conv2d,
    DataType,
    FloatArray,
    FullyConnected,
    GlobalAvgPool2d,
    Layout,
    MaxPool2d,
    Operand,
    QuantParams,
    Reshape,
    Sigmoid,
    Softmax,
    XNode,
)

# XNNPACK's limit on tensor rank (XNN_MAX_TENSOR_DIMS).
MAX_DIMS = 6


@dataclass(frozen=True)
class Match:
    node: XNode
    # Layout the activation inputs must have; None: whatever the others have (elementwise).
    input_layout: Layout | None
    # The output's layout; None: the inputs'.
    output_layout: Layout | None
    # The int8 (QINT8) activations it reads and writes, and their quantization; float32 if absent.
    quant: dict[int, QuantParams] = field(default_factory=dict, compare=False)

    @property
    def is_reshape(self) -> bool:
        return isinstance(self.node.body, Reshape)


class PlanView:
    """Read-only questions about a lowered plan that the matchers ask."""

    def __init__(self, plan: ExecutionPlan, segments: list[bytes]) -> None:
        self.plan = plan
        self.values: list[Value] = plan.values
        self.segments = segments
        self.producer: dict[int, int] = {}
        self.users: dict[int, set[int]] = {}
        for step, instr in enumerate(plan.instructions):
            if isinstance(instr, KernelCall):
                for out in instr.outputs:
                    for t in tensor_indices(self.values, out):
                        # State exists before the method runs; its writes keep their order.
                        v = self.values[t]
                        if not (isinstance(v, TensorValue) and v.storage == StorageKind.STATE):
                            self.producer.setdefault(t, step)
            for arg in instr.inputs:
                for t in tensor_indices(self.values, arg):
                    self.users.setdefault(t, set()).add(step)
        self.plan_outputs = set(plan.outputs)

    def op(self, instr: KernelCall) -> str:
        return self.plan.operators[instr.op_index]

    def tensor(self, index: int) -> TensorValue | None:
        v = self.values[index]
        return v if isinstance(v, TensorValue) else None

    def is_used(self, index: int) -> bool:
        return bool(self.users.get(index)) or index in self.plan_outputs

    def const_array(self, index: int, depth: int = 0) -> FloatArray | None:
        """The float32 data of a constant, or of a view op chain over one; else None."""
        t = self.tensor(index)
        if t is None or t.scalar_type != ScalarType.FLOAT or depth > 8:
            return None
        if t.storage == StorageKind.CONSTANT:
            data = np.frombuffer(self.segments[t.constant_segment], dtype=np.float32)
            return data.reshape(t.sizes) if data.size == t.numel else None
        if t.storage != StorageKind.VIEW or index not in self.producer:
            return None
        instr = self.plan.instructions[self.producer[index]]
        assert isinstance(instr, KernelCall)
        op = self.op(instr)
        base = self.const_array(instr.args[0], depth + 1)
        if base is None:
            return None
        if op == "aten::permute":
            dims = self.values[instr.args[1]]
            if not isinstance(dims, IntListValue):
                return None
            return np.transpose(base, dims.items)
        if op == "aten::t" and base.ndim == 2:
            return base.T
        if op in ("aten::view", "aten::_unsafe_view") and base.size == t.numel:
            return base.reshape(t.sizes)
        return None

    def scalar(self, index: int) -> float | None:
        v = self.values[index]
        if isinstance(v, IntValue | DoubleValue):
            return float(v.val)
        return None

    def ints(self, index: int, n: int) -> tuple[int, ...] | None:
        """An int list of n items (a single item repeated), or None."""
        v = self.values[index]
        if isinstance(v, IntValue):
            return (v.val,) * n
        if not isinstance(v, IntListValue):
            return None
        if len(v.items) == 1:
            return v.items * n
        return v.items if len(v.items) == n else None

    def activation(
        self, index: int, ndim: int | None = None, dtype: ScalarType = ScalarType.FLOAT
    ) -> bool:
        """A tensor of `dtype` computed at run time (not a constant), of rank `ndim` if given."""
        t = self.tensor(index)
        if t is None or t.scalar_type != dtype or not 1 <= len(t.sizes) <= MAX_DIMS:
            return False
        if ndim is not None and len(t.sizes) != ndim:
            return False
        if dtype != ScalarType.FLOAT:
            return t.storage != StorageKind.CONSTANT and t.numel > 0
        return self.const_array(index) is None and t.numel > 0

    def constant(self, index: int, dtype: ScalarType) -> npt.NDArray[Any] | None:
        """The data of a constant tensor of `dtype` (not a view), or None."""
        t = self.tensor(index)
        if t is None or t.scalar_type != dtype or t.storage != StorageKind.CONSTANT:
            return None
        data = np.frombuffer(self.segments[t.constant_segment], dtype=NUMPY_NAMES[dtype])
        return data.reshape(t.sizes) if data.size == t.numel else None

    def operand(self, index: int, key: str) -> Operand | None:
        """An activation, or a constant (rank <= MAX_DIMS) baked into the blob."""
        if self.activation(index):
            return index
        t = self.tensor(index)
        array = self.const_array(index)
        if t is None or array is None or not 1 <= array.ndim <= MAX_DIMS or array.size == 0:
            return None
        return Const(key, np.ascontiguousarray(array, dtype=np.float32))


def _float_output(view: PlanView, instr: KernelCall) -> int | None:
    outs = instr.outputs
    if not outs:
        return None
    t = view.tensor(outs[0])
    if t is None or t.scalar_type != ScalarType.FLOAT or not 1 <= len(t.sizes) <= MAX_DIMS:
        return None
    return outs[0]


def _is_one(view: PlanView, index: int) -> bool:
    return view.scalar(index) == 1.0


def _fully_connected(
    view: PlanView, instr: KernelCall, x: int, w: int, bias: int | None
) -> Match | None:
    out = _float_output(view, instr)
    weight = view.const_array(w)
    if out is None or not view.activation(x, 2) or weight is None or weight.ndim != 2:
        return None
    k, o = weight.shape
    xt = view.tensor(x)
    assert xt is not None
    if xt.sizes[1] != k:
        return None
    b: Const | None = None
    if bias is not None:
        bias_array = view.const_array(bias)
        if bias_array is None or bias_array.size != o or bias_array.shape not in ((o,), (1, o)):
            return None
        b = Const(f"bias:{bias}", np.ascontiguousarray(bias_array.reshape(o)))
    filt = Const(f"fc:{w}", np.ascontiguousarray(weight.T))
    return Match(XNode(FullyConnected(x, filt, b, out)), Layout.PLAIN, Layout.PLAIN)


def _addmm(view: PlanView, instr: KernelCall) -> Match | None:
    bias, x, w, beta, alpha = instr.inputs
    if not (_is_one(view, beta) and _is_one(view, alpha)):
        return None
    return _fully_connected(view, instr, x, w, bias)


def _mm(view: PlanView, instr: KernelCall) -> Match | None:
    x, w = instr.inputs
    return _fully_connected(view, instr, x, w, None)


def _convolution(view: PlanView, instr: KernelCall) -> Match | None:
    x, w, bias, stride, padding, dilation, transposed, _output_padding, groups = instr.inputs
    out = _float_output(view, instr)
    weight = view.const_array(w)
    tv, gv = view.values[transposed], view.values[groups]
    if out is None or not view.activation(x, 4) or weight is None or weight.ndim != 4:
        return None
    if not isinstance(tv, BoolValue) or tv.val or not isinstance(gv, IntValue) or gv.val < 1:
        return None
    s, p, d = view.ints(stride, 2), view.ints(padding, 2), view.ints(dilation, 2)
    if s is None or p is None or d is None or min(s) < 1 or min(d) < 1 or min(p) < 0:
        return None
    xt = view.tensor(x)
    assert xt is not None
    o, ig, kh, kw = weight.shape
    g = gv.val
    if xt.sizes[1] != g * ig or o % g != 0:
        return None
    b: Const | None = None
    if not isinstance(view.values[bias], NullValue):
        bias_array = view.const_array(bias)
        if bias_array is None or bias_array.shape != (o,):
            return None
        b = Const(f"bias:{bias}", np.ascontiguousarray(bias_array))
    filt = Const(f"conv:{w}", np.ascontiguousarray(weight.transpose(0, 2, 3, 1)))
    node = Conv2d(
        input=x, filter=filt, bias=b, output=out, padding=(p[0], p[1]), kernel=(kh, kw),
        stride=(s[0], s[1]), dilation=(d[0], d[1]), groups=g, group_input_channels=ig,
        group_output_channels=o // g,
    )  # fmt: skip
    return Match(XNode(node), Layout.SPATIAL, Layout.SPATIAL)


def _max_pool(view: PlanView, instr: KernelCall) -> Match | None:
    x, kernel, stride, padding, dilation, ceil_mode = instr.inputs
    outs = instr.outputs
    # Only the values: a used indices output keeps the op out of the delegate.
    if len(outs) != 2 or view.is_used(outs[1]) or not view.activation(x, 4):
        return None
    out = _float_output(view, instr)
    k = view.ints(kernel, 2)
    sv = view.values[stride]
    s = k if isinstance(sv, IntListValue) and not sv.items else view.ints(stride, 2)
    p, d = view.ints(padding, 2), view.ints(dilation, 2)
    cm = view.values[ceil_mode]
    if out is None or k is None or s is None or p is None or d is None:
        return None
    if not isinstance(cm, BoolValue) or min(k) < 1 or k[0] * k[1] < 2:
        return None
    if min(s) < 1 or min(d) < 1 or min(p) < 0:
        return None
    xt, ot = view.tensor(x), view.tensor(out)
    assert xt is not None and ot is not None
    # ceil_mode: the last window may run past the input; extra bottom/right padding (which
    # never wins the maximum) gives XNNPACK the same windows.
    extra = [0, 0]
    for i in range(2):
        span = (ot.sizes[2 + i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        extra[i] = span - (xt.sizes[2 + i] + 2 * p[i])
        if extra[i] < 0 and not cm.val:
            extra[i] = 0
        if extra[i] < 0 or extra[i] >= s[i] or (extra[i] and not cm.val):
            return None
    node = MaxPool2d(
        x, out, (p[0], p[1]), (k[0], k[1]), (s[0], s[1]), (d[0], d[1]), (extra[0], extra[1])
    )
    return Match(XNode(node), Layout.SPATIAL, Layout.SPATIAL)


def _avg_pool(view: PlanView, instr: KernelCall) -> Match | None:
    """avg_pool2d without padding or partial windows (then both of torch's divisor rules agree
    with XNNPACK's), and adaptive average pooling to a size that divides the input evenly."""
    x = instr.inputs[0]
    out = _float_output(view, instr)
    if out is None or not view.activation(x, 4):
        return None
    xt, ot = view.tensor(x), view.tensor(out)
    assert xt is not None and ot is not None
    if view.op(instr) == "aten::_adaptive_avg_pool2d":
        size = view.ints(instr.inputs[1], 2)
        if size is None or min(size) < 1 or any(xt.sizes[2 + i] % size[i] for i in range(2)):
            return None
        k = (xt.sizes[2] // size[0], xt.sizes[3] // size[1])
        s = k
    else:
        _x, kernel, stride, padding, ceil_mode, _include_pad, divisor = instr.inputs
        kk = view.ints(kernel, 2)
        sv = view.values[stride]
        ss = kk if isinstance(sv, IntListValue) and not sv.items else view.ints(stride, 2)
        p = view.ints(padding, 2)
        if kk is None or ss is None or p is None or p != (0, 0) or min(kk) < 1 or min(ss) < 1:
            return None
        if not isinstance(view.values[divisor], NullValue):
            return None
        if not isinstance(view.values[ceil_mode], BoolValue):
            return None
        k, s = (kk[0], kk[1]), (ss[0], ss[1])
    if k[0] * k[1] < 2:  # XNNPACK refuses a 1x1 window (the blob checker too): etrt runs it
        return None
    # Every window whole: the output is what floor mode gives (ceil mode adds no partial one).
    for i in range(2):
        if ot.sizes[2 + i] != (xt.sizes[2 + i] - k[i]) // s[i] + 1:
            return None
    return Match(XNode(AvgPool2d(x, out, k, s)), Layout.SPATIAL, Layout.SPATIAL)


def _relu(view: PlanView, instr: KernelCall) -> Match | None:
    (x,) = instr.inputs
    out = _float_output(view, instr)
    if out is None or not view.activation(x):
        return None
    return Match(XNode(Clamp(x, out), output_min=0.0), None, None)


def _binary(
    op: BinaryOp, scalar_other: bool = False
) -> Callable[[PlanView, KernelCall], Match | None]:
    def match(view: PlanView, instr: KernelCall) -> Match | None:
        ins = instr.inputs
        if len(ins) == 3 and not _is_one(view, ins[2]):  # add/sub alpha
            return None
        out = _float_output(view, instr)
        if out is None:
            return None
        a = view.operand(ins[0], f"const:{ins[0]}")
        b: Operand | None
        if scalar_other or view.scalar(ins[1]) is not None:
            value = view.scalar(ins[1])
            if value is None:
                return None
            b = Const(f"scalar:{value!r}", np.array([value], dtype=np.float32))
        else:
            b = view.operand(ins[1], f"const:{ins[1]}")
        if a is None or b is None or (isinstance(a, Const) and isinstance(b, Const)):
            return None
        return Match(XNode(Binary(op, a, b, out)), None, None)

    return match


def _clamp(view: PlanView, instr: KernelCall) -> Match | None:
    x, lo, hi = instr.inputs[:3]
    out = _float_output(view, instr)
    if out is None or not view.activation(x):
        return None
    bounds = []
    for index, default in ((lo, -math.inf), (hi, math.inf)):
        if isinstance(view.values[index], NullValue):
            bounds.append(default)
            continue
        value = view.scalar(index)
        if value is None or math.isnan(value):
            return None
        bounds.append(value)
    if bounds[0] > bounds[1]:
        return None  # torch sets every element to max; XNNPACK would reject the node
    return Match(XNode(Clamp(x, out), output_min=bounds[0], output_max=bounds[1]), None, None)


def _sigmoid(view: PlanView, instr: KernelCall) -> Match | None:
    (x,) = instr.inputs
    out = _float_output(view, instr)
    if out is None or not view.activation(x):
        return None
    return Match(XNode(Sigmoid(x, out)), None, None)


def _mean(view: PlanView, instr: KernelCall) -> Match | None:
    """Mean over H and W keeping them (what adaptive_avg_pool2d(1) decomposes to)."""
    x, dims, keepdim = instr.inputs[:3]
    if len(instr.inputs) > 3 and not isinstance(view.values[instr.inputs[3]], NullValue):
        return None  # a dtype argument
    out = _float_output(view, instr)
    d, k = view.values[dims], view.values[keepdim]
    if out is None or not view.activation(x, 4) or not isinstance(d, IntListValue):
        return None
    if not isinstance(k, BoolValue) or not k.val or sorted(i % 4 for i in d.items) != [2, 3]:
        return None
    return Match(XNode(GlobalAvgPool2d(x, out)), Layout.SPATIAL, Layout.SPATIAL)


def _clone(view: PlanView, instr: KernelCall) -> Match | None:
    """A copy in the same layout (dropout in eval mode leaves one behind)."""
    x = instr.inputs[0]
    out = _float_output(view, instr)
    xt, ot = view.tensor(x), view.tensor(out) if out is not None else None
    if out is None or xt is None or ot is None or not view.activation(x) or xt.sizes != ot.sizes:
        return None
    return Match(XNode(Reshape(x, out)), None, None)


def _cat(view: PlanView, instr: KernelCall) -> Match | None:
    items, dim = instr.inputs[:2]
    out = _float_output(view, instr)
    lst, d = view.values[items], view.values[dim]
    if out is None or not isinstance(lst, TensorListValue) or not isinstance(d, IntValue):
        return None
    if d.val % 4 != 1 or len(lst.items) < 2 or len(set(lst.items)) != len(lst.items):
        return None
    if not all(view.activation(i, 4) for i in lst.items) or not view.activation(out, 4):
        return None
    return Match(XNode(Concat(tuple(lst.items), out)), Layout.SPATIAL, Layout.SPATIAL)


def _softmax(view: PlanView, instr: KernelCall) -> Match | None:
    x, dim, half_to_float = instr.inputs
    out = _float_output(view, instr)
    xt = view.tensor(x)
    d = view.values[dim]
    h = view.values[half_to_float]
    if out is None or xt is None or not view.activation(x) or not isinstance(d, IntValue):
        return None
    if not isinstance(h, BoolValue) or h.val or d.val % len(xt.sizes) != len(xt.sizes) - 1:
        return None
    return Match(XNode(Softmax(x, out)), Layout.PLAIN, Layout.PLAIN)


def _reshape(view: PlanView, instr: KernelCall) -> Match | None:
    x = instr.inputs[0]
    out = _float_output(view, instr)
    if out is None or not view.activation(x):
        return None
    return Match(XNode(Reshape(x, out)), Layout.PLAIN, Layout.PLAIN)


# XNNPACK's qs8 operators take a requantization scale (input scale x weight scale / output
# scale for a convolution) in [2^-32, 256) and, for an addition, input scale / output scale in
# [2^-10, 256); outside, creating the operator fails.
QS8_CONV_SCALE = (2.0**-32, 256.0)
QS8_ADD_SCALE = (2.0**-10, 256.0)


def _real_bound(q: int, params: QuantParams, edge: int) -> float:
    """The real number XNNPACK rounds back to the int8 bound q (none at the type's edge)."""
    if q == edge:
        return math.inf if edge > 0 else -math.inf
    return float(np.float32(q - params.zero_point) * np.float32(params.scale))


def _int8_bounds(lo: int, hi: int, out: QuantParams) -> tuple[float, float] | None:
    """A folded clamp's int8 range [lo, hi] as the node's real output bounds: XNNPACK turns them
    back into integers with lrintf(bound / scale + zero_point); None where that would not give
    [lo, hi] back (or an empty range, which XNNPACK refuses)."""
    if not -128 <= lo < hi <= 127:
        return None
    bounds = (_real_bound(lo, out, -128), _real_bound(hi, out, 127))
    for q, b in zip((lo, hi), bounds, strict=True):
        if math.isfinite(b):
            back = np.float32(b) / np.float32(out.scale) + np.float32(out.zero_point)
            if int(np.rint(back)) != q:
                return None
    return bounds


def _qparams(view: PlanView, scale: int, zero_point: int) -> QuantParams | None:
    s, z = view.values[scale], view.values[zero_point]
    if not isinstance(s, DoubleValue) or not isinstance(z, IntValue):
        return None
    f32 = float(np.float32(s.val))
    if not (math.isfinite(f32) and f32 > 0 and np.isfinite(1 / np.float32(f32))):
        return None
    if not -128 <= z.val <= 127:
        return None
    return QuantParams(f32, z.val)


def _int_arg(view: PlanView, index: int) -> int | None:
    v = view.values[index]
    return v.val if isinstance(v, IntValue) else None


def _quant_conv2d(view: PlanView, instr: KernelCall) -> Match | None:
    """etrt_quant::conv2d (quantized.py): per-channel int8 weights, per-tensor int8 activations.
    XNNPACK adds an int32 bias quantized to input_scale * weight_scale[c] to the sums and
    requantizes once; PT2E's reference adds the float bias after scaling: the two round apart
    by at most 1 LSB (docs/quantization.md)."""
    args = instr.inputs
    if len(args) != 14 or len(instr.outputs) != 1:
        return None
    x, w, ws, bias, in_s, in_zp, out_s, out_zp, out_min, out_max = args[:10]
    stride, padding, dilation, groups = args[10:]
    out = instr.outputs[0]
    i8 = ScalarType.CHAR
    if not view.activation(x, 4, i8) or not view.activation(out, 4, i8):
        return None
    weight, scales = view.constant(w, i8), view.constant(ws, ScalarType.FLOAT)
    xin, xout = _qparams(view, in_s, in_zp), _qparams(view, out_s, out_zp)
    lo, hi, g = _int_arg(view, out_min), _int_arg(view, out_max), _int_arg(view, groups)
    if weight is None or scales is None or xin is None or xout is None or weight.ndim != 4:
        return None
    if lo is None or hi is None or g is None or g < 1:
        return None
    o, ig, kh, kw = weight.shape
    xt = view.tensor(x)
    assert xt is not None
    if xt.sizes[1] != g * ig or o % g != 0 or scales.shape != (o,):
        return None
    s, p, d = view.ints(stride, 2), view.ints(padding, 2), view.ints(dilation, 2)
    if s is None or p is None or d is None or min(s) < 1 or min(d) < 1 or min(p) < 0:
        return None
    if not (np.all(np.isfinite(scales)) and np.all(scales > np.finfo(np.float32).tiny)):
        return None
    requant = np.float32(xin.scale) * scales / np.float32(xout.scale)
    if np.any(requant < QS8_CONV_SCALE[0]) or np.any(requant >= QS8_CONV_SCALE[1]):
        return None
    bounds = _int8_bounds(lo, hi, xout)
    if bounds is None:
        return None
    b: Const | None = None
    bias_scales = (np.float32(xin.scale) * scales).astype(np.float32)
    if not isinstance(view.values[bias], NullValue):
        bias_array = view.const_array(bias)
        if bias_array is None or bias_array.shape != (o,):
            return None
        q = np.rint(bias_array.astype(np.float64) / bias_scales.astype(np.float64))
        if not np.all(np.abs(q) < 2**31 - 1):
            return None
        b = Const(f"qbias:{bias}", q.astype(np.int32), DataType.QCINT32, bias_scales)
    filt = Const(
        f"qconv:{w}", np.ascontiguousarray(weight.transpose(0, 2, 3, 1)), DataType.QCINT8,
        np.ascontiguousarray(scales, dtype=np.float32),
    )  # fmt: skip
    node = Conv2d(
        input=x, filter=filt, bias=b, output=out, padding=(p[0], p[1]), kernel=(kh, kw),
        stride=(s[0], s[1]), dilation=(d[0], d[1]), groups=g, group_input_channels=ig,
        group_output_channels=o // g,
    )  # fmt: skip
    return Match(
        XNode(node, bounds[0], bounds[1]), Layout.SPATIAL, Layout.SPATIAL, {x: xin, out: xout}
    )


def _quant_add(view: PlanView, instr: KernelCall) -> Match | None:
    """etrt_quant::add of two int8 values of one shape (a residual connection)."""
    args = instr.inputs
    if len(args) != 10 or len(instr.outputs) != 1:
        return None
    a, a_s, a_zp, b, b_s, b_zp, out_s, out_zp, out_min, out_max = args
    out = instr.outputs[0]
    i8 = ScalarType.CHAR
    if not (view.activation(a, None, i8) and view.activation(b, None, i8)):
        return None
    at, bt, ot = view.tensor(a), view.tensor(b), view.tensor(out)
    if at is None or bt is None or ot is None or not view.activation(out, None, i8):
        return None
    if not at.sizes == bt.sizes == ot.sizes:
        return None
    qa, qb, qo = _qparams(view, a_s, a_zp), _qparams(view, b_s, b_zp), _qparams(view, out_s, out_zp)
    lo, hi = _int_arg(view, out_min), _int_arg(view, out_max)
    if qa is None or qb is None or qo is None or lo is None or hi is None:
        return None
    if a == b and qa != qb:
        return None
    for q in (qa, qb):
        ratio = np.float32(q.scale) / np.float32(qo.scale)
        if not QS8_ADD_SCALE[0] <= ratio < QS8_ADD_SCALE[1]:
            return None
    bounds = _int8_bounds(lo, hi, qo)
    if bounds is None:
        return None
    node = XNode(Binary(BinaryOp.ADD, a, b, out), bounds[0], bounds[1])
    return Match(node, None, None, {a: qa, b: qb, out: qo})


MATCHERS: dict[str, Callable[[PlanView, KernelCall], Match | None]] = {
    "etrt_quant::conv2d": _quant_conv2d,
    "etrt_quant::add": _quant_add,
    "aten::addmm": _addmm,
    "aten::mm": _mm,
    "aten::convolution": _convolution,
    "aten::max_pool2d_with_indices": _max_pool,
    "aten::avg_pool2d": _avg_pool,
    "aten::_adaptive_avg_pool2d": _avg_pool,
    "aten::relu": _relu,
    "aten::add.Tensor": _binary(BinaryOp.ADD),
    "aten::sub.Tensor": _binary(BinaryOp.SUBTRACT),
    "aten::mul.Tensor": _binary(BinaryOp.MULTIPLY),
    "aten::div.Tensor": _binary(BinaryOp.DIVIDE),
    "aten::mul.Scalar": _binary(BinaryOp.MULTIPLY, scalar_other=True),
    "aten::_softmax": _softmax,
    "aten::clamp": _clamp,
    "aten::hardtanh": _clamp,
    "aten::sigmoid": _sigmoid,
    "aten::mean.dim": _mean,
    "aten::clone": _clone,
    "aten::cat": _cat,
    "aten::view": _reshape,
    "aten::_unsafe_view": _reshape,
}


def match(view: PlanView, instr: KernelCall) -> Match | None:
    """The XNNPACK node for `instr`, or None when XNNPACK cannot run it as exported."""
    matcher = MATCHERS.get(view.op(instr))
    if matcher is None:
        return None
    # Debian's XNNPACK cannot reshape a runtime, and a delegate never holds mutable state.
    for arg in instr.args:
        for i in tensor_indices(view.values, arg):
            t = view.tensor(i)
            if t is not None and (t.dynamic or t.storage == StorageKind.STATE):
                return None
    for out in instr.outputs:  # the delegate writes contiguous outputs only
        t = view.tensor(out)
        if t is not None and t.dim_order != tuple(range(len(t.sizes))):
            return None
    return matcher(view, instr)

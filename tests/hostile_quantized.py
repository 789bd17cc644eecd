"""The int8 kernels' hostile programs (etrt_quant::*, quantized_decomposed::*): arguments a
malicious program can carry, each with the one error the kernel must give for it. Part of
tests/hostile_cases.py's program cases (replayed by tests/etrt_cpp/test_hostile_inputs.py through
the ASan+UBSan fuzz target, written into tools/fuzz/regressions/ by tools/fuzz/regressions.py).

Each program is one kernel call whose arguments are those the exporter writes: valid_cases()
are the same calls with valid arguments (each must execute), and every case differs from its
kernel's valid call in the one argument named, so the kernel's own check is what answers."""

from __future__ import annotations

import math
import struct

import runtime_programs as rp
from etrt import ir

I8, U8, I32 = int(ir.ScalarType.CHAR), int(ir.ScalarType.BYTE), int(ir.ScalarType.INT)
NAN, INF = math.nan, math.inf


def _i8(sizes: tuple[int, ...], slot: int, dtype: int = I8) -> rp.TensorValue:
    """A planned tensor in its own 256-byte slot of the arena."""
    return rp.TensorValue(sizes, rp.PLANNED, dtype=dtype, mem_offset=256 * slot)


def _x(sizes: tuple[int, ...], dtype: int = I8) -> rp.TensorValue:
    return rp.TensorValue(sizes, rp.INPUT, dtype=dtype)


def _call(
    op: str, args: tuple[rp.Value, ...], constants: tuple[bytes, ...] = (), arena: int = 4096
) -> bytes:
    """forward(args[0]) = op(*args): the last argument is the output."""
    n = len(args)
    call = rp.KernelCall(0, tuple(range(n)))
    plan = rp.Plan("forward", args, (0,), (n - 1,), (op,), (call,), arena)
    segments = tuple(rp.Segment(data) for data in constants) or (rp.constant_segment(),)
    return rp.build(rp.ProgramSpec(plans=(plan,), segments=segments))


def _q(scale: float = 0.1, zp: int = 0) -> tuple[rp.Value, rp.Value]:
    return rp.DoubleValue(scale), rp.IntValue(zp)


def _out_range(lo: int = -128, hi: int = 127) -> tuple[rp.Value, rp.Value]:
    return rp.IntValue(lo), rp.IntValue(hi)


def _pair(a: int, b: int | None = None) -> rp.IntListValue:
    return rp.IntListValue((a, a if b is None else b))


NCHW = (1, 4, 4, 4)
SCALES = struct.pack("<4f", 0.5, 0.5, 0.5, 0.5)
Q = _q()
ONE, TWO, NULL = _pair(1), _pair(2), rp.NullValue()


def _lookup(table: rp.TensorValue) -> bytes:
    return _call("etrt_quant::lookup", (_x(NCHW), table, _i8(NCHW, 2)))


def _mul(
    a_q: tuple[rp.Value, rp.Value] = Q,
    b_q: tuple[rp.Value, rp.Value] = Q,
    out_q: tuple[rp.Value, rp.Value] = Q,
    b: tuple[int, ...] = NCHW,
) -> bytes:
    args = (_x(NCHW), *a_q, _i8(b, 1), *b_q, *out_q, *_out_range(), _i8(NCHW, 2))
    return _call("etrt_quant::mul", args)


def _add(a_q: tuple[rp.Value, rp.Value] = Q, b: tuple[int, ...] = NCHW) -> bytes:
    args = (_x(NCHW), *a_q, _i8(b, 1), *_q(), *_q(), *_out_range(), _i8(NCHW, 2))
    return _call("etrt_quant::add", args)


def _mean(
    in_q: tuple[rp.Value, rp.Value] = Q,
    x: tuple[int, ...] = NCHW,
    out: tuple[int, ...] = (1, 4, 1, 1),
) -> bytes:
    args = (_x(x), *in_q, *_q(), *_out_range(), rp.BoolValue(True), _i8(out, 1))
    return _call("etrt_quant::mean", args)


def _max_pool(
    kernel: rp.IntListValue,
    stride: rp.IntListValue,
    padding: rp.IntListValue,
    out: tuple[int, ...] = (1, 4, 2, 2),
) -> bytes:
    args = (_x(NCHW), kernel, stride, padding, _pair(1), rp.BoolValue(False), _i8(out, 1))
    return _call("etrt_quant::max_pool2d", args)


def _avg_pool(
    kernel: rp.IntListValue = TWO, out_q: tuple[rp.Value, rp.Value] = Q, divisor: rp.Value = NULL
) -> bytes:
    args = (
        _x(NCHW),
        *_q(),
        *out_q,
        *_out_range(),
        kernel,
        _pair(2),
        _pair(0),
        rp.BoolValue(False),
        rp.BoolValue(True),
        divisor,
        _i8((1, 4, 2, 2), 1),
    )
    return _call("etrt_quant::avg_pool2d", args)


def _conv(
    w_scale: rp.TensorValue | None = None,
    padding: rp.IntListValue = ONE,
    groups: int = 1,
    constants: tuple[bytes, ...] = (),
) -> bytes:
    """A 3x3 convolution of NCHW by 4 output channels; weight_scale planned (zeros) unless given."""
    scale = w_scale or rp.TensorValue((4,), rp.PLANNED, mem_offset=256 * 2)
    args = (
        _x(NCHW),
        _i8((4, 4, 3, 3), 1),
        scale,
        rp.NullValue(),
        *_q(),
        *_q(),
        *_out_range(),
        _pair(1),
        padding,
        _pair(1),
        rp.IntValue(groups),
        _i8(NCHW, 3),
    )
    return _call("etrt_quant::conv2d", args, constants)


def _linear(in_q: tuple[rp.Value, rp.Value] = Q, k: int = 8) -> bytes:
    """weight_scale a constant of 0.5 each."""
    args = (
        _x((2, 8)),
        _i8((4, k), 1),
        rp.TensorValue((4,), rp.CONSTANT, constant_segment=0),
        rp.NullValue(),
        *in_q,
        *_q(),
        *_out_range(),
        _i8((2, 4), 3),
    )
    return _call("etrt_quant::linear", args, (SCALES,))


def _deep_linear(k: int) -> bytes:
    """x [1, k] by one output channel: k products summed in int32."""
    at = -(-k // 64) * 64
    args = (
        _x((1, k)),
        rp.TensorValue((1, k), rp.PLANNED, dtype=I8, mem_offset=0),
        rp.TensorValue((1,), rp.CONSTANT, constant_segment=0),
        NULL,
        *Q,
        *Q,
        *_out_range(),
        rp.TensorValue((1, 1), rp.PLANNED, dtype=I8, mem_offset=at),
    )
    return _call("etrt_quant::linear", args, (struct.pack("<f", 0.5),), arena=at + 64)


def _quantize(scale: float = 0.1, zp: int = 0, lo: int = -128, hi: int = 127) -> bytes:
    args = (
        _x((2, 4), rp.FLOAT),
        *_q(scale, zp),
        rp.IntValue(lo),
        rp.IntValue(hi),
        rp.IntValue(I8),
        _i8((2, 4), 1),
    )
    return _call("quantized_decomposed::quantize_per_tensor", args)


def _weight_only(scales: int = 16, group_size: int = 32) -> bytes:
    """etrt_quant::weight_only_linear: x [1, 32], int4 weights of 16 channels, tile 16."""
    args = (
        _x((1, 32), rp.FLOAT),
        _i8((16, 16), 1, U8),
        _i8((scales, 1), 2, rp.FLOAT),
        rp.NullValue(),
        rp.NullValue(),
        rp.IntValue(4),
        rp.IntValue(group_size),
        rp.IntValue(16),
        _i8((1, 16), 3, rp.FLOAT),
    )
    return _call("etrt_quant::weight_only_linear", args)


def _dynamic_int4(group_size: int = 32, rows: int = 2, tile: int = 8) -> bytes:
    """etrt_quant::dynamic_int4_linear: int8 x [2, 32] with `rows` scales and zero points, int4
    weights of 8 channels in one group, weight sums | out float32 [2, 8]."""
    args = (
        _x((2, 32)),
        _i8((rows, 1), 1, rp.FLOAT),
        _i8((rows, 1), 2),
        _i8((8, 16), 3, U8),
        _i8((8, 1), 4, rp.FLOAT),
        rp.NullValue(),
        _i8((8,), 5, rp.FLOAT),
        rp.NullValue(),
        rp.IntValue(group_size),
        rp.IntValue(tile),
        _i8((2, 8), 6, rp.FLOAT),
    )
    return _call("etrt_quant::dynamic_int4_linear", args)


def _quantize_rows(
    k: int = 8, eps: float = 1.1754943508222875e-38, lo: int = -128, hi: int = 127
) -> bytes:
    """etrt_quant::quantize_rows: float32 x [2, k] | int8 values [2, k], float32 scales [2],
    int8 zero points [2]."""
    args = (_x((2, k), rp.FLOAT), rp.DoubleValue(eps), rp.IntValue(lo), rp.IntValue(hi),
            _i8((2, k), 1), _i8((2,), 2, rp.FLOAT), _i8((2,), 3))  # fmt: skip
    n = len(args)
    call = rp.KernelCall(0, tuple(range(n)))
    plan = rp.Plan("forward", args, (0,), (4, 5, 6), ("etrt_quant::quantize_rows",), (call,), 4096)
    return rp.build(rp.ProgramSpec(plans=(plan,), segments=(rp.constant_segment(),)))


def _int8_mm(k: int = 8, sums: int = 4) -> bytes:
    """x [2, k] int8 times weight [4, k] int8, weight_sums int32 [sums] | out int32 [2, 4]."""
    weight = rp.TensorValue((4, k), rp.PLANNED, dtype=I8, mem_offset=0)
    at = -(-4 * k // 64) * 64
    args = (_x((2, k)), weight, rp.TensorValue((sums,), rp.PLANNED, dtype=I32, mem_offset=at),
            rp.TensorValue((2, 4), rp.PLANNED, dtype=I32, mem_offset=at + 64))  # fmt: skip
    return _call("etrt_quant::int8_mm", args, arena=at + 128)


def _cat(second: tuple[int, ...]) -> bytes:
    """aten::cat of two int8 tensors along dim 1 (the int8 cat PT2E leaves between the kernels)."""
    args = (_x(NCHW), _i8(second, 1), rp.TensorListValue((0, 1)), rp.IntValue(1),
            _i8((1, 8, 4, 4), 2))  # fmt: skip
    plan = rp.Plan(
        "forward", args, (0,), (4,), ("aten::cat",), (rp.KernelCall(0, (2, 3, 4)),), 4096
    )
    return rp.build(rp.ProgramSpec(plans=(plan,), segments=(rp.constant_segment(),)))


def valid_cases() -> dict[str, bytes]:
    """Each kernel's call with valid arguments: the cases below change one argument of these."""
    constant = rp.TensorValue((4,), rp.CONSTANT, constant_segment=0)
    return {
        "lookup": _lookup(_i8((256,), 1)),
        "mul": _mul(),
        "mul_gate": _mul(b=(1, 4, 1, 1)),
        "add": _add(),
        "mean": _mean(),
        "max_pool": _max_pool(TWO, TWO, _pair(0)),
        "avg_pool": _avg_pool(),
        "conv": _conv(constant, constants=(SCALES,)),
        "linear": _linear(),
        "linear_deepest": _deep_linear(2**16),
        "quantize": _quantize(),
        "cat": _cat(NCHW),
        "int8_mm": _int8_mm(),
        "weight_only": _weight_only(),
        "dynamic_int4": _dynamic_int4(),
        "quantize_rows": _quantize_rows(),
    }


def program_cases() -> dict[str, bytes]:
    scale_nan = struct.pack("<4f", 0.5, NAN, 0.5, 0.5)
    scale_zero = struct.pack("<4f", 0.5, 0.5, 0.0, 0.5)
    return {
        # lookup tables: the kernel reads 256 bytes, indexed by the value + 128
        "quant_lookup_table_length": _lookup(_i8((255,), 1)),
        "quant_lookup_table_dtype": _lookup(_i8((256,), 1, rp.FLOAT)),
        "quant_lookup_table_strided": _lookup(
            rp.TensorValue((16, 16), rp.PLANNED, dtype=I8, mem_offset=256, dim_order=(1, 0))
        ),
        # scales a kernel divides by, zero points beyond int8 (an int32 sum overflows)
        "quant_mul_nan_scale": _mul(a_q=_q(NAN)),
        "quant_mul_zero_output_scale": _mul(out_q=_q(0.0)),
        "quant_mul_zero_point_range": _mul(b_q=_q(0.1, 300)),
        "quant_mul_broadcast": _mul(b=(1, 2, 1, 1)),
        "quant_add_inf_scale": _add(a_q=_q(INF)),
        "quant_add_shapes": _add(b=(1, 4, 4, 1)),
        "quant_mean_zero_point_overflow": _mean(in_q=_q(0.1, 2**62)),
        "quant_mean_negative_scale": _mean(in_q=_q(-1.0)),
        "quant_mean_not_4d": _mean(x=(4, 4, 4), out=(4, 1, 1)),
        "quant_mean_output_smaller": _mean(out=(1, 2, 1, 1)),
        # pooling windows: zero, overflowing, padding beyond half the kernel
        "quant_max_pool_zero_kernel": _max_pool(_pair(0), _pair(2), _pair(0)),
        "quant_max_pool_stride_overflow": _max_pool(_pair(2), _pair(2**62), _pair(0)),
        "quant_max_pool_padding": _max_pool(_pair(2), _pair(2), _pair(2)),
        "quant_max_pool_output_smaller": _max_pool(_pair(2), _pair(2), _pair(0), out=(1, 4, 1, 1)),
        "quant_avg_pool_kernel_overflow": _avg_pool(kernel=_pair(2**62)),
        "quant_avg_pool_negative_divisor": _avg_pool(divisor=rp.IntValue(-1)),
        "quant_avg_pool_tiny_output_scale": _avg_pool(out_q=_q(1e-300)),
        # products: padding that overflowed the output size, per-channel scales
        "quant_conv_padding_overflow": _conv(padding=_pair(2**62)),
        "quant_conv_weight_scale_length": _conv(rp.TensorValue((3,), rp.PLANNED, mem_offset=512)),
        "quant_conv_weight_scale_nan": _conv(
            rp.TensorValue((4,), rp.CONSTANT, constant_segment=0), constants=(scale_nan,)
        ),
        "quant_conv_weight_scale_zero": _conv(
            rp.TensorValue((4,), rp.CONSTANT, constant_segment=0), constants=(scale_zero,)
        ),
        "quant_conv_groups": _conv(groups=0),
        "quant_linear_zero_point_range": _linear(in_q=_q(0.1, 2**40)),
        "quant_linear_shapes": _linear(k=7),
        "quant_linear_depth_overflow": _deep_linear(2**16 + 1),
        "quantize_per_tensor_range": _quantize(zp=500, lo=-1000, hi=1000),
        "quantize_per_tensor_nan_scale": _quantize(scale=NAN),
        "quant_cat_ranks": _cat((1, 4, 4)),
        "int8_mm_depth_overflow": _int8_mm(k=2**17),
        "int8_mm_weight_sums_length": _int8_mm(sums=3),
        "weight_only_zero_group_size": _weight_only(group_size=0),
        "weight_only_scales_length": _weight_only(scales=15),
        "dynamic_int4_group_size": _dynamic_int4(group_size=12),
        "dynamic_int4_input_scales_length": _dynamic_int4(rows=3),
        "dynamic_int4_other_tile": _dynamic_int4(tile=16),
        "quantize_rows_range": _quantize_rows(lo=0, hi=128),
        "quantize_rows_nan_eps": _quantize_rows(eps=NAN),
        "quantize_rows_empty_rows": _quantize_rows(k=0),
    }


EXPECTED_PROGRAM = {
    "quant_lookup_table_length": "etrt_quant::lookup: table must be 256 contiguous values,"
    " got [255]",
    "quant_lookup_table_dtype": "etrt_quant::lookup: 'table' must be int8, got Float",
    "quant_lookup_table_strided": "etrt_quant::lookup: 'table' must be contiguous or channels-last",
    "quant_mul_nan_scale": "etrt_quant::mul: 'a_scale' must be a positive, finite scale, got nan",
    "quant_mul_zero_output_scale": "etrt_quant::mul: 'output_scale' must be a positive, finite"
    " scale, got 0",
    "quant_mul_zero_point_range": "etrt_quant::mul: 'b_zero_point' must be within [-128, 127],"
    " got 300",
    "quant_mul_broadcast": "etrt_quant::mul: a [1, 4, 4, 4] and b [1, 2, 1, 1] must have one"
    " shape, or one be [N, C, 1, 1] of the other's N and C",
    "quant_add_inf_scale": "etrt_quant::add: 'a_scale' must be a positive, finite scale, got inf",
    "quant_add_shapes": "etrt_quant::add: a [1, 4, 4, 4] and b [1, 4, 4, 1] must have one shape",
    "quant_mean_zero_point_overflow": "etrt_quant::mean: 'input_zero_point' must be within"
    " [-128, 127], got 4611686018427387904",
    "quant_mean_negative_scale": "etrt_quant::mean: 'input_scale' must be a positive, finite"
    " scale, got -1",
    "quant_mean_not_4d": "etrt_quant::mean: input must be 4-D, got [4, 4, 4]",
    "quant_mean_output_smaller": "etrt_quant::mean: output 'out' has shape [1, 4, 1, 1] but was"
    " planned as [1, 2, 1, 1]",
    "quant_max_pool_zero_kernel": "etrt_quant::max_pool2d: kernel_size, stride and dilation must"
    " be positive, padding at most half the kernel",
    "quant_max_pool_stride_overflow": "etrt_quant::max_pool2d: output size is empty for input"
    " [1, 4, 4, 4]",
    "quant_max_pool_padding": "etrt_quant::max_pool2d: kernel_size, stride and dilation must be"
    " positive, padding at most half the kernel",
    "quant_max_pool_output_smaller": "etrt_quant::max_pool2d: output 'out' has shape [1, 4, 2, 2]"
    " but was planned as [1, 4, 1, 1]",
    "quant_avg_pool_kernel_overflow": "etrt_quant::avg_pool2d: kernel_size [4611686018427387904,"
    " 4611686018427387904] is over 2^23 taps",
    "quant_avg_pool_negative_divisor": "etrt_quant::avg_pool2d: divisor_override must be positive,"
    " got -1",
    "quant_avg_pool_tiny_output_scale": "etrt_quant::avg_pool2d: 'output_scale' must be a"
    " positive, finite scale, got 1e-300",
    "quant_conv_padding_overflow": "etrt_quant::conv2d: stride [1, 1], padding"
    " [4611686018427387904, 4611686018427387904] and dilation [1, 1] do not fit the input"
    " [1, 4, 4, 4] and weight [4, 4, 3, 3]",
    "quant_conv_weight_scale_length": "etrt_quant::conv2d: weight_scale must be float32 with one"
    " value per output channel",
    "quant_conv_weight_scale_nan": "etrt_quant::conv2d: channel 1: weight_scale must be positive"
    " and finite",
    "quant_conv_weight_scale_zero": "etrt_quant::conv2d: channel 2: weight_scale must be positive"
    " and finite",
    "quant_conv_groups": "etrt_quant::conv2d: expected a 4-D input and weight with matching"
    " channels and groups",
    "quant_linear_zero_point_range": "etrt_quant::linear: 'input_zero_point' must be within"
    " [-128, 127], got 1099511627776",
    "quant_linear_shapes": "etrt_quant::linear: input [2, 8] does not match weight [4, 7]",
    "quant_linear_depth_overflow": "etrt_quant::linear: weight [1, 65537] sums 65537 products per"
    " output, over 65536 (the int32 sums would overflow)",
    "quantize_per_tensor_range": "quantized_decomposed::quantize_per_tensor: quant range"
    " [-1000, 1000] is not within int8",
    "quantize_per_tensor_nan_scale": "quantized_decomposed::quantize_per_tensor: 'scale' must be"
    " a positive, finite scale, got nan",
    "quant_cat_ranks": "aten::cat: tensor 1 (Char [1, 4, 4]) does not match tensor 0 (Char"
    " [1, 4, 4, 4]) outside dimension 1",
    "int8_mm_depth_overflow": "etrt_quant::int8_mm: K 131072 is over 131071: the int32 sums would"
    " overflow",
    "int8_mm_weight_sums_length": "etrt_quant::int8_mm: weight_sums must be int32 with 4 values",
    "weight_only_zero_group_size": "etrt_quant::weight_only_linear: group_size 0 does not divide"
    " 32 columns into groups of an even size",
    "weight_only_scales_length": "etrt_quant::weight_only_linear: scales must be float32,"
    " bfloat16 or float16 with 16 values (16 channels x 1 groups)",
    "dynamic_int4_group_size": "etrt_quant::dynamic_int4_linear: group_size 12 does not divide 32"
    " columns into groups of a multiple of 8",
    "dynamic_int4_input_scales_length": "etrt_quant::dynamic_int4_linear: input_scales must be"
    " float32 with one value per input row (2)",
    "dynamic_int4_other_tile": "etrt_quant::dynamic_int4_linear: weights tiled by 16 channels;"
    " this etrt reads tiles of 8: export the program again",
    "quantize_rows_range": "etrt_quant::quantize_rows: quant_min 0 and quant_max 128 must be an"
    " int8 range, quant_min below quant_max",
    "quantize_rows_nan_eps": "etrt_quant::quantize_rows: eps must be a number at or above 0,"
    " got nan",
    "quantize_rows_empty_rows": "etrt_quant::quantize_rows: input must have rows of at least one"
    " value, got [2, 0]",
}

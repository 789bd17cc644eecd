"""The int8 operators between PT2E's products (src/kernels/quantized_ops.cpp), as torch
operators whose implementations compute the kernels' arithmetic exactly, so a folded graph runs
in torch too: `lookup` (a 256-entry table: any elementwise dq -> float ops -> q chain, a
requantization), `mul` (dq(a) * dq(b) -> q, the squeeze-excite scale), `mean` (dq -> mean over
H, W -> q, from the exact integer sum), `avg_pool2d` (the same with ATen's windows) and
`max_pool2d` on int8 values."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import torch
import torch.ao.quantization.fx._decomposed  # defines torch.ops.quantized_decomposed

_LIB: Any = torch.library.Library("etrt_quant", "FRAGMENT")  # type: ignore[no-untyped-call]
_LIB.define("lookup(Tensor input, Tensor table) -> Tensor")
_LIB.define(
    "mul(Tensor a, float a_scale, int a_zero_point, Tensor b, float b_scale, int b_zero_point, "
    "float output_scale, int output_zero_point, int output_min, int output_max) -> Tensor"
)
_LIB.define(
    "mean(Tensor input, float input_scale, int input_zero_point, float output_scale, "
    "int output_zero_point, int output_min, int output_max, bool keepdim) -> Tensor"
)
_LIB.define(
    "max_pool2d(Tensor input, int[2] kernel_size, int[2] stride, int[2] padding, "
    "int[2] dilation, bool ceil_mode) -> Tensor"
)
_LIB.define(
    "avg_pool2d(Tensor input, float input_scale, int input_zero_point, float output_scale, "
    "int output_zero_point, int output_min, int output_max, int[2] kernel_size, int[2] stride, "
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor"
)
_QD = torch.ops.quantized_decomposed


def _lookup_reference(input: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    return table[input.to(torch.int64) + 128]


def dequantized_binary_reference(
    combine: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    a: torch.Tensor,
    a_scale: float,
    a_zero_point: int,
    b: torch.Tensor,
    b_scale: float,
    b_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    output_min: int,
    output_max: int,
) -> torch.Tensor:
    """dq(a) `combine` dq(b) -> q: the unfolded graph's own ops, whose float32 steps the
    kernels (etrt_quant::add, ::mul) compute exactly."""
    x = _QD.dequantize_per_tensor(a, a_scale, a_zero_point, -128, 127, torch.int8)
    y = _QD.dequantize_per_tensor(b, b_scale, b_zero_point, -128, 127, torch.int8)
    out: torch.Tensor = _QD.quantize_per_tensor(
        combine(x, y), output_scale, output_zero_point, output_min, output_max, torch.int8
    )
    return out


_LIB.impl(
    "mul",
    functools.partial(dequantized_binary_reference, operator.mul),
    "CompositeExplicitAutograd",
)


def _mean_reference(
    input: torch.Tensor,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    output_min: int,
    output_max: int,
    keepdim: bool,
) -> torch.Tensor:
    # The exact integer sum, then float32 steps: dequantized sum, / (H x W), quantize.
    acc = (input.to(torch.int64) - input_zero_point).sum([2, 3], keepdim=keepdim)
    count = input.shape[2] * input.shape[3]
    y = acc.to(torch.float32) * torch.tensor(input_scale, dtype=torch.float32)
    y = y / torch.tensor(float(count), dtype=torch.float32)
    out: torch.Tensor = _QD.quantize_per_tensor(
        y, output_scale, output_zero_point, output_min, output_max, torch.int8
    )
    return out


def _max_pool2d_reference(
    input: torch.Tensor,
    kernel_size: list[int],
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    ceil_mode: bool,
) -> torch.Tensor:
    # int8 values are exact in float32, and max commutes with the conversion
    pooled = torch.nn.functional.max_pool2d(
        input.to(torch.float32), kernel_size, stride, padding, dilation, ceil_mode
    )
    return pooled.to(torch.int8)


def _window_sizes(
    out: int, size: int, k: int, stride: int, pad: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """ATen's cpu_avg_pool windows along one dimension: (in-range taps, taps within the
    padding) per output index."""
    begin = torch.arange(out) * stride - pad
    end = torch.clamp(begin + k, max=size + pad)
    padded = end - begin
    return torch.clamp(end, max=size) - torch.clamp(begin, min=0), padded


def _avg_pool2d_reference(
    input: torch.Tensor,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    output_min: int,
    output_max: int,
    kernel_size: list[int],
    stride: list[int],
    padding: list[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> torch.Tensor:
    # Exact window sums of (x - zero point) (float64 holds them; padding adds 0), then the
    # kernel's float32 steps: float(sum) * scale / divisor, quantize.
    stride = list(stride) or list(kernel_size)
    x = input.to(torch.float64) - input_zero_point
    sums = torch.nn.functional.avg_pool2d(
        x, kernel_size, stride, padding, ceil_mode, True, divisor_override=1
    )
    (oh, ow), (h, w) = sums.shape[2:], input.shape[2:]
    vy, py = _window_sizes(oh, h, kernel_size[0], stride[0], padding[0])
    vx, px = _window_sizes(ow, w, kernel_size[1], stride[1], padding[1])
    if divisor_override:
        count = torch.full((oh, ow), divisor_override)
    else:
        count = torch.outer(py, px) if count_include_pad else torch.outer(vy, vx)
    y = sums.to(torch.float32) * torch.tensor(input_scale, dtype=torch.float32)
    y = y / count.to(torch.float32)
    out: torch.Tensor = _QD.quantize_per_tensor(
        y, output_scale, output_zero_point, output_min, output_max, torch.int8
    )
    return out


_LIB.impl("avg_pool2d", _avg_pool2d_reference, "CompositeExplicitAutograd")
_LIB.impl("lookup", _lookup_reference, "CompositeExplicitAutograd")
_LIB.impl("mean", _mean_reference, "CompositeExplicitAutograd")
_LIB.impl("max_pool2d", _max_pool2d_reference, "CompositeExplicitAutograd")

LOOKUP = torch.ops.etrt_quant.lookup.default
MUL = torch.ops.etrt_quant.mul.default
MEAN = torch.ops.etrt_quant.mean.default
MAX_POOL2D = torch.ops.etrt_quant.max_pool2d.default
AVG_POOL2D = torch.ops.etrt_quant.avg_pool2d.default

__all__ = ["AVG_POOL2D", "LOOKUP", "MAX_POOL2D", "MEAN", "MUL"]

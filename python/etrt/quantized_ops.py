"""The int8 operators between PT2E's products (src/kernels/quantized_ops.cpp), as torch
operators whose implementations compute the kernels' arithmetic exactly, so a folded graph runs
in torch too: `lookup` (a 256-entry table: any elementwise dq -> float ops -> q chain, a
requantization), `mul` (dq(a) * dq(b) -> q, the squeeze-excite scale), `mean` (dq -> mean over
H, W -> q, from the exact integer sum) and `max_pool2d` on int8 values."""

from __future__ import annotations

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
_QD = torch.ops.quantized_decomposed


def _lookup_reference(input: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    return table[input.to(torch.int64) + 128]


def _mul_reference(
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
    # The unfolded graph's own ops: the kernel computes these float32 steps exactly.
    x = _QD.dequantize_per_tensor(a, a_scale, a_zero_point, -128, 127, torch.int8)
    y = _QD.dequantize_per_tensor(b, b_scale, b_zero_point, -128, 127, torch.int8)
    out: torch.Tensor = _QD.quantize_per_tensor(
        x * y, output_scale, output_zero_point, output_min, output_max, torch.int8
    )
    return out


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


_LIB.impl("lookup", _lookup_reference, "CompositeExplicitAutograd")
_LIB.impl("mul", _mul_reference, "CompositeExplicitAutograd")
_LIB.impl("mean", _mean_reference, "CompositeExplicitAutograd")
_LIB.impl("max_pool2d", _max_pool2d_reference, "CompositeExplicitAutograd")

LOOKUP = torch.ops.etrt_quant.lookup.default
MUL = torch.ops.etrt_quant.mul.default
MEAN = torch.ops.etrt_quant.mean.default
MAX_POOL2D = torch.ops.etrt_quant.max_pool2d.default

__all__ = ["LOOKUP", "MAX_POOL2D", "MEAN", "MUL"]

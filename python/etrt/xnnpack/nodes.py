"""XNNPACK subgraph nodes as the partitioner builds them, before they become a blob.

Operands are activations (plan value indices) or constants (arrays baked into the blob: float32,
or for PT2E int8 convolutions int8 weights and int32 biases with per-channel scales).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


class Layout(enum.Enum):
    PLAIN = "plain"  # etrt's contiguous layout
    SPATIAL = "spatial"  # 4-D NCHW in etrt, NHWC inside XNNPACK
    # A 2-D [N, C*H*W] flatten of a spatial value, kept in NHWC order; only fully connected
    # layers read it (their weight columns are permuted to match) and it never leaves XNNPACK.
    FLAT = "flat"


class DataType(enum.IntEnum):
    """schema/xnnpack_delegate.fbs's DataType."""

    FLOAT32 = 0
    QINT8 = 1  # int8 activations, one scale and zero point
    QCINT8 = 2  # constant int8, one scale per channel along dimension 0, zero point 0
    QCINT32 = 3  # constant int32, the same


@dataclass(frozen=True)
class QuantParams:
    """An int8 activation's quantization: real = scale * (q - zero_point)."""

    scale: float
    zero_point: int


@dataclass(frozen=True)
class Const:
    """A constant operand; `key` identifies it so one array is stored once per blob. QCINT8 and
    QCINT32 constants carry one float32 scale per channel of their first dimension."""

    key: str
    array: npt.NDArray[Any] = field(compare=False, repr=False)
    datatype: DataType = DataType.FLOAT32
    channel_scales: FloatArray | None = field(default=None, compare=False, repr=False)

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.array.shape)


Operand = int | Const  # an int is a plan value index


class BinaryOp(enum.IntEnum):
    ADD = 0
    SUBTRACT = 1
    MULTIPLY = 2
    DIVIDE = 3


@dataclass(frozen=True)
class FullyConnected:
    input: Operand
    filter: Const  # [output_channels, input_channels]
    bias: Const | None
    output: int


@dataclass(frozen=True)
class Conv2d:
    input: Operand
    filter: Const  # [out_channels, kernel_h, kernel_w, group_input_channels]
    bias: Const | None
    output: int
    padding: tuple[int, int]  # (h, w), applied on both sides
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    groups: int
    group_input_channels: int
    group_output_channels: int


@dataclass(frozen=True)
class MaxPool2d:
    input: Operand
    output: int
    padding: tuple[int, int]
    pool: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    extra: tuple[int, int] = (0, 0)  # more padding at the bottom and right (ceil_mode)


@dataclass(frozen=True)
class Clamp:
    input: Operand
    output: int


@dataclass(frozen=True)
class Binary:
    op: BinaryOp
    input1: Operand
    input2: Operand
    output: int


@dataclass(frozen=True)
class Softmax:
    input: Operand
    output: int


@dataclass(frozen=True)
class Reshape:
    input: Operand
    output: int


@dataclass(frozen=True)
class Sigmoid:
    input: Operand
    output: int


@dataclass(frozen=True)
class Hardswish:
    input: Operand
    output: int


@dataclass(frozen=True)
class GlobalAvgPool2d:
    """Mean over H and W of an NHWC value: [N, H, W, C] -> [N, 1, 1, C]."""

    input: Operand
    output: int


@dataclass(frozen=True)
class AvgPool2d:
    """Mean over each window of an NHWC value; the windows lie inside the input (no padding)."""

    input: Operand
    output: int
    pool: tuple[int, int]
    stride: tuple[int, int]


@dataclass(frozen=True)
class Concat:
    """Channel concatenation of spatial values. Debian's XNNPACK has no concatenation: it never
    reaches a blob; partition.py distributes its readers over its inputs instead."""

    inputs: tuple[int, ...]
    output: int


NodeBody = (
    FullyConnected
    | Conv2d
    | MaxPool2d
    | Clamp
    | Binary
    | Softmax
    | Reshape
    | Sigmoid
    | Hardswish
    | GlobalAvgPool2d
    | AvgPool2d
    | Concat
)
# Nodes whose output XNNPACK clamps to [output_min, output_max].
CLAMPING = (FullyConnected, Conv2d, MaxPool2d, Clamp, Binary, GlobalAvgPool2d, AvgPool2d)


@dataclass(frozen=True)
class XNode:
    body: NodeBody
    output_min: float = -math.inf
    output_max: float = math.inf

    @property
    def output(self) -> int:
        return self.body.output

    @property
    def operands(self) -> tuple[Operand, ...]:
        b = self.body
        if isinstance(b, FullyConnected | Conv2d):
            return (b.input, b.filter) + ((b.bias,) if b.bias is not None else ())
        if isinstance(b, Binary):
            return (b.input1, b.input2)
        if isinstance(b, Concat):
            return b.inputs
        return (b.input,)

    @property
    def activations(self) -> tuple[int, ...]:
        """Plan values this node reads, in operand order, without repeats."""
        seen: list[int] = []
        for o in self.operands:
            if isinstance(o, int) and o not in seen:
                seen.append(o)
        return tuple(seen)

    @property
    def constants(self) -> tuple[Const, ...]:
        return tuple(o for o in self.operands if isinstance(o, Const))

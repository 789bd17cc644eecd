"""A partition -> the bytes of an "XnnpackBackend" delegate blob (schema/xnnpack_delegate.fbs).

The blob is a FlatBuffer followed, at a 64-byte aligned offset, by the constant data area.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import align
from .match import PlanView
from .nodes import (
    AvgPool2d,
    Binary,
    Clamp,
    Concat,
    Const,
    Conv2d,
    DataType,
    FullyConnected,
    GlobalAvgPool2d,
    Hardswish,
    Layout,
    MaxPool2d,
    Operand,
    QuantParams,
    Reshape,
    Sigmoid,
    Softmax,
    XNode,
)
from .partition import Partition

xfb: Any = importlib.import_module("etrt.xnnpack._schema.xnnpack_delegate_generated")
flatbuffers: Any = importlib.import_module("flatbuffers")

BLOB_VERSION = 1
BLOB_IDENTIFIER = b"EXNN"
DATA_ALIGNMENT = 64


@dataclass(frozen=True)
class BlobValue:
    dims: tuple[int, ...]
    kind: int  # xfb.ValueKind
    io_index: int = 0
    nchw: bool = False
    data_offset: int = 0
    datatype: DataType = DataType.FLOAT32
    quant: QuantParams | None = None  # QINT8
    channel_scales: tuple[float, ...] = ()  # QCINT8 / QCINT32, along dimension 0


# How each datatype's constants are stored in the data area.
_STORAGE = {
    DataType.FLOAT32: "<f4",
    DataType.QCINT8: "i1",
    DataType.QCINT32: "<i4",
}


class _Builder:
    def __init__(self, view: PlanView, part: Partition) -> None:
        self.view = view
        self.part = part
        self.values: list[BlobValue] = []
        self.ids: dict[int | str, int] = {}
        self.data = bytearray()

    def _dims(self, index: int) -> tuple[int, ...]:
        sizes = self.part.synthetic.get(index)
        if sizes is None:
            t = self.view.tensor(index)
            assert t is not None
            sizes = t.sizes
        if self.part.layout.get(index) == Layout.SPATIAL:
            n, c, h, w = sizes
            return (n, h, w, c)
        return sizes

    def _add(self, key: int | str, value: BlobValue) -> int:
        self.ids[key] = len(self.values)
        self.values.append(value)
        return self.ids[key]

    def _operand(self, o: Operand) -> int:
        if isinstance(o, Const):
            return self._const(o)
        if o not in self.ids:
            raise AssertionError(f"value {o} is read before the partition produces it")
        return self.ids[o]

    def _const(self, c: Const) -> int:
        if c.key in self.ids:
            return self.ids[c.key]
        offset = align(len(self.data), DATA_ALIGNMENT)
        self.data.extend(b"\0" * (offset - len(self.data)))
        self.data.extend(np.ascontiguousarray(c.array, dtype=_STORAGE[c.datatype]).tobytes())
        scales = () if c.channel_scales is None else tuple(float(x) for x in c.channel_scales)
        value = BlobValue(
            c.dims, xfb.ValueKind.Constant, data_offset=offset, datatype=c.datatype,
            channel_scales=scales,
        )  # fmt: skip
        return self._add(c.key, value)

    def _activation(self, index: int, kind: int, io_index: int = 0, nchw: bool = False) -> int:
        quant = self.part.quant.get(index)
        datatype = DataType.QINT8 if quant is not None else DataType.FLOAT32
        value = BlobValue(self._dims(index), kind, io_index, nchw, datatype=datatype, quant=quant)
        return self._add(index, value)

    def _output(self, index: int) -> int:
        if index not in self.ids:
            self._activation(index, xfb.ValueKind.Internal)
        return self.ids[index]

    def _filter_for_input(self, node: FullyConnected | Conv2d) -> Const:
        """A fully connected layer reading a FLAT value sees its columns in (h, w, c) order."""
        if not isinstance(node, FullyConnected) or not isinstance(node.input, int):
            return node.filter
        if self.part.layout.get(node.input) != Layout.FLAT:
            return node.filter
        source = next(
            m.node.body.input
            for m in self.part.matches
            if isinstance(m.node.body, Reshape) and m.node.output == node.input
        )
        assert isinstance(source, int)
        src = self.view.tensor(source)
        assert src is not None
        _, c, h, w = src.sizes
        o = node.filter.array.shape[0]
        array = node.filter.array.reshape(o, c, h, w).transpose(0, 2, 3, 1).reshape(o, h * w * c)
        return Const(f"{node.filter.key}:nhwc", np.ascontiguousarray(array))

    def collect(self) -> list[tuple[XNode, dict[str, int]]]:
        """Assign value ids; return each node with the ids of its operands."""
        spatial = self.part.layout
        for i, v in enumerate(self.part.inputs):
            self._activation(v, xfb.ValueKind.Input, i, spatial.get(v) == Layout.SPATIAL)
        for i, v in enumerate(self.part.outputs):
            self._activation(v, xfb.ValueKind.Output, i, spatial.get(v) == Layout.SPATIAL)
        nodes = []
        for m in self.part.matches:
            node = m.node
            b = node.body
            ids: dict[str, int] = {}
            if isinstance(b, FullyConnected | Conv2d):
                ids["input"] = self._operand(b.input)
                ids["filter"] = self._const(self._filter_for_input(b))
                ids["bias"] = self._const(b.bias) if b.bias is not None else -1
            elif isinstance(b, Binary):
                ids["input1"] = self._operand(b.input1)
                ids["input2"] = self._operand(b.input2)
            else:
                assert not isinstance(b, Concat), "rewrite.py distributes concatenations"
                ids["input"] = self._operand(b.input)
            ids["output"] = self._output(b.output)
            nodes.append((node, ids))
        return nodes


def _write_value(builder: Any, v: BlobValue) -> int:
    dims = builder.CreateNumpyVector(np.asarray(v.dims, dtype=np.uint64))
    scales = None
    if v.channel_scales:
        scales = builder.CreateNumpyVector(np.asarray(v.channel_scales, dtype=np.float32))
    xfb.XValueStart(builder)
    xfb.XValueAddDims(builder, dims)
    xfb.XValueAddKind(builder, v.kind)
    xfb.XValueAddIoIndex(builder, v.io_index)
    xfb.XValueAddNchw(builder, v.nchw)
    xfb.XValueAddDataOffset(builder, v.data_offset)
    xfb.XValueAddDatatype(builder, int(v.datatype))
    if v.quant is not None:
        xfb.XValueAddScale(builder, v.quant.scale)
        xfb.XValueAddZeroPoint(builder, v.quant.zero_point)
    if scales is not None:
        xfb.XValueAddChannelScales(builder, scales)
        xfb.XValueAddChannelDim(builder, 0)
    return int(xfb.XValueEnd(builder))


def _write_body(builder: Any, node: XNode, ids: dict[str, int]) -> tuple[int, int]:
    b = node.body
    if isinstance(b, FullyConnected):
        xfb.FullyConnectedStart(builder)
        xfb.FullyConnectedAddInput(builder, ids["input"])
        xfb.FullyConnectedAddFilter(builder, ids["filter"])
        xfb.FullyConnectedAddBias(builder, ids["bias"])
        xfb.FullyConnectedAddOutput(builder, ids["output"])
        return xfb.NodeUnion.FullyConnected, int(xfb.FullyConnectedEnd(builder))
    if isinstance(b, Conv2d):
        xfb.Conv2dStart(builder)
        xfb.Conv2dAddPadTop(builder, b.padding[0])
        xfb.Conv2dAddPadBottom(builder, b.padding[0])
        xfb.Conv2dAddPadLeft(builder, b.padding[1])
        xfb.Conv2dAddPadRight(builder, b.padding[1])
        xfb.Conv2dAddKernelH(builder, b.kernel[0])
        xfb.Conv2dAddKernelW(builder, b.kernel[1])
        xfb.Conv2dAddStrideH(builder, b.stride[0])
        xfb.Conv2dAddStrideW(builder, b.stride[1])
        xfb.Conv2dAddDilationH(builder, b.dilation[0])
        xfb.Conv2dAddDilationW(builder, b.dilation[1])
        xfb.Conv2dAddGroups(builder, b.groups)
        xfb.Conv2dAddGroupInputChannels(builder, b.group_input_channels)
        xfb.Conv2dAddGroupOutputChannels(builder, b.group_output_channels)
        xfb.Conv2dAddInput(builder, ids["input"])
        xfb.Conv2dAddFilter(builder, ids["filter"])
        xfb.Conv2dAddBias(builder, ids["bias"])
        xfb.Conv2dAddOutput(builder, ids["output"])
        return xfb.NodeUnion.Conv2d, int(xfb.Conv2dEnd(builder))
    if isinstance(b, MaxPool2d):
        xfb.MaxPool2dStart(builder)
        xfb.MaxPool2dAddPadTop(builder, b.padding[0])
        xfb.MaxPool2dAddPadBottom(builder, b.padding[0] + b.extra[0])
        xfb.MaxPool2dAddPadLeft(builder, b.padding[1])
        xfb.MaxPool2dAddPadRight(builder, b.padding[1] + b.extra[1])
        xfb.MaxPool2dAddPoolH(builder, b.pool[0])
        xfb.MaxPool2dAddPoolW(builder, b.pool[1])
        xfb.MaxPool2dAddStrideH(builder, b.stride[0])
        xfb.MaxPool2dAddStrideW(builder, b.stride[1])
        xfb.MaxPool2dAddDilationH(builder, b.dilation[0])
        xfb.MaxPool2dAddDilationW(builder, b.dilation[1])
        xfb.MaxPool2dAddInput(builder, ids["input"])
        xfb.MaxPool2dAddOutput(builder, ids["output"])
        return xfb.NodeUnion.MaxPool2d, int(xfb.MaxPool2dEnd(builder))
    if isinstance(b, AvgPool2d):
        xfb.AvgPool2dStart(builder)
        xfb.AvgPool2dAddPoolH(builder, b.pool[0])
        xfb.AvgPool2dAddPoolW(builder, b.pool[1])
        xfb.AvgPool2dAddStrideH(builder, b.stride[0])
        xfb.AvgPool2dAddStrideW(builder, b.stride[1])
        xfb.AvgPool2dAddInput(builder, ids["input"])
        xfb.AvgPool2dAddOutput(builder, ids["output"])
        return xfb.NodeUnion.AvgPool2d, int(xfb.AvgPool2dEnd(builder))
    if isinstance(b, Binary):
        xfb.BinaryStart(builder)
        xfb.BinaryAddOp(builder, int(b.op))
        xfb.BinaryAddInput1(builder, ids["input1"])
        xfb.BinaryAddInput2(builder, ids["input2"])
        xfb.BinaryAddOutput(builder, ids["output"])
        return xfb.NodeUnion.Binary, int(xfb.BinaryEnd(builder))
    simple = {
        Clamp: (xfb.ClampStart, xfb.ClampAddInput, xfb.ClampAddOutput, xfb.ClampEnd, "Clamp"),
        Softmax: (
            xfb.SoftmaxStart, xfb.SoftmaxAddInput, xfb.SoftmaxAddOutput, xfb.SoftmaxEnd, "Softmax"
        ),
        Reshape: (
            xfb.ReshapeStart, xfb.ReshapeAddInput, xfb.ReshapeAddOutput, xfb.ReshapeEnd, "Reshape"
        ),
        Sigmoid: (
            xfb.SigmoidStart, xfb.SigmoidAddInput, xfb.SigmoidAddOutput, xfb.SigmoidEnd, "Sigmoid"
        ),
        Hardswish: (
            xfb.HardswishStart, xfb.HardswishAddInput, xfb.HardswishAddOutput, xfb.HardswishEnd,
            "Hardswish",
        ),
        GlobalAvgPool2d: (
            xfb.GlobalAvgPool2dStart, xfb.GlobalAvgPool2dAddInput, xfb.GlobalAvgPool2dAddOutput,
            xfb.GlobalAvgPool2dEnd, "GlobalAvgPool2d",
        ),
    }  # fmt: skip
    start, add_input, add_output, end, kind = simple[type(b)]
    start(builder)
    add_input(builder, ids["input"])
    add_output(builder, ids["output"])
    return getattr(xfb.NodeUnion, kind), int(end(builder))


def _write_node(builder: Any, node: XNode, ids: dict[str, int]) -> int:
    kind, body = _write_body(builder, node, ids)
    xfb.NodeStart(builder)
    xfb.NodeAddNodeType(builder, kind)
    xfb.NodeAddNode(builder, body)
    xfb.NodeAddOutputMin(builder, node.output_min)
    xfb.NodeAddOutputMax(builder, node.output_max)
    return int(xfb.NodeEnd(builder))


def _offsets(builder: Any, start: Any, offsets: list[int]) -> int:
    start(builder, len(offsets))
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return int(builder.EndVector())


def _flatbuffer(
    values: list[BlobValue],
    nodes: list[tuple[XNode, dict[str, int]]],
    part: Partition,
    data_offset: int,
    data_size: int,
) -> bytes:
    builder = flatbuffers.Builder(1024)
    value_offsets = [_write_value(builder, v) for v in values]
    node_offsets = [_write_node(builder, n, ids) for n, ids in nodes]
    values_vec = _offsets(builder, xfb.GraphStartValuesVector, value_offsets)
    nodes_vec = _offsets(builder, xfb.GraphStartNodesVector, node_offsets)
    xfb.GraphStart(builder)
    xfb.GraphAddVersion(builder, BLOB_VERSION)
    xfb.GraphAddValues(builder, values_vec)
    xfb.GraphAddNodes(builder, nodes_vec)
    xfb.GraphAddNumInputs(builder, len(part.inputs))
    xfb.GraphAddNumOutputs(builder, len(part.outputs))
    xfb.GraphAddDataOffset(builder, data_offset)
    xfb.GraphAddDataSize(builder, data_size)
    builder.Finish(xfb.GraphEnd(builder), file_identifier=BLOB_IDENTIFIER)
    return bytes(builder.Output())


def build_blob(view: PlanView, part: Partition) -> bytes:
    b = _Builder(view, part)
    nodes = b.collect()
    data = bytes(b.data)
    # The data offset is stored in the buffer it follows: rebuild until it is consistent (a
    # non-zero ulong field has a fixed size, so the second pass settles).
    offset = DATA_ALIGNMENT
    while True:
        head = _flatbuffer(b.values, nodes, part, offset, len(data))
        needed = align(len(head), DATA_ALIGNMENT)
        if needed == offset:
            break
        offset = needed
    return head + b"\0" * (offset - len(head)) + data

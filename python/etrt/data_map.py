"""Named data maps (.ptd): tensors stored apart from a program, by key (schema/data_map.fbs).

    etrt.data_map.save({"fc.weight": w, "fc.bias": b}, "weights.ptd")
    tensors = etrt.data_map.load("weights.ptd")        # {key: numpy array}, verified

numpy has no bfloat16: torch.bfloat16 tensors are saved as bfloat16, and `load` gives such
entries as float32 arrays (exact).

A program exported with `external_constants=True` refers to its weights by their parameter
names and loads them from such a file (`Program.save_data`, `etrt.load(..., data=...)`,
`etrt_runner --data`). The layout: the FlatBuffer at offset 0, then one 64-byte aligned
segment per tensor, so the runtime maps the file and uses the bytes in place.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from . import _bfloat16
from ._flatbuf import Buffer, FlatBufferError
from .errors import EtrtError
from .ir import NUMPY_NAMES, ScalarType
from .program import write_atomic

FILE_IDENTIFIER = b"ETDM"
VERSION = 1
ALIGNMENT = 64
_MAX_DIMS = 8
_MAX_SIZE = 1 << 40  # per dimension, as the runtime caps a tensor

_DTYPES: dict[ScalarType, np.dtype[Any]] = {
    st: np.dtype(name).newbyteorder("<") for st, name in NUMPY_NAMES.items()
}


class DataMapFormatError(EtrtError):
    """A file is not a valid named data map."""


def _scalar_type(dtype: np.dtype[Any], key: str) -> ScalarType:
    for st, d in _DTYPES.items():
        if d == dtype and st != ScalarType.BFLOAT16:  # uint16 arrays are not bfloat16 bits
            return st
    raise ValueError(f"tensor {key!r} has dtype {dtype}, which a data map cannot hold")


def _as_array(value: Any, key: str) -> tuple[np.ndarray[Any, Any], ScalarType]:
    """A contiguous little-endian array of `value` (a numpy array or a torch tensor), and the
    type its elements are stored as."""
    if _bfloat16.is_torch_bfloat16(value):
        return _bfloat16.torch_bits(value), ScalarType.BFLOAT16
    if hasattr(value, "detach"):  # a torch tensor, without importing torch
        value = value.detach().cpu().contiguous().numpy()
    arr = np.asarray(value)  # not ascontiguousarray: it turns 0-d into 1-d
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr, _scalar_type(arr.dtype, key)


def to_bytes(tensors: Mapping[str, Any]) -> bytes:
    """The .ptd bytes for `tensors` (numpy arrays or torch tensors), in the given key order."""
    from ._fb import dm, flatbuffers

    for key in tensors:
        if not isinstance(key, str) or not key:
            raise ValueError(f"data map keys must be non-empty strings, got {key!r}")
    typed = {key: _as_array(value, key) for key, value in tensors.items()}
    arrays = {key: arr for key, (arr, _) in typed.items()}
    # Segment offsets are relative to the segment area: each tensor 64-byte aligned.
    offsets, cursor = [], 0
    for arr in arrays.values():
        offsets.append(cursor)
        cursor += (arr.nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT

    def flatbuffer(base: int) -> bytes:
        builder = flatbuffers.Builder(1024)
        builder.ForceDefaults(True)  # every field written: the size does not depend on `base`
        entries = []
        for i, (key, arr) in enumerate(arrays.items()):
            if arr.ndim > _MAX_DIMS:
                raise ValueError(f"tensor {key!r} has {arr.ndim} dimensions; at most {_MAX_DIMS}")
            st = typed[key][1]
            name = builder.CreateString(key)
            sizes = builder.CreateNumpyVector(np.asarray(arr.shape, dtype=np.int64))
            dm.NamedTensorStart(builder)
            dm.NamedTensorAddKey(builder, name)
            dm.NamedTensorAddScalarType(builder, int(st))
            dm.NamedTensorAddSizes(builder, sizes)
            dm.NamedTensorAddSegment(builder, i)
            entries.append(dm.NamedTensorEnd(builder))
        dm.DataMapStartTensorsVector(builder, len(entries))
        for e in reversed(entries):
            builder.PrependUOffsetTRelative(e)
        tensor_vec = builder.EndVector()
        dm.DataMapStartSegmentsVector(builder, len(arrays))
        for off, arr in reversed(list(zip(offsets, arrays.values(), strict=True))):
            dm.CreateTensorSegment(builder, off, arr.nbytes)
        seg_vec = builder.EndVector()
        dm.DataMapStart(builder)
        dm.DataMapAddVersion(builder, VERSION)
        dm.DataMapAddTensors(builder, tensor_vec)
        dm.DataMapAddSegments(builder, seg_vec)
        dm.DataMapAddSegmentBaseOffset(builder, base)
        builder.Finish(dm.DataMapEnd(builder), file_identifier=FILE_IDENTIFIER)
        return bytes(builder.Output())

    size = len(flatbuffer(0))
    base = (size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    head = flatbuffer(base)
    if len(head) != size:
        raise AssertionError("the data map header changed size with its base offset")
    out = bytearray(head) + bytes(base - len(head))
    for off, arr in zip(offsets, arrays.values(), strict=True):
        out += bytes(base + off - len(out))
        out += arr.tobytes()
    return bytes(out)


def save(tensors: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write `tensors` as a .ptd at `path` atomically (a temporary file, then a rename)."""
    return write_atomic(path, to_bytes(tensors))


def from_bytes(data: bytes) -> dict[str, np.ndarray[Any, Any]]:
    """The tensors of .ptd bytes, by key; every offset and size is checked before it is used."""
    try:
        root = Buffer(data).root(FILE_IDENTIFIER)
        version = int(root.scalar(0, "I"))
        if version != VERSION:
            raise DataMapFormatError(f"data map version {version}; this reader reads {VERSION}")
        base = int(root.scalar(3, "Q"))
        if base % ALIGNMENT or base > len(data):
            raise DataMapFormatError(f"segment_base_offset {base} is invalid")
        segments = root.structs(2, "QQ", "segments")
        out: dict[str, np.ndarray[Any, Any]] = {}
        for i, t in enumerate(root.tables(1, "tensors")):
            key = t.string(0, f"tensors[{i}].key")
            if not key or key in out:
                raise DataMapFormatError(f"tensor {i}: missing or repeated key {key!r}")
            code = int(t.scalar(1, "b"))
            if code not in ScalarType._value2member_map_:
                raise DataMapFormatError(f"tensor {key!r}: unknown scalar type {code}")
            shape = tuple(int(v) for v in t.scalars(2, "q", f"{key}.sizes"))
            if len(shape) > _MAX_DIMS or any(not 0 <= s <= _MAX_SIZE for s in shape):
                raise DataMapFormatError(f"tensor {key!r}: invalid shape {shape}")
            order = t.scalars(3, "B", f"{key}.dim_order")
            if order and list(order) != list(range(len(shape))):
                raise DataMapFormatError(f"tensor {key!r}: only contiguous layouts are read here")
            seg = int(t.scalar(4, "I"))
            if seg >= len(segments):
                raise DataMapFormatError(f"tensor {key!r}: segment {seg} does not exist")
            offset, size = (int(v) for v in segments[seg])
            dtype = _DTYPES[ScalarType(code)]
            nbytes = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
            start = base + offset
            if size < nbytes or start + nbytes > len(data):
                raise DataMapFormatError(f"tensor {key!r}: its bytes lie outside the file")
            count = nbytes // dtype.itemsize
            arr = np.frombuffer(data, dtype=dtype, count=count, offset=start).reshape(shape)
            out[key] = _bfloat16.to_float32(arr) if code == ScalarType.BFLOAT16 else arr
        return out
    except FlatBufferError as exc:
        raise DataMapFormatError(f"malformed data map: {exc}") from exc


def load(path: str | os.PathLike[str]) -> dict[str, np.ndarray[Any, Any]]:
    """The tensors of the .ptd at `path`, by key (read-only arrays over the file's bytes)."""
    return from_bytes(Path(path).read_bytes())


__all__ = ["DataMapFormatError", "from_bytes", "load", "save", "to_bytes"]

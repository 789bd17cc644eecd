"""A bounds-checked FlatBuffers reader: every offset is checked before it is followed.

The `flatbuffers` package reads without verifying (a corrupt file can yield garbage through
negative or wrapped offsets), so files from outside the process are read through this instead.
Only what etrt's schemas use: tables, scalars, strings, vectors of scalars, structs, strings
and tables.
"""

from __future__ import annotations

import struct

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")


class FlatBufferError(ValueError):
    """The buffer is not a well-formed FlatBuffer."""


class Buffer:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)

    def read(self, fmt: struct.Struct, pos: int, what: str) -> int | float | bool:
        if pos < 0 or pos + fmt.size > self.size:
            raise FlatBufferError(f"{what} at offset {pos} is outside the {self.size}-byte file")
        value: int | float | bool = fmt.unpack_from(self.data, pos)[0]
        return value

    def u32(self, pos: int, what: str) -> int:
        return int(self.read(_U32, pos, what))

    def root(self, identifier: bytes) -> Table:
        if self.size < 8 or self.data[4:8] != identifier:
            raise FlatBufferError(f"bad magic (expected {identifier.decode()!r})")
        return Table(self, self.u32(0, "root offset"), "root table")


class Table:
    def __init__(self, buf: Buffer, pos: int, what: str) -> None:
        self.buf, self.pos, self.what = buf, pos, what
        vtable = pos - int(buf.read(_I32, pos, what))
        vsize = int(buf.read(_U16, vtable, f"vtable of {what}"))
        tsize = int(buf.read(_U16, vtable + 2, f"vtable of {what}"))
        if vsize < 4 or vsize % 2 or vtable + vsize > buf.size or pos + tsize > buf.size:
            raise FlatBufferError(f"{what} at offset {pos} has a corrupt vtable")
        self._vtable, self._vsize, self._tsize = vtable, vsize, tsize

    def _field(self, slot: int) -> int:
        """Offset of field `slot` inside the table, 0 when absent."""
        at = 4 + 2 * slot
        if at >= self._vsize:
            return 0
        off = int(self.buf.read(_U16, self._vtable + at, self.what))
        if off and (off < 4 or off >= self._tsize):
            raise FlatBufferError(f"field {slot} of {self.what} lies outside its table")
        return off

    def has(self, slot: int) -> bool:
        return self._field(slot) != 0

    def scalar(self, slot: int, fmt: str, default: int | float | bool = 0) -> int | float | bool:
        off = self._field(slot)
        return (
            default
            if off == 0
            else self.buf.read(struct.Struct("<" + fmt), self.pos + off, self.what)
        )

    def _target(self, slot: int) -> int | None:
        off = self._field(slot)
        if off == 0:
            return None
        at = self.pos + off
        return at + self.buf.u32(at, f"field {slot} of {self.what}")

    def _vector(self, slot: int, elem_size: int, what: str) -> tuple[int, int]:
        """(position of the first element, length); (0, 0) when absent."""
        start = self._target(slot)
        if start is None:
            return 0, 0
        length = self.buf.u32(start, what)
        if start + 4 + length * elem_size > self.buf.size:
            raise FlatBufferError(f"{what} ({length} items) runs past the end of the file")
        return start + 4, length

    def scalars(self, slot: int, fmt: str, what: str) -> tuple[int | float | bool, ...]:
        s = struct.Struct("<" + fmt)
        begin, length = self._vector(slot, s.size, what)
        return tuple(s.unpack_from(self.buf.data, begin + i * s.size)[0] for i in range(length))

    def structs(self, slot: int, fmt: str, what: str) -> list[tuple[int | float | bool, ...]]:
        """A vector of structs laid out as `fmt` (e.g. "QQ": two uint64 fields)."""
        s = struct.Struct("<" + fmt)
        begin, length = self._vector(slot, s.size, what)
        return [s.unpack_from(self.buf.data, begin + i * s.size) for i in range(length)]

    def string(self, slot: int, what: str) -> str | None:
        """A string field; None when absent."""
        start = self._target(slot)
        return None if start is None else self._utf8(start, what)

    def _utf8(self, start: int, what: str) -> str:
        n = self.buf.u32(start, what)
        if start + 4 + n > self.buf.size:
            raise FlatBufferError(f"{what} runs past the end of the file")
        try:
            return self.buf.data[start + 4 : start + 4 + n].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FlatBufferError(f"{what} is not UTF-8") from exc

    def tables(self, slot: int, what: str) -> list[Table]:
        begin, length = self._vector(slot, 4, what)
        out = []
        for i in range(length):
            at = begin + 4 * i
            out.append(Table(self.buf, at + self.buf.u32(at, what), f"{what}[{i}]"))
        return out

    def strings(self, slot: int, what: str) -> list[str]:
        begin, length = self._vector(slot, 4, what)
        out = []
        for i in range(length):
            at = begin + 4 * i
            out.append(self._utf8(at + self.buf.u32(at, what), f"{what}[{i}]"))
        return out

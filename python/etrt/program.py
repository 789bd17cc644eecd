"""Program: a serialized etrt program with introspection; load_program_info reads one back."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .errors import ProgramFormatError
from .ir import DataSegment, DelegateCall, ExecutionPlan, ProgramData, StorageKind, TensorValue
from .reader import read_program


@dataclass(frozen=True)
class ProgramInfo:
    """A program file decoded: its plans, segment table and segment bytes."""

    data: ProgramData
    segment_table: list[DataSegment]
    segment_base_offset: int
    size: int  # bytes of the whole file

    @property
    def version(self) -> int:
        return self.data.version

    @property
    def plan(self) -> ExecutionPlan:
        """The "forward" plan (the first one)."""
        if not self.data.plans:
            raise ProgramFormatError("program has no execution plan")
        return self.data.plans[0]

    @property
    def operator_names(self) -> list[str]:
        return list(self.plan.operators)

    @property
    def instruction_ops(self) -> list[str]:
        """The operator each instruction calls, in execution order ("delegate:<id>" for a
        delegate call)."""
        return [
            f"delegate:{self.plan.delegates[i.delegate_index].id}"
            if isinstance(i, DelegateCall)
            else self.plan.operators[i.op_index]
            for i in self.plan.instructions
        ]

    @property
    def delegate_ids(self) -> list[str]:
        return [d.id for d in self.plan.delegates]

    @property
    def num_inputs(self) -> int:
        return len(self.plan.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.plan.outputs)

    @property
    def arena_size(self) -> int:
        return self.plan.arena_size

    def constant_tensors(self) -> list[tuple[int, TensorValue]]:
        """(value index, tensor) of every constant, in value order."""
        return [
            (i, v)
            for i, v in enumerate(self.plan.values)
            if isinstance(v, TensorValue) and v.storage == StorageKind.CONSTANT
        ]

    def constant_bytes(self, tensor: TensorValue) -> bytes:
        return self.data.segments[tensor.constant_segment]

    def summary(self) -> str:
        p = self.plan
        lines = [
            f"etrt program v{self.version}, {self.size} bytes, plan {p.name!r}: "
            f"{len(p.values)} values, {len(p.instructions)} instructions, "
            f"{self.num_inputs} inputs, {self.num_outputs} outputs, arena {self.arena_size} bytes",
        ]
        lines += [f"  {i:3d} {op}" for i, op in enumerate(self.instruction_ops)]
        return "\n".join(lines)


def parse_program(data: bytes) -> ProgramInfo:
    program, table, base = read_program(data)
    return ProgramInfo(program, table, base, len(data))


def load_program_info(source: str | os.PathLike[str] | bytes) -> ProgramInfo:
    """Decode a program from a file path or from its bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return parse_program(bytes(source))
    return parse_program(Path(source).read_bytes())


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` atomically: a temporary file in the same directory, then a rename;
    on any failure the temporary is removed and `path` is left as it was."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


class Program:
    """An exported etrt program: its bytes plus a decoded view of them, and for a program
    exported with external constants the bytes of its named data map (.ptd)."""

    def __init__(
        self, data: bytes, missing_ops: tuple[str, ...] = (), data_map: bytes | None = None
    ) -> None:
        self._data = bytes(data)
        # Operators exported without a kernel in etrt (allow_missing_ops=True).
        self.missing_ops = missing_ops
        self.data_map = data_map

    def to_bytes(self) -> bytes:
        return self._data

    def __bytes__(self) -> bytes:
        return self._data

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return (
            f"<etrt.Program {len(self._data)} bytes, {len(self.info.plan.instructions)} "
            f"instructions, arena {self.arena_size} bytes>"
        )

    @cached_property
    def info(self) -> ProgramInfo:
        return parse_program(self._data)

    @property
    def operator_names(self) -> list[str]:
        return self.info.operator_names

    @property
    def num_inputs(self) -> int:
        return self.info.num_inputs

    @property
    def num_outputs(self) -> int:
        return self.info.num_outputs

    @property
    def arena_size(self) -> int:
        return self.info.arena_size

    @property
    def has_external_constants(self) -> bool:
        """Whether a tensor of any method lives in a named data map (.ptd) outside the file."""
        return any(
            isinstance(v, TensorValue) and v.external_key
            for plan in self.info.data.plans
            for v in plan.values
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the program atomically (a temporary file in the same directory, then a rename)."""
        return write_atomic(path, self._data)

    def save_data(self, path: str | os.PathLike[str]) -> Path:
        """Write the named data map (.ptd) the program's external constants live in, atomically."""
        if self.data_map is None:
            raise ValueError(
                "this program keeps its constants inside; export with external_constants=True"
            )
        return write_atomic(path, self.data_map)

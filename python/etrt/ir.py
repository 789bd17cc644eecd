"""The in-memory form of an etrt program: what the exporter builds and the reader returns.

It mirrors schema/program.fbs one to one; serialize.py writes it, reader.py reads it back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TypeAlias

FORMAT_VERSION = 2
# Files that use no dynamic shape, state or symbolic size are written as version 1, which older
# runtimes read too.
BASE_FORMAT_VERSION = 1
FILE_IDENTIFIER = b"ETRT"
SEGMENT_ALIGNMENT = 64
ARENA_ALIGNMENT = 64


class ScalarType(enum.IntEnum):
    FLOAT = 0
    LONG = 1
    INT = 2
    BOOL = 3
    BYTE = 4
    CHAR = 5
    DOUBLE = 6
    HALF = 7  # float16
    BFLOAT16 = 8

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self]


# numpy's name for each type's storage (the runtime binding and the .ptd reader and writer use
# these). numpy has no bfloat16: its elements are stored as their 16 bits, read as uint16 here
# and handed to numpy users as float32 (which holds every bfloat16 exactly).
NUMPY_NAMES = {
    ScalarType.FLOAT: "float32",
    ScalarType.LONG: "int64",
    ScalarType.INT: "int32",
    ScalarType.BOOL: "bool",
    ScalarType.BYTE: "uint8",
    ScalarType.CHAR: "int8",
    ScalarType.DOUBLE: "float64",
    ScalarType.HALF: "float16",
    ScalarType.BFLOAT16: "uint16",
}

_ITEMSIZE = {
    ScalarType.FLOAT: 4,
    ScalarType.LONG: 8,
    ScalarType.INT: 4,
    ScalarType.BOOL: 1,
    ScalarType.BYTE: 1,
    ScalarType.CHAR: 1,
    ScalarType.DOUBLE: 8,
    ScalarType.HALF: 2,
    ScalarType.BFLOAT16: 2,
}


class StorageKind(enum.IntEnum):
    PLANNED = 0
    CONSTANT = 1
    INPUT = 2
    VIEW = 3
    EXTERNAL = 4  # in a named data map (.ptd), by external_key
    STATE = 5  # method-owned, kept across calls; initial value in constant_segment (or zeros)


@dataclass
class TensorValue:
    scalar_type: ScalarType
    sizes: tuple[int, ...]
    storage: StorageKind
    dim_order: tuple[int, ...] = ()
    constant_segment: int = 0
    mem_offset: int = 0
    external_key: str = ""
    # `sizes` is an upper bound; the actual sizes are set at run time.
    dynamic: bool = False
    # Dynamic inputs: the sizes each dimension accepts.
    min_sizes: tuple[int, ...] = ()
    max_sizes: tuple[int, ...] = ()
    zero_initial: bool = False  # State: starts as zeros, no segment
    # Exporter-only (not serialized): the value a view aliases, and the graph node's name.
    view_of: int | None = field(default=None, compare=False)
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.dim_order:
            self.dim_order = tuple(range(len(self.sizes)))

    @property
    def numel(self) -> int:
        n = 1
        for s in self.sizes:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        return self.numel * self.scalar_type.itemsize


@dataclass(frozen=True)
class NullValue:
    pass


@dataclass(frozen=True)
class IntValue:
    val: int


@dataclass(frozen=True)
class DoubleValue:
    val: float


@dataclass(frozen=True)
class BoolValue:
    val: bool


@dataclass(frozen=True)
class StringValue:
    val: str


@dataclass(frozen=True)
class IntListValue:
    items: tuple[int, ...]
    # Per item: the Int value computed at run time that replaces it, or -1 (a constant item).
    item_values: tuple[int, ...] = ()


@dataclass(frozen=True)
class DoubleListValue:
    items: tuple[float, ...]


@dataclass(frozen=True)
class BoolListValue:
    items: tuple[bool, ...]


@dataclass(frozen=True)
class TensorListValue:
    """Indices of tensor values."""

    items: tuple[int, ...]


@dataclass(frozen=True)
class OptionalTensorListValue:
    """Indices of tensor or null values."""

    items: tuple[int, ...]


Value: TypeAlias = (
    NullValue
    | IntValue
    | DoubleValue
    | BoolValue
    | StringValue
    | IntListValue
    | DoubleListValue
    | BoolListValue
    | TensorValue
    | TensorListValue
    | OptionalTensorListValue
)


@dataclass(frozen=True)
class KernelCall:
    op_index: int
    args: tuple[int, ...]  # the schema's arguments, then the outputs
    num_outputs: int = field(
        default=0, compare=False
    )  # exporter-only: trailing args that are outputs
    node: str = field(default="", compare=False)  # exporter-only: the graph node's name

    @property
    def outputs(self) -> tuple[int, ...]:
        return self.args[len(self.args) - self.num_outputs :]

    @property
    def inputs(self) -> tuple[int, ...]:
        return self.args[: len(self.args) - self.num_outputs]


@dataclass(frozen=True)
class DelegateCall:
    """Runs delegates[delegate_index] on its inputs, writing its outputs."""

    delegate_index: int
    args: tuple[int, ...]  # the delegate's inputs, then its outputs
    num_outputs: int = field(default=0, compare=False)  # exporter-only

    @property
    def outputs(self) -> tuple[int, ...]:
        return self.args[len(self.args) - self.num_outputs :]

    @property
    def inputs(self) -> tuple[int, ...]:
        return self.args[: len(self.args) - self.num_outputs]


Instruction: TypeAlias = KernelCall | DelegateCall


@dataclass(frozen=True)
class CompileSpec:
    key: str
    value: bytes


@dataclass(frozen=True)
class BackendDelegate:
    """A subgraph lowered to backend `id` (e.g. "XnnpackBackend"); `segment` holds its blob."""

    id: str
    segment: int
    compile_specs: tuple[CompileSpec, ...] = ()


@dataclass(frozen=True)
class DataSegment:
    offset: int  # relative to the segment base
    size: int


@dataclass
class ExecutionPlan:
    name: str
    values: list[Value]
    inputs: list[int]
    outputs: list[int]
    operators: list[str]
    instructions: list[Instruction]
    arena_size: int = 0
    delegates: list[BackendDelegate] = field(default_factory=list)


@dataclass
class ProgramData:
    """A whole program: plans plus the constant bytes each segment holds."""

    plans: list[ExecutionPlan]
    segments: list[bytes]
    version: int = BASE_FORMAT_VERSION


def required_version(plans: list[ExecutionPlan]) -> int:
    """The lowest format version that can hold `plans`."""
    for plan in plans:
        for v in plan.values:
            if isinstance(v, TensorValue) and (v.dynamic or v.storage == StorageKind.STATE):
                return FORMAT_VERSION
            if isinstance(v, IntListValue) and v.item_values:
                return FORMAT_VERSION
    return BASE_FORMAT_VERSION


def align(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def tensor_indices(values: list[Value], index: int) -> tuple[int, ...]:
    """The tensor values `index` refers to: itself, or the items of a tensor list."""
    v = values[index]
    if isinstance(v, TensorValue):
        return (index,)
    if isinstance(v, (TensorListValue, OptionalTensorListValue)):
        return tuple(i for i in v.items if isinstance(values[i], TensorValue))
    return ()

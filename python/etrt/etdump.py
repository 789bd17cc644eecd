"""Reads .etdump files (schema/etdump.fbs), written by the etrt profiler (libetrt_etdump.so).

    dump = etrt.etdump.load("model.etdump")
    for event in dump:                    # every event of every run, in recorded order
        print(event.name, event.duration_ns)
    dump.runs[0].method                   # "forward"

The file is verified while it is read: anything malformed raises EtdumpFormatError.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import overload

from ._flatbuf import Buffer, FlatBufferError, Table
from .errors import EtrtError

FILE_IDENTIFIER = b"ETDP"
VERSION = 1


class EtdumpFormatError(EtrtError):
    """A file is not a valid .etdump."""


class EventKind(enum.Enum):
    OPERATOR = 0  # a kernel call, named by its operator ("aten::addmm")
    DELEGATE = 1  # a delegate call, named by its backend id


@dataclass(frozen=True)
class Event:
    name: str
    kind: EventKind
    instruction: int  # index of the instruction in its method
    run: int  # index of the run in ETDump.runs
    start_ns: int  # monotonic clock: only differences mean something
    end_ns: int
    # Sizes of each tensor the instruction produced; None when shapes were not recorded.
    output_shapes: tuple[tuple[int, ...], ...] | None = None

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class Run:
    """One execute() of a method."""

    method: str
    start_ns: int
    end_ns: int
    ok: bool  # False when an instruction failed
    events: tuple[Event, ...]

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class ETDump(Sequence[Event]):
    """A profile: its runs, and (as a sequence) every event of every run in order."""

    version: int
    runs: tuple[Run, ...]
    dropped_events: int  # events the tracer had no room for

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(e for run in self.runs for e in run.events)

    def __len__(self) -> int:
        return sum(len(run.events) for run in self.runs)

    @overload
    def __getitem__(self, i: int) -> Event: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Event]: ...
    def __getitem__(self, i: int | slice) -> Event | Sequence[Event]:
        return self.events[i]

    def __iter__(self) -> Iterator[Event]:
        for run in self.runs:
            yield from run.events


def _name(names: list[str], index: int, what: str) -> str:
    if not 0 <= index < len(names):
        raise EtdumpFormatError(f"{what} names entry {index}, but the file has {len(names)} names")
    return names[index]


def _event(t: Table, names: list[str], run: int, what: str) -> Event:
    kind = int(t.scalar(1, "b"))
    if kind not in (0, 1):
        raise EtdumpFormatError(f"{what} has unknown kind {kind}")
    start, end = int(t.scalar(3, "Q")), int(t.scalar(4, "Q"))
    if end < start:
        raise EtdumpFormatError(f"{what} ends before it starts")
    shape_tables = t.tables(5, f"{what}.output_shapes")
    shapes = tuple(
        tuple(int(v) for v in s.scalars(0, "q", f"{what}.output_shapes[{k}]"))
        for k, s in enumerate(shape_tables)
    )
    return Event(
        name=_name(names, int(t.scalar(0, "I")), what),
        kind=EventKind(kind),
        instruction=int(t.scalar(2, "I")),
        run=run,
        start_ns=start,
        end_ns=end,
        output_shapes=shapes if t.has(5) else None,
    )


def _parse(data: bytes) -> ETDump:
    root = Buffer(data).root(FILE_IDENTIFIER)
    version = int(root.scalar(0, "I"))
    if version != VERSION:
        raise EtdumpFormatError(
            f"unsupported etdump version {version} (this reader knows {VERSION})"
        )
    names = root.strings(1, "names")
    runs = []
    for r, rt in enumerate(root.tables(2, "runs")):
        what = f"run {r}"
        start, end = int(rt.scalar(1, "Q")), int(rt.scalar(2, "Q"))
        if end < start:
            raise EtdumpFormatError(f"{what} ends before it starts")
        events = tuple(
            _event(et, names, r, f"{what} event {i}")
            for i, et in enumerate(rt.tables(4, f"{what}.events"))
        )
        runs.append(
            Run(
                _name(names, int(rt.scalar(0, "I")), what),
                start,
                end,
                bool(rt.scalar(3, "?")),
                events,
            )
        )
    return ETDump(version=version, runs=tuple(runs), dropped_events=int(root.scalar(3, "Q")))


def parse(data: bytes, source: str = "etdump") -> ETDump:
    """Reads and verifies an etdump held in memory; `source` names it in errors."""
    try:
        return _parse(data)
    except EtdumpFormatError as exc:
        raise EtdumpFormatError(f"{source}: {exc}") from None
    except FlatBufferError as exc:
        raise EtdumpFormatError(f"{source}: not a valid etdump file: {exc}") from None


def load(path: str | PathLike[str]) -> ETDump:
    """Reads and verifies the .etdump file at `path`."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise EtdumpFormatError(f"cannot read {p}: {exc.strerror or exc}") from None
    return parse(data, str(p))


__all__ = ["ETDump", "EtdumpFormatError", "Event", "EventKind", "Run", "load", "parse"]

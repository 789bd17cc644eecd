"""Domain errors: the CLI turns each into one "error: ..." line."""

from __future__ import annotations


class EtrtError(Exception):
    """Base of every error etrt reports to a user."""


class ExportError(EtrtError):
    """The model or graph cannot be turned into an etrt program."""


class ProgramFormatError(EtrtError):
    """A program file is not a valid etrt program."""


class SpecError(EtrtError):
    """A model spec given on the command line cannot be loaded."""


class MissingOpsError(ExportError):
    """Operators without an etrt kernel, refused by name; `listed` names them and their nodes,
    `ops` the operators alone.

    The advice names the Python argument; the CLI says its flag instead."""

    def __init__(self, listed: str, ops: tuple[str, ...] = ()) -> None:
        self.listed, self.ops = listed, ops
        super().__init__(self.advice("allow_missing_ops=True"))

    def advice(self, switch: str) -> str:
        return f"no etrt kernel for {self.listed}; pass {switch} to export anyway"

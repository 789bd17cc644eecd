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

"""etrt: export PyTorch models to etrt programs and run them with the etrt runtime."""

from __future__ import annotations

from ._version import find_version
from .errors import EtrtError, ExportError, ProgramFormatError, SpecError
from .exporter import export, export_program
from .program import Program, ProgramInfo, load_program_info

__version__ = find_version()

__all__ = [
    "EtrtError",
    "ExportError",
    "Program",
    "ProgramFormatError",
    "ProgramInfo",
    "SpecError",
    "__version__",
    "export",
    "export_program",
    "load_program_info",
]

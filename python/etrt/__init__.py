"""etrt: export PyTorch models to etrt programs and run them with the etrt runtime.

Submodules load on first use: `import etrt` needs neither torch (only the exporter does)
nor numpy (only the runtime binding does), so tools that merely locate the SDK through
the package's entry points (scikit-build-core, pkgconf) work in any environment.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import EtrtError, ExportError, ProgramFormatError, SpecError

_LAZY = {
    "export": "exporter",
    "export_program": "exporter",
    "quantize": "quantization",
    "Program": "program",
    "ProgramInfo": "program",
    "load_program_info": "program",
    "EtrtRuntimeError": "runtime",
    "Method": "runtime",
    "Module": "runtime",
    "isa_info": "runtime",
    "load": "runtime",
    "registered_backends": "runtime",
    "registered_kernels": "runtime",
    "set_max_isa": "runtime",
    "set_random_seed": "runtime",
}

__all__ = [
    "EtrtError",
    "ExportError",
    "ProgramFormatError",
    "SpecError",
    "__version__",
    *sorted(_LAZY),
]


# Submodules reachable as attributes without an import statement (etrt.data_map.save).
_SUBMODULES = ("data_map",)


def __getattr__(name: str) -> Any:
    if name == "__version__":  # found on first use: most imports never ask
        from ._version import find_version

        globals()[name] = version = find_version()
        return version
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'etrt' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES) | {"__version__"})

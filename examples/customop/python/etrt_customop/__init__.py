"""mylib::scaled_relu for etrt: `load()` registers the kernel into the process's one etrt
registry (libetrt.so of the etrt wheel, which libetrt_customop.so reaches through its
RUNPATH); `define_torch_op()` declares the op to torch.library so models using it export
(`etrt.export(..., allow_missing_ops=True)`: etrt's own op table does not list it)."""

# No `from __future__ import annotations`: torch.library reads the op's annotations as types.
import ctypes
from pathlib import Path
from typing import Any

OP = "mylib::scaled_relu"
_LIBRARY = Path(__file__).resolve().parent / "lib" / "libetrt_customop.so"
_handle: ctypes.CDLL | None = None


def load() -> ctypes.CDLL:
    """Loads etrt's libraries first (its binding), then this one: its static initializer
    registers the kernel. Idempotent."""
    global _handle
    if _handle is None:
        from etrt import _native

        _native.libraries()
        _handle = ctypes.CDLL(str(_LIBRARY), mode=ctypes.RTLD_GLOBAL)
    return _handle


def define_torch_op() -> Any:
    """torch.ops.mylib.scaled_relu (eager: alpha * relu(x)), defined once."""
    import torch

    if hasattr(torch.ops.mylib, "scaled_relu"):
        return torch.ops.mylib.scaled_relu

    @torch.library.custom_op(OP, mutates_args=())
    def scaled_relu(x: torch.Tensor, alpha: float) -> torch.Tensor:
        return alpha * torch.relu(x)

    @scaled_relu.register_fake
    def _(x: torch.Tensor, alpha: float) -> torch.Tensor:
        return torch.empty_like(x)

    return torch.ops.mylib.scaled_relu

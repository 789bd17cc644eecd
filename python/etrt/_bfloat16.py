"""bfloat16 elements in numpy, which has no such type: their 16 bits as uint16, and float32
(which holds every bfloat16 value exactly) for what users see. Rounds as ATen does."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def to_float32(bits: npt.NDArray[np.uint16]) -> npt.NDArray[np.float32]:
    """The values of bfloat16 elements given as their bits."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def from_float(values: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """The bits of `values` rounded to bfloat16 (to nearest, ties to even; NaN stays NaN)."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        bits[nan] = (((u[nan] >> 16) & 0x8000) | 0x7FC0).astype(np.uint16)
    return bits


def torch_bits(tensor: Any) -> npt.NDArray[np.uint16]:
    """The bits of a torch.bfloat16 CPU tensor, without a copy when it is contiguous."""
    import torch

    bits: npt.NDArray[np.uint16] = tensor.detach().cpu().contiguous().view(torch.int16).numpy()
    return bits.view(np.uint16)


def is_torch_bfloat16(value: object) -> bool:
    """True for a torch.bfloat16 tensor, without importing torch."""
    return type(value).__module__.startswith("torch") and str(getattr(value, "dtype", "")) == (
        "torch.bfloat16"
    )

"""The language-model schemes of etrt.quantize: torchao's quantize_ applied to a model's linears.

| scheme | torchao config |
| --- | --- |
| int8-weight | IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0)) |
| int4-weight | IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(group_size)) |
| int8-dynamic-int4-weight | Int8DynamicActivationIntxWeightConfig(int4, PerGroup(group_size)) |
| int8-dynamic | Int8DynamicActivationInt8WeightConfig() |

Weights are symmetric (zero points 0), as ExecuTorch's flows make them. nn.Embedding tables are
quantized too (weight-only, the same bits and groups; `embeddings=False` keeps them float32):
in a language model the token table is as large as the output layer. The model is copied
first: the caller's module keeps its float weights. etrt.export then folds each dequantize ->
linear into a weight-only kernel (weight_only.py).
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from .errors import ExportError

WEIGHT_SCHEMES: dict[str, str] = {
    "int8-weight": "weight-only int8: per-channel symmetric int8 weights, float32 activations",
    "int4-weight": "weight-only int4: group-wise symmetric int4 weights (group_size, default "
    "32), float32 activations",
    "int8-dynamic-int4-weight": "group-wise int4 weights, activations quantized to int8 per "
    "token at run time (torchao's 8da4w)",
    "int8-dynamic": "per-channel int8 weights, activations quantized to int8 per token at run "
    "time, int8 x int8 products summed in int32",
}
GROUP_SIZES = (32, 64, 128, 256)
_INT4: Any = getattr(torch, "int4")  # noqa: B009 (torch's stubs lack the sub-byte dtypes)
DEFAULT_GROUP_SIZE = 32


class WeightSchemeError(ExportError):
    """A weight-only scheme cannot be applied to the model."""


# The scale dtypes a weight-only scheme takes: torchao rounds each scale to it and computes the
# weights from the rounded scales, and etrt stores them so (2 bytes instead of 4 per group).
SCALE_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}
# Schemes whose weight scales torchao can round to 16 bits: the weight-only ones and 8da4w.
_SCALED = ("int8-weight", "int4-weight", "int8-dynamic-int4-weight")


def _config(scheme: str, group_size: int, scale_dtype: torch.dtype | None = None) -> Any:
    try:
        from torchao.quantization import (
            Int8DynamicActivationInt8WeightConfig,
            Int8DynamicActivationIntxWeightConfig,
            IntxWeightOnlyConfig,
        )
        from torchao.quantization.granularity import PerAxis, PerGroup
    except ImportError as exc:
        raise WeightSchemeError(
            f"scheme {scheme!r} needs torchao (pip install torchao): {exc}"
        ) from exc
    if scheme == "int8-weight":
        return IntxWeightOnlyConfig(
            weight_dtype=torch.int8, granularity=PerAxis(0), scale_dtype=scale_dtype
        )
    if scheme == "int4-weight":
        return IntxWeightOnlyConfig(
            weight_dtype=_INT4, granularity=PerGroup(group_size), scale_dtype=scale_dtype
        )
    if scheme == "int8-dynamic":
        return Int8DynamicActivationInt8WeightConfig()
    return Int8DynamicActivationIntxWeightConfig(
        weight_dtype=_INT4, weight_granularity=PerGroup(group_size), weight_scale_dtype=scale_dtype
    )


def _embedding_config(scheme: str, group_size: int, scale_dtype: torch.dtype | None) -> Any:
    from torchao.quantization import IntxWeightOnlyConfig
    from torchao.quantization.granularity import PerAxis, PerGroup

    if scheme in ("int8-weight", "int8-dynamic"):
        return IntxWeightOnlyConfig(
            weight_dtype=torch.int8, granularity=PerAxis(0), scale_dtype=scale_dtype
        )
    return IntxWeightOnlyConfig(
        weight_dtype=_INT4, granularity=PerGroup(group_size), scale_dtype=scale_dtype
    )


def quantize_weights(
    model: torch.nn.Module,
    scheme: str,
    group_size: int | None = None,
    *,
    embeddings: bool = True,
    scale_dtype: str | None = None,
) -> torch.nn.Module:
    """A copy of `model` whose nn.Linear (and nn.Embedding) layers carry torchao's quantized
    weights; `scale_dtype` ("bfloat16" or "float16": the weight-only schemes and 8da4w) rounds
    the weights' scales to 16 bits, as torchao's IntxWeightOnlyConfig(scale_dtype=...) and
    Int8DynamicActivationIntxWeightConfig(weight_scale_dtype=...) do."""
    dtype = None
    if scale_dtype is not None:
        if scale_dtype not in SCALE_DTYPES:
            raise WeightSchemeError(
                f"scale_dtype {scale_dtype!r} is not one of {', '.join(SCALE_DTYPES)}"
            )
        if scheme not in _SCALED:
            raise WeightSchemeError(
                f"scale_dtype applies to the schemes with int weights in groups or channels "
                f"({', '.join(_SCALED)}), not {scheme!r}"
            )
        dtype = SCALE_DTYPES[scale_dtype]
    grouped = scheme not in ("int8-weight", "int8-dynamic")
    size = DEFAULT_GROUP_SIZE if group_size is None else group_size
    if group_size is not None and not grouped:
        raise WeightSchemeError(f"scheme {scheme!r} is per channel: it takes no group_size")
    if grouped and size not in GROUP_SIZES:
        raise WeightSchemeError(
            f"group_size {size} is not one of {', '.join(map(str, GROUP_SIZES))}"
        )
    linears = [(name, m) for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    if not linears:
        raise WeightSchemeError(f"the model has no nn.Linear layers to quantize ({scheme})")
    tables = [
        (name, m) for name, m in model.named_modules() if isinstance(m, torch.nn.Embedding)
    ] if embeddings else []  # fmt: skip
    if grouped:
        columns = [(f"linear {n}", m.in_features) for n, m in linears]
        columns += [(f"embedding {n}", m.embedding_dim) for n, m in tables]
        for what, width in columns:
            if width % size:
                raise WeightSchemeError(
                    f"{what} has {width} input features, not a multiple of group_size {size}; "
                    "pick a group size that divides it"
                )
    config = _config(scheme, size, dtype)
    from torchao.quantization import quantize_

    copied = copy.deepcopy(model).eval()
    quantize_(copied, config)
    if tables:
        quantize_(
            copied,
            _embedding_config(scheme, size, dtype),
            filter_fn=lambda m, _: isinstance(m, torch.nn.Embedding),
        )
    return copied


__all__ = [
    "GROUP_SIZES",
    "SCALE_DTYPES",
    "WEIGHT_SCHEMES",
    "WeightSchemeError",
    "quantize_weights",
]

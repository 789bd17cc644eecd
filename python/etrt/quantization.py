"""etrt.quantize: a model quantized with PT2E, ready for etrt.export.

`quantize(model, example_inputs, scheme="int8")` traces the model, annotates it with an
XNNPACK-style quantizer (per-channel symmetric int8 weights, per-tensor affine int8
activations), calibrates the observers on `calibration` (each item a tuple of inputs; the
example inputs when none are given) and converts it: the result is the reference module
`convert_pt2e` returns, which etrt.export folds into integer kernels (quantized.py). This is
torchao's own recipe (torch 2.13 moved PT2E there); a program quantized by hand with
prepare_pt2e / convert_pt2e and any quantizer exports the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from .errors import ExportError
from .weight_schemes import WEIGHT_SCHEMES, quantize_weights

# scheme -> what it means, for messages and the docs
SCHEMES: dict[str, str] = {
    "int8": "PT2E static int8: per-channel symmetric int8 weights, per-tensor int8 activations",
    **WEIGHT_SCHEMES,
}


class QuantizeError(ExportError):
    """The model cannot be quantized with the scheme asked for."""


def _torchao() -> tuple[Any, Any, Any, Any]:
    try:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        from torchao.testing.pt2e._xnnpack_quantizer import (
            XNNPACKQuantizer,
            get_symmetric_quantization_config,
        )
    except ImportError as exc:
        raise QuantizeError(
            f"quantizing needs torchao (pip install torchao), which holds PT2E since torch 2.9: "
            f"{exc}"
        ) from exc
    return prepare_pt2e, convert_pt2e, XNNPACKQuantizer, get_symmetric_quantization_config


_SCALAR_OPS = (torch.ops.aten.add.Tensor, torch.ops.aten.mul.Tensor)


def _integer_arithmetic(model: torch.fx.GraphModule) -> dict[torch.fx.Node, tuple[Any, ...]]:
    """add/mul nodes with a number argument whose result is not floating point (index
    arithmetic, e.g. transformers' attention masks), with their arguments."""
    kept = {}
    for n in model.graph.nodes:
        val = n.meta.get("val")
        if n.op != "call_function" or n.target not in _SCALAR_OPS:
            continue
        if isinstance(val, torch.Tensor) and not val.dtype.is_floating_point:
            if not all(isinstance(a, torch.fx.Node) for a in n.args):
                kept[n] = n.args
    return kept


def _quantizer(quantizer_cls: Any) -> Any:
    """The XNNPACK-style quantizer, except that its scalar-to-tensor step (which makes every
    number of an add/mul a float32 tensor, so that it can carry an observer) leaves integer
    arithmetic alone: there, a float32 tensor would turn int64 indices into floats."""

    class Quantizer(quantizer_cls):  # type: ignore[misc]
        def transform_for_annotation(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
            kept = _integer_arithmetic(model)
            model = super().transform_for_annotation(model)
            for node, args in kept.items():
                made = [a for a in node.args if a not in args and isinstance(a, torch.fx.Node)]
                node.args = args
                for attr in made:
                    if attr.op == "get_attr" and not attr.users:
                        model.graph.erase_node(attr)
                        delattr(model, str(attr.target))
            model.recompile()
            return model

    return Quantizer()


def quantize(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    *,
    scheme: str = "int8",
    calibration: Iterable[tuple[Any, ...]] | None = None,
    group_size: int | None = None,
    embeddings: bool = True,
    scale_dtype: str | None = None,
) -> torch.nn.Module:
    """The quantized module of `model` to pass to etrt.export: PT2E's reference module for
    "int8", a copy with torchao-quantized linears for the weight schemes (weight_schemes.py;
    `group_size` for the int4 ones; `embeddings=False` keeps nn.Embedding tables float32;
    `scale_dtype="bfloat16"` / `"float16"` stores the weight-only schemes' scales in 16 bits)."""
    if scheme not in SCHEMES:
        known = ", ".join(f"{k!r} ({v})" for k, v in SCHEMES.items())
        raise QuantizeError(f"unknown quantization scheme {scheme!r}; etrt supports {known}")
    if scheme in WEIGHT_SCHEMES:
        return quantize_weights(
            model, scheme, group_size, embeddings=embeddings, scale_dtype=scale_dtype
        )
    if group_size is not None:
        raise QuantizeError(f"scheme {scheme!r} takes no group_size")
    if scale_dtype is not None:
        raise QuantizeError(f"scheme {scheme!r} takes no scale_dtype")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    prepare_pt2e, convert_pt2e, quantizer_cls, config = _torchao()
    try:
        traced = torch.export.export(model.eval(), tuple(example_inputs)).module()
    except Exception as exc:  # torch reports many exception types for untraceable models
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise QuantizeError(f"torch.export failed while quantizing ({scheme}): {first}") from exc
    quantizer = _quantizer(quantizer_cls).set_global(config(is_per_channel=True))
    prepared = prepare_pt2e(traced, quantizer)
    with torch.no_grad():
        for inputs in calibration if calibration is not None else [tuple(example_inputs)]:
            prepared(*((inputs,) if isinstance(inputs, torch.Tensor) else inputs))
    converted: torch.nn.Module = convert_pt2e(prepared)
    return converted

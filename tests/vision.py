"""torchvision's model zoo with random weights, importable beside the CPU build of torch.

The torchvision wheel's compiled ops link a CUDA build of torch, so its extension does not load
here; the model definitions are pure Python. Its import registers fake kernels for two ops of
that extension, which need their schemas declared first.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

_LIB: torch.library.Library | None = None


def declare_extension_ops() -> None:
    global _LIB
    if _LIB is not None:
        return
    try:
        torch.ops.torchvision.nms  # noqa: B018 (present when the extension loads)
        return
    except (AttributeError, RuntimeError):
        pass
    _LIB = torch.library.Library("torchvision", "DEF")
    for name in ("nms", "qnms"):
        _LIB.define(f"{name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")


def model(name: str) -> torch.nn.Module:
    """A torchvision classification model by name (resnet18, mobilenet_v3_small, ...), random
    weights, in eval mode."""
    declare_extension_ops()
    import torchvision.models

    factory: Callable[..., torch.nn.Module] = getattr(torchvision.models, name)
    torch.manual_seed(0)
    return factory(weights=None).eval()

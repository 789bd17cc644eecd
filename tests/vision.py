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


def live(
    model: torch.nn.Module, size: int = 224, gen: torch.Generator | None = None
) -> torch.nn.Module:
    """`model` with activations that stay alive through its depth, in eval mode.

    With torchvision's initial weights, deep nets in eval mode fade to zero (EfficientNet's
    features are ~1e-14, in the denormal range): a comparison says nothing and timings measure
    denormal arithmetic. Batch-norm statistics from one random batch and unit-scale linear
    layers keep them alive. `gen` draws the weights (one seeded with 1 when not given).
    """
    gen = gen if gen is not None else torch.Generator().manual_seed(1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Linear):
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * m.in_features**-0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.momentum = None  # the running statistics become the batch's
                m.reset_running_stats()
        model.train()
        model(torch.randn(4, 3, size, size, generator=gen))
    return model.eval()

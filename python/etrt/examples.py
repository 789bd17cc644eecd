"""Small models to try etrt with, shipped in the wheel: `python -m etrt export etrt.examples:mlp`.

Each factory follows the contract of `python -m etrt export MODULE:FACTORY`: it takes no
arguments and returns `(model, example_inputs)`, a torch.nn.Module in eval mode and the tuple
of tensors to trace it with (their shapes become the program's input shapes).
"""

from __future__ import annotations

import torch
from torch import nn


def mlp() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """784-256-10 with ReLU, one input of shape [1, 784] (an MNIST-sized classifier)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).eval()
    return model, (torch.randn(1, 784),)


def cnn() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Conv 1->16 3x3, ReLU, max-pool 2, Linear 16*14*14 -> 10, one input [1, 1, 28, 28]."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 14 * 14, 10),
    ).eval()
    return model, (torch.randn(1, 1, 28, 28),)

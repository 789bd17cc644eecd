"""The three reference models etrt must run, built deterministically (fixed seeds)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

MODEL_NAMES = ("mlp", "cnn", "transformer")


class MLP(nn.Module):
    """784-256-10 with ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = self.fc2(self.relu(self.fc1(x)))
        return y


class CNN(nn.Module):
    """Conv 1->16 3x3 (padding 1), ReLU, max-pool 2, flatten, Linear 16*14*14 -> 10."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 14 * 14, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.relu(self.conv(x)))
        y: torch.Tensor = self.fc(torch.flatten(x, 1))
        return y


class TransformerBlock(nn.Module):
    """Pre-norm block: LN, 4-head self-attention, residual, LN, GELU MLP 64->256->64, residual."""

    def __init__(self, d_model: int = 64, n_heads: int = 4, d_ff: int = 256) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        attn, _ = self.attn(h, h, h, need_weights=False)
        x = x + attn
        y: torch.Tensor = x + self.ff2(self.act(self.ff1(self.ln2(x))))
        return y


class MobileBlock(nn.Module):
    """A small vision block in MobileNetV3's shape: conv, hardswish, depthwise conv, a
    squeeze-excite gate (global average pool, 1x1 convs, sigmoid), max pool, global average pool,
    softmax, clamp, linear. Every XNNPACK node type the exporter writes appears in its delegate."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.act = nn.Hardswish()
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.squeeze = nn.Conv2d(8, 4, 1)
        self.excite = nn.Conv2d(4, 8, 1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.act(self.stem(x))
        y = torch.relu(self.depthwise(y))
        gate = torch.sigmoid(self.excite(torch.relu(self.squeeze(y.mean((2, 3), keepdim=True)))))
        y = self.pool(y * gate)
        # Softmax takes no output bounds, so the clamp after it stays a node of its own.
        y = torch.clamp(torch.softmax(y.mean((2, 3), keepdim=True).flatten(1), dim=-1), 0.0, 0.5)
        out: torch.Tensor = self.fc(y)
        return out


class MaskedSoftmax(nn.Module):
    """Softmax whose fully -inf rows give zeros, spelled out in the ops ATen decomposes
    attention's masking into (etrt keeps attention whole, so no model above uses them)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keep = torch.any(torch.logical_not(x.eq(-math.inf)), -1, keepdim=True)
        return torch.where(torch.logical_not(keep), torch.full_like(x, 0), torch.softmax(x, -1))


SEQ_LEN = 16
D_MODEL = 64

_FACTORIES: dict[str, tuple[Callable[[], nn.Module], Callable[[int], tuple[int, ...]]]] = {
    "mlp": (MLP, lambda b: (b, 784)),
    "cnn": (CNN, lambda b: (b, 1, 28, 28)),
    "transformer": (TransformerBlock, lambda b: (b, SEQ_LEN, D_MODEL)),
    # Not one of MODEL_NAMES (the suites run those three): for the delegate's node types.
    "mobile": (MobileBlock, lambda b: (b, 3, 16, 16)),
}


def make(name: str, batch: int = 1) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model in eval mode, example inputs) for `name`: same weights and inputs every call."""
    if name not in _FACTORIES:
        raise KeyError(f"unknown model {name!r}; expected one of {', '.join(_FACTORIES)}")
    factory, shape = _FACTORIES[name]
    torch.manual_seed(0)
    model = factory().eval()
    gen = torch.Generator().manual_seed(1234 + batch)
    x = torch.randn(shape(batch), generator=gen)
    return model, (x,)


# Factories for `python -m etrt export tests/models.py:<name>` (batch 1).
def mlp() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return make("mlp", 1)


def cnn() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return make("cnn", 1)


def transformer() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return make("transformer", 1)

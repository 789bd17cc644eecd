"""The three reference models etrt must run, built deterministically (fixed seeds)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

MODEL_NAMES = ("mlp", "cnn", "transformer")


class Fn(nn.Module):
    """A module that applies `fn` to its inputs: one operator, or a few, exported as written."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(*xs)


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


class ResBlock(nn.Module):
    """Convolutions with the epilogues etrt folds into them (fuse_conv.py): conv + relu; a 3x3
    Winograd layer + identity + relu (ResNet's block); a 1x1 layer + relu6; a depthwise layer +
    residual + hardtanh; a strided 3x3 layer + a downsampled residual computed after it + relu;
    a squeeze-excitation gate (1x1 layer on one pixel + relu); a 3x3 layer + silu (folded too);
    a 3x3 layer + clamp with only a maximum."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.conv = nn.Conv2d(16, 16, 3, padding=1)
        self.point = nn.Conv2d(16, 24, 1)
        self.depthwise = nn.Conv2d(24, 24, 3, padding=1, groups=24)
        self.down = nn.Conv2d(24, 32, 3, stride=2, padding=1)
        self.skip = nn.Conv2d(24, 32, 1, stride=2)
        self.mix = nn.Conv2d(32, 32, 3, padding=1)
        self.excite = nn.Conv2d(32, 32, 1)
        self.last = nn.Conv2d(32, 20, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.stem(x))
        y = torch.relu(self.conv(y) + y)
        y = nn.functional.relu6(self.point(y))
        y = nn.functional.hardtanh(self.depthwise(y) + y, -0.5, 2.0)
        y = torch.relu(self.down(y) + self.skip(y))
        y = nn.functional.silu(self.mix(y))
        y = y * torch.relu(self.excite(y.mean((2, 3), keepdim=True)))
        # The clamp's value is not the output: it may be computed channels-last.
        out: torch.Tensor = torch.clamp(self.last(y), max=0.25) * 2.0
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
    "resblock": (ResBlock, lambda b: (b, 3, 24, 24)),
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


class KVCacheAttention(nn.Module):
    """Causal self-attention over a static KV cache kept in buffers: each call writes its keys
    and values at `positions` (index_copy_) and attends to every cached position up to its own."""

    def __init__(self, d_model: int, n_heads: int, max_seq: int) -> None:
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        shape = (1, n_heads, max_seq, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        slots = torch.arange(self.k_cache.shape[2])
        mask = slots[None, :] <= positions[:, None]  # [t, max_seq]: causal over the cache
        y = nn.functional.scaled_dot_product_attention(q, self.k_cache, self.v_cache, mask)
        out: torch.Tensor = self.proj(y.transpose(1, 2).reshape(b, t, d))
        return out


class KVCacheDecoder(nn.Module):
    """A GPT-style decoder for token-by-token generation: forward(tokens [1, T] int64,
    positions [T] int64) -> logits [1, T, vocab]. The static KV cache lives in buffers the call
    updates, so a prompt runs once (prefill) and each new token costs one call of T = 1."""

    def __init__(
        self, vocab: int = 96, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
        max_seq: int = 64,
    ) -> None:  # fmt: skip
        super().__init__()
        self.max_seq = max_seq
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_seq, d_model)
        self.ln1 = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.attn = nn.ModuleList(
            KVCacheAttention(d_model, n_heads, max_seq) for _ in range(n_layers)
        )
        self.ln2 = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        width = 4 * d_model
        self.mlp = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, width), nn.GELU(), nn.Linear(width, d_model))
            for _ in range(n_layers)
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(positions)[None]
        for ln1, attn, ln2, mlp in zip(self.ln1, self.attn, self.ln2, self.mlp, strict=True):
            x = x + attn(ln1(x), positions)
            x = x + mlp(ln2(x))
        logits: torch.Tensor = self.head(self.ln_f(x))
        return logits


def kv_cache_decoder() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The decoder with seeded weights and an example prompt of 5 tokens."""
    torch.manual_seed(0)
    model = KVCacheDecoder().eval()
    return model, (torch.tensor([[3, 14, 15, 92, 65]]), torch.arange(5))


class StepCache(nn.Module):
    """State and dynamic shapes: a cache written at positions (in place), a step counter, a
    sequence dimension in [1, 7] with size arithmetic on it."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("cache", torch.zeros(8, 4))
        self.register_buffer("steps", torch.zeros(1, dtype=torch.int64))

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        self.cache.index_copy_(0, positions, self.proj(x))
        self.steps.add_(1)
        mask = torch.arange(8)[None, :] <= positions[:, None]
        scores = (x @ self.cache.t()).masked_fill(~mask, -1e9).softmax(-1)
        return (scores @ self.cache).view(x.shape[0] * 2, 2) + self.steps

"""Small models to try etrt with, shipped in the wheel: `python -m etrt export etrt.examples:mlp`.

Each factory follows the contract of `python -m etrt export MODULE:FACTORY`: it takes no
arguments and returns `(model, example_inputs)`, a torch.nn.Module in eval mode and the tuple
of tensors to trace it with (their shapes become the program's input shapes), or with a third
item, the dynamic shapes (`decoder`: any prompt length, for `examples/decode`).
"""

from __future__ import annotations

from typing import Any

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


class _CachedAttention(nn.Module):
    """Causal self-attention over a static KV cache in buffers: each call writes its keys and
    values at `positions` and attends to every cached slot up to its own position."""

    def __init__(self, width: int, heads: int, max_seq: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, width // heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        shape = (1, heads, max_seq, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        k_cache, v_cache = self.get_buffer("k_cache"), self.get_buffer("v_cache")
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k_cache.index_copy_(2, positions, k)
        v_cache.index_copy_(2, positions, v)
        mask = torch.arange(k_cache.shape[2])[None, :] <= positions[:, None]
        y = nn.functional.scaled_dot_product_attention(q, k_cache, v_cache, mask)
        out: torch.Tensor = self.proj(y.transpose(1, 2).reshape(b, t, d))
        return out


class Decoder(nn.Module):
    """A GPT-style decoder with a static KV cache: forward(tokens int64 [1, T], positions int64
    [T]) -> logits float [1, T, vocab], the contract of examples/decode."""

    def __init__(
        self, vocab: int = 96, width: int = 64, heads: int = 4, layers: int = 2, max_seq: int = 64
    ) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(max_seq, width)
        self.ln1 = nn.ModuleList(nn.LayerNorm(width) for _ in range(layers))
        self.attn = nn.ModuleList(_CachedAttention(width, heads, max_seq) for _ in range(layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(width) for _ in range(layers))
        self.mlp = nn.ModuleList(
            nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
            for _ in range(layers)
        )
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(positions)[None]
        for ln1, attn, ln2, mlp in zip(self.ln1, self.attn, self.ln2, self.mlp, strict=True):
            x = x + attn(ln1(x), positions)
            x = x + mlp(ln2(x))
        logits: torch.Tensor = self.head(self.ln_f(x))
        return logits


def decoder() -> tuple[nn.Module, tuple[torch.Tensor, ...], Any]:
    """The decoder above with seeded random weights (vocabulary 96, 64 cache slots), a prompt of
    5 tokens and a sequence dimension of 1 to 63 tokens: one program for the prompt and for each
    new token, as `examples/decode` runs it."""
    torch.manual_seed(0)
    seq = torch.export.Dim("seq", min=1, max=63)
    tokens, positions = torch.tensor([[3, 14, 15, 92, 65]]), torch.arange(5)
    return Decoder().eval(), (tokens, positions), ({1: seq}, {0: seq})

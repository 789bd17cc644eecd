"""Decoder-only language models with a static KV cache, for token-by-token generation.

GPT-2 and Llama come from transformers configs (random weights, nothing downloaded), wrapped as
transformers exports them for ExecuTorch (`TorchExportableModuleWithStaticCache`: the cache
lives in registered buffers the call updates); the third is models.KVCacheDecoder, written by
hand. Every one is called as forward(tokens [1, T] int64, positions [T] int64) -> logits
[1, T, vocab] and exported with T dynamic in [1, MAX_SEQ - 1]: one program runs the prompt
(prefill) and then each new token (decode).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import models
import numpy as np
import torch
import vision
from torch import nn

MAX_SEQ = 64  # cache slots; a sequence may grow to MAX_SEQ - 1 tokens
VOCAB = 128
NAMES = ("handwritten", "gpt2", "llama")
# Long suite only (tests/etrt_python/test_decoding.py): Mistral's sliding window (8 of the up to
# 29 cached tokens, so decoding steps attend to a window that moves along the cache) and Qwen2's
# biased query, key and value projections.
LONG_NAMES = ("mistral", "qwen2")

Step = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (tokens, positions) -> logits


class StaticCacheLM(nn.Module):
    """A transformers causal LM with its static cache, called positionally."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

        model.generation_config.cache_implementation = "static"
        self.inner = TorchExportableModuleWithStaticCache(
            model, batch_size=1, max_cache_len=MAX_SEQ
        )

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.inner(input_ids=tokens, cache_position=positions)
        return logits


def _transformers() -> Any:
    vision.declare_extension_ops()  # transformers imports torchvision
    import transformers

    return transformers


def _lively(model: nn.Module) -> nn.Module:
    """Weights large enough that greedy decoding wanders over the vocabulary: with the
    libraries' initial scale (std 0.02) every step picks the same token, and a comparison of
    such tokens says little."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=1.0 / m.weight.shape[-1] ** 0.5)
            elif type(m).__name__ == "Conv1D":  # GPT-2's linear layers
                nn.init.normal_(m.weight, std=1.0 / m.weight.shape[0] ** 0.5)
    return model


def gpt2() -> nn.Module:
    tf = _transformers()
    config = tf.GPT2Config(
        vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=MAX_SEQ,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return StaticCacheLM(_lively(tf.GPT2LMHeadModel(config).eval()))


def llama() -> nn.Module:
    tf = _transformers()
    config = tf.LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=128, max_position_embeddings=MAX_SEQ,
    )  # fmt: skip
    return StaticCacheLM(_lively(tf.LlamaForCausalLM(config).eval()))


def mistral() -> nn.Module:
    tf = _transformers()
    config = tf.MistralConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=128, max_position_embeddings=MAX_SEQ,
        sliding_window=8,
    )  # fmt: skip
    return StaticCacheLM(_lively(tf.MistralForCausalLM(config).eval()))


def qwen2() -> nn.Module:
    tf = _transformers()
    config = tf.Qwen2Config(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=128, max_position_embeddings=MAX_SEQ,
    )  # fmt: skip
    return StaticCacheLM(_lively(tf.Qwen2ForCausalLM(config).eval()))


def handwritten() -> nn.Module:
    return _lively(models.KVCacheDecoder(vocab=VOCAB, max_seq=MAX_SEQ).eval())


_FACTORIES: dict[str, Callable[[], nn.Module]] = {
    "handwritten": handwritten,
    "gpt2": gpt2,
    "llama": llama,
    "mistral": mistral,
    "qwen2": qwen2,
}


def make(name: str) -> tuple[nn.Module, nn.Module]:
    """(model to export, an independent copy for eager reference): same weights, separate
    caches (seed 0)."""
    torch.manual_seed(0)
    model = _FACTORIES[name]()
    return model, copy.deepcopy(model)


def example_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor([[1, 2, 3, 4]]), torch.arange(4)


def dynamic_shapes() -> tuple[dict[int, Any], dict[int, Any]]:
    seq = torch.export.Dim("seq", min=1, max=MAX_SEQ - 1)
    return {1: seq}, {0: seq}


def export(model: nn.Module, name: str, **kwargs: Any) -> Any:
    """The etrt program of decoder `model` (transformers' cache wrapper traces with dynamo)."""
    import etrt

    return etrt.export(
        model, example_inputs(), dynamic_shapes=dynamic_shapes(), strict=name != "handwritten",
        **kwargs,
    )  # fmt: skip


def eager_step(model: nn.Module) -> Step:
    def step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits: torch.Tensor = model(torch.from_numpy(tokens), torch.from_numpy(positions))
        return logits.numpy()

    return step


def greedy(step: Step, prompt: list[int], new_tokens: int) -> list[int]:
    """Greedy generation: the prompt in one call, then one call per new token."""
    tokens = list(prompt)
    logits = step(np.array([tokens], np.int64), np.arange(len(tokens), dtype=np.int64))
    out: list[int] = []
    for _ in range(new_tokens):
        nxt = int(np.argmax(logits[0, -1]))
        out.append(nxt)
        tokens.append(nxt)
        logits = step(np.array([[nxt]], np.int64), np.array([len(tokens) - 1], np.int64))
    return out

"""BERT, GPT-2 and Llama straight out of transformers, built from configs (random weights,
nothing downloaded), at three sizes: "test", tiny, for the library-model tests, and "small" and
"bench" for the forward-pass benchmark (benchmarks/transformer_forward.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import torch
import vision


@dataclass(frozen=True)
class Size:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int  # Llama's grouped-query attention
    intermediate: int
    seq: int  # tokens of the example inputs
    positions: int


SIZES = {
    "test": Size(vocab=100, hidden=32, layers=2, heads=2, kv_heads=2, intermediate=64, seq=8,
                 positions=32),
    # the forward-pass benchmark: a small on-device model, and one its matrix products dominate
    "small": Size(vocab=1000, hidden=128, layers=2, heads=2, kv_heads=2, intermediate=512,
                  seq=32, positions=128),
    "bench": Size(vocab=2000, hidden=256, layers=4, heads=4, kv_heads=2, intermediate=1024,
                  seq=128, positions=256),
}  # fmt: skip


def transformers() -> ModuleType:
    vision.declare_extension_ops()  # transformers imports torchvision
    import transformers as tf

    return tf


def inputs(
    name: str, size: str = "test", batch: int = 1, seed: int = 0
) -> tuple[torch.Tensor, ...]:
    """Token ids (and for BERT an attention mask whose last row ends in padding) from `seed`."""
    s = SIZES[size]
    ids = torch.randint(0, s.vocab, (batch, s.seq), generator=torch.Generator().manual_seed(seed))
    if name != "bert":
        return (ids,)
    mask = torch.ones_like(ids)
    mask[-1, s.seq - s.seq // 4 :] = 0
    return ids, mask


def bert(size: str = "test") -> torch.nn.Module:
    s, tf = SIZES[size], transformers()
    config = tf.BertConfig(
        vocab_size=s.vocab, hidden_size=s.hidden, num_hidden_layers=s.layers,
        num_attention_heads=s.heads, intermediate_size=s.intermediate,
        max_position_embeddings=s.positions,
    )  # fmt: skip
    torch.manual_seed(0)
    return tf.BertModel(config).eval()


def gpt2(size: str = "test") -> torch.nn.Module:
    """GPT2LMHeadModel without a cache."""
    s, tf = SIZES[size], transformers()
    config = tf.GPT2Config(
        vocab_size=s.vocab, n_embd=s.hidden, n_layer=s.layers, n_head=s.heads,
        n_positions=s.positions, n_inner=s.intermediate, use_cache=False, bos_token_id=0,
        eos_token_id=0,
    )  # fmt: skip
    torch.manual_seed(0)
    return tf.GPT2LMHeadModel(config).eval()


def llama(size: str = "test") -> torch.nn.Module:
    """LlamaForCausalLM without a cache, with grouped-query attention."""
    s, tf = SIZES[size], transformers()
    config = tf.LlamaConfig(
        vocab_size=s.vocab, hidden_size=s.hidden, num_hidden_layers=s.layers,
        num_attention_heads=2 * s.heads, num_key_value_heads=s.kv_heads,
        intermediate_size=s.intermediate, max_position_embeddings=s.positions, use_cache=False,
    )  # fmt: skip
    torch.manual_seed(0)
    return tf.LlamaForCausalLM(config).eval()


MODELS: dict[str, Callable[[str], torch.nn.Module]] = {"bert": bert, "gpt2": gpt2, "llama": llama}

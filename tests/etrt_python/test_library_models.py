"""Models straight out of transformers and torchvision, exported as they are (no wrapper, no
rewrite; random weights, nothing downloaded), run by the in-tree etrt_runner and compared with
eager PyTorch. Every operator they decompose into must have a kernel."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import etrt
import numpy as np
import pytest
import runtime_build
import torch
import vision
from torch.utils._pytree import tree_flatten

pytestmark = pytest.mark.slow


def _transformers():  # type: ignore[no-untyped-def]
    vision.declare_extension_ops()  # transformers imports torchvision
    import transformers

    return transformers


def bert() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    tf = _transformers()
    config = tf.BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=32,
    )  # fmt: skip
    ids = torch.randint(0, 100, (2, 8))
    return tf.BertModel(config).eval(), (ids, torch.ones_like(ids))


def gpt2() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    tf = _transformers()
    config = tf.GPT2Config(
        vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32, use_cache=False,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return tf.GPT2LMHeadModel(config).eval(), (torch.randint(0, 100, (1, 8)),)


def llama() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    tf = _transformers()
    config = tf.LlamaConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64, max_position_embeddings=32, use_cache=False,
    )  # fmt: skip
    return tf.LlamaForCausalLM(config).eval(), (torch.randint(0, 100, (1, 8)),)


Factory = Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]


def _vision(name: str, size: int = 224) -> Factory:
    def make() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
        model = vision.model(name)
        # With torchvision's initial weights, deep nets in eval mode fade to zero (EfficientNet's
        # features are ~1e-14) and ViT's head is all zeros: a comparison that says nothing.
        # Batch-norm statistics from one batch and unit-scale heads keep activations alive.
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, torch.nn.Linear):
                    torch.nn.init.normal_(m.weight, std=m.in_features**-0.5)
                    torch.nn.init.normal_(m.bias, std=0.1)
                if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                    m.momentum = None  # the running statistics become the batch's
                    m.reset_running_stats()
            model.train()
            model(torch.randn(4, 3, size, size))
            model.eval()
        return model, (torch.randn(1, 3, size, size),)

    return make


MODELS: dict[str, Factory] = {
    "bert": bert,
    "gpt2": gpt2,
    "llama": llama,
    "resnet18": _vision("resnet18"),
    "mobilenet_v3_small": _vision("mobilenet_v3_small"),
    "efficientnet_b0": _vision("efficientnet_b0"),
    "squeezenet1_1": _vision("squeezenet1_1"),
    "vit_b_16": _vision("vit_b_16"),
}


@pytest.fixture(scope="module")
def runner() -> Path:
    return runtime_build.tool_runner("release").exe


@pytest.mark.parametrize("name", list(MODELS))
def test_library_model_matches_eager(name: str, runner: Path, tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    program = etrt.export(model, inputs)
    assert program.missing_ops == ()
    path = program.save(tmp_path / f"{name}.etrt")
    (tmp_path / "in.bin").write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    proc = subprocess.run(
        [str(runner), str(path), "--inputs", str(tmp_path / "in.bin"),
         "--outputs", str(tmp_path / "out.bin")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with torch.no_grad():
        expected = [t.numpy() for t in tree_flatten(model(*inputs))[0]]
    raw = (tmp_path / "out.bin").read_bytes()
    assert len(raw) == sum(e.nbytes for e in expected), "outputs differ from eager's in number"
    for i, want in enumerate(expected):
        got = np.frombuffer(raw[: want.nbytes], dtype=want.dtype).reshape(want.shape)
        raw = raw[want.nbytes :]
        scale = float(np.abs(want).max())
        assert scale > 1e-2, f"{name} output {i} is all but zero: the comparison would say nothing"
        err = float(np.abs(got.astype(np.float64) - want).max()) / scale
        print(f"{name} output {i} {want.shape}: max error {err:.2e} of max |eager| {scale:.3g}")
        assert err < 1e-4, f"{name} output {i}: relative error {err}"

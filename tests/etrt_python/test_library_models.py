"""Models straight out of transformers and torchvision, exported as they are (no wrapper, no
rewrite; random weights, nothing downloaded), run by the in-tree etrt_runner and compared with
eager PyTorch. Every operator they decompose into must have a kernel."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import etrt
import numpy as np
import pytest
import runtime_build
import torch
import transformer_models
import vision
from suites import gate_subset
from torch.utils._pytree import tree_flatten

pytestmark = [pytest.mark.slow, pytest.mark.models]


@dataclass(frozen=True)
class LibraryModel:
    """A library's model and its inputs drawn from a seed: the program is exported with seed 0's
    inputs and run on seed 1's, so nothing the trace saw of its example inputs (token ids,
    padding, pixel values) can make a wrong program pass."""

    model: Callable[[], torch.nn.Module]
    inputs: Callable[[int], tuple[torch.Tensor, ...]]


def _transformer(name: str) -> LibraryModel:
    return LibraryModel(
        lambda: transformer_models.MODELS[name]("test"),
        lambda seed: transformer_models.inputs(name, "test", 2, seed),
    )


def _vision(name: str, size: int = 224) -> LibraryModel:
    def make() -> torch.nn.Module:
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
        return model

    def images(seed: int) -> tuple[torch.Tensor, ...]:
        return (torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(seed)),)

    return LibraryModel(make, images)


MODELS: dict[str, LibraryModel] = {
    "bert": _transformer("bert"),
    "gpt2": _transformer("gpt2"),
    "llama": _transformer("llama"),
    "resnet18": _vision("resnet18"),
    "mobilenet_v3_small": _vision("mobilenet_v3_small"),
    "efficientnet_b0": _vision("efficientnet_b0"),
    "squeezenet1_1": _vision("squeezenet1_1"),
    "vit_b_16": _vision("vit_b_16"),
    # More torchvision families, at 96x96: squeeze-excitation with SiLU or sigmoid after 1x1
    # layers (RegNetY, EfficientNetV2), hardswish/hardsigmoid (MobileNetV3-large), channel
    # shuffles, LayerNorm and GELU (ConvNeXt), inception branches (GoogLeNet).
    **{
        name: _vision(name, 96)
        for name in (
            "regnet_y_400mf",
            "efficientnet_v2_s",
            "mobilenet_v3_large",
            "convnext_tiny",
            "shufflenet_v2_x1_0",
            "mnasnet0_5",
            "googlenet",
        )
    },
}


# Ops the models compute positions and rotary tables with, which wrappers that precompute
# positions used to hide: the programs hold them, so nothing was rewritten on the way.
OWN_OPS = {
    "bert": {"aten::gather", "aten::embedding"},
    "gpt2": {"aten::cumsum", "aten::embedding"},
    "llama": {"aten::cumsum", "aten::cos", "aten::sin", "aten::embedding"},
}
# Written-out activations export folds (python/etrt/fuse_gelu.py): what must be there, and gone.
FOLDED = {"gpt2": ({"aten::gelu"}, {"aten::tanh", "aten::pow.Tensor_Scalar"})}


@pytest.fixture(scope="module")
def runner() -> Path:
    return runtime_build.tool_runner("release").exe


@pytest.mark.parametrize("name", gate_subset(MODELS, {"bert"}))
def test_library_model_matches_eager(name: str, runner: Path, tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, example, inputs = MODELS[name].model(), MODELS[name].inputs(0), MODELS[name].inputs(1)
    program = etrt.export(model, example)  # the library's model itself: no wrapper, no rewrite
    assert program.missing_ops == ()
    assert OWN_OPS.get(name, set()) <= set(program.operator_names), program.operator_names
    present, gone = FOLDED.get(name, (set(), set()))
    assert present <= set(program.operator_names) and not gone & set(program.operator_names)
    assert not all(torch.equal(a, b) for a, b in zip(example, inputs, strict=True))
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


def test_a_model_returning_its_kv_cache_is_refused_with_what_to_do() -> None:
    # transformers' default (use_cache=True) returns a Cache object torch.export cannot flatten.
    model = transformer_models.MODELS["llama"]("test")
    model.config.use_cache = True
    with pytest.raises(etrt.ExportError, match=r"KV cache: export it with use_cache=False"):
        etrt.export(model, transformer_models.inputs("llama"))


# transformers models that spell the tanh GELU in other ways than GPT-2's gelu_new: BLOOM's
# bloom_gelu_forward (x * 0.5 * (1 + tanh(0.79788456 * x * (1 + 0.044715 * x * x)))), GPT-J's,
# CodeGen's, Phi's and GPT-Neo's NewGELU through their own blocks. Each must fold into one
# aten::gelu (no tanh left) and still match eager. BLOOM, the furthest from gelu_new, in the gate.
TANH_GELU_MODELS: dict[str, tuple[str, str, dict[str, object]]] = {
    "bloom": ("BloomModel", "BloomConfig", {"hidden_size": 64, "n_layer": 2, "n_head": 4}),
    "gptj": (
        "GPTJModel",
        "GPTJConfig",
        {"n_embd": 64, "n_layer": 2, "n_head": 4, "rotary_dim": 8, "n_positions": 64},
    ),
    "codegen": (
        "CodeGenModel",
        "CodeGenConfig",
        {"n_embd": 64, "n_layer": 2, "n_head": 4, "rotary_dim": 8, "n_positions": 64, "n_ctx": 64},
    ),
    "phi": (
        "PhiModel",
        "PhiConfig",
        {
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "max_position_embeddings": 64,
        },
    ),
    "gpt_neo": (
        "GPTNeoModel",
        "GPTNeoConfig",
        {
            "hidden_size": 64,
            "num_layers": 2,
            "num_heads": 4,
            "window_size": 8,
            "attention_types": [[["global", "local"], 1]],
            "max_position_embeddings": 64,
        },
    ),
}


class _LastHidden(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, use_cache=False, return_dict=False)[0]


@pytest.mark.parametrize("name", gate_subset(TANH_GELU_MODELS, {"bloom"}))
def test_tanh_gelu_of_each_architecture_folds_and_matches_eager(name: str, tmp_path: Path) -> None:
    runtime_build.python_runtime()
    torch.manual_seed(0)
    tf = transformer_models.transformers()
    model_class, config_class, options = TANH_GELU_MODELS[name]
    config = getattr(tf, config_class)(vocab_size=100, **options)
    model = _LastHidden(getattr(tf, model_class)(config).eval())
    example = torch.randint(0, 100, (2, 16), generator=torch.Generator().manual_seed(0))
    ids = torch.randint(0, 100, (2, 16), generator=torch.Generator().manual_seed(1))
    program = etrt.export(model, (example,))
    assert "aten::gelu" in program.operator_names and "aten::tanh" not in program.operator_names
    (got,) = etrt.load(program.save(tmp_path / f"{name}.etrt")).method()(ids.numpy())
    with torch.no_grad():
        want = model(ids).numpy()
    scale = float(np.abs(want).max())
    assert scale > 1e-2
    err = float(np.abs(np.asarray(got, dtype=np.float64) - want).max()) / scale
    assert err < 1e-5, f"{name}: relative error {err}"

"""Models straight out of transformers and torchvision, exported as they are (no wrapper, no
rewrite; random weights, nothing downloaded), run by the in-tree etrt_runner and compared with
eager PyTorch. Every operator they decompose into must have a kernel."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
                    if m.bias is not None:  # Swin's and MaxViT's have none in places
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
            # A batch norm that stays (after each concatenation), average pooling (DenseNet);
            # adaptive average pooling that widens 3x3 to 6x6 / 7x7 (AlexNet, VGG-BN); grouped
            # 3x3 convolutions (ResNeXt); shifted windows: roll, masks, relative bias (Swin-T)
            "densenet121",
            "alexnet",
            "vgg11_bn",
            "resnext50_32x4d",
            "swin_t",
        )
    },
    # MaxViT's block and grid attention partition 224x224 into 7x7 windows: nothing smaller fits
    "maxvit_t": _vision("maxvit_t"),
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


@pytest.mark.parametrize(
    "implementation", ["grouped_mm", pytest.param("batched_mm", marks=pytest.mark.long)]
)
def test_a_mixture_of_experts_runs_as_transformers_builds_it(
    tmp_path: Path, implementation: str
) -> None:
    """transformers' MoE layers default to grouped_mm, on CPU its own custom op
    (transformers::grouped_mm_fallback) over rows sorted by expert, counted with aten::histc
    and offset by a cumsum to int32: Mixtral (4 experts, top 2) exported so, with a dynamic
    sequence length, matches eager at lengths it was not exported with; batched_mm too."""
    runtime_build.python_runtime()
    tf = transformer_models.transformers()
    torch.manual_seed(0)
    config = tf.MixtralConfig(
        vocab_size=100, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
        max_position_embeddings=64, use_cache=False,
    )  # fmt: skip
    model = tf.MixtralForCausalLM(config).eval()
    model.config._experts_implementation = implementation
    example = torch.randint(0, 100, (2, 12), generator=torch.Generator().manual_seed(0))
    seq = torch.export.Dim("seq", min=2, max=32)
    program = etrt.export(model, (example,), dynamic_shapes=({1: seq},))
    if implementation == "grouped_mm":
        ops = set(program.operator_names)
        assert {"transformers::grouped_mm_fallback", "aten::histc"} <= ops, ops
    method = etrt.load(program.save(tmp_path / "mixtral.etrt")).method()
    for seed, length in ((1, 5), (2, 31)):
        ids = torch.randint(0, 100, (2, length), generator=torch.Generator().manual_seed(seed))
        got = method(ids.numpy())[0]
        with torch.no_grad():
            want = model(ids).logits.numpy()
        err = float(np.abs(np.asarray(got, dtype=np.float64) - want).max() / np.abs(want).max())
        assert err < 1e-4, (length, err)


class _Experts(torch.nn.Module):
    """transformers' grouped product alone, its weights stored (experts, out, in) and read
    through a transposed view, as an is_transposed experts layer does."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 6, 8))

    def forward(self, x: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
        weight = self.weight.transpose(-2, -1)
        return torch.ops.transformers.grouped_mm_fallback(x, weight, offs)  # type: ignore[no-any-return]


def test_the_experts_product_follows_transformers_loop(tmp_path: Path) -> None:
    """transformers::grouped_mm_fallback: rows in groups ending at `offs`, an empty group
    skipped, rows past the last offset zero, as transformers' Python loop computes them."""
    runtime_build.python_runtime()
    transformer_models.transformers()
    import transformers.integrations.moe  # noqa: F401  (registers the op)

    torch.manual_seed(0)
    model = _Experts().eval()
    x = torch.randn(11, 8)
    example = (x, torch.tensor([3, 3, 7, 9]))
    method = etrt.load(etrt.export(model, example).save(tmp_path / "experts.etrt")).method()
    for offs in ([3, 3, 7, 9], [0, 5, 11, 11], [0, 0, 0, 0], [2, 4, 6, 8]):
        counts = torch.tensor(offs)
        got = np.asarray(method(x.numpy(), counts.numpy())[0])
        with torch.no_grad():
            want = model(x, counts).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(offs))
        assert not got[offs[-1] :].any(), offs


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


# More transformers architectures from small configs (hidden 64, 2 layers, 12 tokens, batch 2,
# the last row padded where there is a mask), each for what it adds over BERT, GPT-2 and Llama.
# Called with keywords through _First (the model's first output: logits, else the last hidden
# state), exported with seed 0's inputs and run on seed 1's in this process.
_TEXT = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "intermediate_size": 128, "max_position_embeddings": 64}  # fmt: skip
_DECODER = {**_TEXT, "num_key_value_heads": 2, "use_cache": False}
ARCHITECTURES: dict[str, tuple[str, str, dict[str, Any], tuple[str, ...]]] = {
    # disentangled attention: log-bucketed relative positions gathered content-to-position and back
    "deberta_v2": (
        "DebertaV2Model",
        "DebertaV2Config",
        {
            **_TEXT,
            "relative_attention": True,
            "position_buckets": 16,
            "pos_att_type": ["p2c", "c2p"],
        },
        ("input_ids", "attention_mask"),
    ),
    # position ids sliced from a buffer and expanded to the batch (a stride-0 index view), the
    # mask from the count of padding ids (2 here, drawn among the tokens)
    "flaubert": (
        "FlaubertModel",
        "FlaubertConfig",
        {"emb_dim": 64, "n_layers": 2, "n_heads": 4, "max_position_embeddings": 64},
        ("input_ids",),
    ),
    # encoder-decoder: bucketed relative bias, cross-attention over the padded encoder output
    "t5": (
        "T5ForConditionalGeneration",
        "T5Config",
        {
            "d_model": 64,
            "d_kv": 16,
            "d_ff": 128,
            "num_layers": 2,
            "num_heads": 4,
            "decoder_start_token_id": 0,
            "use_cache": False,
        },
        ("input_ids", "attention_mask", "decoder_input_ids"),
    ),
    # a causal mask narrowed to a sliding window of 8 of the 12 tokens
    "mistral": (
        "MistralForCausalLM",
        "MistralConfig",
        {**_DECODER, "sliding_window": 8},
        ("input_ids",),
    ),
    # tanh soft-capping of attention scores and logits, alternating sliding windows
    "gemma2": (
        "Gemma2ForCausalLM",
        "Gemma2Config",
        {**_DECODER, "head_dim": 16, "sliding_window": 8},
        ("input_ids",),
    ),
    # rotary embedding on a quarter of each head
    "gpt_neox": (
        "GPTNeoXForCausalLM",
        "GPTNeoXConfig",
        {**_TEXT, "use_cache": False},
        ("input_ids",),
    ),
    # a 1-D convolution front end over mel frames, a sinusoidal table
    "whisper": (
        "WhisperForAudioClassification",
        "WhisperConfig",
        {
            "d_model": 64,
            "encoder_layers": 2,
            "decoder_layers": 2,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 128,
            "decoder_ffn_dim": 128,
            "max_source_positions": 16,
            "pad_token_id": 0,
            "bos_token_id": 0,
            "eos_token_id": 0,
            "decoder_start_token_id": 0,
        },
        ("input_features",),
    ),
    # a strided 1-D convolution stack with group norm, a grouped weight-normed positional one
    "wav2vec2": (
        "Wav2Vec2Model",
        "Wav2Vec2Config",
        {
            **_TEXT,
            "conv_dim": (32, 32, 32),
            "conv_stride": (5, 2, 2),
            "conv_kernel": (10, 3, 3),
            "num_conv_pos_embeddings": 16,
            "num_conv_pos_embedding_groups": 4,
        },
        ("input_values",),
    ),
    # both towers: causal text attention pooled at the end-of-text token (argmax), quick GELU
    "clip": (
        "CLIPModel",
        "CLIPConfig",
        {
            "text_config": _TEXT,
            "projection_dim": 32,
            "vision_config": {**_TEXT, "image_size": 32, "patch_size": 8},
        },
        ("input_ids", "attention_mask", "pixel_values"),
    ),
    # a relative position bias table gathered per window
    "beit": (
        "BeitModel",
        "BeitConfig",
        {**_TEXT, "image_size": 32, "patch_size": 8, "use_relative_position_bias": True},
        ("pixel_values",),
    ),
    # convolutions around transformers over unfolded 2x2 patches (reshapes, transposes)
    "mobilevit": ("MobileViTModel", "MobileViTConfig", {"image_size": 64}, ("pixel_values",)),
    # overlapping patch embeddings, spatial-reduction attention, a bilinear decode head
    "segformer": (
        "SegformerForSemanticSegmentation",
        "SegformerConfig",
        {"image_size": 64},
        ("pixel_values",),
    ),
    # global response normalization: an L2 norm over height and width
    "convnextv2": (
        "ConvNextV2Model",
        "ConvNextV2Config",
        {"image_size": 64, "hidden_sizes": [16, 32], "depths": [1, 1], "num_stages": 2},
        ("pixel_values",),
    ),
    # token mixing by a 2-D FFT (its real part): products with cosine and sine tables
    "fnet": ("FNetModel", "FNetConfig", {**_TEXT}, ("input_ids",)),
    # rotary factors as complex numbers (torch.polar, view_as_complex: float32 pairs), latent
    # attention's low-rank query and key-value projections, shared and routed experts
    "deepseek_v2": (
        "DeepseekV2Model",
        "DeepseekV2Config",
        {
            **_DECODER,
            "num_key_value_heads": 4,
            "qk_rope_head_dim": 8,
            "qk_nope_head_dim": 16,
            "qk_head_dim": 24,
            "head_dim": 8,
            "v_head_dim": 16,
            "kv_lora_rank": 32,
            "q_lora_rank": 32,
            "n_routed_experts": 4,
            "num_experts_per_tok": 2,
            "moe_intermediate_size": 32,
            "n_shared_experts": 1,
            "n_group": 1,
            "topk_group": 1,
            "first_k_dense_replace": 1,
        },
        ("input_ids", "attention_mask"),
    ),
}


class _First(torch.nn.Module):
    def __init__(self, model: torch.nn.Module, names: tuple[str, ...]) -> None:
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.model(**dict(zip(self.names, args, strict=True)))[0]
        return out


def _architecture_inputs(
    names: tuple[str, ...], options: dict[str, Any], seed: int
) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    size = options.get("vision_config", options).get("image_size", 32)
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[-1, 9:] = 0
    make = {
        "input_ids": lambda: torch.randint(2, 100, (2, 12), generator=gen),
        "attention_mask": lambda: mask,
        "decoder_input_ids": lambda: torch.randint(2, 100, (2, 7), generator=gen),
        "pixel_values": lambda: torch.randn(2, 3, size, size, generator=gen),
        "input_features": lambda: torch.randn(2, 80, 32, generator=gen),
        "input_values": lambda: torch.randn(2, 1600, generator=gen),
    }
    return tuple(make[name]() for name in names)


@pytest.mark.parametrize("name", gate_subset(ARCHITECTURES, {"deepseek_v2", "fnet"}))
def test_transformers_architecture_matches_eager(name: str, tmp_path: Path) -> None:
    runtime_build.python_runtime()
    tf = transformer_models.transformers()
    model_class, config_class, options, names = ARCHITECTURES[name]
    torch.manual_seed(0)
    config = getattr(tf, config_class)(vocab_size=100, **options)
    model = _First(getattr(tf, model_class)(config), names)
    if any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        with torch.no_grad():  # batch-norm statistics from one batch, as _vision's
            for m in model.modules():
                if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                    m.momentum = None
                    m.reset_running_stats()
            model.train()
            model(*_architecture_inputs(names, options, 2))
    model.eval()
    example, inputs = (_architecture_inputs(names, options, seed) for seed in (0, 1))
    program = etrt.export(model, example)
    assert program.missing_ops == ()
    got = etrt.load(program.save(tmp_path / f"{name}.etrt")).method()(*(t.numpy() for t in inputs))
    with torch.no_grad():
        want = model(*inputs).numpy()
    scale = float(np.abs(want).max())
    assert scale > 1e-2, f"{name}: the output is all but zero, the comparison would say nothing"
    err = float(np.abs(np.asarray(got[0], dtype=np.float64) - want).max()) / scale
    print(f"{name} {want.shape}: max error {err:.2e} of max |eager| {scale:.3g}")
    assert err < 1e-4, f"{name}: relative error {err}"

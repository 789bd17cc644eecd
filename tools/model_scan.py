"""Sweep of library models through etrt: every architecture of a list, built from random weights,
exported as it is, run by the in-process runtime and compared with eager PyTorch.

    python tools/model_scan.py transformers              # the curated list below
    python tools/model_scan.py transformers --all        # every model type transformers knows
    python tools/model_scan.py torchvision               # every torchvision model up to 90M params
    python tools/model_scan.py transformers flaubert gpt2:lm --markdown build/scan.md

transformers models come from `AutoConfig.for_model(type)` narrowed to hidden 64, 2 layers, 4
heads (`:lm` builds AutoModelForCausalLM, else AutoModel), called with two batches of 12 token
ids, 64x64 images, 1600 audio samples or 80 mel bins by the model's main input; the program is
exported from seed 0's inputs and run on seed 1's. Architectures this generic config or these
inputs do not fit take config attributes, inputs and the compared output from OVERRIDES, by type.
torchvision models run at 96x96 (224 for the transformers among them, 16 frames of 112x112 for
video), batch-norm statistics from one batch.

Each model runs in its own process (a crash or a hang is that model's result) and ends as one of:
OK (within 1e-4 of eager's largest output), ILL-CONDITIONED (further from eager, but no more than
twice as far from the float64 computation as eager float32 is: deep random nets whose
activations grow), MISMATCH, RUN (etrt's runtime failed), REFUSED (etrt's exporter named what it
does not run), UNEXPORTABLE (torch.export itself failed), RANDOM (eager differs from itself:
random masking or sampling inside forward) or SETUP (the generic small config or inputs do not
fit this architecture; a limit of the scan, not of etrt). The exit status is 1 when any model
ends MISMATCH or RUN. No network: nothing is downloaded.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

TRANSFORMERS = (
    # encoders
    "albert bert-generation big_bird camembert canine convbert data2vec-text deberta distilbert "
    "electra ernie esm flaubert funnel ibert layoutlm luke megatron-bert mobilebert modernbert "
    "mpnet mra nystromformer rembert roberta roberta-prelayernorm roc_bert roformer xlm "
    "xlm-roberta xlnet yoso nomic_bert eurobert "
    # decoders
    "bloom:lm codegen:lm cohere:lm cohere2:lm ctrl:lm falcon:lm gemma:lm gemma3_text:lm glm:lm "
    "glm4:lm gpt2:lm gpt_bigcode:lm gpt_neo:lm gptj:lm granite:lm helium:lm llama:lm mpt:lm "
    "olmo:lm olmo2:lm opt:lm persimmon:lm phi:lm phi3:lm qwen2:lm qwen3:lm stablelm:lm "
    "starcoder2:lm xglm:lm biogpt:lm openai-gpt:lm smollm3:lm exaone4:lm ernie4_5:lm "
    "nemotron:lm mamba:lm rwkv:lm recurrent_gemma:lm falcon_mamba:lm lfm2:lm bitnet:lm "
    "diffllama:lm apertus:lm arcee:lm seed_oss:lm granitemoe:lm modernbert-decoder:lm "
    # mixture-of-experts (grouped_mm) and hybrid linear-attention decoders
    "mixtral:lm olmoe:lm qwen2_moe:lm qwen3_next:lm gpt_oss:lm jamba:lm olmo_hybrid:lm "
    "qwen3_5_text:lm "
    # encoder-decoders
    "bart mbart pegasus marian blenderbot blenderbot-small m2m_100 mt5 umt5 prophetnet plbart mvp "
    # vision
    "vit deit dinov2 dinov2_with_registers beit data2vec-vision bit cvt efficientnet focalnet glpn "
    "hiera ijepa levit mobilenet_v1 mobilenet_v2 mobilevitv2 poolformer pvt pvt_v2 regnet resnet "
    "swiftformer vit_msn yolos dpt textnet siglip_vision_model clip_vision_model vitdet "
    "conditional_detr detr "
    # audio
    "hubert wavlm sew sew-d unispeech unispeech-sat data2vec-audio wav2vec2-conformer "
    # through OVERRIDES below: latent attention, Mamba-2 mixers, per-layer configs, complex
    # rotary factors and FFTs, float64 tables, video, time series, codecs
    "ministral:lm hunyuan_v1_dense:lm minicpm3:lm zamba2:lm bamba:lm mamba2:lm "
    "granitemoehybrid:lm xlstm:lm deepseek_v2:lm deepseek_v3:lm youtu:lm dots1:lm gemma4_text:lm "
    "embedding_gemma2_text squeezebert esmc lilt bros fnet convnext convnextv2 hgnet_v2 whisper "
    "speech_to_text moonshine wav2vec2-bert patchtst patchtsmixer timesfm timesformer videomae "
    "vivit audio-spectrogram-transformer dac univnet speecht5 rt_detr d_fine efficientloftr "
    "sapiens2"
).split()

SMALL = {
    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
    "max_position_embeddings": 64, "vocab_size": 100, "d_model": 64, "encoder_layers": 2,
    "decoder_layers": 2, "num_layers": 2, "n_layer": 2, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "n_head": 4, "num_heads": 4, "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128, "d_ff": 128, "n_inner": 128, "n_embd": 64, "n_positions": 64,
    "num_key_value_heads": 2, "head_dim": 16, "rotary_dim": 8, "use_cache": False,
    "pad_token_id": 0,
}  # fmt: skip


def _sub(config: str, attrs: dict[str, Any]) -> dict[str, Any]:
    """`attrs` as OVERRIDES keys of the sub-config `config` ("backbone_config.depths")."""
    return {f"{config}.{key}": value for key, value in attrs.items()}


# Shared blocks of OVERRIDES. Multi-head latent attention (DeepSeek): head_dim and qk_head_dim
# are derived when the config is built, so they are set with the sizes they derive from.
MLA = {
    "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "qk_head_dim": 24, "head_dim": 8,
    "v_head_dim": 16, "kv_lora_rank": 32, "q_lora_rank": 32, "num_key_value_heads": 4,
}  # fmt: skip
MOE = {  # DeepSeek-style experts: the second layer routes over 4 of them
    "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "n_shared_experts": 1, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1,
}  # fmt: skip
MAMBA2 = {  # Mamba-2 mixers: heads x head dim = expand x hidden
    "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_expand": 2, "mamba_n_groups": 1,
    "mamba_d_state": 16, "mamba_chunk_size": 16,
}  # fmt: skip
HGNET = {  # HGNet-V2 (hgnet_v2, D-FINE's backbone)
    "embedding_size": 16, "stem_channels": [3, 16, 16], "depths": [1, 1, 1, 1],
    "hidden_sizes": [32, 64, 128, 128], "stage_in_channels": [16, 32, 64, 128],
    "stage_mid_channels": [16, 32, 32, 64], "stage_out_channels": [32, 64, 128, 128],
    "stage_num_blocks": [1, 1, 1, 1], "stage_numb_of_layers": [2, 2, 2, 2],
}  # fmt: skip
# the RT-DETR family's encoder and decoder, fewer queries than a 64x64 image has anchors
DETR = {"encoder_hidden_dim": 64, "decoder_in_channels": [64, 64, 64], "num_queries": 16}
VIDEO = {
    "num_frames": 4, "image_size": 32, "patch_size": 8,
    "inputs": {"pixel_values": (2, 4, 3, 32, 32)},
}  # fmt: skip

# By model type: config attributes set after SMALL, in order ("a.b": attribute b of sub-config
# a); "inputs": input name -> shape, added to or replacing the main input (names ending in _ids
# get token ids, "bbox" ordered boxes in 0..1000, a (shape, value) pair a constant, others
# normal samples); "output": the output compared, by name, where it is not the first.
OVERRIDES: dict[str, dict[str, Any]] = {
    # decoders
    "ministral": {"head_dim": 16},
    "hunyuan_v1_dense": {"head_dim": 16},
    "minicpm3": MLA,
    "youtu": MLA,
    "deepseek_v2": {**MLA, **MOE},
    "deepseek_v3": {**MLA, **MOE},
    "dots1": MOE,
    "xlstm": {"embedding_dim": 64, "num_blocks": 2},
    "mamba2": {
        "num_heads": 4, "head_dim": 32, "n_groups": 1, "state_size": 16, "chunk_size": 16,
        "time_step_rank": 4,
    },
    "bamba": {**MAMBA2, "attn_layer_indices": [1]},
    "granitemoehybrid": {
        **MAMBA2, "layer_types": ["linear_attention", "full_attention"],
        "num_local_experts": 4, "shared_intermediate_size": 64,
    },
    "zamba2": {
        "n_mamba_heads": 4, "mamba_headdim": 32, "mamba_ngroups": 1, "mamba_d_state": 16,
        "chunk_size": 16, "attention_hidden_size": 128, "attention_head_dim": 32,
        "kv_channels": 16, "num_query_groups": 4,
        "layers_block_type": ["linear_attention", "hybrid"], "hybrid_layer_ids": [1],
    },
    # heterogeneous: a sliding-window layer, then a full-attention layer with wider heads
    "gemma4_text": {
        "layer_types": ["sliding_attention", "full_attention"], "head_dim": 16,
        "per_layer_config": {1: {"head_dim": 32}},
        "vocab_size_per_layer_input": 100, "hidden_size_per_layer_input": 16,
    },
    "embedding_gemma2_text": {
        "layer_types": ["sliding_attention", "full_attention"], "head_dim": 16,
        "num_key_value_heads": 2,
        "per_layer_config": {1: {"head_dim": 32, "num_key_value_heads": 1}},
        "hidden_size_per_layer_input": 16, "embedding_dim": 64,
    },
    # encoders
    "squeezebert": {"embedding_size": 64},
    "esmc": {"num_key_value_heads": 4},
    "lilt": {"hidden_size": 96, "inputs": {"bbox": (2, 12, 4)}},  # 2D positions: hidden / 6
    "bros": {"dim_bbox_projection": 16, "inputs": {"bbox": (2, 12, 4)}},
    # vision
    "convnext": {"hidden_sizes": [32, 64], "depths": [1, 1], "image_size": 64},
    "convnextv2": {"hidden_sizes": [32, 64], "depths": [1, 1], "image_size": 64},
    "hgnet_v2": {**HGNET, "initializer_range": 0.2},
    "rt_detr": {
        **_sub("backbone_config", {"hidden_sizes": [32, 64, 128, 256], "depths": [1, 1, 1, 1]}),
        "encoder_in_channels": [64, 128, 256], **DETR,
    },
    "d_fine": {**_sub("backbone_config", HGNET), "encoder_in_channels": [64, 128, 128], **DETR},
    "efficientloftr": {  # RepVGG stages of one block; 8 heads for the 2D rotary embedding
        "stage_num_blocks": [1, 1, 1, 1], "out_features": [16, 16, 32, 64],
        "stage_in_channels": [1, 16, 16, 32], "stage_block_stride": [[2], [1], [2], [2]],
        "stage_block_out_channels": [[16], [16], [32], [64]],
        "stage_block_in_channels": [[1], [16], [16], [32]], "fine_fusion_dims": [64, 32, 16],
        "num_attention_heads": 8, "num_key_value_heads": 8, "initializer_range": 0.35,
        "inputs": {"pixel_values": (2, 2, 3, 64, 64)},  # image pairs
    },
    "sapiens2": {"num_key_value_heads_per_layer": [4, 2], "image_size": 64},
    "timesformer": VIDEO,
    "videomae": VIDEO,
    "vivit": {**VIDEO, "tubelet_size": [2, 8, 8]},
    # speech and audio
    "whisper": {"max_source_positions": 16, "inputs": {"decoder_input_ids": (2, 7)}},
    "speech_to_text": {
        "conv_channels": 64,
        "inputs": {"input_features": (2, 32, 80), "decoder_input_ids": (2, 7)},
    },
    "moonshine": {
        "encoder_num_hidden_layers": 2, "decoder_num_hidden_layers": 2,
        "encoder_num_attention_heads": 4, "decoder_num_attention_heads": 4,
        "encoder_num_key_value_heads": 4, "decoder_num_key_value_heads": 4,
        "inputs": {"decoder_input_ids": (2, 7)},
    },
    "wav2vec2-bert": {"inputs": {"input_features": (2, 32, 160)}},
    "audio-spectrogram-transformer": {"max_length": 64, "inputs": {"input_values": (2, 64, 128)}},
    "speecht5": {"inputs": {"input_values": (2, 12, 64), "decoder_input_values": (2, 7, 64)}},
    "encodec": {
        "num_filters": 8, "codebook_dim": 64, "codebook_size": 64,
        "inputs": {"input_values": (2, 1, 1600)}, "output": "audio_values",
    },
    "dac": {
        "encoder_hidden_size": 8, "decoder_hidden_size": 64, "n_codebooks": 2,
        "codebook_size": 64, "inputs": {"input_values": (2, 1, 2048)}, "output": "audio_values",
    },
    "mimi": {
        "num_filters": 16, "upsample_groups": 64, "num_quantizers": 4, "codebook_size": 64,
        "inputs": {"input_values": (2, 1, 3840)}, "output": "audio_values",
    },
    "univnet": {
        "model_in_channels": 16, "model_hidden_channels": 8,
        "kernel_predictor_hidden_channels": 16, "initializer_range": 0.1,
        "inputs": {"input_features": (2, 32, 100), "noise_sequence": (2, 32, 16)},
    },
    # time series
    "patchtst": {"inputs": {"past_values": (2, 32, 1)}},
    "patchtsmixer": {"inputs": {"past_values": (2, 32, 1)}},
    "timesfm": {
        "patch_length": 8, "context_length": 32,
        "inputs": {
            "past_values": (2, 32), "past_values_padding": ((2, 32), 0.0), "freq": ((2, 1), 0),
        },
    },
}  # fmt: skip


def _result(kind: str, detail: str = "", **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "detail": " ".join(detail.split())[:300], **extra}


def _transformers_case(spec: str) -> tuple[Any, Any]:
    """(module returning the compared output, inputs by seed) for a transformers model type."""
    import torch
    import transformers as tf

    name, _, kind = spec.partition(":")
    override = dict(OVERRIDES.get(name, {}))
    extra_inputs = override.pop("inputs", {})
    output = override.pop("output", None)
    config = tf.AutoConfig.for_model(name)
    for key, value in SMALL.items():
        try:
            current = getattr(config, key, None)
        except Exception:  # a per-layer attribute (Gemma-4's head_dim): the override sets it
            continue
        if key in ("pad_token_id", "use_cache", "vocab_size") or (
            isinstance(current, int) and not isinstance(current, bool) and current
        ):
            try:
                setattr(config, key, value)
            except Exception:  # a derived property (Falcon's head_dim)
                pass
    for key, value in override.items():
        *path, attr = key.split(".")
        target = config
        for part in path:
            target = getattr(target, part)
        setattr(target, attr, copy.deepcopy(value))
    torch.manual_seed(0)
    factory = tf.AutoModelForCausalLM if kind == "lm" else tf.AutoModel
    model = factory.from_config(config).eval()
    main = getattr(model, "main_input_name", "input_ids")

    shapes: dict[str, Any] = {}
    if main == "input_ids":
        shapes["input_ids"] = (2, 12)
        if getattr(config, "is_encoder_decoder", False):
            shapes["decoder_input_ids"] = (2, 7)
    elif main == "pixel_values":
        size = getattr(config, "image_size", 64)
        size = min(int(size[0] if isinstance(size, list | tuple) else size), 224)
        shapes["pixel_values"] = (2, getattr(config, "num_channels", 3), size, size)
    elif main == "input_values":
        shapes["input_values"] = (2, 1600)
    elif main == "input_features":
        shapes["input_features"] = (2, getattr(config, "num_mel_bins", 80), 32)
    shapes.update(extra_inputs)
    if not shapes:
        raise ValueError(f"no inputs for {main}")

    def inputs(seed: int) -> tuple[torch.Tensor, ...]:
        gen = torch.Generator().manual_seed(seed)
        out = []
        for key, shape in shapes.items():
            if isinstance(shape[0], tuple):  # (shape, value): a constant
                out.append(torch.full(shape[0], shape[1]))
            elif key.endswith("_ids"):
                out.append(torch.randint(2, 100, shape, generator=gen))
            elif key == "bbox":  # boxes in 0..1000, corners ordered
                corners = torch.randint(0, 1001, (*shape[:-1], 2, 2), generator=gen)
                out.append(corners.sort(dim=-2).values.flatten(-2))
            else:
                out.append(torch.randn(*shape, generator=gen))
        return tuple(out)

    names = tuple(shapes)

    def compared(m: Any, args: tuple[Any, ...]) -> Any:
        out = m(**dict(zip(names, args, strict=True)))
        out = out[output] if output else out[0]
        if isinstance(out, list | tuple):  # a backbone's feature maps: the last
            out = out[-1]
        return out

    return _wrapped(model, compared), inputs


def _torchvision_case(name: str) -> tuple[Any, Any]:
    import torch
    import torchvision

    kw: dict[str, Any] = {"weights": None}
    if name.startswith(("deeplab", "fcn", "lraspp")):
        kw["weights_backbone"] = None
    torch.manual_seed(0)
    model = torchvision.models.get_model(name, **kw)
    if sum(p.numel() for p in model.parameters()) > 90e6:
        raise _Skip("over 90M parameters")
    family = type(model).__module__
    if name.startswith("raft"):
        shapes = [(1, 3, 128, 128)] * 2
    elif ".video." in family:
        shapes = [(1, 3, 16, 224, 224) if "mvit" in name or "s3d" in name else (1, 3, 16, 112, 112)]
    else:
        size = 224 if name.startswith(("vit", "swin", "maxvit")) else 96
        shapes = [(1, 3, size, size)]
    with torch.no_grad():  # live activations: batch statistics of one batch, unit-scale heads
        for m in model.modules():
            if isinstance(m, torch.nn.Linear):
                torch.nn.init.normal_(m.weight, std=m.in_features**-0.5)
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.momentum = None
                m.reset_running_stats()
        model.train()
        model(*(torch.randn(2, *s[1:]) for s in shapes))
    model.eval()

    def inputs(seed: int) -> tuple[torch.Tensor, ...]:
        gen = torch.Generator().manual_seed(seed)
        return tuple(torch.randn(*s, generator=gen) for s in shapes)

    return _wrapped(model, _main_output), inputs


def _main_output(m: Any, args: tuple[Any, ...]) -> Any:
    out = m(*args)
    if isinstance(out, dict):  # segmentation: "out" beside "aux"
        out = out["out"]
    if isinstance(out, list | tuple):  # RAFT's flow refinements: the last
        out = out[-1]
    return out


def _wrapped(model: Any, call: Any) -> Any:
    """`model` as a module of positional tensors returning one tensor, `call(model, args)`."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = call(self.model, args)
            return out

    return Wrapped().eval()


class _Skip(Exception):
    pass


def run_one(family: str, spec: str, workdir: Path) -> dict[str, Any]:
    sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]
    import vision  # torchvision's extension ops, before transformers imports torchvision

    vision.declare_extension_ops()
    import etrt
    import numpy as np
    import torch
    from etrt.errors import ExportError

    try:
        make = _transformers_case if family == "transformers" else _torchvision_case
        module, inputs = make(spec)
        with torch.no_grad():
            want = module(*inputs(1)).numpy()
            again = module(*inputs(1)).numpy()
    except _Skip as exc:
        return _result("SETUP", str(exc))
    except Exception as exc:
        return _result("SETUP", f"{type(exc).__name__}: {exc}")
    if not np.array_equal(want, again, equal_nan=True):
        return _result("RANDOM", "eager gives two answers for one input")
    started = time.perf_counter()
    try:
        program = etrt.export(module, inputs(0))
    except ExportError as exc:
        text = str(exc)
        return _result(
            "UNEXPORTABLE" if text.startswith("torch.export failed") else "REFUSED", text
        )
    try:
        path = program.save(workdir / "program.etrt")
        got = np.asarray(etrt.load(path).method()(*(t.numpy() for t in inputs(1)))[0])
    except Exception as exc:
        return _result("RUN", f"{type(exc).__name__}: {exc}")
    scale = float(np.abs(want).max()) or 1.0
    if got.shape != want.shape:
        return _result("MISMATCH", f"shape {list(got.shape)}, eager {list(want.shape)}")
    error = float(np.abs(got.astype(np.float64) - want).max()) / scale
    seconds = time.perf_counter() - started
    if error >= 1e-4:  # as close to float64 as eager float32 is: the model, not etrt
        try:
            with torch.no_grad():
                wide = copy.deepcopy(module).double()
                args = (t.double() if t.is_floating_point() else t for t in inputs(1))
                ref = wide(*args).numpy()
        except Exception as exc:  # some ops have no float64 kernel (grouped_mm)
            detail = f"no float64 reference ({type(exc).__name__}: {exc})"
            return _result("MISMATCH", detail, error=error, scale=scale)
        ref_scale = float(np.abs(ref).max()) or 1.0
        etrt_error = float(np.abs(got.astype(np.float64) - ref).max()) / ref_scale
        eager_error = float(np.abs(want.astype(np.float64) - ref).max()) / ref_scale
        if etrt_error <= 2 * eager_error:
            detail = f"etrt {etrt_error:.2e} from float64, eager float32 {eager_error:.2e}"
            return _result("ILL-CONDITIONED", detail, error=error, scale=scale)
    return _result("OK" if error < 1e-4 else "MISMATCH", error=error, scale=scale, seconds=seconds)


def _default_specs(family: str, every: bool) -> list[str]:
    if family == "transformers":
        if not every:
            return list(TRANSFORMERS)
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

        return sorted(CONFIG_MAPPING_NAMES)
    sys.path[:0] = [str(ROOT / "tests")]
    import vision

    vision.declare_extension_ops()
    import torchvision

    models = torchvision.models
    return [
        name
        for module in (models, models.segmentation, models.video, models.optical_flow)
        for name in models.list_models(module=module)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("family", choices=("transformers", "torchvision"))
    parser.add_argument("models", nargs="*", help="model types (transformers) or names")
    parser.add_argument("--all", action="store_true", help="every model type transformers has")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per model")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            print("RESULT " + json.dumps(run_one(args.family, args.one, Path(tmp))), flush=True)
        return 0

    specs = args.models or _default_specs(args.family, args.all)
    kinds = ("OK", "ILL-CONDITIONED", "MISMATCH", "RUN", "REFUSED", "UNEXPORTABLE", "RANDOM")
    rows, counts = [], dict.fromkeys((*kinds, "SETUP"), 0)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for spec in specs:
        cmd = [sys.executable, __file__, args.family, "--one", spec]
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=args.timeout, env=env
            )
            line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
            result = (
                json.loads(line[7:])
                if line
                else _result("RUN", f"exit {proc.returncode}: {proc.stderr[-300:]}")
            )
        except subprocess.TimeoutExpired:
            result = _result("RUN", f"no result in {args.timeout:.0f} s")
        counts[result["kind"]] += 1
        parts = [result["detail"]] if result["detail"] else []
        if "error" in result:
            parts.insert(0, f"max error {result['error']:.2e} of max |eager| {result['scale']:.3g}")
        what = " ".join(parts)
        rows.append((spec, result["kind"], what))
        print(f"{spec:32} {result['kind']:16} {what}", flush=True)
    summary = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
    print(f"{len(specs)} models: {summary}")
    if args.markdown:
        table = ["| model | result | detail |", "| --- | --- | --- |"]
        table += [f"| {s} | {k} | {w.replace('|', '/')} |" for s, k, w in rows]
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.markdown.with_suffix(args.markdown.suffix + ".tmp")
        tmp.write_text("\n".join([*table, "", f"{len(specs)} models: {summary}", ""]))
        tmp.replace(args.markdown)
    return 1 if counts["MISMATCH"] or counts["RUN"] else 0


if __name__ == "__main__":
    sys.exit(main())

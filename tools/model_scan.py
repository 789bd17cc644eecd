"""Sweep of library models through etrt: every architecture of a list, built from random weights,
exported as it is, run by the in-process runtime and compared with eager PyTorch.

    python tools/model_scan.py transformers              # the curated list below
    python tools/model_scan.py transformers --all        # every model type transformers knows
    python tools/model_scan.py torchvision               # every torchvision model up to 90M params
    python tools/model_scan.py transformers flaubert gpt2:lm --markdown build/scan.md

transformers models come from `AutoConfig.for_model(type)` narrowed to hidden 64, 2 layers, 4
heads (`:lm` builds AutoModelForCausalLM, else AutoModel), called with two batches of 12 token
ids, 64x64 images, 1600 audio samples or 80 mel bins by the model's main input; the program is
exported from seed 0's inputs and run on seed 1's. torchvision models run at 96x96 (224 for the
transformers among them, 16 frames of 112x112 for video), batch-norm statistics from one batch.

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
    "hubert wavlm sew sew-d unispeech unispeech-sat data2vec-audio wav2vec2-conformer"
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


def _result(kind: str, detail: str = "", **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "detail": " ".join(detail.split())[:300], **extra}


def _transformers_case(spec: str) -> tuple[Any, Any]:
    """(module returning the first output, inputs by seed) for a transformers model type."""
    import torch
    import transformers as tf

    name, _, kind = spec.partition(":")
    config = tf.AutoConfig.for_model(name)
    for key, value in SMALL.items():
        current = getattr(config, key, None)
        if key in ("pad_token_id", "use_cache", "vocab_size") or (
            isinstance(current, int) and not isinstance(current, bool) and current
        ):
            try:
                setattr(config, key, value)
            except Exception:  # a derived property (Falcon's head_dim)
                pass
    torch.manual_seed(0)
    factory = tf.AutoModelForCausalLM if kind == "lm" else tf.AutoModel
    model = factory.from_config(config).eval()
    main = getattr(model, "main_input_name", "input_ids")

    def inputs(seed: int) -> dict[str, torch.Tensor]:
        gen = torch.Generator().manual_seed(seed)
        if main == "input_ids":
            out = {"input_ids": torch.randint(2, 100, (2, 12), generator=gen)}
            if getattr(config, "is_encoder_decoder", False):
                out["decoder_input_ids"] = torch.randint(2, 100, (2, 7), generator=gen)
            return out
        if main == "pixel_values":
            size = getattr(config, "image_size", 64)
            size = min(int(size[0] if isinstance(size, list | tuple) else size), 224)
            channels = getattr(config, "num_channels", 3)
            return {"pixel_values": torch.randn(2, channels, size, size, generator=gen)}
        if main == "input_values":
            return {"input_values": torch.randn(2, 1600, generator=gen)}
        if main == "input_features":
            bins = getattr(config, "num_mel_bins", 80)
            return {"input_features": torch.randn(2, bins, 32, generator=gen)}
        raise ValueError(f"no inputs for {main}")

    names = tuple(inputs(0))

    def first(m: Any, args: tuple[Any, ...]) -> Any:
        return m(**dict(zip(names, args, strict=True)))[0]

    return _wrapped(model, first), lambda seed: tuple(inputs(seed).values())


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

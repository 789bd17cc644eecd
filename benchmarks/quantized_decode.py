"""Quantized language-model decoding: etrt float32 against etrt int4 weights, side by side with
eager PyTorch running the same float32 model and the same torchao-quantized model.

The model is a Llama-shaped decoder from a transformers LlamaConfig (8 layers, hidden 1024,
16 heads and 4 KV heads, MLP 2816, vocab 32000, random weights): its float32 weights (about
620 MB) do not fit in any cache. It is wrapped with transformers' static KV cache as
tests/decoders.py does, exported once in float32 and once after etrt.quantize(scheme=SCHEME)
(torchao's IntxWeightOnlyConfig on every linear and the embedding). Each engine generates
NEW greedy tokens after a PROMPT-token prompt (prefill: the prompt's one call; decode: one call
per token), one thread, the best of --rounds generations after a warm-up one; the two etrt
programs generate in turns (eager torchao, which dequantizes every weight on every call, runs
one). Printed: prefill and decode tokens/s
by the wall clock and by this process's CPU time (steadier on a shared machine),
the decode ratios the issue sets (int4 >= 3x etrt float32 and >= eager with the same scheme),
whether etrt's int4 tokens equal eager torchao's, and each program's size, by kind of tensor.

    python benchmarks/quantized_decode.py [--layers 8] [--scheme int4-weight] [--group-size 32]
        [--scale-dtype bfloat16] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]
os.environ.setdefault("ETRT_NUM_THREADS", "1")

import decoders  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

PROMPT = list(range(3, 3 + 16))
NEW = 16


def llama(layers: int) -> torch.nn.Module:
    tf = decoders._transformers()
    config = tf.LlamaConfig(
        vocab_size=32000, hidden_size=1024, num_hidden_layers=layers, num_attention_heads=16,
        num_key_value_heads=4, intermediate_size=2816, max_position_embeddings=decoders.MAX_SEQ,
    )  # fmt: skip
    torch.manual_seed(0)
    return decoders.StaticCacheLM(decoders._lively(tf.LlamaForCausalLM(config).eval()))


Generation = tuple[float, float, list[int], float, float, list[np.ndarray]]


def generate(step: decoders.Step) -> Generation:
    """(prefill s, decode s, tokens, prefill CPU s, decode CPU s, each token's logits) of one
    greedy generation. CPU time counts this process only: on a machine shared with other jobs
    it is the steadier figure (one thread each, so it is also the time the engine kept a core
    busy)."""
    start, cpu0 = time.perf_counter(), time.process_time()
    logits = step(np.array([PROMPT], np.int64), np.arange(len(PROMPT), dtype=np.int64))
    prefilled, cpu1 = time.perf_counter(), time.process_time()
    tokens: list[int] = []
    chosen_from: list[np.ndarray] = []
    for i in range(NEW):
        chosen_from.append(np.asarray(logits[0, -1]))
        tokens.append(int(np.argmax(logits[0, -1])))
        if i + 1 < NEW:
            position = np.array([len(PROMPT) + i], np.int64)
            logits = step(np.array([[tokens[-1]]], np.int64), position)
    end, cpu2 = time.perf_counter(), time.process_time()
    return prefilled - start, end - prefilled, tokens, cpu1 - cpu0, cpu2 - cpu1, chosen_from


def first_difference(tokens: list[int], reference: list[int], logits: list[np.ndarray]) -> str:
    """Where greedy tokens first differ from the reference's, how close the reference's own
    choice was there: the same history up to that token, so the reference's logits rank both."""
    for i, (got, want) in enumerate(zip(tokens, reference, strict=True)):
        if got != want:
            ref = logits[i]
            rank = int((ref > ref[got]).sum()) + 1
            gap = float(ref[want] - ref[got])
            spread = float(np.ptp(ref))
            return (f"first difference at token {i + 1} of {len(tokens)}: the reference ranks "
                    f"etrt's token {rank}, {gap:.3g} below its own ({gap / spread:.1e} of the "
                    "logits' range)")  # fmt: skip
    return "all equal"


def summarize(runs: list[Generation]) -> dict[str, Any]:
    best = runs[1:] or runs  # the first is a warm-up
    return {
        "prefill_tok_s": len(PROMPT) / min(r[0] for r in best),
        "decode_tok_s": (NEW - 1) / min(r[1] for r in best),
        "prefill_tok_cpu_s": len(PROMPT) / min(r[3] for r in best),
        "decode_tok_cpu_s": (NEW - 1) / min(r[4] for r in best),
        "tokens": best[0][2],
        "logits": best[0][5],
    }


def measure(step: decoders.Step, rounds: int) -> dict[str, Any]:
    return summarize([generate(step) for _ in range(rounds + 1)])


def measure_in_turns(engines: dict[str, tuple[decoders.Step, Any]], rounds: int) -> dict[str, dict]:
    """One generation of each engine in turn, rounds + 1 times: a machine whose speed drifts
    (a shared VM: memory bandwidth moved 1.6x between minutes here) slows every engine alike,
    so the ratios hold where results measured minutes apart do not."""
    runs: dict[str, list[Generation]] = {name: [] for name in engines}
    for _ in range(rounds + 1):
        for name, (step, reset) in engines.items():
            reset()
            runs[name].append(generate(step))
    return {name: summarize(r) for name, r in runs.items()}


def etrt_engine(program: Any, path: Path) -> tuple[decoders.Step, Any]:
    import etrt

    program.save(path)
    method = etrt.load(path).method("forward")

    def step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return np.asarray(method(tokens, positions)[0])

    return step, method.reset


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--scheme", default="int4-weight")
    parser.add_argument("--group-size", type=int, default=32)
    parser.add_argument("--scale-dtype", choices=("float32", "bfloat16", "float16"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import etrt
    from etrt.program_size import size_breakdown

    torch.set_num_threads(1)
    results: dict[str, Any] = {"threads": 1, "layers": args.layers, "scheme": args.scheme,
                               "group_size": args.group_size,
                               "scale_dtype": args.scale_dtype or "float32"}  # fmt: skip
    model = llama(args.layers)
    group = args.group_size if args.scheme != "int8-weight" else None
    quantized = etrt.quantize(
        model, None, scheme=args.scheme, group_size=group, scale_dtype=args.scale_dtype
    )
    modules = {"float32": model, args.scheme: quantized}  # in this order everywhere below
    with tempfile.TemporaryDirectory() as tmp:
        engines = {}
        for name, module in modules.items():
            start = time.perf_counter()
            program = decoders.export(copy.deepcopy(module), "llama")
            print(f"exported {name}: {len(program) / 1e6:.1f} MB in "
                  f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
            breakdown = size_breakdown(program.info)
            print("\n".join(breakdown.lines()), flush=True)
            sizes = {"bytes": len(program), "bytes_by_kind": dict(breakdown.parts)}
            results[f"etrt {name}"] = sizes
            engines[name] = etrt_engine(program, Path(tmp) / f"{name}.etrt")
            del program
        for name, measured in measure_in_turns(engines, args.rounds).items():
            results[f"etrt {name}"].update(measured)
        del engines
    for name, module in modules.items():  # eager torchao dequantizes every weight each call
        eager = decoders.eager_step(copy.deepcopy(module))
        results[f"eager {name}"] = measure(eager, args.rounds if name == "float32" else 0)
    q = args.scheme
    etrt_q, etrt_f, eager_q = results[f"etrt {q}"], results["etrt float32"], results[f"eager {q}"]
    summary = {
        "decode x etrt float32 (wall)": etrt_q["decode_tok_s"] / etrt_f["decode_tok_s"],
        "decode x etrt float32 (CPU)": etrt_q["decode_tok_cpu_s"] / etrt_f["decode_tok_cpu_s"],
        f"decode x eager {q} (wall)": etrt_q["decode_tok_s"] / eager_q["decode_tok_s"],
        "size / float32": etrt_q["bytes"] / etrt_f["bytes"],
        "greedy tokens equal eager's": etrt_q["tokens"] == eager_q["tokens"],
        "greedy tokens against eager's": first_difference(
            etrt_q["tokens"], eager_q["tokens"], eager_q["logits"]
        ),
    }
    for r in results.values():
        if isinstance(r, dict):
            r.pop("logits", None)
    results["summary"] = summary
    header = ("prefill", 9), ("decode", 9), ("prefill CPU", 13), ("decode CPU", 12), ("MB", 8)
    print(f"{'tokens/s':<22}" + "".join(f"{name:>{width}}" for name, width in header))
    for key, r in results.items():
        if isinstance(r, dict) and "decode_tok_s" in r:
            size = f"{r['bytes'] / 1e6:.1f}" if "bytes" in r else "-"
            print(
                f"{key:<22}{r['prefill_tok_s']:>9.1f}{r['decode_tok_s']:>9.2f}"
                f"{r['prefill_tok_cpu_s']:>13.1f}{r['decode_tok_cpu_s']:>12.2f}{size:>8}"
            )
    for key, value in summary.items():
        print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

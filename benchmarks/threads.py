"""Thread sweep: eager PyTorch, ONNX Runtime, etrt and etrt + XNNPACK at 1, 2, 4, ... threads up
to the CPUs this process may use, batch 1, float32: median ms, the best etrt flavour's ratio to
ONNX Runtime (lower is better) and each system's speed-up over its own one-thread time.

    build/bench-venv/bin/python benchmarks/threads.py [--models ...] [--threads 1 2 ...]
        [--runs N] [--rounds N] [--isa avx2] [--dir build/threads] [--json FILE]
    ... --export-only      export into --dir and stop (needs torch, onnx, onnxscript)
    ... --run-only         measure what --dir holds (no export: torch only for eager)

Models: ResNet18, MobileNetV3-small, EfficientNet-B0, SqueezeNet 1.1, ViT-B/16 (torchvision,
random weights, activations kept alive, 224x224), a BERT encoder (hidden 384, 6 layers, 128
tokens), GPT-2 and Llama forward passes (tests/transformer_models.py "bench" configs; logits of
128 tokens), and GPT-2 and Llama decoding with a static KV cache (tests/decoders.py, as
benchmarks/decode.py runs them: greedy, a 16-token prompt, then 32 tokens one call each): their
rows give decode tokens/s of eager and etrt (no ONNX export with a cache, no XNNPACK flavour).
Export writes, per model, the torch.export program (.pt2: what eager runs), the etrt programs
(plain and backend="xnnpack"), the ONNX file (torch.onnx.export, opset 18) and the inputs, so
the measuring machine needs no network and no torchvision or transformers.

`--executorch` adds ExecuTorch + XNNPACK beside them (the pinned `executorch` of
benchmarks/executorch-requirements.txt): export writes `{model}.et.pte` through
`to_edge_transform_and_lower` with `XnnpackPartitioner` (ExecuTorch's own flow for CPU), the
sweep runs it through `executorch.runtime` with ExecuTorch's thread pool reset to n threads, and
the table adds its column and best etrt / ExecuTorch. A model ExecuTorch cannot export is said so
and left out of that column.

`--cpuid-cap cpuid_cap.so` (tools/cpuid_cap/cpuid_cap.c, built) loads a shim into every worker
that answers CPUID without AVX-512 and AVX-VNNI, and sets glibc's hwcaps tunable to match: eager
PyTorch, ONNX Runtime's MLAS, both XNNPACKs and etrt all take the kernels they take on an AVX2
machine, where `--isa avx2` alone caps etrt's kernels only. The header names what eager and etrt
detected.

Each (system, thread count) runs in its own worker process: eager with torch.set_num_threads(n),
ONNX Runtime with intra-op threads n, inter-op 1 and all graph optimizations, etrt with
ETRT_NUM_THREADS=n (and ETRT_MAX_ISA=--isa; XNNPACK ignores that cap). For each (model, thread
count) the systems are measured in turn --rounds times, each round the median of --runs calls
after warm-up; a figure is the median of its rounds. Every call goes through Python (the
ctypes binding, InferenceSession.run, the module's __call__), so each pays one small per-call
cost. Compare numbers within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

VISION = ("resnet18", "mobilenet_v3_small", "efficientnet_b0", "squeezenet1_1", "vit_b_16")
TRANSFORMERS = ("bert", "gpt2", "llama")
DECODERS = ("gpt2-decode", "llama-decode")
MODELS = VISION + TRANSFORMERS + DECODERS
PROMPT = list(range(3, 3 + 16))  # benchmarks/decode.py's prompt and length
NEW_TOKENS = 32
SYSTEMS = ("eager", "ort", "etrt", "etrt+xnn")
EXECUTORCH = "et"  # ExecuTorch + XNNPACK, with --executorch
DECODE_SYSTEMS = ("eager", "etrt")
ISAS = ("sse2", "avx2", "avx512")
ONNX_OPSET = 18


class BenchError(Exception):
    """A setup problem of the benchmark: one line, no traceback."""


def available_cpus() -> int:
    return len(os.sched_getaffinity(0))


def default_threads(cpus: int) -> list[int]:
    """1, 2, 4, ... and the CPU count itself."""
    counts, n = [], 1
    while n < cpus:
        counts.append(n)
        n *= 2
    return [*counts, cpus]


# ---------------------------------------------------------------------------------------------
# Export (torch, torchvision's definitions, transformers; onnx + onnxscript for ONNX)


def _make(name: str) -> tuple[Any, tuple[Any, ...]]:
    import torch
    import transformer_models
    import vision

    if name in VISION:
        size = 224
        model = vision.live(vision.model(name), size)
        x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))
        return model, (x,)
    if name == "bert":  # the encoder: MiniLM-sized
        tf = transformer_models.transformers()
        config = tf.BertConfig(
            vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=6,
            intermediate_size=1536, max_position_embeddings=512,
        )  # fmt: skip
        torch.manual_seed(0)
        ids = torch.randint(0, 30522, (1, 128), generator=torch.Generator().manual_seed(0))
        return tf.BertModel(config).eval(), (ids, torch.ones_like(ids))
    model = transformer_models.MODELS[name]("bench")
    return model, transformer_models.inputs(name, "bench")


def _first_output(model: Any) -> Any:
    """The model returning one tensor (transformers return output objects)."""
    import torch

    class First(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            out = self.inner(*args)
            if isinstance(out, torch.Tensor):
                return out
            return out[0]

    return First().eval()


def export_models(out: Path, names: Sequence[str], executorch: bool = False) -> None:
    import etrt
    import torch

    warnings.filterwarnings("ignore")
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        start = time.perf_counter()
        if name in DECODERS:
            _export_decoder(out, name)
            print(f"exported {name} in {time.perf_counter() - start:.0f} s", flush=True)
            continue
        model, inputs = _make(name)
        model = _first_output(model)
        with torch.no_grad():
            ep = torch.export.export(model, inputs)
            _atomic(out / f"{name}.pt2", lambda p, ep=ep: torch.export.save(ep, p))  # type: ignore[misc]
            etrt.export(model, inputs).save(out / f"{name}.etrt")
            etrt.export(model, inputs, backend="xnnpack").save(out / f"{name}.xnn.etrt")
            _atomic(
                out / f"{name}.onnx",
                lambda p, m=model, i=inputs: torch.onnx.export(  # type: ignore[misc]
                    m,
                    i,
                    str(p),
                    opset_version=ONNX_OPSET,
                    dynamo=True,
                    external_data=False,
                    verbose=False,
                ),
            )
            if executorch:
                _export_executorch(out / f"{name}.et.pte", ep, name)
        arrays = {f"arg{i}": t.numpy() for i, t in enumerate(inputs)}
        _atomic(out / f"{name}.inputs.npz", lambda p, a=arrays: np.savez(p, **a))  # type: ignore[misc]
        print(f"exported {name} in {time.perf_counter() - start:.0f} s", flush=True)
    manifest = {"models": list(names), "torch": torch.__version__, "onnx_opset": ONNX_OPSET}
    _atomic(out / "manifest.json", lambda p: p.write_text(json.dumps(manifest, indent=1)))


def _export_executorch(path: Path, ep: Any, name: str) -> None:
    """ExecuTorch's CPU flow: the XNNPACK partitioner over the same torch.export program."""
    try:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import to_edge_transform_and_lower
    except ImportError as exc:
        raise BenchError(
            f"--executorch needs executorch ({exc}): "
            "pip install --no-deps -r benchmarks/executorch-requirements.txt"
        ) from exc
    try:
        lowered = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
        program = lowered.to_executorch()
    except Exception as exc:  # any failure of ExecuTorch's export: say so and go on
        print(f"executorch did not export {name}: {type(exc).__name__}: {exc}".splitlines()[0])
        path.unlink(missing_ok=True)
        return
    _atomic(path, lambda p: p.write_bytes(program.buffer))


def _export_decoder(out: Path, name: str) -> None:
    """The decoder's torch.export program (for eager) and its etrt program, the sequence length
    dynamic: one program runs the prompt and then each new token."""
    import decoders
    import torch

    base = name.removesuffix("-decode")
    model, _ = decoders.make(base)
    with torch.no_grad():
        ep = torch.export.export(
            model, decoders.example_inputs(), dynamic_shapes=decoders.dynamic_shapes(),
            strict=base != "handwritten",
        )  # fmt: skip
        _atomic(out / f"{name}.pt2", lambda p: torch.export.save(ep, p))
        program = decoders.export(model, base)
        _atomic(out / f"{name}.etrt", program.save)


def decode_ms_per_token(step: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> float:
    """One greedy generation (the prompt in one call, then NEW_TOKENS - 1 calls of one token);
    ms per decoded token, the prompt's call not counted."""
    logits = step(np.array([PROMPT], np.int64), np.arange(len(PROMPT), dtype=np.int64))
    position = len(PROMPT)
    start = time.perf_counter_ns()
    for _ in range(NEW_TOKENS - 1):
        token = int(np.argmax(logits[0, -1]))
        logits = step(np.array([[token]], np.int64), np.array([position], np.int64))
        position += 1
    return (time.perf_counter_ns() - start) / 1e6 / (NEW_TOKENS - 1)


class SelfTimed(float):
    """What a timed call returns when it measured itself (decode: ms per token)."""


def _atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Writes through a temporary file beside `path`, then renames it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would surprise whoever copies the directory
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# ---------------------------------------------------------------------------------------------
# Workers: one process per (system, thread count), answering "model runs warmup" lines


def _inputs(d: Path, name: str) -> list[np.ndarray]:
    with np.load(d / f"{name}.inputs.npz") as z:
        return [z[f"arg{i}"] for i in range(len(z.files))]


# What a worker times calls with: wall-clock time, or the CPU time of the calling thread
# (ETRT_BENCH_CLOCK=thread; benchmarks/parity.py --clock thread), which the other processes of a
# loaded machine do not stretch while they hold the core. Only one-thread runs do all their work
# on the calling thread.
CLOCKS = {"wall": time.perf_counter_ns, "thread": time.thread_time_ns}


def _median_ms(call: Callable[[], object], runs: int, warmup: int) -> tuple[float, float]:
    """The median and the fastest of `runs` calls, ms."""
    clock = CLOCKS[os.environ.get("ETRT_BENCH_CLOCK", "wall")]
    for _ in range(warmup):
        call()
    times = []
    for _ in range(runs):
        start = clock()
        result = call()
        elapsed = (clock() - start) / 1e6
        times.append(float(result) if isinstance(result, SelfTimed) else elapsed)
    return statistics.median(times), min(times)


def _worker_calls(system: str, d: Path, threads: int) -> Callable[[str], Callable[[], object]]:
    """A function giving, for a model name, the zero-argument call to time."""
    if system == "eager":
        import torch

        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)

        def eager(name: str) -> Callable[[], object]:
            module = torch.export.load(d / f"{name}.pt2").module()
            if name in DECODERS:

                def step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
                    with torch.inference_mode():
                        out = module(torch.from_numpy(tokens), torch.from_numpy(positions))
                    return np.asarray(out.numpy())

                return lambda: SelfTimed(decode_ms_per_token(step))
            args = tuple(torch.from_numpy(a) for a in _inputs(d, name))

            def call() -> object:
                with torch.inference_mode():
                    return module(*args)

            return call

        return eager
    if system == "ort":
        import onnxruntime as ort

        def onnx(name: str) -> Callable[[], object]:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(
                str(d / f"{name}.onnx"), opts, providers=["CPUExecutionProvider"]
            )
            feeds = dict(zip((i.name for i in session.get_inputs()), _inputs(d, name), strict=True))
            return lambda: session.run(None, feeds)

        return onnx
    if system == EXECUTORCH:
        import torch
        from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
        from executorch.runtime import Runtime

        _unsafe_reset_threadpool(threads)
        runtime = Runtime.get()

        def theirs(name: str) -> Callable[[], object]:
            method = runtime.load_program(d / f"{name}.et.pte").load_method("forward")
            args = [torch.from_numpy(a) for a in _inputs(d, name)]
            return lambda: method.execute(args)

        return theirs
    import etrt.runtime

    def ours(name: str) -> Callable[[], object]:
        model, _, flavour = name.partition(":")
        suffix = ".xnn.etrt" if flavour == "xnn" else ".etrt"
        module = etrt.runtime.load(d / f"{model}{suffix}")
        if model in DECODERS:

            def step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
                return np.asarray(module.forward(tokens, positions)[0])

            return lambda: SelfTimed(decode_ms_per_token(step))
        args = _inputs(d, model)
        return lambda: module.forward(*args)

    return ours


def worker_main(system: str, d: Path, threads: int) -> int:
    warnings.filterwarnings("ignore")
    make_call = _worker_calls(system, d, threads)
    calls: dict[str, Callable[[], object]] = {}
    hello: dict[str, Any] = {"ready": system, "threads": threads}
    if system == "etrt":
        import etrt.runtime

        hello["isa"] = str(etrt.runtime.isa_info())
    elif system == "eager":
        import torch

        hello["isa"] = f"ATen's CPU capability {torch.backends.cpu.get_cpu_capability()}"
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        name, runs, warmup = line.split()
        if name not in calls:
            calls[name] = make_call(name)
        ms, fastest = _median_ms(calls[name], int(runs), int(warmup))
        print(json.dumps({"ms": ms, "min_ms": fastest}), flush=True)
    return 0


@dataclass
class Worker:
    proc: subprocess.Popen[str]
    hello: dict[str, Any]
    fastest_ms: float = 0.0  # the fastest call of the last median_ms

    def median_ms(self, name: str, runs: int, warmup: int) -> float:
        stdin: IO[str] | None = self.proc.stdin
        stdout: IO[str] | None = self.proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(f"{name} {runs} {warmup}\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise BenchError(f"the {self.hello.get('ready')} worker died while running {name}")
        reply = json.loads(line)
        self.fastest_ms = float(reply["min_ms"])
        return float(reply["ms"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


# glibc picks its string functions before the CPUID shim loads; this takes its AVX-512 ones away.
GLIBC_AVX2_HWCAPS = "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD"


def capped_env(env: dict[str, str], cpuid_cap: Path) -> dict[str, str]:
    """`env` for a process that must see an AVX2 CPU through tools/cpuid_cap's shim."""

    def joined(name: str, first: str, sep: str) -> str:
        return sep.join(filter(None, (first, env.get(name))))

    return dict(
        env,
        LD_AUDIT=joined("LD_AUDIT", str(cpuid_cap), ":"),
        LD_PRELOAD=joined("LD_PRELOAD", str(cpuid_cap), " "),
        GLIBC_TUNABLES=joined("GLIBC_TUNABLES", GLIBC_AVX2_HWCAPS, ":"),
    )


def start_worker(
    system: str, d: Path, threads: int, isa: str | None, cpuid_cap: Path | None = None
) -> Worker:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), ETRT_NUM_THREADS=str(threads))
    if isa is not None:
        env["ETRT_MAX_ISA"] = isa
    if cpuid_cap is not None:
        env = capped_env(env, cpuid_cap)
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", system, "--threads", str(threads), "--dir", str(d)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise BenchError(f"the {system} worker ({threads} threads) did not start")
    return Worker(proc, json.loads(line))


# ---------------------------------------------------------------------------------------------
# The sweep


@dataclass(frozen=True)
class Cell:
    model: str
    threads: int
    ms: dict[str, float]  # system -> median ms

    @property
    def best_etrt(self) -> float:
        return min(v for s, v in self.ms.items() if s.startswith("etrt"))


def sweep(
    d: Path,
    names: Sequence[str],
    threads: Sequence[int],
    runs: int,
    rounds: int,
    isa: str | None,
    executorch: bool = False,
    cpuid_cap: Path | None = None,
) -> list[Cell]:
    cells = []
    for n in threads:
        workers = {
            system: start_worker(system, d, n, isa, cpuid_cap)
            for system in ("eager", "ort", "etrt", *((EXECUTORCH,) if executorch else ()))
        }
        if n == threads[0]:
            print(f"etrt: {workers['etrt'].hello['isa']}", flush=True)
            print(f"eager: {workers['eager'].hello['isa']}", flush=True)
        try:
            for name in names:
                systems: tuple[str, ...] = DECODE_SYSTEMS if name in DECODERS else SYSTEMS
                if executorch and name not in DECODERS and (d / f"{name}.et.pte").is_file():
                    systems = (*systems, EXECUTORCH)
                samples: dict[str, list[float]] = {s: [] for s in systems}
                for r in range(rounds):
                    warmup = max(3, runs // 5) if r == 0 else 2
                    for system in systems:
                        worker, _, flavour = system.partition("+")
                        call = f"{name}:{flavour}" if flavour else name
                        samples[system].append(workers[worker].median_ms(call, runs, warmup))
                cell = Cell(name, n, {s: statistics.median(v) for s, v in samples.items()})
                cells.append(cell)
                print(f"  measured {name} at {n} threads", file=sys.stderr, flush=True)
        finally:
            for w in workers.values():
                w.close()
    return cells


def format_table(cells: Sequence[Cell]) -> str:
    one = {c.model: c for c in cells if c.threads == 1}
    et = any(EXECUTORCH in c.ms for c in cells)
    rows = [
        "| model | threads | eager | ORT | etrt | etrt+xnn | "
        + ("ExecuTorch | " if et else "")
        + "best etrt / ORT | "
        + ("best etrt / ExecuTorch | " if et else "")
        + "speed-up eager | ORT | best etrt |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        + (" ---: | ---: |" if et else ""),
    ]
    for c in cells:
        if c.model in DECODERS:
            continue
        base = one.get(c.model)

        def up(now: float, then: float | None) -> str:
            return "" if then is None else f"{then / now:.2f}"

        theirs = c.ms.get(EXECUTORCH)
        et_ms = "" if theirs is None else f"{theirs:.2f}"
        et_ratio = "" if theirs is None else f"{c.best_etrt / theirs:.2f}"
        rows.append(
            f"| {c.model} | {c.threads} | {c.ms['eager']:.2f} | {c.ms['ort']:.2f} | "
            f"{c.ms['etrt']:.2f} | {c.ms['etrt+xnn']:.2f} | "
            + (f"{et_ms} | " if et else "")
            + f"{c.best_etrt / c.ms['ort']:.2f} | "
            + (f"{et_ratio} | " if et else "")
            + f"{up(c.ms['eager'], base.ms['eager'] if base else None)} | "
            f"{up(c.ms['ort'], base.ms['ort'] if base else None)} | "
            f"{up(c.best_etrt, base.best_etrt if base else None)} |"
        )
    decode = [c for c in cells if c.model in DECODERS]
    if len(decode) == len(cells):
        rows = []
    if decode:
        rows += [
            *([""] if rows else []),
            "| decoder | threads | eager tok/s | etrt tok/s | etrt / eager | speed-up eager "
            "| etrt |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
    for c in decode:
        base = one.get(c.model)
        eager, ours = 1e3 / c.ms["eager"], 1e3 / c.ms["etrt"]
        up_eager = f"{base.ms['eager'] / c.ms['eager']:.2f}" if base else ""
        up_ours = f"{base.ms['etrt'] / c.ms['etrt']:.2f}" if base else ""
        rows.append(f"| {c.model} | {c.threads} | {eager:.0f} | {ours:.0f} | {ours / eager:.2f} | "
                    f"{up_eager} | {up_ours} |")  # fmt: skip
    return "\n".join(rows)


def _check_exported(d: Path, names: Sequence[str]) -> None:
    suffixes = (".pt2", ".etrt", ".xnn.etrt", ".onnx", ".inputs.npz")
    missing = [
        f"{n}{s}" for n in names for s in (suffixes[:2] if n in DECODERS else suffixes)
        if not (d / f"{n}{s}").is_file()
    ]  # fmt: skip
    if missing:
        raise BenchError(f"{d} lacks {', '.join(missing[:4])}: run with --export-only first")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--threads", type=int, nargs="+", help="default: 1, 2, 4, ... CPUs")
    parser.add_argument("--runs", type=int, default=30, help="calls per round (median)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--isa", choices=ISAS, help="ETRT_MAX_ISA for etrt's kernels")
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "threads")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--export-only", action="store_true")
    mode.add_argument("--run-only", action="store_true")
    parser.add_argument(
        "--executorch", action="store_true", help="also ExecuTorch + XNNPACK (export and run)"
    )
    parser.add_argument(
        "--cpuid-cap", type=Path, metavar="SO",
        help="tools/cpuid_cap/cpuid_cap.c built as a shared library: loaded into every worker, "
        "so that every system takes its AVX2 kernels",
    )  # fmt: skip
    parser.add_argument(
        "--worker", choices=("eager", "ort", "etrt", EXECUTORCH), help=argparse.SUPPRESS
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    cpus = available_cpus()
    threads = args.threads or default_threads(cpus)
    if args.worker is not None:
        return worker_main(args.worker, args.dir, threads[0])
    if args.runs < 1 or args.rounds < 1 or min(threads) < 1:
        parser.error("--runs, --rounds and every --threads must be at least 1")
    try:
        if not args.run_only:
            export_models(args.dir, args.models, args.executorch)
        if args.export_only:
            return 0
        _check_exported(args.dir, args.models)
        if args.cpuid_cap is not None and not args.cpuid_cap.is_file():
            raise BenchError(f"--cpuid-cap {args.cpuid_cap}: no such file")
        cells = sweep(
            args.dir, args.models, threads, args.runs, args.rounds, args.isa,
            args.executorch, args.cpuid_cap and args.cpuid_cap.resolve(),
        )  # fmt: skip
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{cpus} CPUs available; batch 1, float32, median ms of {args.rounds} rounds")
    print(format_table(cells))
    if args.json is not None:
        figures = {
            "cpus": cpus, "isa": args.isa, "cpuid_cap": args.cpuid_cap is not None,
            "cells": [asdict(c) for c in cells],
        }  # fmt: skip
        _atomic(args.json, lambda p: p.write_text(json.dumps(figures, indent=1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m etrt`: export models to etrt programs and run them."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .errors import EtrtError, MissingOpsError
from .progress import Progress

if TYPE_CHECKING:
    from .program import Program

# Mirrors exporter.BACKENDS; the exporter (and torch) load only when a command needs them.
BACKENDS = ("xnnpack", "xnnpack-all")

log = logging.getLogger("etrt")

# Flags answered by the module etpkg generates into the wheel (etrt/_etpkg.py).
SDK_FLAGS = {
    "--cmake-prefix-path": "print the CMAKE_PREFIX_PATH entry for find_package(etrt)",
    "--pkg-config-path": "print the PKG_CONFIG_PATH entry for the etrt-*.pc files",
    "--includes": "print the compiler flags (-I, -D, -std) for every component",
    "--libs": "print the linker flags for every component library",
}


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m etrt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"etrt {__version__}")
    for flag, help_text in SDK_FLAGS.items():
        parser.add_argument(flag, action="store_true", help=f"{help_text} (installed wheel only)")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more logging; on a failure, also the traceback of its cause",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress on the terminal (none off one)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    exp = sub.add_parser(
        "export",
        help="export a model to an etrt program",
        description="Export a model to an etrt program (the shapes of the example inputs, "
        "or any size within the ranges of dynamic_shapes).",
        epilog="SPEC forms: a .pt2 file saved by torch.export.save (dynamic shapes included); "
        "FILE.py:FACTORY; or package.module:FACTORY. A FACTORY takes no arguments and returns "
        "the pair (model, example_inputs): a torch.nn.Module (eval mode) and a tuple of tensors "
        "to trace it with, or the triple (model, example_inputs, dynamic_shapes), whose third "
        "item goes to torch.export.export (torch.export.Dim ranges, each with a max). Try the "
        "built-in examples: python -m etrt export etrt.examples:mlp -o mlp.etrt (also "
        "etrt.examples:cnn).",
    )
    exp.add_argument(
        "spec",
        help="a .pt2 file from torch.export.save, FILE.py:FACTORY or module:FACTORY, where "
        "FACTORY() returns (model, example_inputs)",
    )
    exp.add_argument("-o", "--output", required=True, help="program file to write (.etrt)")
    exp.add_argument(
        "--backend",
        choices=BACKENDS,
        help="lower the subgraphs this backend supports to delegate calls",
    )
    exp.add_argument(
        "--strict",
        action="store_true",
        help="trace with TorchDynamo (torch.export.export(strict=True)), as transformers' "
        "static-cache decoders need",
    )
    exp.add_argument(
        "--no-dynamic-shapes",
        action="store_true",
        help="ignore the dynamic shapes a FACTORY returns: the program takes the example "
        "inputs' shapes only",
    )
    exp.add_argument(
        "--allow-missing-ops",
        action="store_true",
        help="export even if etrt lacks a kernel for an op",
    )
    exp.add_argument(
        "--quantize",
        choices=("int8", "int8-weight", "int4-weight", "int8-dynamic-int4-weight", "int8-dynamic"),
        help="quantize a FACTORY's model first: int8 is PT2E static int8, calibrated on its "
        "example inputs; the others quantize the linears' weights with torchao (see "
        "docs/quantization.md); a .pt2 quantized beforehand needs no flag",
    )
    exp.add_argument(
        "--group-size",
        type=int,
        help="weights per scale for the int4 schemes (32, 64, 128 or 256; default 32)",
    )
    exp.add_argument(
        "--scale-dtype",
        choices=("float32", "bfloat16", "float16"),
        help="the weights' scales of the weight-only schemes and 8da4w: torchao rounds them to "
        "this dtype and etrt stores them so (default float32; 16 bits make an int4 program "
        "about 1/7 of float32)",
    )
    exp.add_argument(
        "--external-constants",
        action="store_true",
        help="keep the weights out of the program: write them, by parameter name, to a named "
        "data map next to it (OUTPUT with the suffix .ptd)",
    )

    run = sub.add_parser(
        "run",
        help="run a program through the etrt runtime and summarize its outputs",
        description="Run a program once through the etrt runtime and summarize its outputs. "
        "A program exported with --external-constants finds its PROGRAM.ptd beside it.",
    )
    run.add_argument("program", type=Path, help="program file (.etrt)")
    run.add_argument(
        "--input",
        action="append",
        default=[],
        type=Path,
        metavar="X.npy",
        help="one .npy per method input, in order (repeat); random inputs when none is given",
    )
    run.add_argument("--output", type=Path, metavar="OUT.npz", help="write the outputs here")
    run.add_argument("--method", default="forward", help="method to run (default: forward)")
    run.add_argument(
        "--data",
        type=Path,
        metavar="X.ptd",
        help="the named data map of external constants (default: PROGRAM.ptd when it exists)",
    )

    ops = sub.add_parser(
        "ops",
        help="list the core ATen ops of the installed torch and etrt's status for each",
        description="List the core ATen operators of the installed torch and etrt's status "
        "for each: a kernel, rewritten by torch.export, decomposed, or refused with its reason.",
    )
    ops.add_argument("--markdown", action="store_true", help="print the table of docs/operators.md")

    prof = sub.add_parser(
        "profile",
        help="run a program with the profiler: per-operator table, .etdump and a chart",
        description="Run a program with the profiler and print a per-operator table (median "
        "and fastest time of each operator over the runs); keep the events in an .etdump. "
        "With matplotlib (pip install 'etrt[profile]') also draw a timeline of the median run.",
    )
    prof.add_argument("program", type=Path, help="program file (.etrt)")
    prof.add_argument(
        "--input",
        action="append",
        default=[],
        type=Path,
        metavar="X.npy",
        help="one .npy per method input, in order (repeat); random inputs when none is given",
    )
    prof.add_argument("--runs", type=int, default=10, help="recorded runs (default: 10)")
    prof.add_argument(
        "--warmup", type=int, default=1, help="unrecorded runs before them (default: 1)"
    )
    prof.add_argument("--method", default="forward", help="method to run (default: forward)")
    prof.add_argument(
        "--data",
        type=Path,
        metavar="X.ptd",
        help="the named data map of external constants (default: PROGRAM.ptd when it exists)",
    )
    prof.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="CHART.png",
        help="chart to write, with matplotlib (default: PROGRAM with .png)",
    )
    prof.add_argument(
        "--etdump",
        type=Path,
        metavar="OUT.etdump",
        help="where to keep the recorded events (default: PROGRAM with .etdump)",
    )
    prof.add_argument(
        "--shapes", action="store_true", help="also record the shapes each operator produces"
    )
    return parser


def _sdk_flag(flags: list[str]) -> int:
    try:
        sdk = importlib.import_module("etrt._etpkg")
    except ModuleNotFoundError:
        raise EtrtError(f"{' '.join(flags)} is only available from an installed wheel") from None
    return int(sdk.main(flags) or 0)


_NO_TORCH = (
    "exporting needs torch, which the extra 'export' installs: pip install 'etrt[export]' "
    "(torch 2.13; for the CPU build install torch from PyTorch's CPU wheel index first)"
)


def _export(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.spec.endswith(".pt2") and (args.strict or args.no_dynamic_shapes or args.quantize):
        parser.error(
            "--strict, --no-dynamic-shapes and --quantize apply to a FACTORY; a .pt2 is exported"
        )
    if args.group_size is not None and not args.quantize:
        parser.error("--group-size applies with --quantize int4-weight / int8-dynamic-int4-weight")
    scaled = ("int8-weight", "int4-weight", "int8-dynamic-int4-weight")
    if args.scale_dtype is not None and args.quantize not in scaled:
        parser.error(f"--scale-dtype applies with --quantize {' / '.join(scaled)}")
    out_dir = Path(args.output).parent
    if not out_dir.is_dir():
        raise EtrtError(f"cannot write {args.output}: directory {out_dir} does not exist")
    if importlib.util.find_spec("torch") is None:
        raise EtrtError(_NO_TORCH)
    progress = Progress("etrt export", quiet=args.quiet)
    progress.stage("loading the model")
    from .exporter import export, export_program
    from .spec import load_spec

    try:
        spec = load_spec(args.spec)
        if spec.exported is not None:
            program: Program = export_program(
                spec.exported,
                allow_missing_ops=args.allow_missing_ops,
                backend=args.backend,
                external_constants=args.external_constants,
                stage=progress.stage,
            )
        else:
            assert spec.model is not None
            model = spec.model
            if args.quantize:
                from .quantization import quantize

                progress.stage(f"quantizing ({args.quantize})")
                model = quantize(
                    model,
                    spec.example_inputs,
                    scheme=args.quantize,
                    group_size=args.group_size,
                    scale_dtype=args.scale_dtype,
                )
            program = export(
                model,
                spec.example_inputs,
                dynamic_shapes=None if args.no_dynamic_shapes else spec.dynamic_shapes,
                strict=args.strict,
                allow_missing_ops=args.allow_missing_ops,
                backend=args.backend,
                external_constants=args.external_constants,
                stage=progress.stage,
            )
    except MissingOpsError as exc:
        raise EtrtError(exc.advice("--allow-missing-ops")) from exc
    finally:
        progress.done()
    data_path = Path(args.output).with_suffix(".ptd") if args.external_constants else None
    try:
        if data_path is not None:  # the data first: a program never lands without its weights
            program.save_data(data_path)
        path = program.save(args.output)
    except OSError as exc:
        raise EtrtError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    print(
        f"wrote {path} ({len(program)} bytes, {len(program.info.plan.instructions)} instructions, "
        f"arena {program.arena_size} bytes)"
    )
    if data_path is not None and program.data_map is not None:
        print(f"wrote {data_path} ({len(program.data_map)} bytes of external constants)")
    if args.quantize:
        from .program_size import size_breakdown

        print("size by kind of constant:")
        print("\n".join(size_breakdown(program.info).lines()))
    return 0


def _ops(args: argparse.Namespace) -> int:
    from . import opset

    if args.markdown:
        print(opset.markdown(), end="")
        return 0
    rows = opset.statuses()
    width = max(len(r.name) for r in rows)
    for r in rows:
        print(f"{r.name:<{width}}  {r.status:<7}  {'core' if r.core else 'extra'}  {r.note}")
    core = [r for r in rows if r.core]
    print(
        f"{len(core)} core ops: {sum(r.status == 'kernel' for r in core)} with a kernel, "
        f"{sum(r.status == 'refused' for r in core)} refused"
    )
    return 0


def _data_map(program: Path, given: Path | None) -> Path | None:
    """--data, else PROGRAM.ptd when the program keeps its constants outside and that file
    exists (export --external-constants writes it there); says which file it took."""
    if given is not None or not program.is_file():
        return given
    sibling = program.with_suffix(".ptd")
    if not sibling.is_file():
        return None
    from .program import Program

    try:
        needs = Program(program.read_bytes()).has_external_constants
    except (OSError, EtrtError):
        return None  # the run reports the program's own error
    if not needs:
        return None
    print(f"using the named data map {sibling} (found beside the program; --data to choose)")
    return sibling


def _isa_line() -> str:
    """Which instruction set etrt's kernels ran with (ETRT_MAX_ISA may cap it)."""
    from .runtime import isa_info

    return str(isa_info())


def _run(args: argparse.Namespace) -> int:
    from . import run_program

    data = _data_map(args.program, args.data)
    result = run_program.run(args.program, args.method, args.input, data=data)
    given = (
        "random inputs (no --input given, seed 0)" if result.random_inputs else "the given inputs"
    )
    print(f"ran '{result.method}' of {args.program} on {given} in {result.seconds * 1e3:.2f} ms")
    print(_isa_line())
    for i, value in enumerate(result.outputs):
        print(run_program.describe(i, value))
    if args.output is not None:
        print(f"wrote {run_program.save_outputs(args.output, result.outputs)}")
    return 0


def _profile(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import profile

    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    draw = profile.can_draw()
    if args.output is not None and not draw:
        # Asked for a chart that cannot be drawn: fail before the work, not after it.
        raise EtrtError(f"cannot draw {args.output}: {profile.NO_MATPLOTLIB}")
    chart = args.output or args.program.with_suffix(".png")
    dump_path = args.etdump or args.program.with_suffix(".etdump")
    data = _data_map(args.program, args.data)
    progress = Progress("etrt profile", quiet=args.quiet)
    progress.stage("profiling")
    try:
        result = profile.run_profile(
            args.program,
            args.method,
            args.input,
            args.runs,
            dump_path,
            warmup=args.warmup,
            record_shapes=args.shapes,
            progress=progress.count,
            data=data,
        )
    finally:
        progress.done()
    given = (
        "random inputs (no --input given, seed 0)" if result.random_inputs else "the given inputs"
    )
    runs = result.dump.runs
    print(
        f"profiled '{result.method}' of {args.program} on {given}: {len(runs)} runs "
        f"(+{args.warmup} warm-up), median run {result.median_run_ns / 1e3:.2f} us, "
        f"fastest {result.min_run_ns / 1e3:.2f} us"
    )
    print(_isa_line())
    print(profile.format_table(result.stats, runs))
    if result.dump.dropped_events:
        print(f"warning: {result.dump.dropped_events} events did not fit and were dropped")
    if not draw:
        print(f"wrote {result.etdump_path}; no chart: {profile.NO_MATPLOTLIB}")
        return 0
    title = f"{args.program.name} '{result.method}': the median of {len(runs)} runs"
    print(f"wrote {result.etdump_path} and {profile.write_chart(result.stats, runs, chart, title)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0 done, 1 the command failed (one "error: ..." line), 2 a usage error."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING - 10 * min(args.verbose, 2), format="%(levelname)s: %(message)s"
    )
    # torch.export's own deprecation noise, not actionable by a user of this command.
    warnings.filterwarnings(
        "ignore", message=r".*isinstance\(treespec, LeafSpec\)", category=FutureWarning
    )
    try:
        flags = [f for f in SDK_FLAGS if getattr(args, f.lstrip("-").replace("-", "_"))]
        if flags:
            return _sdk_flag(flags)
        if args.command == "export":
            return _export(args, parser)
        if args.command == "run":
            return _run(args)
        if args.command == "ops":
            return _ops(args)
        if args.command == "profile":
            return _profile(args, parser)
        parser.error("no command given")
    except EtrtError as exc:
        if args.verbose and exc.__cause__ is not None:  # -v: where it came from, then the line
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 1

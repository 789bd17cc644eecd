"""`python -m etrt`: export models to etrt programs (more subcommands to come)."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import EtrtError
from .exporter import export, export_program
from .program import Program
from .spec import load_spec

log = logging.getLogger("etrt")

# Flags answered by the module etpkg generates into the wheel (etrt/_etpkg.py).
SDK_FLAGS = ("--cmake-prefix-path", "--pkg-config-path")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m etrt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"etrt {__version__}")
    for flag in SDK_FLAGS:
        parser.add_argument(
            flag, action="store_true", help="print it for C++ consumers (installed wheel only)"
        )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    exp = sub.add_parser("export", help="export a model to an etrt program")
    exp.add_argument(
        "spec", help="a .pt2 file from torch.export.save, FILE.py:factory or module:factory"
    )
    exp.add_argument("-o", "--output", required=True, help="program file to write (.etrt)")
    exp.add_argument(
        "--allow-missing-ops",
        action="store_true",
        help="export even if etrt lacks a kernel for an op",
    )
    return parser


def _sdk_flag(flags: list[str]) -> int:
    try:
        sdk = importlib.import_module("etrt._etpkg")
    except ModuleNotFoundError:
        raise EtrtError(f"{' '.join(flags)} is only available from an installed wheel") from None
    return int(sdk.main(flags) or 0)


def _export(args: argparse.Namespace) -> int:
    out_dir = Path(args.output).parent
    if not out_dir.is_dir():
        raise EtrtError(f"cannot write {args.output}: directory {out_dir} does not exist")
    spec = load_spec(args.spec)
    if spec.exported is not None:
        program: Program = export_program(spec.exported, allow_missing_ops=args.allow_missing_ops)
    else:
        assert spec.model is not None
        program = export(spec.model, spec.example_inputs, allow_missing_ops=args.allow_missing_ops)
    try:
        path = program.save(args.output)
    except OSError as exc:
        raise EtrtError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    print(
        f"wrote {path} ({len(program)} bytes, {len(program.info.plan.instructions)} instructions, "
        f"arena {program.arena_size} bytes)"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
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
            return _export(args)
        parser.print_usage(sys.stderr)
        print("error: no command given", file=sys.stderr)
        return 2
    except EtrtError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

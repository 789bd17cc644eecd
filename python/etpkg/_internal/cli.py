"""Command line: `etpkg wheelify [REF|DIR] [-o DIR] [-v]`, `etpkg verify WHEEL [...]`."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import NoReturn

from etpkg._internal.errors import EtpkgError
from etpkg._internal.verify.cli import add_verify_parser
from etpkg._internal.version import VERSION


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, like every other etpkg error; exit code 2 marks a usage error.
        self.exit(2, f"etpkg: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="etpkg",
        description="Turn a Conan package of a native SDK into a manylinux wheel that is also "
        "a complete C++ SDK.",
    )
    parser.add_argument("--version", action="version", version=f"etpkg {VERSION}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    wheelify = sub.add_parser(
        "wheelify", help="turn a Conan package into a manylinux wheel that is also a C++ SDK"
    )
    wheelify.add_argument(
        "package",
        nargs="?",
        default=".",
        help="package reference (name/version) or conanfile directory "
        "(default: .); the package must be in the Conan cache",
    )
    wheelify.add_argument(
        "-o",
        "--output-dir",
        type=Path,
        default=Path("dist"),
        help="directory for the wheel (default: dist)",
    )
    wheelify.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log progress (-vv: also Conan's and the tools' detail)",
    )
    wheelify.set_defaults(func=_wheelify)
    add_verify_parser(sub)
    return parser


def _wheelify(args: argparse.Namespace) -> int:
    from etpkg._internal.wheelify import wheelify

    print(wheelify(args.package, args.output_dir))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    verbose = int(getattr(args, "verbose", 0) or 0)
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="etpkg: %(message)s")
    # `wheel` logs every archive member at INFO: detail for -vv only.
    logging.getLogger("wheel").setLevel(logging.DEBUG if verbose > 1 else logging.WARNING)
    try:
        result: int = args.func(args)
        return result
    except EtpkgError as exc:
        print(f"etpkg: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("etpkg: error: interrupted", file=sys.stderr)
        return 1

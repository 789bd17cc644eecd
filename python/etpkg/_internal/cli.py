"""Command line: `etpkg wheelify [REF|DIR] [--output-dir DIR] [-pr PROFILE] [-s SETTING]
[-o OPTION] [-r REMOTE [-u]] [-v]`, `etpkg verify WHEEL [...]`, `etpkg publish WHEEL... -r
REPOSITORY [...]`."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import NoReturn

from etpkg._internal import process
from etpkg._internal.conanargs import add_conan_arguments
from etpkg._internal.errors import EtpkgError
from etpkg._internal.parity.cli import add_parity_parser
from etpkg._internal.progress import Progress, add_quiet_flag
from etpkg._internal.publish import add_publish_parser
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
        "wheelify",
        help="turn a Conan package into a manylinux wheel that is also a C++ SDK",
        description="Turn a Conan package in the cache (or installed from a remote first) into "
        "a repaired manylinux wheel that is also a C++ SDK: libraries, headers, a find_package "
        "config and pkg-config files. Prints the wheel's path.",
    )
    wheelify.add_argument(
        "package",
        nargs="?",
        default=".",
        help="package reference (name/version) or conanfile directory "
        "(default: .); the package must be in the Conan cache",
    )
    wheelify.add_argument(
        "-of",
        "--output-dir",
        "--output-folder",
        dest="output_dir",
        type=Path,
        help="directory for the wheel (default: dist)",
    )
    # The binary to wheelify, chosen as `conan install` chooses it (host context).
    wheelify.add_argument(
        "-pr",
        "--profile",
        action="append",
        default=[],
        help="Conan profile (repeatable; default: the default profile)",
    )
    wheelify.add_argument(
        "-s",
        "--settings",
        action="append",
        default=[],
        metavar="SETTING",
        help="Conan setting, e.g. -s build_type=Debug (repeatable)",
    )
    wheelify.add_argument(
        "-o",
        "--options",
        action="append",
        default=[],
        metavar="OPTION",
        help='Conan option, e.g. -o "*:shared=True" (repeatable); a value without "=" '
        "names the output directory instead (what -o meant before it took options)",
    )
    wheelify.add_argument(
        "-r",
        "--remote",
        help="Conan remote to install the package (and its dependencies) from into the cache "
        "first; credentials as Conan takes them (conan remote login, CONAN_LOGIN_USERNAME_<R>)",
    )
    wheelify.add_argument(
        "-u",
        "--update",
        action="store_true",
        help="with --remote: take newer revisions from the remote even when the cache has some",
    )
    # Conan's other spellings (-pr:h, -pr:b, -s:b, -o:a, -c, --build), as conan create takes them.
    add_conan_arguments(wheelify, skip=("-pr", "--profile", "-s", "--settings", "-o", "--options"))
    wheelify.add_argument(
        "--strict",
        action="store_true",
        help="refuse a build-machine path inside an ELF file's data too (default: reported)",
    )
    wheelify.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out the package-folder files matching GLOB (relative to the package "
        "folder, e.g. bin/NAME-config; repeatable)",
    )
    wheelify.add_argument(
        "--depend",
        action="append",
        default=[],
        metavar="PKG[=DIST]",
        help="depend on the required Conan package PKG as an SDK wheel of its own (the one "
        "etpkg makes of it, or the distribution DIST) instead of grafting its libraries: "
        "Requires-Dist, find_dependency, .pc Requires, a RUNPATH into its sibling package "
        "(repeatable; adds to the recipe's etpkg_depend)",
    )
    wheelify.add_argument(
        "--component-alias",
        action="append",
        default=[],
        dest="aliases",
        metavar="NAME=COMPONENT",
        help="let find_package(... COMPONENTS NAME) find the Conan component COMPONENT: an "
        "upstream config's own component name, e.g. Enc=vorbisenc (repeatable; adds to the "
        "recipe's etpkg_component_aliases); other unknown names still fail",
    )
    wheelify.add_argument(
        "--manylinux",
        metavar="X_Y",
        help="the manylinux platform the wheel must get, e.g. 2_28: tags it so, and refuses "
        "files that need newer symbol versions, naming them (default: the package's "
        "etpkg_manylinux property, else the oldest platform the files meet)",
    )
    wheelify.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log progress (-vv: also Conan's and the tools' detail)",
    )
    add_quiet_flag(wheelify)
    wheelify.set_defaults(func=_wheelify, parser=wheelify)
    add_verify_parser(sub)
    add_publish_parser(sub)
    add_parity_parser(sub)
    return parser


def _wheelify(args: argparse.Namespace) -> int:
    from etpkg._internal.conan import Selection
    from etpkg._internal.wheelify import wheelify

    if args.update and args.remote is None:
        args.parser.error("--update needs --remote")
    # A Conan option always holds '='; a value without one is an output dir (the old -o).
    dirs = [o for o in args.options if "=" not in o]
    options = [o for o in args.options if "=" in o]
    if len(dirs) + (args.output_dir is not None) > 1:
        args.parser.error("give the output directory once (--output-dir)")
    out = args.output_dir or (Path(dirs[0]) if dirs else Path("dist"))
    selection = Selection.from_conan_args(
        args.conan_args, Selection(tuple(args.profile), tuple(args.settings), tuple(options))
    )
    progress = Progress("etpkg wheelify", quiet=args.quiet)
    try:
        wheel = wheelify(
            args.package,
            out,
            remote=args.remote,
            update=args.update,
            selection=selection,
            strict=args.strict,
            exclude=args.exclude,
            depend=args.depend,
            manylinux=args.manylinux,
            aliases=args.aliases,
            stage_note=progress.stage,
        )
    finally:
        progress.done()
    print(wheel)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    verbose = int(getattr(args, "verbose", 0) or 0)
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="etpkg: %(message)s")
    # `wheel` logs every archive member at INFO: detail for -vv only.
    logging.getLogger("wheel").setLevel(logging.DEBUG if verbose > 1 else logging.WARNING)
    # urllib3 (under Conan) warns at each retry of a remote; etpkg's error line says the outcome.
    logging.getLogger("urllib3").setLevel(logging.DEBUG if verbose > 1 else logging.ERROR)
    # twine warns and retries on its own; etpkg publish's line says the outcome.
    logging.getLogger("twine").setLevel(logging.DEBUG if verbose > 1 else logging.ERROR)
    with _interrupts_unwind() as received:
        try:
            result: int = args.func(args)
            return result
        except EtpkgError as exc:
            print(f"etpkg: error: {_one_line(str(exc))}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            sig = signal.Signals(received[-1]) if received else signal.SIGINT
            print(f"etpkg: error: interrupted by {sig.name}", file=sys.stderr)
            return 128 + sig.value  # the status a shell reports for a command the signal ended


def _one_line(message: str) -> str:
    return " ".join(message.split())


@contextlib.contextmanager
def _interrupts_unwind() -> Iterator[list[int]]:
    """SIGINT and SIGTERM raise KeyboardInterrupt, so temporary directories are removed and a
    running tool is stopped on the way out; signals after the first are ignored so that this
    cleanup is not cut short."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received  # only the main thread may set handlers; SIGINT still unwinds
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        process.interrupt_now_or_later()

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

"""`etpkg verify WHEEL [--quick] [--cmake V]... [--only CHECK]... [--exempt-headers FILE]
[--strict-headers]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from etpkg._internal.progress import Progress, add_quiet_flag
from etpkg._internal.verify.suite import CHECK_KEYS, read_exempt, verify_wheel
from etpkg._internal.verify.tools import CMAKE_VERSIONS, MODERN

DESCRIPTION = "Prove that an SDK wheel made by etpkg works for C++ consumers."


def add_verify_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Registers `verify`; the command's function is set as `func` (called with the namespace)."""
    p = subparsers.add_parser(
        "verify", help="prove an SDK wheel works for C++ consumers", description=DESCRIPTION
    )
    p.add_argument("wheel", type=Path)
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"one CMake ({MODERN[0]}) and generator ({MODERN[1]}) instead of the full matrix",
    )
    p.add_argument(
        "--cmake",
        action="append",
        metavar="VERSION",
        help=f"CMake versions from PyPI (repeatable; default {' '.join(CMAKE_VERSIONS)})",
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="CHECK",
        help="run only these checks (repeatable or comma-separated), e.g. to run again the one "
        f"that failed: {', '.join(CHECK_KEYS)}",
    )
    p.add_argument(
        "--exempt-headers",
        type=Path,
        metavar="FILE",
        help="headers (relative to include/) expected not to compile alone, one per line; "
        "makes the headers check strict: every other header must compile on its own",
    )
    p.add_argument(
        "--strict-headers",
        action="store_true",
        help="a header that does not compile on its own fails verify (default: a note)",
    )
    p.add_argument(
        "--work",
        type=Path,
        metavar="DIR",
        help="keep the consumer projects and builds in DIR (default: a temporary directory, "
        "removed at the end; nothing is written to the current directory)",
    )
    p.add_argument(
        "--cmake-cache",
        type=Path,
        metavar="DIR",
        help="where the per-version CMake venvs are kept between runs (default: "
        "$ETPKG_CACHE_DIR, else $XDG_CACHE_HOME/etpkg, else ~/.cache/etpkg; then cmake-venvs)",
    )
    p.add_argument(
        "--find-links",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="where the SDK wheels this one depends on are (repeatable; default: the wheel's "
        "directory); each is installed within the wheel's range and the consumers run on both",
    )
    p.add_argument("-v", "--verbose", action="count", default=0, help="log each check as it runs")
    add_quiet_flag(p)
    p.set_defaults(func=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    progress = Progress("etpkg verify", quiet=args.quiet)
    progress.stage("installing the wheel in a fresh venv")
    try:
        report = verify_wheel(
            args.wheel,
            quick=args.quick,
            cmake_versions=args.cmake,
            exempt_headers=read_exempt(args.exempt_headers),
            # An exempt list, even an empty one, is an SDK opting into self-contained headers.
            strict_headers=args.strict_headers or args.exempt_headers is not None,
            work_dir=args.work,
            cmake_cache=args.cmake_cache,
            progress=progress.step,
            find_links=args.find_links,
            only=args.only,
        )
    finally:
        progress.done()
    for r in report.results:
        first = r.detail.splitlines()[0] if r.detail else ""
        print(f"{'PASS' if r.ok else 'FAIL'}  {r.name}  ({r.seconds:.1f}s)  {first[:200]}")
        if not r.ok:
            print("      " + "\n      ".join(r.detail.splitlines()[1:30]))
    passed = len(report.results) - len(report.failures)
    print(
        f"{passed}/{len(report.results)} checks passed for {report.sdk.name} "
        f"{report.sdk.wheel_version}"
    )
    return 0 if report.ok else 1

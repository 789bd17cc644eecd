"""`etpkg parity WHEEL [--reference NAME/VERSION] [-pr ...] [-s ...] [-o ...] [-c ...]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from etpkg._internal.conanargs import add_conan_arguments, as_argv

DESCRIPTION = (
    "Compare what a consumer of the wheel sees with what a consumer of Conan's CMakeDeps and "
    "PkgConfigDeps output sees for the same package (its binary must be in the Conan cache). "
    "Exits 0 with 'no difference', 1 listing each difference on one line."
)


def add_parity_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    p = subparsers.add_parser(
        "parity", help="diff the wheel against CMakeDeps and PkgConfigDeps", description=DESCRIPTION
    )
    p.add_argument("wheel", type=Path)
    p.add_argument(
        "--reference",
        metavar="NAME/VERSION",
        help="the Conan package to compare with (default: the wheel's own name/version)",
    )
    p.add_argument("--work", type=Path, help="where the throwaway directory goes (default: temp)")
    add_conan_arguments(p)
    p.set_defaults(func=parity_command)


def parity_command(args: argparse.Namespace) -> int:
    from etpkg._internal.parity.probe import parity

    report = parity(
        args.wheel, ref=args.reference, conan_args=as_argv(args.conan_args), work=args.work
    )
    for line in report.skipped:
        print(f"skipped {line}")
    for line in report.differences:
        print(line)
    if report.ok:
        print(f"no difference ({len(report.checked)} compared for {report.reference})")
        return 0
    print(f"{len(report.differences)} difference(s) for {report.reference}")
    return 1

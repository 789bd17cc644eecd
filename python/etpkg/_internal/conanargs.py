"""Conan's own spellings of profiles, settings, options and conf (-pr, -pr:h, -pr:b, -s:h,
-o:b, -c, ...) and --build, taken by etpkg's commands exactly as `conan create`/`conan
install` take them, kept in the order given."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

# (short, long) per kind; each gets the :h, :b and :a context suffixes as Conan does.
_KINDS = (
    ("-pr", "--profile", "PROFILE", "Conan profile"),
    ("-s", "--settings", "SETTING", "Conan setting, e.g. build_type=Debug"),
    ("-o", "--options", "OPTION", 'Conan option, e.g. "*:shared=True"'),
    ("-c", "--conf", "CONF", "Conan conf, e.g. tools.build:jobs=2"),
)
CONTEXTS = ("", ":h", ":b", ":a")


class _Append(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        found: list[tuple[str, str]] = list(getattr(namespace, self.dest) or [])
        found.append((self.const, str(values)))
        setattr(namespace, self.dest, found)


def add_conan_arguments(parser: argparse.ArgumentParser, *, skip: Sequence[str] = ()) -> None:
    """Adds the spellings to parser; each value lands in args.conan_args as (flag, value),
    flag in its short form with its context suffix ("-pr:h"). `skip` leaves out spellings a
    command defines itself (e.g. "-o")."""
    parser.set_defaults(conan_args=[])
    for short, long, metavar, meaning in _KINDS:
        for ctx in CONTEXTS:
            names = [n + ctx for n in (short, long) if n + ctx not in skip]
            if not names:
                continue
            context = {"": "host", ":h": "host", ":b": "build", ":a": "all contexts"}[ctx]
            parser.add_argument(
                *names,
                dest="conan_args",
                action=_Append,
                const=short + ctx,
                metavar=metavar,
                help=f"{meaning} ({context}; repeatable)"
                if ctx in ("", ":b")
                else argparse.SUPPRESS,
            )
    parser.add_argument(
        "--build",
        dest="conan_args",
        action=_Append,
        const="--build",
        metavar="POLICY",
        help="Conan's --build policy, e.g. missing (repeatable)",
    )


def as_argv(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """[("-pr:h", "x")] -> ["-pr:h", "x"]; --build joins its value (--build=missing)."""
    argv: list[str] = []
    for flag, value in pairs:
        argv += [f"{flag}={value}"] if flag == "--build" else [flag, value]
    return argv


_FLAGS = {short + ctx for short, _, _, _ in _KINDS for ctx in CONTEXTS}


def as_pairs(argv: Sequence[str]) -> list[tuple[str, str]]:
    """["-pr:h", "x", "--build=missing"] -> [("-pr:h", "x"), ("--build", "missing")]: the
    inverse of as_argv, for the API's conan_args. ValueError names what it cannot read."""
    pairs: list[tuple[str, str]] = []
    it = iter(argv)
    for arg in it:
        if arg.startswith("--build="):
            pairs.append(("--build", arg.split("=", 1)[1]))
        elif arg in _FLAGS or arg == "--build":
            value = next(it, None)
            if value is None:
                raise ValueError(f"Conan argument {arg} lacks its value")
            pairs.append((arg, value))
        else:
            raise ValueError(
                f"{arg!r} is not one of Conan's -pr, -s, -o, -c (with :h, :b or :a) or --build"
            )
    return pairs

"""Progress of etpkg's long commands on stderr: the current step, and a bar where the steps are
counted. Shown only on a terminal and without -q; redrawn in place and cleared at the end, so
the command's own output is the same with or without it. (etrt has its own copy: neither
package depends on the other.)"""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import TextIO

_WIDTH = 24


class Progress:
    def __init__(self, prog: str, *, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.prog = prog
        self.stream = stream or sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.open = False

    def stage(self, label: str) -> None:
        self._draw(f"{self.prog}: {label}...")

    def step(self, label: str, done: int, total: int) -> None:
        filled = _WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (_WIDTH - filled)
        self._draw(f"{self.prog}: [{bar}] {done}/{total} {label}")

    def done(self) -> None:
        if self.open:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.open = False

    def _draw(self, text: str) -> None:
        if self.enabled:
            width = shutil.get_terminal_size().columns - 1  # a wrapped line cannot be redrawn
            self.stream.write(f"\r\x1b[K{text[:width]}")
            self.stream.flush()
            self.open = True


def add_quiet_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress on the terminal (none off one)"
    )

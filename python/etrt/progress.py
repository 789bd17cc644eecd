"""Progress of the CLI's long steps on stderr: stages, and a bar where the work is countable.

Shown only on a terminal and without -q; a line is redrawn in place, at most five times a
second, and cleared when the step ends, so the command's own output stays as it was."""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

_WIDTH = 24


class Progress:
    def __init__(self, prog: str, *, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.prog = prog
        self.stream = stream or sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.label = ""
        self.drawn = 0.0
        self.open = False

    def stage(self, label: str) -> None:
        """A new step: drawn at once."""
        self.label = label
        self._draw(f"{self.prog}: {label}...")

    def count(self, done: int, total: int) -> None:
        """The current step's countable work: a bar, redrawn at most five times a second."""
        now = time.monotonic()
        if done < total and now - self.drawn < 0.2:
            return
        filled = _WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (_WIDTH - filled)
        self._draw(f"{self.prog}: {self.label} [{bar}] {done}/{total}", now)

    def done(self) -> None:
        """Clears the line; what the command prints next starts on a clean line."""
        if self.open:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.open = False

    def _draw(self, text: str, now: float | None = None) -> None:
        if not self.enabled:
            return
        width = shutil.get_terminal_size().columns - 1  # a wrapped line cannot be redrawn
        self.stream.write(f"\r\x1b[K{text[:width]}")
        self.stream.flush()
        self.open = True
        self.drawn = time.monotonic() if now is None else now

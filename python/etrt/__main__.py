"""`python -m etrt`. Nothing heavy is imported before the interrupt handler below is in place,
so Ctrl-C at any point (while the CLI's modules load, or during a command) ends the process
with one line and exit status 130, never a traceback."""

from __future__ import annotations

import sys

INTERRUPTED = 130  # 128 + SIGINT: what a shell reports for a command Ctrl-C stopped


def main() -> int:
    try:
        from etrt.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        print("error: interrupted by SIGINT", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())

"""`python -m etpkg` and the `etpkg` command. Nothing heavy is imported before the interrupt
handler below is in place, so Ctrl-C while the CLI's modules still load ends the process the
way it does during a command: one line, exit status 130, no traceback."""

from __future__ import annotations

import sys

INTERRUPTED = 130  # 128 + SIGINT: what a shell reports for a command Ctrl-C stopped


def main() -> int:
    try:
        from etpkg._internal.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        print("etpkg: error: interrupted by SIGINT", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())

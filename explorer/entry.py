"""The console script's entry point: the top level's `--version` and `--help` are answered by the parsers alone;
everything else runs explorer.cli. The CLI's own imports (the problem types' dataclasses, the atomic writer's
tempfile, json) are most of a bare start's time, and these two answers need none of them (BENCHMARKS.md)."""

from __future__ import annotations

import sys

QUICK = ("--version", "--help", "-h")  # what the TUI's parser answers and exits on


def main() -> int:
    argv = sys.argv[1:]
    if argv and argv[0] in QUICK:
        from explorer.cli_parsers import tui_parser

        tui_parser().parse_args(argv)  # prints and exits (argparse's SystemExit), whatever follows
    from explorer.cli import main as run_command

    return run_command(argv, detach_writes=True)

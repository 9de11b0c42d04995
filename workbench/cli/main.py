"""Entry point: parse arguments, dispatch to the subcommand modules, map errors to exit codes."""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from workbench import __version__

SUBCOMMANDS = ("info", "fold", "audit", "tokens", "report", "lab", "export")
"""Subcommand modules under `workbench.cli`, in `--help` order; absent ones are skipped."""

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Visual debugging workbench for DeepSeek Harness (DSH) session logs.",
        epilog="Exit codes: 0 ok, 1 findings (defects, failed checks), 2 unusable input.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"workbench.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"workbench.cli.{name}":
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return EXIT_UNUSABLE
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `workbench ... | head`: stop quietly, like any Unix tool
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

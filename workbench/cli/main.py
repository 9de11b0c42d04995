"""Entry point: parse arguments, dispatch to the subcommand modules, map errors to exit codes.

No subcommand prints a traceback for any input: an unexpected exception (a workbench bug) becomes
one stderr line naming the subcommand, the file, the seq being worked on when it is known (the
innermost ``seq`` of the failing frames, or the exception's own) and "internal error, please
report", with exit code 2. The global ``--debug`` flag prints the traceback instead. A log that
cannot be read, or that changed on disk while it was used (`LogUnreadable`, `LogChanged`), and
output that cannot be written (a full disk) are one line in their own words, exit code 2; a
closed pipe (``| head``) ends quietly with 0.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from workbench import __version__
from workbench.cli.common import EXIT_OK, EXIT_UNUSABLE
from workbench.errors import LogChanged, LogUnreadable

SUBCOMMANDS = ("info", "fold", "audit", "probes", "tokens", "migrate", "report", "lab", "export", "whatif")
"""Subcommand modules under `workbench.cli`, in `--help` order; absent ones are skipped."""



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Visual debugging workbench for DeepSeek Harness (DSH) session logs.",
        epilog="Exit codes: 0 ok, 1 findings (defects, failed checks), 2 unusable input.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the Python traceback (for a bug report)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"workbench.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"workbench.cli.{name}":
                continue
            raise
        module.register(subparsers)
    for sub in subparsers.choices.values():   # usage errors print the subcommand's usage
        sub.set_defaults(parser=sub)
    return parser


def _escaping_streams() -> None:
    """Log text may hold lone surrogates (valid in a JSON string, not in UTF-8): standard output
    and error print them as ``\\udXXX`` escapes instead of failing mid-line."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _escaping_streams()
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
    except (LogChanged, LogUnreadable) as exc:   # the input, not a bug: its own words
        _one_line(args, str(exc))
        return EXIT_UNUSABLE
    except OSError as exc:   # the output: a full disk, an I/O error (reads raise LogUnreadable)
        where = "stdout: cannot write" if exc.filename is None else str(exc.filename)
        _one_line(args, f"{where}: {exc.strerror or exc}")
        return EXIT_UNUSABLE
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        if args.debug:
            raise
        internal_error(args, exc)
        return EXIT_UNUSABLE


def _seq_of(exc: BaseException) -> int | None:
    """The seq the failing code was working on: the exception's own, else the innermost frame's
    local ``seq`` (an int), else None."""
    own = getattr(exc, "seq", None)
    if type(own) is int:
        return own
    found, tb = None, exc.__traceback__
    while tb is not None:
        value = tb.tb_frame.f_locals.get("seq")
        if type(value) is int:
            found = value
        tb = tb.tb_next
    return found


def _one_line(args: argparse.Namespace, message: str) -> None:
    """`workbench COMMAND: PATH: message` on stderr; nothing when stderr cannot be written."""
    from workbench.cli.common import say
    paths = getattr(args, "paths", None) or [getattr(args, "path", None) or "-"]
    try:
        say(args.command, paths[0] if len(paths) == 1 else " ".join(map(str, paths)), message)
    except OSError:
        pass


def internal_error(args: argparse.Namespace, exc: BaseException) -> None:
    """The one line for an unexpected exception (see the module docstring)."""
    seq = _seq_of(exc)
    where = f"seq {seq}: " if seq is not None else "seq unknown: "
    _one_line(args, f"{where}internal error, please report ({type(exc).__name__}: "
              f"{str(exc)[:200]}); rerun with --debug for the traceback")


if __name__ == "__main__":
    sys.exit(main())

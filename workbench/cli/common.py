"""What every subcommand does alike: load a log or say in one line why not, turn the log's own
defects into the findings exit code, and the options several subcommands share, with one rule
each. Layer: cli.

* ``--at SEQ``: 0..LAST, or negative counting back from the end (-1 is the last event), like a
  Python index; anything else is a usage error (exit 2). Default: the end. The rule is
  `workbench.core.seqs`, which the widget's `goto` and the library's seq arguments share.
* ``--meter NAMES``: comma-separated token meters (one spelling in every subcommand).
* A usage error prints the subcommand's usage line, then ``workbench CMD: error: ...``.
* An output path is checked before any work: its folder must exist and be writable, and it
  must not be the input log (`check_output`).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from workbench.core.seqs import seq_index, seq_span
from workbench.errors import WorkbenchError
from workbench.io.output import not_replaceable, same_file

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: Any) -> str:
    """One printable line: control and bidi characters escaped (log text is untrusted)."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(text))


def short(text: Any, limit: int = 120) -> str:
    """`text` for a listing: at most about `limit` characters (a session id may be megabytes
    long): its head, an ellipsis with the full length, and its tail."""
    text = str(text)
    if len(text) <= limit:
        return text
    keep = max(limit // 2 - 10, 8)
    return f"{text[:keep]}…[{len(text)} chars]…{text[-keep // 2:]}"


def say(command: str, path: Any, message: str) -> None:
    """The one-line stderr message: `workbench COMMAND: PATH: message` (shortened to a line)."""
    path_text, message = str(path), str(message)
    if message.startswith(path_text + ": "):   # loader messages may already name the file
        message = message[len(path_text) + 2:]
    print(f"workbench {command}: {clean(short(path_text, 1000))}: {clean(short(message, 2000))}",
          file=sys.stderr)


def load_or_exit(command: str, path: str, *, audit: bool = False, ride: bool = True) -> Any:
    """The analysed log (`workbench.core.analysis.AnalysedLog.load`: one pass riding on the
    load; `audit`: the pass the audit wants; `ride=False`: none), or the exit code 2 after one line on stderr (missing,
    unreadable, refused, or no session header at all)."""
    from workbench.core.analysis import AnalysedLog
    try:
        analysed = AnalysedLog.load(path, audit=audit, ride=ride)
    except (WorkbenchError, OSError) as exc:
        say(command, path, exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
        return EXIT_UNUSABLE
    log = analysed.log
    if log.verdict == "refused":
        reason = log.defects[0].message if log.defects else "format version not supported"
        say(command, path, f"refused: {reason}")
        return EXIT_UNUSABLE
    if log.header is None:
        reason = log.defects[0].message if log.defects else "no session header"
        say(command, path, f"not a session log: {reason}")
        return EXIT_UNUSABLE
    return analysed


def defects_code(command: str, log: Any) -> int:
    """EXIT_FINDINGS (with one stderr line) when the log itself has defects, else EXIT_OK.

    The output was computed on everything readable; the exit code still says the log is damaged."""
    serious = [d for d in log.defects if d.severity != "warning"]
    if not serious and log.verdict == "clean":
        return EXIT_OK
    first = f"; first: {serious[0].rule}: {serious[0].message}" if serious else ""
    say(command, log.path, f"{len(serious)} defect(s), verdict {log.verdict}{first}")
    return EXIT_FINDINGS


AT_HELP = ("the surface after event SEQ: 0..LAST, or negative counting back from the end "
           "(-1 = the last event, like a Python index); default: the end")
METER_HELP = "comma-separated token meters: dsh, o200k, cl100k, deepseek"


def add_at(parser: argparse.ArgumentParser) -> None:
    """The shared ``--at SEQ`` option (module doc)."""
    parser.add_argument("--at", type=int, metavar="SEQ", help=AT_HELP)


def add_meter(parser: argparse.ArgumentParser, default: str, extra: str = "") -> None:
    """The shared ``--meter NAMES`` option (module doc)."""
    parser.add_argument("--meter", default=default, metavar="NAMES",
                        help=f"{METER_HELP}{extra} (default: {default})")


def usage_error(args: argparse.Namespace, message: str) -> int:
    """Print the subcommand's usage and one error line; returns EXIT_UNUSABLE."""
    parser = getattr(args, "parser", None)
    if parser is not None:
        parser.print_usage(sys.stderr)
    print(f"workbench {getattr(args, 'command', '')}: error: {clean(message)}", file=sys.stderr)
    return EXIT_UNUSABLE


def resolve_at(value: int | None, last: int) -> int | None:
    """The seq ``--at`` names in a log whose last seq is `last` (None: outside the log); the
    library's and the widget's rule (`workbench.core.seqs.seq_index`)."""
    if value is None:
        return last
    return seq_index(value, last)


def at_or_usage(args: argparse.Namespace, last: int) -> int | None:
    """`resolve_at` for ``args.at`` (-1 for the default on an empty log), or None after a
    usage error."""
    at = resolve_at(args.at, last)
    if at is None:
        usage_error(args, f"--at {args.at} is outside the log ({seq_span(last)})")
    return at


def check_output(path: str | os.PathLike, *, inputs: tuple[str | os.PathLike, ...] = (),
                 directory: bool = False, replacing: bool = False) -> str | None:
    """Why `path` cannot be written (None: it can): its folder is missing or not writable, it
    is a directory (or, with `directory`, a file), or it is one of the `inputs`; with
    `replacing` (the writer is `workbench.io.output.write_replacing`), what that writer refuses
    (`not_replaceable`: a device, a FIFO, ...)."""
    target = Path(path)
    special = not_replaceable(target) if replacing else None
    if special is not None:
        return special
    if target.exists():
        for source in inputs:
            if same_file(source, target):
                return f"{target}: refusing to write over the input log"
        if directory and not target.is_dir():
            return f"{target}: exists and is not a directory"
        if not directory and target.is_dir():
            return f"{target}: is a directory"
        if not os.access(target, os.W_OK):
            return f"{target}: not writable"
        return None
    parent = target.parent if str(target.parent) else Path(".")
    nearest = parent
    if directory:      # a store is created with its parents: the nearest existing one counts
        while not nearest.exists() and nearest != nearest.parent:
            nearest = nearest.parent
    if not nearest.is_dir():
        return f"{target}: folder {parent} does not exist"
    if not os.access(nearest, os.W_OK | os.X_OK):
        return f"{target}: folder {nearest} is not writable"
    return None

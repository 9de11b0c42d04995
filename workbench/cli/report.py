"""`workbench report PATH [-o OUT.html]`: the static, offline HTML report of one log. Layer: cli.

PATH is a log file, or a directory (session root, project or session directory) that holds
exactly one session. The report (`workbench.report`) is written whenever the log can be read,
including a damaged one (its readable prefix, with the defects listed). Prints where it wrote,
the size and the time taken, and what was sampled.

Exit codes: 0 the report is written and the log is clean with every audit check passing; 1 the
report is written but the log has defects, a fold violation or failing audit checks; 2 nothing
written: the path is missing or unreadable, the format version is refused, a directory holds
no or several sessions, or OUT cannot be written.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from workbench.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNUSABLE,
    add_meter,
    check_output,
    usage_error,
)
from workbench.cli.info import clean as _clean
from workbench.errors import LogUnreadable, WorkbenchError


def register(subparsers: Any) -> None:
    from workbench.report.limits import MAX_STEPS
    parser = subparsers.add_parser(
        "report", help="write a self-contained HTML report of a log (works offline)",
        description="Write one self-contained HTML file (no network access, plotly included): "
                    "session summary, token timeline with compaction bands, bracket chart, "
                    "audit table, each compaction's hidden range beside its summary, and a "
                    "step viewer of the log and the surface at each model request (keys ←/→).",
        epilog="Exit codes: 0 written and all checks pass, 1 written with findings (defects, "
               "failed checks), 2 nothing written (unreadable or refused input, bad output).")
    parser.add_argument("path", metavar="PATH",
                        help="session log (.jsonl / .jsonl.zstd) or a directory with one session")
    parser.add_argument("-o", "--output", metavar="OUT.html", default=None,
                        help="file to write (default: <log name>.report.html in the current "
                             "directory)")
    add_meter(parser, "dsh", " for the timeline")
    parser.add_argument("--max-steps", type=int, default=MAX_STEPS, metavar="N",
                        help=f"most model requests in the step viewer (default {MAX_STEPS})")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    parser.set_defaults(run=run)


def _say(message: str) -> None:
    print(f"workbench report: {message}", file=sys.stderr)


def resolve_log(path: Path) -> Path:
    """The one log PATH names (a file, or a directory holding exactly one session)."""
    from workbench.io.discover import find_sessions
    if not path.is_dir():
        if not path.exists():
            raise LogUnreadable(f"{path}: no such file or directory")
        return path
    refs = find_sessions(path)
    if len(refs) != 1:
        listed = ", ".join(str(r.path) for r in refs[:5]) + (" …" if len(refs) > 5 else "")
        raise LogUnreadable(f"{path} holds {len(refs)} sessions ({listed}); name one log file")
    return refs[0].path


def default_output(log: Path) -> Path:
    name = log.name
    for suffix in (".zstd", ".jsonl"):
        name = name.removesuffix(suffix)
    return Path.cwd() / f"{name}.report.html"


def run(args: argparse.Namespace) -> int:
    from workbench.frames.meters import check_meters
    from workbench.report import write_report
    from workbench.session import load

    try:
        meters = check_meters(args.meter)
    except WorkbenchError as exc:   # an unknown meter name
        return usage_error(args, str(exc))
    if args.max_steps < 0:
        return usage_error(args, "--max-steps must be >= 0")
    try:
        log = resolve_log(Path(args.path))
    except WorkbenchError as exc:   # no such log, several sessions
        _say(_clean(exc))
        return EXIT_UNUSABLE
    out = Path(args.output) if args.output else default_output(log)
    problem = check_output(out, inputs=(log,))   # before building, not after
    if problem is not None:
        return usage_error(args, f"cannot write the report: {problem}")
    started = time.perf_counter()
    try:
        session = load(log)
    except (WorkbenchError, OSError) as exc:
        message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _say(f"{_clean(log)}: unreadable: {_clean(message)}")
        return EXIT_UNUSABLE
    if session.verdict == "refused":
        first = session.defects[0].message if session.defects else "unsupported format version"
        _say(f"{_clean(log)}: refused: {_clean(first)}")
        return EXIT_UNUSABLE
    if session.log.header is None:
        first = session.defects[0].message if session.defects else "no session header"
        _say(f"{_clean(log)}: not a session log: {_clean(first)}")
        return EXIT_UNUSABLE
    try:
        result = write_report(session, out, meters=meters, max_steps=args.max_steps,
                              started=started)
    except OSError as exc:
        _say(f"{_clean(out)}: cannot write: {_clean(exc.strerror or exc)}")
        return EXIT_UNUSABLE
    if not args.quiet:
        print(f"wrote {os.fspath(result.path)}: {result.bytes / 1e6:.1f} MB in "
              f"{result.seconds:.2f} s ({result.events:,} events, step viewer "
              f"{result.requests_shown:,} of {result.requests_total:,} requests)")
        for note in result.notes:
            print(f"  sampled: {note}")
    if not result.ok:
        problems = []
        if session.defects:
            problems.append(f"{len(session.defects)} defect(s), verdict {session.verdict}")
        if not session.audit.ok:
            problems.append("audit findings")
        _say(f"{_clean(log)}: report written with findings: {'; '.join(problems)}")
        return EXIT_FINDINGS
    return EXIT_OK

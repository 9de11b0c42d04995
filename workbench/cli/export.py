"""`workbench export PATH -o DIR [--frames NAMES] [--workers N]`: every frame as Parquet.
Layer: cli.

PATH is one log file, or a directory (a DSH session root, project or session directory, or a
folder of loose logs). One log writes ``DIR/<frame>.parquet`` for each frame of its `Session`
(`workbench.frames.schema.FRAME_NAMES`); a directory runs `workbench.load_sessions` and writes
the concatenated frames, each with a leading ``session`` key column, plus ``sessions.parquet``.
Dtypes round-trip through Arrow (categoricals, nullable integers, UTC times, seq lists).

Exit codes: 0 written, no defects; 1 written, but some log has defects (or could not be read or
framed: the ``defects`` frame says which and why); 2 nothing written (PATH missing or holding no
session, unknown frame name, DIR not writable, a single log that cannot be read).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.errors import WorkbenchError

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export", help="write every frame of a log or a session root as Parquet",
        description="Build the DataFrames of one session log (or of every session under a "
                    "directory) and write each as DIR/<frame>.parquet.",
        epilog="Exit codes: 0 ok, 1 written but with defects, 2 nothing written.")
    parser.add_argument("path", metavar="PATH", help="session log or directory of sessions")
    parser.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="directory for the .parquet files (created if missing)")
    parser.add_argument("--frames", metavar="NAMES",
                        help="comma-separated frame names (default: all)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="worker processes for a directory (default: all cores)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    parser.set_defaults(run=run)


def _clean(text: Any) -> str:
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in " ".join(str(text).split()))


def _fail(path: str, message: str) -> int:
    print(f"workbench export: {_clean(path)}: {_clean(message)}", file=sys.stderr)
    return EXIT_UNUSABLE


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from workbench.frames.schema import FRAME_NAMES
    names = None
    if args.frames:
        names = [n.strip() for n in args.frames.split(",") if n.strip()]
        unknown = [n for n in names if n not in FRAME_NAMES]
        if unknown:
            return _fail(args.path, f"unknown frame(s) {', '.join(unknown)}; known: "
                                    f"{', '.join(FRAME_NAMES)}")
    source = Path(args.path)
    try:
        if source.is_dir():
            from workbench.frames.many import load_sessions
            result = load_sessions(source, frames=names, workers=args.workers,
                                   progress=not args.quiet)
            written = result.to_parquet(args.output)
            defects = len(result["defects"])
            sessions = len(result["sessions"])
        else:
            from workbench.session import load
            session = load(source)
            if session.verdict == "refused":
                reason = session.defects[0].message if session.defects else "refused"
                return _fail(args.path, f"refused: {reason}")
            if session.log.header is None:
                reason = session.defects[0].message if session.defects else "no session header"
                return _fail(args.path, f"not a session log: {reason}")
            frames = session.frames(names)
            frames.setdefault("defects", session.defects_df())
            from workbench.frames.parquet import write_parquet
            written = write_parquet(frames, args.output)
            defects = len(session.defects)
            sessions = 1
    except (WorkbenchError, OSError) as exc:
        return _fail(args.path, str(exc))
    if not args.quiet:
        print(f"wrote {len(written)} frames of {sessions} session(s) to "
              f"{_clean(args.output)} ({defects} defect(s))")
    return EXIT_FINDINGS if defects else EXIT_OK

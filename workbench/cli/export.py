"""`workbench export PATH -o OUT [--frames NAMES] [--workers N] [--engine E] [--json]`.
Layer: cli.

PATH a directory (a DSH session root, project or session directory, or a folder of loose logs):
OUT is an incremental session store (`workbench.frames.store`): every frame as a few Parquet
bucket files (each log's rows in the bucket of its id) plus a manifest per log; a re-run exports only new or changed logs and drops
deleted ones; query it with `workbench.fleet(OUT)` (DuckDB), or read a frame directory with
pandas, Polars or Spark. ``--engine dask`` runs the export on dask.distributed (a LocalCluster
of worker processes; ``--scheduler ADDRESS`` for a running cluster whose workers see PATH and
OUT at the same paths).

PATH one log file: ``OUT/<frame>.parquet`` for each frame of its `Session` (``--frames`` picks
some). Dtypes round-trip through Arrow (categoricals, nullable integers, UTC times, seq lists).

Exit codes: 0 written, no defects; 1 written, but some log (of the whole store) has defects or
could not be read or framed (the ``defects`` and ``sessions`` frames say which and why); 2
nothing written (PATH missing or holding no session, unknown frame name, --workers below 1, OUT
not writable or a directory that is not a store, a single log that cannot be read).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNUSABLE,
    check_output,
    defects_code,
    usage_error,
)
from workbench.errors import WorkbenchError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export", help="write every frame of a log or a session root as Parquet",
        description="Build the DataFrames of one session log (or of every session under a "
                    "directory) and write each as DIR/<frame>.parquet.",
        epilog="Exit codes: 0 ok, 1 written but with defects, 2 nothing written.")
    parser.add_argument("path", metavar="PATH", help="session log or directory of sessions")
    parser.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="the store (for a directory) or the directory of .parquet files "
                             "(for one log); created if missing")
    parser.add_argument("--frames", metavar="NAMES",
                        help="one log only: comma-separated frame names (default: all)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="worker processes (default: chosen from the work, cores, memory)")
    parser.add_argument("--engine", choices=("pandas", "dask"), default="pandas",
                        help="pandas: a local process pool (default); dask: dask.distributed")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="with --engine dask: the address of a running dask scheduler")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    parser.set_defaults(run=run)


def _clean(text: Any) -> str:
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in " ".join(str(text).split()))


def _fail(path: str, message: str) -> int:
    print(f"workbench export: {_clean(path)}: {_clean(message)}", file=sys.stderr)
    return EXIT_UNUSABLE


def run(args: argparse.Namespace) -> int:
    from pathlib import Path
    source = Path(args.path)
    if args.scheduler and args.engine != "dask":
        return usage_error(args, "--scheduler needs --engine dask")
    if source.is_dir() and args.frames:
        return usage_error(args, "--frames is for one log; a store holds every frame")
    from workbench.errors import InvalidArgument
    from workbench.frames.pool import check_workers
    try:
        check_workers(args.workers)
    except InvalidArgument as exc:
        return usage_error(args, f"--{exc}")
    problem = check_output(args.output, inputs=(source,), directory=True)   # before any work
    if problem is not None:
        return usage_error(args, f"cannot write the output: {problem}")
    if source.is_dir():
        return _export_root(args)
    return _export_log(args, source)


def _export_root(args: argparse.Namespace) -> int:
    import json

    from workbench.errors import StoreUnusable
    from workbench.frames.store import export_store
    client = None
    try:
        if args.scheduler:
            from distributed import Client
            client = Client(args.scheduler)
        summary = export_store(args.path, args.output, engine=args.engine, workers=args.workers,
                               client=client, progress=not (args.quiet or args.json))
    except StoreUnusable as exc:
        return _fail(args.output, str(exc).removeprefix(f"{args.output}: "))
    except (WorkbenchError, OSError) as exc:
        return _fail(args.path, str(exc))
    except (RuntimeError, ValueError) as exc:  # a dask cluster that cannot start or be reached
        return _fail(args.path, f"{type(exc).__name__}: {exc}")
    finally:
        if client is not None:
            client.close()
    if args.json:
        print(json.dumps(summary.as_dict()))
    elif not args.quiet:
        print(f"store {_clean(args.output)}: {summary.sessions} session(s), "
              f"{summary.events:,} events; exported {summary.exported}, unchanged "
              f"{summary.unchanged}, dropped {summary.dropped}; {summary.defects} defect(s), "
              f"{len(summary.unreadable)} unreadable; {summary.seconds:.1f} s")
    return EXIT_FINDINGS if summary.findings else EXIT_OK


def _export_log(args: argparse.Namespace, source: Any) -> int:
    import json

    from workbench.frames.parquet import write_parquet
    from workbench.frames.schema import FRAME_NAMES
    from workbench.session import load
    names = None
    if args.frames:
        names = [n.strip() for n in args.frames.split(",") if n.strip()]
        unknown = [n for n in names if n not in FRAME_NAMES]
        if unknown:
            return _fail(args.path, f"unknown frame(s) {', '.join(unknown)}; known: "
                                    f"{', '.join(FRAME_NAMES)}")
    try:
        session = load(source)
        if session.verdict == "refused":
            reason = session.defects[0].message if session.defects else "refused"
            return _fail(args.path, f"refused: {reason}")
        if session.log.header is None:
            reason = session.defects[0].message if session.defects else "no session header"
            return _fail(args.path, f"not a session log: {reason}")
        frames = session.frames(names)
        frames.setdefault("defects", session.defects_df())
        written = write_parquet(frames, args.output)
    except (WorkbenchError, OSError) as exc:
        return _fail(args.path, str(exc))
    defects = len(session.defects)
    if args.json:
        print(json.dumps({"path": str(source), "output": str(args.output), "frames": len(written),
                          "events": len(session), "defects": defects,
                          "verdict": session.verdict}))
    elif not args.quiet:
        print(f"wrote {len(written)} frames of {_clean(args.path)} to {_clean(args.output)} "
              f"({defects} defect(s))")
    return defects_code("export", session.log)   # every subcommand's rule: a warning is no finding

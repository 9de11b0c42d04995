"""`workbench info PATH [--json]`: what a log file or a session root holds. Layer: cli.

For every session found under PATH (`workbench.io.discover.find_sessions`: a log file, a list of
them, or a DSH session root / project / session directory) the log is loaded
(`workbench.core.analysis.AnalysedLog.load`, no pass riding: the counts come from the store's
type index, the compaction attempts from the load's own fold) and summarised: format version, session id, parent, event count,
counts by type, turns, steps, compaction events and attempts by status (every attempt that did
not complete named in words: failed, interrupted, stale), verdict and defects.

`--follow` keeps a one-line status of one log current as it grows (`workbench.cli.follow`).

Exit codes (`workbench.cli.main`): 0 every log reads cleanly; 1 a log loaded with defects;
2 a log was refused (a format version this build does not read) or is unreadable, or PATH holds
no session. With several sessions, 2 only when none of them could be read: when some are fine
and others bad (unreadable directories, FIFOs, refused or damaged logs), the exit code is 1 and
every entry is listed with what was wrong. Session ids are shortened in the text listing. Problems are reported on stderr as one line naming the file, never as a traceback.
Log text is untrusted: everything printed from a log has its control characters escaped.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNUSABLE,
    clean,
    defects_code,
    short,
)
from workbench.errors import LogRefused, LogUnreadable, WorkbenchError
from workbench.io.payloads import read_events, seqs_of_type, type_reader


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "info", help="summarise a session log or every session under a root",
        description="Summarise a DSH session log (raw or zstd) or every session under a "
                    "session root: format, ids, event counts by type, turns, steps, "
                    "compactions, defects.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a session log file, or a directory holding sessions")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per session (one per line)")
    parser.add_argument("--follow", action="store_true",
                        help="keep one status line of a single log current as it grows, until "
                             "Ctrl-C (exit 130)")
    parser.set_defaults(run=run)


def _fail(path: Any, message: str) -> None:
    print(f"workbench info: {clean(path)}: {clean(short(message, 2000))}", file=sys.stderr)


def _type_counts(events: Any) -> Counter:
    return Counter(map(type_reader(events), range(len(events))))


def _defect_json(defect: Any) -> dict:
    out = {"rule": defect.rule, "severity": defect.severity, "message": defect.message}
    for key in ("line", "frame", "seq", "byte_offset"):
        value = getattr(defect, key, None)
        if value is not None:
            out[key] = value
    return out


def brackets(analysed: Any, counts: Counter) -> tuple[dict[str, int], list[dict]]:
    """Compaction attempts by status, and every one that did not complete (number from 1,
    status, start, end, error). A log whose every start has an end without an error is all
    completed; otherwise the attempts are the analysed log's (`AnalysedLog.compactions`)."""
    starts = counts.get("compaction/start", 0)
    if not starts:
        return {}, []
    events = analysed.events
    if counts.get("compaction/end", 0) == starts:
        ends = read_events(events, seqs_of_type(events, ("compaction/end",)))
        data = [event.get("data") for _, event in ends]
        if not any(isinstance(d, dict) and "error" in d for d in data):
            return {"completed": starts}, []
    from workbench.views.palette import status_name
    records = analysed.compactions.records
    by_status: dict[str, int] = {}
    unfinished = []
    for number, r in enumerate(records, start=1):
        status = status_name(r.status)
        by_status[status] = by_status.get(status, 0) + 1
        if status != "completed":
            unfinished.append({"number": number, "status": status, "start_seq": r.start_seq,
                               "end_seq": r.end_seq, "end_seed_seq": r.end_seed_seq,
                               "error": r.error if isinstance(r.error, str) else None})
    return by_status, unfinished


def _bracket_line(b: dict) -> str:
    where = f"compaction #{b['number']} {b['status']}: compaction/start at seq {b['start_seq']}"
    if b["status"] == "interrupted":
        return f"{where} never closed (the process stopped mid-compaction)"
    if b["status"] == "stale":
        return f"{where} never closed; session/end-seed at seq {b['end_seed_seq']} released it"
    error = f": {clean(b['error'])[:120]}" if b["error"] else ""
    return f"{where}, closed at seq {b['end_seq']} with an error{error}"


def summarise(analysed: Any, path: Path, ref: Any = None) -> dict:
    """The JSON summary of one analysed log (`ref`: its discovery record, for the generations)."""
    log = analysed.log
    counts = _type_counts(log.events)
    by_status, unfinished = brackets(analysed, counts) if log.header is not None else ({}, [])
    header = log.header if isinstance(log.header, dict) else {}
    parent = header.get("parentSession")
    readable = log.header is not None
    return {
        "path": str(path),
        "format_version": analysed.format_version,
        "session_id": log.session_id,
        "parent_session": parent if isinstance(parent, str) else None,
        "events": len(log.events),
        "event_types": {str(k): v for k, v in counts.most_common()},
        "defects": [_defect_json(d) for d in log.defects],
        "encoding": log.encoding,
        "verdict": log.verdict,
        "turns": counts.get("turn/start", 0),
        "steps": counts.get("step/start", 0),
        "compaction_events": sum(v for k, v in counts.items()
                                 if isinstance(k, str) and k.startswith("compaction/")),
        "compactions": by_status,
        "unfinished_compactions": unfinished,
        "repair_closers": len(log.closers),
        "readable": readable,
        "older_generations": [str(p) for p in getattr(ref, "older_generations", ())],
        "notes": list(getattr(ref, "notes", ())),
    }


def _print_text(s: dict) -> None:
    print(clean(s["path"]))
    version = "?" if s["format_version"] is None else s["format_version"]
    print(f"  format v{clean(version)} ({s['encoding']}), session "
          f"{clean(short(s['session_id'] or '?'))}, parent {clean(short(s['parent_session'] or '-'))}")
    print(f"  {s['events']} events, {s['turns']} turns, {s['steps']} steps, "
          f"{s['compaction_events']} compaction events; verdict {s['verdict']}")
    if s["older_generations"]:
        names = ", ".join(clean(Path(p).name) for p in s["older_generations"])
        print(f"  older generations kept beside it (not read): {names}")
    for note in s["notes"]:
        print(f"  note: {clean(note)}")
    if s["compactions"]:
        print("  compactions: " + ", ".join(f"{v} {k}" for k, v in s["compactions"].items()))
    for b in s["unfinished_compactions"]:
        print(f"  {_bracket_line(b)}")
    if s["repair_closers"]:
        print(f"  open turn: crash repair would append {s['repair_closers']} closer event(s)")
    if s["event_types"]:
        kinds = ", ".join(f"{clean(k)} {v}" for k, v in s["event_types"].items())
        print(f"  types: {kinds}")
    if not s["defects"]:
        print("  defects: none")
    for d in s["defects"]:
        where = ", ".join(f"{k} {d[k]}" for k in ("frame", "line", "seq") if k in d)
        where = f" ({where})" if where else ""
        print(f"  defect [{d['severity']}] {clean(d['rule'])}{where}: "
              f"{clean(short(d['message'], 2000))}")


def _load(path: Path) -> Any:
    from workbench.core.analysis import AnalysedLog
    return AnalysedLog.load(path, ride=False)


def info_one(path: Path, as_json: bool, ref: Any = None) -> int:
    """Load and print one log (`ref`: its discovery record); returns its exit code."""
    try:
        analysed = _load(path)
    except LogRefused as exc:
        _fail(path, f"refused: {exc}")
        if as_json:
            print(json.dumps({"path": str(path), "error": str(exc), "refused": True}))
        return EXIT_UNUSABLE
    except (LogUnreadable, OSError) as exc:
        message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _fail(path, f"unreadable: {message}")
        if as_json:
            print(json.dumps({"path": str(path), "error": message}))
        return EXIT_UNUSABLE
    except WorkbenchError as exc:
        _fail(path, f"{type(exc).__name__}: {exc}")
        if as_json:
            print(json.dumps({"path": str(path), "error": str(exc)}))
        return EXIT_UNUSABLE
    summary = summarise(analysed, path, ref)
    if as_json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        _print_text(summary)
    if summary["verdict"] == "refused" or not summary["readable"]:
        reason = "refused" if summary["verdict"] == "refused" else "unreadable, no session header"
        _fail(path, f"{reason}: {summary['defects'][0]['message'] if summary['defects'] else ''}")
        return EXIT_UNUSABLE
    return defects_code("info", analysed.log)   # every subcommand's rule: a warning is no finding


def run(args: argparse.Namespace) -> int:
    from workbench.io.discover import find_sessions
    paths: Sequence[str] = args.paths
    if args.follow:
        if len(paths) != 1:
            print("workbench info: --follow follows one log; give one PATH", file=sys.stderr)
            return EXIT_UNUSABLE
        from workbench.cli.follow import follow_info
        return follow_info(paths[0], args.json)
    try:
        refs = find_sessions(paths[0] if len(paths) == 1 else paths)
    except LogUnreadable as exc:
        print(f"workbench info: {clean(exc)}", file=sys.stderr)
        return EXIT_UNUSABLE
    worst = EXIT_OK
    codes = []
    for ref in refs:
        try:
            code = skipped_one(ref, args.json) if ref.skipped else info_one(ref.path, args.json, ref)
        except OSError:   # writing stdout (a read error is LogUnreadable): one line in `cli.main`
            raise
        except WorkbenchError as exc:   # the log changed on disk while it was read
            _fail(ref.path, str(exc))
            code = EXIT_UNUSABLE
        except MemoryError:
            _fail(ref.path, "out of memory while reading the log")
            code = EXIT_UNUSABLE
        except Exception as exc:  # a bug must still not print a traceback for untrusted input
            _fail(ref.path, f"internal error: {type(exc).__name__}: {exc}")
            code = EXIT_UNUSABLE
        worst = max(worst, code)
        codes.append(code)
        sys.stdout.flush()
    if worst == EXIT_UNUSABLE and any(c != EXIT_UNUSABLE for c in codes):
        return EXIT_FINDINGS  # some sessions read: the bad ones are findings, not a failure
    return worst


def skipped_one(ref: Any, as_json: bool) -> int:
    """List an entry discovery did not read (unreadable directory, FIFO, device)."""
    if as_json:
        print(json.dumps({"path": str(ref.path), "error": ref.skipped, "skipped": True}))
    else:
        print(clean(ref.path))
        print(f"  {clean(ref.skipped)}")
    _fail(ref.path, ref.skipped)
    return EXIT_UNUSABLE

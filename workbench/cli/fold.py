"""`workbench fold PATH [--at SEQ] [--json]`: the model-visible surface of a log at a seq.
Layer: cli.

Prints the surface after applying events 0..SEQ (default: the whole log) as a table of position,
seq, type, role and a short text preview, or as JSON
`{"at", "nodes", "replacements": [{"seq","start","end","shadowed_seqs"}], "replace_generation",
"content_generation"}`. `--follow` keeps reading as DSH writes (`workbench.cli.follow`). A fold violation (v0/v4 spec §4) prints its kind, seq and message and exits
1 (`--json`: `{"error": {"kind","seq","message"}}`); an unreadable or refused file exits 2 with one
line on stderr naming it. Log text is untrusted: previews escape control characters.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from workbench.cli.common import (
    EXIT_FINDINGS,
    EXIT_UNUSABLE,
    add_at,
    at_or_usage,
    defects_code,
    load_or_exit,
    say,
)
from workbench.core.preview import message_preview
from workbench.core.projection import derive_message
from workbench.errors import FoldError
from workbench.io.generations import rules_for

PREVIEW = 60


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fold", help="show the model-visible surface of a log at a seq",
        description="Fold a session log's surface (spec §4) and print its nodes.")
    parser.add_argument("path", metavar="PATH", help="session log (.jsonl or .jsonl.zstd)")
    add_at(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--follow", action="store_true",
                        help="keep reading as the log grows and print each surface change "
                             "(appends, replacements with what they hid, compaction brackets) "
                             "until Ctrl-C (exit 130)")
    parser.set_defaults(run=run)


def _clean(text: str) -> str:
    """One terminal-safe line: whitespace runs collapsed, control characters escaped."""
    text = " ".join(text.split())
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256
                   else f"\\u{ord(c):04x}" for c in text)


def preview(message: Any, width: int = PREVIEW) -> str:
    """A short single-line preview of a message's content (`core.preview.message_preview`,
    which reads only the head of a long text), escaped for a terminal."""
    if message is None:
        return "(no model message)"
    return _clean(message_preview(message, width))


def _version(log: Any) -> int:
    return rules_for(log.format_version)


def _error(path: Any, kind: str, seq: Any, message: str, as_json: bool) -> int:
    """The fold error as the output (stdout) and, as every finding, one stderr line."""
    if as_json:
        print(json.dumps({"error": {"kind": kind, "seq": seq, "message": message}},
                         ensure_ascii=False))
    else:
        print(f"fold error at seq {seq}: {kind}: {_clean(message)}")
    say("fold", path, f"fold error at seq {seq}: {kind}: {message}")
    return EXIT_FINDINGS


def run(args: argparse.Namespace) -> int:
    if args.follow:
        if args.at is not None:
            print("workbench fold: --follow shows the surface at the end; it takes no --at", file=sys.stderr)
            return EXIT_UNUSABLE
        from workbench.cli.follow import follow_fold
        return follow_fold(args.path, args.json)
    analysed = load_or_exit("fold", args.path, ride=False)   # the load's fold is all it reads
    if isinstance(analysed, int):
        return analysed
    log = analysed.log
    events = log.events
    end = len(events) - 1
    at = at_or_usage(args, end)
    if at is None:
        return EXIT_UNUSABLE
    version = _version(log)
    try:
        fold = analysed.surface_fold(at)     # the load's own fold, read at `at`
    except FoldError as err:
        return _error(args.path, err.kind, err.seq, err.message, args.json)
    if args.json:
        print(json.dumps({
            "at": at,
            "nodes": list(fold.nodes),
            "replacements": [{"seq": r.seq, "start": r.start, "end": r.end,
                              "shadowed_seqs": list(r.shadowed)} for r in fold.replacements],
            "replace_generation": fold.replace_generation,
            "content_generation": fold.content_generation,
        }, ensure_ascii=False))
        return defects_code("fold", log)
    print(f"{_clean(args.path)}: surface at seq {at}: {len(fold.nodes)} nodes, "
          f"{fold.replace_generation} replacements")
    print(f"{'pos':>5}  {'seq':>7}  {'type':<18} {'role':<10} preview")
    for position, seq in enumerate(fold.nodes):
        event = events[seq]
        message = derive_message(event, version=version, projected=fold.projected_messages)
        raw = event.get("data")
        if event.get("type") != "user/message" and isinstance(raw, dict):
            raw = raw.get("message")
        role = raw.get("role") if isinstance(raw, dict) else None
        print(f"{position:>5}  {seq:>7}  {_clean(str(event.get('type'))):<18} "
              f"{_clean(str(role or '')):<10} {preview(message)}")
    return defects_code("fold", log)

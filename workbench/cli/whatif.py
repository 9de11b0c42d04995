"""`workbench whatif PATH --policy K=V,... [--summarizer NAME] [--pruner T,H,T] [-o FILE] [--json]`.
Layer: cli.

Replays DSH's automatic compaction over the log with other settings (`Session.whatif.policy`,
`workbench.core.whatif.policy`) and prints the comparison with the real log: one line per side
(compactions, model calls, prompt tokens sent, final and peak surface tokens), then one line per
compaction of each side (where it fired, what it hid, the summary's price, the prefix-cache break).
`--policy` keys: context_window, threshold_ratio, retain_tokens, retain_ratio, headroom_tokens,
max_tokens, compaction_retries (deployment settings are inputs: DSH's defaults otherwise).
`--summarizer`: logged (the log's own summaries, in order; the default), mask, extractive or
truncate. The counterfactual log is written only with `-o FILE` (never over PATH).

`--json` prints `{"policy", "summarizer", "written", "sessions": [...], "compactions": [...]}`.
Exit codes: 0 ok; 1 findings (the input log has defects, or the counterfactual is not clean or
fails the audit); 2 unusable (unreadable or refused file, a bad setting, a counterfactual DSH
could not produce, e.g. more compactions than logged summaries with ``logged``).
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from workbench.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNUSABLE,
    check_output,
    clean,
    load_or_exit,
    say,
    usage_error,
)
from workbench.errors import InvalidArgument, WorkbenchError

_INTS = ("context_window", "retain_tokens", "headroom_tokens", "max_tokens", "compaction_retries")
_FLOATS = ("threshold_ratio", "retain_ratio")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "whatif", help="replay the log's automatic compaction with other settings",
        description="Re-fold a session log as if DSH had compacted with other settings or another "
                    "summarizer, and compare it with the real log (spec v4 §5.3, §5.8).")
    parser.add_argument("path", metavar="PATH", help="session log (.jsonl or .jsonl.zstd), format v4")
    parser.add_argument("--policy", default="", metavar="K=V,...",
                        help="settings, e.g. threshold_ratio=0.6,retain_tokens=4000,headroom_tokens=1024")
    parser.add_argument("--summarizer", default="logged",
                        choices=("logged", "mask", "extractive", "truncate"),
                        help="who writes the summaries (default: the log's own, in order)")
    parser.add_argument("--pruner", metavar="T,H,T",
                        help="tool-result pruner thresholdChars,headChars,tailChars (off by default)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the counterfactual log here")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(run=run)


def parse_policy(text: str, pruner: str | None) -> dict[str, Any]:
    """`k=v,...` into policy settings (ValueError names the bad item)."""
    settings: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in _INTS + _FLOATS:
            raise InvalidArgument(f"bad --policy item {item!r}; keys: {', '.join(_INTS + _FLOATS)}")
        settings[key] = int(value) if key in _INTS else float(value)
    if pruner:
        parts = [int(p) for p in pruner.split(",")]
        if len(parts) != 3:
            raise InvalidArgument("--pruner takes thresholdChars,headChars,tailChars")
        settings["pruner"] = dict(zip(("thresholdChars", "headChars", "tailChars"), parts))
    from workbench.core.whatif.policy import Policy
    Policy(**settings)   # its own checks (InvalidArgument), before the log is read
    return settings


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    cells = [[("" if r.get(c) is None else str(r.get(c))) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(clean(v).ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        settings = parse_policy(args.policy, args.pruner)
    except ValueError as exc:
        return usage_error(args, str(exc))
    problem = (check_output(args.output, inputs=(args.path,), replacing=True)
               if args.output else None)
    if problem is not None:   # before the replay, not after
        return usage_error(args, f"cannot write the counterfactual: {problem}")
    analysed = load_or_exit("whatif", args.path)
    if isinstance(analysed, int):
        return analysed
    from workbench.frames.compare import comparison
    from workbench.session import Session
    log, real = analysed.log, Session(analysed)
    try:
        cf = real.whatif.policy(summarizer=args.summarizer, **settings)
        written = cf.write(args.output) if args.output else None
    except (WorkbenchError, OSError) as exc:
        say("whatif", args.path, str(exc))
        return EXIT_UNUSABLE
    for notice in cf.notices:
        say("whatif", args.path, f"notice: {notice}")
    c = comparison(real, cf)
    found = c.as_json()
    audit_ok = cf.verdict == "clean" and cf.audit.ok
    if args.json:
        print(json.dumps({"policy": settings, "summarizer": args.summarizer, "written": written,
                          "notices": list(cf.notices),
                          "counterfactual_clean": audit_ok, **found}, default=str))
    else:
        print(_table(found["sessions"], ["side", "summarizer", "events", "compactions", "completed",
                                         "failed", "prunes", "model_calls", "prompt_tokens_dsh",
                                         "final_surface_tokens", "peak_surface_tokens"]))
        print()
        print(_table(found["compactions"], ["side", "trigger", "status", "real_seq", "start_seq",
                                            "shadowed_count", "shadowed_tokens", "summary_tokens",
                                            "cache_break_position", "resent_tokens", "recall"]))
        if written:
            print(f"\nwrote {clean(written)}")
    if not audit_ok:
        say("whatif", args.path, f"the counterfactual is {cf.verdict} / audit failed")
        return EXIT_FINDINGS
    return EXIT_FINDINGS if log.verdict != "clean" else EXIT_OK

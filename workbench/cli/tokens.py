"""`workbench tokens PATH [--at SEQ] [--meter dsh,o200k,deepseek,...] [--top N] [--json]`.
Layer: cli.

Token counts of the model-visible surface at a seq (default: the end of the log), side by side for
each meter (`workbench.core.tokens.meters`): the surface total, the request envelope in force (v0
system prompt + tool schemas, v4 tool schemas), and the largest nodes. The meter `usage` adds what
the provider reported for the newest model call at or before SEQ (prompt and output tokens).

`--json` prints `{"at", "meters": {name: {"surface", "envelope", "nodes": [{"seq", "tokens"}]}}}`
with every node in surface order (for `usage`: surface/envelope null, no nodes, plus `prompt`,
`output` and `sampleSeq`). Only the nodes at SEQ and the envelope are counted, never the whole log.

Exit codes: 0 ok; 1 the surface fold fails before SEQ (the error is printed); 2 unusable input
(unreadable or refused file, SEQ outside the log, unknown meter, tokenizer files missing).
Log text is untrusted: previews escape control characters.
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
    add_meter,
    at_or_usage,
    defects_code,
    load_or_exit,
    usage_error,
)
from workbench.cli.fold import preview
from workbench.core.tokens.counts import LogTokens
from workbench.core.tokens.heuristic import derive_message
from workbench.core.tokens.meters import parse_meter_names
from workbench.errors import FoldError, InvalidArgument, MeterError
from workbench.io.generations import rules_for

DEFAULT_METERS = "dsh,o200k,deepseek"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tokens", help="token counts of the surface by several meters",
        description="Count the model-visible surface and request envelope of a session log at a seq "
                    "with the DSH heuristic and real tokenizers, side by side (spec §6).")
    parser.add_argument("path", metavar="PATH", help="session log (.jsonl or .jsonl.zstd)")
    add_at(parser)
    add_meter(parser, DEFAULT_METERS, ", usage (what the provider reported)")
    parser.add_argument("--top", type=int, default=10, metavar="N", help="largest nodes to list (default 10)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(run=run)


def _clean(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in " ".join(text.split()))


def _fail(path: str, message: str) -> int:
    print(f"workbench tokens: {_clean(path)}: {_clean(message)}", file=sys.stderr)
    return EXIT_UNUSABLE


def _split_meters(spec: str) -> tuple[tuple[str, ...], bool]:
    names = [n.strip() for n in spec.split(",") if n.strip()]
    want_usage = "usage" in names
    return parse_meter_names([n for n in names if n != "usage"], empty=want_usage), want_usage


def _usage_entry(tokens: LogTokens, at: int) -> dict[str, Any]:
    sample = tokens.usage_at(at)
    return {"surface": None, "envelope": None, "nodes": [],
            "prompt": None if sample is None else sample.prompt_tokens,
            "output": None if sample is None else sample.output_tokens,
            "sampleSeq": None if sample is None else sample.seq}


def run(args: argparse.Namespace) -> int:
    try:
        meters, want_usage = _split_meters(args.meter)
    except (MeterError, InvalidArgument) as exc:   # an unknown meter, or none named
        return usage_error(args, str(exc))
    analysed = load_or_exit("tokens", args.path, ride=False)   # the load's fold and the log
    if isinstance(analysed, int):
        return analysed
    log = analysed.log
    events = log.events
    end = len(events) - 1
    at = at_or_usage(args, end)
    if at is None:
        return EXIT_UNUSABLE
    version = rules_for(log.format_version)
    try:
        fold = analysed.surface_fold(at)     # the load's own fold, read at `at`
    except FoldError as err:
        if args.json:
            print(json.dumps({"error": {"kind": err.kind, "seq": err.seq, "message": err.message}},
                             ensure_ascii=False))
        else:
            print(f"fold error at seq {err.seq}: {err.kind}: {_clean(err.message)}")
        return EXIT_FINDINGS
    tokens = LogTokens(events, version=version, progress=not args.json)
    nodes = list(fold.nodes)
    in_order = sorted(nodes)   # the nodes' events read once per meter, in seq order
    report: dict[str, Any] = {"at": at, "meters": {}}
    try:
        for name in meters:
            counted = tokens.meter(name).count_events(events, positions=in_order)
            counts = counted[nodes].tolist() if nodes else []
            report["meters"][name] = {
                "surface": sum(counts), "envelope": tokens.envelope_at(name, at),
                "nodes": [{"seq": s, "tokens": c} for s, c in zip(nodes, counts)],
            }
    except MeterError as exc:
        return _fail(args.path, str(exc))
    if want_usage:
        report["meters"]["usage"] = _usage_entry(tokens, at)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return defects_code("tokens", log)
    _print_tables(args, log, report, nodes, version)
    return defects_code("tokens", log)


def _print_tables(args: argparse.Namespace, log: Any, report: dict, nodes: list, version: int) -> None:
    at = report["at"]
    print(f"{_clean(args.path)}: surface at seq {at}: {len(nodes)} nodes ({log.verdict} log, format v{version})")
    counted = [n for n in report["meters"] if n != "usage"]
    print(f"{'meter':<10} {'surface':>9} {'envelope':>9} {'request':>9}")
    for name in counted:
        entry = report["meters"][name]
        print(f"{name:<10} {entry['surface']:>9} {entry['envelope']:>9} {entry['surface'] + entry['envelope']:>9}")
    usage = report["meters"].get("usage")
    if usage is not None:
        if usage["sampleSeq"] is None:
            print("usage      (no provider report at or before this seq)")
        else:
            print(f"usage      provider report at seq {usage['sampleSeq']}: prompt {usage['prompt']}, "
                  f"output {usage['output']}")
    if not counted or not nodes or args.top <= 0:
        return
    lead = counted[0]
    per_node = {name: {n["seq"]: n["tokens"] for n in report["meters"][name]["nodes"]} for name in counted}
    largest = sorted(nodes, key=lambda s: (-per_node[lead][s], s))[: args.top]
    print(f"largest nodes by {lead}:")
    print(f"{'seq':>7}  {'type':<18} " + " ".join(f"{n:>9}" for n in counted) + "  preview")
    events = log.events
    for seq in largest:
        event = events[seq]
        row = " ".join(f"{per_node[n][seq]:>9}" for n in counted)
        message = derive_message(event, version=version)
        print(f"{seq:>7}  {_clean(str(event.get('type'))):<18} {row}  {preview(message)}")

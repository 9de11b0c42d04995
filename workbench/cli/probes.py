"""`workbench probes PATH [-o probes.jsonl]`: probe questions per compaction, as Inspect AI
dataset samples (`workbench.core.quality.probes`: ``input``, ``target``, ``id``, ``metadata``,
one JSON object per line). Layer: cli.

Writes to `-o` (never over the input log), else to stdout; a one-line summary goes to stderr
(`--json`: as JSON on stdout after writing the file; needs `-o`). Exit codes: 0 written, 1 the
log has defects (samples of its readable prefix were still written), 2 unusable input or bad
usage.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from workbench.cli.common import (
    EXIT_OK,
    EXIT_UNUSABLE,
    check_output,
    clean,
    defects_code,
    load_or_exit,
    say,
    usage_error,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "probes", help="probe questions per compaction (Inspect AI json_dataset samples)",
        description="For each compaction, questions whose answer is a kept or lost anchor, "
                    "with the surface right after the compaction as the input.",
        epilog="Exit codes: 0 ok, 1 the log has defects, 2 the log cannot be read.")
    parser.add_argument("path", metavar="PATH", help="session log (.jsonl or .jsonl.zstd)")
    parser.add_argument("-o", "--output", metavar="OUT.jsonl", default=None,
                        help="where to write the samples (default: stdout)")
    parser.add_argument("--per-kind", type=int, default=2, metavar="N",
                        help="samples per anchor kind and status per compaction (default 2)")
    parser.add_argument("--status", choices=("lost", "kept", "all"), default="all",
                        help="which anchors to ask about (default all)")
    parser.add_argument("--json", action="store_true",
                        help="print a JSON summary (with -o)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.per_kind < 1:
        return usage_error(args, f"--per-kind must be at least 1 (got {args.per_kind})")
    if args.json and args.output is None:
        return usage_error(args, "--json needs -o (the samples go to the file)")
    problem = check_output(args.output, inputs=(args.path,)) if args.output else None
    if problem is not None:
        return usage_error(args, f"cannot write the samples: {problem}")
    analysed = load_or_exit("probes", args.path, audit=True)
    if isinstance(analysed, int):
        return analysed
    from workbench.core.quality.probes import probe_samples
    log, quality = analysed.log, analysed.quality
    statuses = ("lost", "kept") if args.status == "all" else (args.status,)
    samples = probe_samples(quality, session_id=log.session_id, per_kind=args.per_kind,
                            statuses=statuses)
    count = 0
    kinds: dict[str, int] = {}
    try:
        out = sys.stdout if args.output is None else open(args.output, "w", encoding="utf-8")
    except OSError as exc:
        say("probes", args.output, exc.strerror or exc)
        return EXIT_UNUSABLE
    try:
        try:
            for sample in samples:
                out.write(json.dumps(sample, ensure_ascii=False) + "\n")
                count += 1
                kind = sample["metadata"]["kind"]
                kinds[kind] = kinds.get(kind, 0) + 1
        finally:
            if out is not sys.stdout:
                out.close()
    except OSError as exc:   # a full disk: no sample file, one line (stdout's: `cli.main`)
        if args.output is None:
            raise
        say("probes", args.output, f"cannot write: {exc.strerror or exc}")
        return EXIT_UNUSABLE
    summary = {"path": args.path, "output": args.output, "samples": count,
               "compactions": len(quality.citations), "by_kind": kinds}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"workbench probes: {clean(args.path)}: {count} sample(s) from "
              f"{len(quality.citations)} compaction(s)"
              + (f" -> {clean(args.output)}" if args.output else ""), file=sys.stderr)
    return max(EXIT_OK, defects_code("probes", log))

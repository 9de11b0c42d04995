"""`workbench audit PATH [--json]`: the compaction audit of one session log. Layer: cli.

Prints one acceptance table per compaction attempt (and per tool-result prune): every check with
pass/fail and its evidence, plus the measurements (hidden vs logged tokens, compression ratio,
prefix-cache break) and the compaction's quality (`workbench.core.quality`): the citation
score, kept / lost / invented anchors by kind, re-fetches, and the net cost ledger by each meter
of `--meter` (default ``dsh``) priced by `--prices` (a model of the default DeepSeek table, or
``HIT,MISS,OUTPUT`` USD per 1M tokens). In a terminal the tables are `rich` tables,
otherwise plain text; `--json` prints `workbench.core.compaction.audit.AuditReport.as_json()`:
`{"session_id", "format_version", "compactions": [...], "prunes": [...], "fold_error",
"protocol", "ok"}`, plus ``"quality"``: ``{"prices", "compactions": [{"compaction_id",
"citation", "ledger": [...], "refetches": [...]}], "session": {meter: totals}}``.

Exit codes: 0 every check passes, 1 any check fails (or the log breaks a fold rule or the
compaction protocol), 2 the log cannot be read (missing, unreadable, no valid header,
refused version).
Log text is untrusted: everything printed from it is escaped (control characters, and rich
markup is never interpreted).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_meter,
    defects_code,
    load_or_exit,
    usage_error,
)
from workbench.core.compaction.audit import AuditReport, CompactionAudit
from workbench.core.quality import node_pricer, price_table, session_totals
from workbench.core.tokens.meters import parse_meter_names
from workbench.errors import InvalidArgument, MeterError, PriceError
from workbench.io.jsjson import stringify
from workbench.io.jsvalues import js_str
from workbench.io.reader import paused_gc


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit", help="check every compaction of a log (brackets, prices, pairing, losses)",
        description="Audit the compaction brackets and tool-result prunes of a session log "
                    "(spec §5): one acceptance table per compaction.",
        epilog="Exit codes: 0 all checks pass, 1 a check fails, 2 the log cannot be read.")
    parser.add_argument("path", metavar="PATH", help="session log (.jsonl or .jsonl.zstd)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_meter(parser, "dsh", " for the compaction savings")
    parser.add_argument("--prices", default=None, metavar="MODEL|HIT,MISS,OUTPUT",
                        help="ledger prices: a model of the default DeepSeek table "
                             "(deepseek-v4-flash, deepseek-v4-pro) or USD per 1M tokens")
    parser.set_defaults(run=run)


def parse_prices(text: str | None) -> Any:
    """`--prices`: a model name or ``HIT,MISS,OUTPUT`` (USD per 1M tokens)."""
    if text is None or "," not in text:
        return price_table(text)
    parts = text.split(",")
    if len(parts) != 3:
        raise PriceError("--prices takes a model name or HIT,MISS,OUTPUT")
    try:
        hit, miss, out = (float(p) for p in parts)
    except ValueError:
        raise PriceError("--prices takes a model name or HIT,MISS,OUTPUT") from None
    return price_table({"cache_hit": hit, "cache_miss": miss, "output": out})


def quality_json(analysed: Any, meters: tuple[str, ...], prices: Any) -> dict[str, Any]:
    """The compaction-quality part of the report (module doc) of an
    `workbench.core.analysis.AnalysedLog`."""
    found, quality = analysed.compactions, analysed.quality
    rows = quality.ledger(node_pricer(analysed.events, version=analysed.version,
                                      timeline=found.timeline, prices=analysed.prices),
                          meters, prices, analysed.model_calls)
    citations = {c.index: c for c in quality.citations}
    ledgers: dict[int, list] = {}
    for row in rows:
        ledgers.setdefault(row.index, []).append(row.as_json())
    refetched: dict[int, list] = {}
    for r in quality.refetches:
        refetched.setdefault(r.index, []).append(
            {"seq": r.seq, "tool": r.tool, "text": r.text, "hidden_seq": r.hidden_seq,
             "result_seq": r.result_seq})
    out = []
    for index, record in enumerate(found.records):
        citation = citations.get(index)
        out.append({"compaction_id": record.compaction_id,
                    "citation": None if citation is None else citation.as_json(),
                    "ledger": ledgers.get(index, []), "refetches": refetched.get(index, [])})
    return {"prices": prices.as_json(), "compactions": out, "session": session_totals(rows)}


def _quality_lines(q: dict[str, Any] | None) -> list[str]:
    if q is None:
        return []
    lines = []
    c = q["citation"]
    if c is not None:
        score = "-" if c["score"] is None else f"{c['score']:.2f}"
        recall = "-" if c["recall"] is None else f"{c['recall']:.2f}"
        lines.append(f"citation score {score} (recall {recall}, precision "
                     f"{c['precision']:.2f}): " + ", ".join(
                         f"{kind} {v['kept']}/{v['kept'] + v['lost']}"
                         + (f" +{v['invented']} invented" if v["invented"] else "")
                         for kind, v in c["kinds"].items() if v["kept"] + v["lost"] + v["invented"]))
        if c["lost"]:
            lines.append("lost e.g.: " + ", ".join(clean(x)[:60] for x in c["lost"][:8]))
        if c["invented"]:
            lines.append("invented? " + ", ".join(clean(x)[:60] for x in c["invented"][:8]))
    if q["refetches"]:
        lines.append(f"re-fetched after it: {len(q['refetches'])} call(s), e.g. "
                     + ", ".join(clean(r["text"])[:60] for r in q["refetches"][:4]))
    for r in q["ledger"]:
        lines.append(f"ledger ({r['meter']}): hidden {r['hidden_tokens']}, summary "
                     f"{r['summary_tokens']}, resent {r['resent_tokens']} ({r['resent_source']}),"
                     f" refetch {r['refetch_tokens']}, net {r['net_tokens']} tokens; summary call "
                     f"{r['call_input_tokens']}+{r['call_output_tokens']} ({r['call_source']});"
                     f" cost {r['cost']:.6f}")
    return lines


def clean(text: Any) -> str:
    """One terminal-safe line: whitespace collapsed, control characters escaped."""
    text = " ".join(str(text).split())
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256
                   else f"\\u{ord(c):04x}" for c in text)


def _trigger(c: CompactionAudit) -> str:
    t = c.record.trigger
    if t.kind == "manual":
        command = f" {t.command}" if t.command else ""
        where = f" (command/run {t.command_seq})" if t.command_seq is not None else ""
        return f"manual{command}{where}"
    return f"{t.kind}, turn {js_str(t.turn)}"


def _seq(value: Any) -> str:
    return "-" if value is None else str(value)


def _headline(c: CompactionAudit) -> str:
    r = c.record
    duration = f", {r.duration_ms:g} ms" if r.duration_ms is not None else ""
    return (f"compaction {clean(js_str(r.compaction_id))} [{r.status}; {_trigger(c)}] "
            f"start {_seq(r.start_seq)} summary {_seq(r.summary_seq)} replacement "
            f"{_seq(r.replacement_seq)} end {_seq(r.end_seq)}{duration}")


def _measurements(c: CompactionAudit, q: dict[str, Any] | None = None) -> list[str]:
    r = c.record
    lines = []
    if r.error is not None and r.status == "failed":
        lines.append(f"error: {clean(r.error)}")
    if r.provider is not None or r.model is not None:
        usage = f", usage {clean(stringify(r.usage))}" if r.usage is not None else ""
        lines.append(f"summary call: {clean(js_str(r.provider))}/{clean(js_str(r.model))}{usage}")
    if c.hidden_seqs is not None:
        ratio = f", ratio {c.compression_ratio:.1f}" if c.compression_ratio is not None else ""
        lines.append(f"hidden {len(c.hidden_seqs)} nodes, {c.computed_shadowed_tokens} tokens "
                     f"(logged {clean(js_str(r.logged_shadowed_tokens))}) -> added "
                     f"{c.summary_tokens} tokens{ratio}")
    if c.cache_break is not None:
        b = c.cache_break
        env = " (envelope changed)" if b.envelope_changed else ""
        lines.append(f"cache break: message {b.position} of {b.messages_before}, "
                     f"{b.prefix_tokens} tokens reusable{env} (request {b.request_before_seq} "
                     f"-> {b.request_after_seq})")
    return lines + _quality_lines(q)


def _log_lines(report: AuditReport) -> list[str]:
    lines = []
    if report.fold_error is not None:
        e = report.fold_error
        lines.append(f"FAIL fold: seq {e.seq}: {e.kind}: {clean(e.message)}")
    for v in report.protocol:
        lines.append(f"FAIL protocol ({clean(v.name)}): seq {_seq(v.seq)}: {clean(v.message)}")
    if report.unpriced_replacements:
        lines.append("note: replacements outside any compaction or prune (unpriced): "
                     + ", ".join(str(s) for s in report.unpriced_replacements))
    return lines


def _summary(report: AuditReport, quality: dict[str, Any]) -> str:
    failed = sum(not c.ok for a in (*report.compactions, *report.prunes) for c in a.checks)
    failed += len(report.protocol) + (report.fold_error is not None)
    state = "all checks pass" if report.ok else f"{failed} failed"
    ledger = "; ".join(f"{meter}: net {int(t['net_tokens'])} tokens, cost {t['cost']:.6f} "
                       f"{quality['prices']['currency']}"
                       for meter, t in quality["session"].items())
    return (f"{len(report.compactions)} compactions, {len(report.prunes)} prunes: {state}"
            + (f"\nsession ledger ({quality['prices']['name']} prices): {ledger}"
               if ledger else ""))


def print_plain(report: AuditReport, path: str, quality: dict[str, Any]) -> None:
    print(f"{clean(path)}: session {clean(js_str(report.session_id))} "
          f"(format v{report.format_version})")
    for c, q in zip(report.compactions, quality["compactions"]):
        print(_headline(c))
        for line in _measurements(c, q):
            print(f"  {line}")
        for check in c.checks:
            print(f"  {'PASS' if check.ok else 'FAIL'} {check.name:<30} {clean(check.detail)}")
    for p in report.prunes:
        r = p.record
        print(f"prune {r.prune_seq}: original {_seq(r.original_seq)} -> replacement "
              f"{_seq(r.replacement_seq)}, call {clean(js_str(r.call_id))}, "
              f"{_seq(r.chars_before)} -> {_seq(r.chars_after)} code points")
        for check in p.checks:
            print(f"  {'PASS' if check.ok else 'FAIL'} {check.name:<30} {clean(check.detail)}")
    for line in _log_lines(report):
        print(line)
    print(_summary(report, quality))


def print_rich(report: AuditReport, path: str, quality: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    console.print(Text(f"{clean(path)}: session {clean(js_str(report.session_id))} "
                       f"(format v{report.format_version})", style="bold"))

    def table(title: str, notes: list[str], checks: Any) -> Table:
        t = Table(title=Text(title), caption=Text("\n".join(notes)), caption_justify="left",
                  title_justify="left", expand=False)
        t.add_column("check")
        t.add_column("result")
        t.add_column("evidence", overflow="fold")
        for check in checks:
            t.add_row(Text(check.name), Text("PASS", style="green") if check.ok
                      else Text("FAIL", style="bold red"), Text(clean(check.detail)))
        return t

    for c, q in zip(report.compactions, quality["compactions"]):
        console.print(table(_headline(c), _measurements(c, q), c.checks))
    for p in report.prunes:
        r = p.record
        console.print(table(f"prune {r.prune_seq}: original {_seq(r.original_seq)} -> "
                            f"replacement {_seq(r.replacement_seq)}",
                            [f"call {clean(js_str(r.call_id))}, {_seq(r.chars_before)} -> "
                             f"{_seq(r.chars_after)} code points"], p.checks))
    for line in _log_lines(report):
        console.print(Text(line, style="yellow" if line.startswith("note") else "bold red"))
    console.print(Text(_summary(report, quality), style="bold green" if report.ok else "bold red"))


def run(args: argparse.Namespace) -> int:
    try:   # usage first: a bad option is reported before the log is read
        meters, prices = parse_meter_names(args.meter), parse_prices(args.prices)
    except (MeterError, InvalidArgument) as exc:   # PriceError is an InvalidArgument
        return usage_error(args, str(exc))
    analysed = load_or_exit("audit", args.path, audit=True)
    if isinstance(analysed, int):
        return analysed
    with paused_gc():   # the loaded log's heap is large: a collection would rescan all of it
        report = analysed.audit
        quality = quality_json(analysed, meters, prices)
        return _print(args, analysed.log, report, quality)


def _print(args: argparse.Namespace, log: Any, report: AuditReport, quality: dict[str, Any]
           ) -> int:
    if args.json:
        print(stringify(report.as_json() | {"quality": quality}))
    elif sys.stdout.isatty():
        print_rich(report, args.path, quality)
    else:
        print_plain(report, args.path, quality)
    return max(EXIT_OK if report.ok else EXIT_FINDINGS, defects_code("audit", log))

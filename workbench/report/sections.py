"""The report's HTML sections: summary, audit, compactions, defects. Layer: report.

Every string that comes from the log (ids, previews, summaries, errors, check evidence, file
paths) goes through `workbench.views.html.escape`, the project's one escaping helper, or through
the `*_html()` formatters built on it; numbers are formatted here from ints. Nothing builds a
URL, an ``href`` or an event-handler attribute from log data.

Large logs: at most `max_details` compactions get the hidden-range / summary / lost-facts
panel and at most `max_hidden_rows` hidden nodes are listed per compaction; the tables say how
much was left out.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from workbench.io.jsjson import ABSENT
from workbench.io.jsvalues import js_str
from workbench.report.limits import MAX_DETAILS, MAX_HIDDEN_ROWS, MAX_SUMMARY_CHARS
from workbench.report.quality import citation_facts
from workbench.views.data import view_data
from workbench.views.html import SurfaceRow, defects_html, escape, shorten, surface_table_html
from workbench.views import limits
from workbench.views.palette import STATUS_COLORS, STATUS_MEANING, status_name
from workbench.views.payload import utc_moment

if TYPE_CHECKING:
    from workbench.core.compaction.audit import AuditReport, CompactionAudit
    from workbench.session import Session



def kv_table(rows: Iterable[tuple[str, str]]) -> str:
    """Two-column table; the values must already be HTML (escaped)."""
    body = "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="wb-kv"><tbody>{body}</tbody></table>'


def _time(ms: Any) -> str | None:
    moment = utc_moment(ms)
    return None if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(ms: float) -> str:
    seconds = int(ms // 1000)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    text = f"{hours:d}:{minutes:02d}:{seconds:02d}"
    return f"{days} d {text}" if days else text


def _status(status: Any) -> str:
    name = status_name(status)
    color = STATUS_COLORS.get(name, "#888")
    return f'<span style="color:{color};font-weight:bold">{escape(name)}</span>'


def summary_section(session: Session, *, file_bytes: int | None) -> str:
    """Who the session is and what it contains."""
    info = session.summary()
    log = session.log
    header = log.header if isinstance(log.header, dict) else {}
    statuses = ", ".join(f"{_status(k)} {int(v)}" for k, v in sorted(info["compactions"].items()))
    rows: list[tuple[str, str]] = [
        ("file", escape(os.path.basename(str(info["path"])))),
        ("session", escape(info["session_id"])),
        ("format", f"v{escape(log.format_version)} · {escape(log.encoding)}"
                   + (f" · {file_bytes:,} bytes" if file_bytes is not None else "")),
        ("verdict", escape(info["verdict"])),
    ]
    for key in ("cwd", "parentSession", "origin", "delegationDepth", "isSeeded", "seedLength"):
        if key in header:
            rows.append((key, escape(header[key])))
    events = session.events
    if len(events) and session.has_times:
        first, last = _time(events[0].get("time")), _time(events[-1].get("time"))
        if first and last:
            span = events[-1]["time"] - events[0]["time"]
            rows.append(("time", f"{escape(first)} → {escape(last)} ({escape(_duration(span))})"))
    rows += [
        ("events", f"{info['events']:,}"),
        ("turns", f"{info['turns']:,}"),
        ("model requests", f"{len(session.attempts):,}"),
        ("compactions", statuses or "none"),
        ("tool-result prunes", f"{info['prunes']:,}"),
        ("final surface", f"{info['surface_nodes']:,} nodes · {info['surface_tokens']:,} tokens "
                          "(DSH heuristic)"),
        ("defects", f'<span class="wb-bad">{info["defects"]:,}</span>' if info["defects"]
         else "none"),
    ]
    return kv_table(rows)


def defects_section(session: Session, limit: int | None = None) -> str:
    """Every problem the loader found, up to `limit` (default
    `workbench.views.limits.MAX_DEFECT_ROWS`; the valid prefix is what the report shows), as
    the widget's header shows them (`workbench.views.html.defects_html`)."""
    defects = session.defects
    if not defects:
        return "<p>The loader found no defect.</p>"
    return ('<p class="wb-note">The report shows the readable prefix of the log.</p>'
            + defects_html(defects, limits.MAX_DEFECT_ROWS if limit is None else limit))


# -- audit ------------------------------------------------------------------------------------

def _seq(value: Any) -> str:
    return "–" if value is None else escape(value)


def _num(value: Any) -> str:
    return "–" if value is None else f"{int(value):,}"


def _checks_cell(c: CompactionAudit | Any) -> str:
    failed = [k.name for k in c.checks if not k.ok]
    passed = len(c.checks) - len(failed)
    text = f'<span class="wb-ok">✓ {passed}</span>'
    if failed:
        text += f' <span class="wb-bad">✗ {escape(", ".join(failed))}</span>'
    return text


def _check_list(checks: Sequence[Any]) -> str:
    items = "".join(
        f'<li><span class="{"wb-ok" if k.ok else "wb-bad"}">{"PASS" if k.ok else "FAIL"}</span> '
        f"<b>{escape(k.name)}</b>: {escape(k.detail)}</li>" for k in checks)
    return f"<ul>{items}</ul>"


def audit_section(report: AuditReport) -> str:
    """One row per compaction attempt and per prune, each with its checks and evidence."""
    parts = []
    if report.fold_error is not None:
        e = report.fold_error
        parts.append(f'<p class="wb-bad">Fold error at seq {_seq(e.seq)} ({escape(e.kind)}): '
                     f"{escape(e.message)}</p>")
    for v in report.protocol:
        parts.append(f'<p class="wb-bad">Protocol violation at seq {_seq(v.seq)} '
                     f"({escape(v.name)}): {escape(v.message)}</p>")
    if report.unpriced_replacements:
        seqs = ", ".join(str(int(s)) for s in report.unpriced_replacements[:50])
        parts.append(f'<p class="wb-note">Replacements without a compaction or prune record '
                     f"(unpriced): {seqs}</p>")
    if report.compactions:
        rows = []
        for i, c in enumerate(report.compactions):
            r = c.record
            ratio = "–" if c.compression_ratio is None else f"{c.compression_ratio:.1f}×"
            trigger = r.trigger.kind + (f" (turn {escape(js_str(r.trigger.turn))})"
                                        if r.trigger.turn is not None else "")
            rows.append(
                f'<tr id="wb-audit-{i + 1}"><td>{i + 1}</td>'
                f"<td>{escape(shorten(js_str(r.compaction_id), 40))}</td>"
                f"<td>{_status(r.status)}</td><td>{escape(trigger)}</td>"
                f"<td>{_seq(r.start_seq)}</td><td>{_seq(r.summary_seq)}</td>"
                f"<td>{_seq(r.replacement_seq)}</td><td>{_seq(r.end_seq)}</td>"
                f"<td>{_num(None if c.hidden_seqs is None else len(c.hidden_seqs))}</td>"
                f"<td>{_num(c.computed_shadowed_tokens)}</td><td>{_num(c.summary_tokens)}</td>"
                f"<td>{ratio}</td><td>{_checks_cell(c)}"
                f"<details><summary>evidence</summary>{_check_list(c.checks)}</details></td></tr>")
        parts.append(
            '<table class="wb-table wb-audit"><thead><tr><th>#</th><th>compaction</th>'
            "<th>status</th><th>trigger</th><th>start</th><th>summary</th><th>replacement</th>"
            "<th>end</th><th>hidden nodes</th><th>hidden tokens</th><th>added tokens</th>"
            f"<th>ratio</th><th>checks</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    else:
        parts.append("<p>No compaction attempt in this log.</p>")
    if report.prunes:
        rows = []
        for p in report.prunes:
            r = p.record
            rows.append(
                f"<tr><td>{_seq(r.prune_seq)}</td><td>{_seq(r.original_seq)}</td>"
                f"<td>{_seq(r.replacement_seq)}</td><td>{_num(r.original_tokens)} → "
                f"{_num(r.replacement_tokens)}</td><td>{_num(r.chars_before)} → "
                f"{_num(r.chars_after)}</td><td>{_checks_cell(p)}<details><summary>evidence"
                f"</summary>{_check_list(p.checks)}</details></td></tr>")
        parts.append(
            "<h3>Tool-result prunes</h3><table class=\"wb-table wb-audit\"><thead><tr>"
            "<th>prune</th><th>original</th><th>replacement</th><th>tokens</th><th>characters</th>"
            f"<th>checks</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    verdict = ('<p class="wb-ok">Every check passes.</p>' if report.ok
               else '<p class="wb-bad">Some checks fail (see the ✗ rows).</p>')
    return verdict + "".join(parts)


# -- per compaction: hidden range beside the summary ------------------------------------------

def _summary_text(summary: Any) -> str:
    if not isinstance(summary, list):
        return ""
    return "\n\n".join(b["text"] for b in summary
                       if isinstance(b, dict) and isinstance(b.get("text"), str))


def bracket_span(record: Any) -> str:
    """Where a bracket sits, in words: ``seq 145–149``, or for one that never closed ``seq 255,
    never closed (interrupted: …)`` with the status meaning (escaped HTML)."""
    start = _seq(record.start_seq)
    if record.end_seq is not None:
        return f"seq {start}–{_seq(record.end_seq)}"
    name = status_name(record.status)
    meaning = STATUS_MEANING.get(name, "")
    released = (f", released by session/end-seed at seq {_seq(record.end_seed_seq)}"
                if getattr(record, "end_seed_seq", None) is not None else "")
    return (f"seq {start}, never closed{escape(released)}"
            + (f' <span class="wb-note-inline">({escape(name)}: {escape(meaning)})</span>'
               if meaning else ""))


def compaction_details(session: Session, report: AuditReport, *,
                       max_details: int = MAX_DETAILS,
                       max_hidden_rows: int = MAX_HIDDEN_ROWS) -> tuple[str, int]:
    """Per compaction: the hidden nodes beside the summary and the facts it lost.

    Returns the HTML and how many compactions were left out (beyond `max_details`)."""
    data = view_data(session)
    parts = []
    audits = report.compactions
    for i, c in enumerate(audits[:max_details]):
        r = c.record
        hidden = c.hidden_seqs or ()
        rows = [SurfaceRow(position=k, seq=s, type=data.type[s] or "", role=data.role[s],
                           tokens=int(data.tokens[s]), preview=data.preview[s] or "")
                for k, s in enumerate(hidden[:max_hidden_rows])]
        more = (f'<p class="wb-more">… {len(hidden) - max_hidden_rows:,} more hidden nodes</p>'
                if len(hidden) > max_hidden_rows else "")
        left = (surface_table_html(rows, caption=f"hidden: {len(hidden):,} nodes, "
                                                f"{_num(c.computed_shadowed_tokens)} tokens")
                + more) if hidden else "<p>Nothing was hidden.</p>"
        text = _summary_text(r.summary)
        cut = text[:MAX_SUMMARY_CHARS]
        tail = (f'<p class="wb-more">… {len(text) - len(cut):,} more characters</p>'
                if len(cut) < len(text) else "")
        right = []
        if r.error is not ABSENT and r.error is not None:
            right.append(f'<p class="wb-bad">error: {escape(js_str(r.error))}</p>')
        if r.summary_seq is not None:
            right.append(f"<h3>summary (seq {_seq(r.summary_seq)}, {_num(c.summary_tokens)} "
                         f'tokens added)</h3><pre class="wb-pre">{escape(cut)}</pre>{tail}')
        else:
            right.append("<p>No summary was logged.</p>")
        facts = citation_facts(session, i)
        if facts:
            right.append(f"<h3>what the summary kept, lost and invented</h3>{facts}")
        if c.cache_break is not None:
            cb = c.cache_break
            right.append(f"<p>Prefix cache: the first request after it (seq "
                         f"{_seq(cb.request_after_seq)}) shares {cb.position:,} leading messages"
                         f" ({cb.prefix_tokens:,} tokens) with the last one before (seq "
                         f"{_seq(cb.request_before_seq)}).</p>")
        parts.append(
            f'<section class="wb-compaction" id="wb-compaction-{i + 1}"><h3>#{i + 1} '
            f"{_status(r.status)} · {bracket_span(r)} · "
            f"{escape(r.trigger.kind)}</h3><div class=\"wb-split\"><div>{left}</div>"
            f"<div>{''.join(right)}</div></div></section>")
    return "".join(parts), max(0, len(audits) - max_details)

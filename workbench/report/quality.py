"""The report's compaction-quality section: one row per compaction with its citation score,
recall by kind, candidate inventions, re-fetches and the net cost ledger (dsh meter), and the
session's totals. Layer: report. Every log string goes through the one escaping helper."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.compaction.anchors import KINDS
from workbench.views.html import escape, shorten

if TYPE_CHECKING:
    from workbench.session import Session

MAX_ROWS = 500
"""Compactions listed in the quality table (the frames hold every one)."""
MAX_LIST = 12
_SOURCE = {"estimated": " est.", "logged": " logged", "none": ""}


def _f(value: Any, digits: int = 2) -> str:
    return "–" if value is None or value != value else f"{value:.{digits}f}"


def quality_section(session: Session) -> str:
    """The quality table and the session ledger (module doc)."""
    if not len(session):
        return "<p>The log has no events.</p>"
    citations = {c.index: c for c in session.quality.citations}
    rows = session.ledger_rows(("dsh",))
    refetch: dict[int, int] = {}
    for r in session.quality.refetches:
        refetch[r.index] = refetch.get(r.index, 0) + 1
    if not rows:
        return "<p>No compaction attempt in this log.</p>"
    head = "".join(f"<th>{k}</th>" for k in KINDS)
    body = []
    for row in rows[:MAX_ROWS]:
        c = citations.get(row.index)
        kinds = "".join(
            f"<td>{'–' if c is None or c.recall_of(k) is None else _recall(c, k)}</td>"
            for k in KINDS)
        lost = "" if c is None else ", ".join(escape(shorten(t, 60))
                                              for t in c.of("lost")[:MAX_LIST])
        invented = "" if c is None else ", ".join(escape(shorten(t, 60))
                                                  for t in c.of("invented")[:MAX_LIST])
        details = (f"<details><summary>lists</summary><p><b>lost</b>: {lost or 'none'}</p>"
                   f"<p><b>invented?</b> {invented or 'none'}</p></details>") if c else ""
        body.append(
            f"<tr><td>{row.index + 1}</td><td title=\"{escape(str(row.compaction_id))}\">"
            f"{escape(str(row.compaction_id)[:8])}</td>"
            f"<td>{_f(None if c is None else c.score)}</td>"
            f"<td>{_f(None if c is None else c.recall)}</td>"
            f"<td>{_f(None if c is None else c.precision)}</td>{kinds}"
            f"<td>{0 if c is None else len(c.of('invented'))}</td>"
            f"<td>{refetch.get(row.index, 0)}</td><td>{row.hidden_tokens:,}</td>"
            f"<td>{row.summary_tokens:,}</td><td>{row.resent_tokens:,}"
            f"{_SOURCE.get(row.resent_source, '')}</td><td>{row.refetch_tokens:,}</td>"
            f"<td>{row.net_tokens:,}</td><td>{row.cost:.6f}</td><td>{details}</td></tr>")
    more = (f'<p class="wb-more">… {len(rows) - MAX_ROWS:,} more compactions in the frames</p>'
            if len(rows) > MAX_ROWS else "")
    totals = session.ledger_df(("dsh",), per="session")
    total = totals.iloc[0] if len(totals) else None
    summary = "" if total is None else (
        f"<p>Session ledger (dsh): {int(total['shadowed_tokens']):,} tokens hidden, "
        f"{int(total['summary_tokens']):,} added, {int(total['resent_tokens']):,} re-sent, "
        f"{int(total['refetch_tokens']):,} re-fetched: net {int(total['net_tokens']):,}; cost "
        f"{total['cost']:.6f} USD at DeepSeek's list price (see the ledger doc).</p>")
    return (
        "<p>Score: harmonic mean of the recall (mean over kinds of kept / (kept + lost)) and "
        "the precision (1 − invented / stated). Constraints are a heuristic; inventions are "
        "candidates. Re-sent tokens are the provider's logged uncached prompt where the log has cache "
        "fields, else estimated (est.).</p>" + summary
        + '<table class="wb-table wb-audit"><thead><tr><th>#</th><th>compaction</th>'
        f"<th>score</th><th>recall</th><th>precision</th>{head}<th>invented</th>"
        "<th>re-fetches</th><th>hidden</th><th>summary</th><th>resent</th><th>refetch</th>"
        f"<th>net tokens</th><th>cost</th><th></th></tr></thead><tbody>{''.join(body)}"
        f"</tbody></table>{more}")


def _recall(c: Any, kind: str) -> str:
    kept, lost, _ = c.counts(kind)
    return f"{kept}/{kept + lost}"


def citation_facts(session: Session, index: int) -> str:
    """Kept / lost / invented anchors by kind of compaction attempt `index` ("" without a
    citation audit, e.g. no summary was logged)."""
    citation = next((c for c in session.quality.citations if c.index == index), None)
    if citation is None:
        return ""
    items = []
    for kind in KINDS:
        kept, lost, invented = citation.counts(kind)
        if not kept + lost + invented:
            continue
        gone = citation.of("lost", kind)
        made = citation.of("invented", kind)
        listed = ", ".join(escape(shorten(x, 80)) for x in gone[:30])
        extra = f" … {len(gone) - 30} more" if len(gone) > 30 else ""
        items.append(f"<li><b>{escape(kind)}</b>: {kept} kept, {lost} lost"
                     + (f", {invented} invented? ({', '.join(escape(shorten(x, 80)) for x in made[:10])})"
                        if invented else "")
                     + (f" — lost: {listed}{extra}" if gone else "") + "</li>")
    if not items:
        return "<p>No anchors (paths, commands, errors, identifiers, URLs, numbers, "\
               "constraints) in the hidden range or the summary.</p>"
    return (f"<p>score {_f(citation.score)} (recall {_f(citation.recall)}, precision "
            f"{_f(citation.precision)})</p><ul class=\"wb-facts\">{''.join(items)}</ul>")

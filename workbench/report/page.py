"""The static HTML report: one self-contained file that works offline. Layer: report.

    result = write_report("session.v4.jsonl", "report.html")

The page holds everything it needs: plotly.js once, inline (no CDN), our stylesheet and script,
and the data as JSON in ``<script type="application/json">`` blocks. Nothing is fetched: a
Content-Security-Policy meta tag allows only the page's own two scripts (by their sha256) and
inline styles, so even an escaping mistake could not run a log's ``<script>`` or load a remote
resource; `default-src 'none'` blocks every request.

Data for scripts is serialised by `json_for_script`: ``<``, ``>``, ``&`` and U+2028/U+2029 become
``\\u`` escapes (so no log text can close the ``<script>`` element or be read as markup) and lone
surrogates are written as escapes (JSON.parse restores them). HTML parts are escaped by the
views' helper (`workbench.report.sections`).

Large logs are sampled, and the report says so (`ReportResult.notes`, the page's "about"
section): at most `max_steps` requests in the step viewer, the timeline drawn from its change
points thinned to `workbench.views.figures.MAX_POINTS` per line, the bracket chart and the
attempts named in words cut as the widget cuts them (`workbench.views.limits`), and detail
panels for the first `max_details` compactions.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plotly.offline import get_plotlyjs

from workbench import __version__
from workbench.report.assets import REPORT_CSS, REPORT_JS
from workbench.report.limits import MAX_DETAILS, MAX_STEPS
from workbench.report.quality import quality_section
from workbench.report.sections import (
    audit_section,
    compaction_details,
    defects_section,
    kv_table,
    summary_section,
)
from workbench.report.steps import step_data
from workbench.views.data import view_data
from workbench.views.figures import (
    MAX_POINTS,
    bracket_chart_figure,
    token_timeline_figure,
)
from workbench.views.html import escape, legend_html
from workbench.views.palette import STYLE
from workbench.views.timeline import PROMPT_COLUMN, timeline_frame_with_prompt
from workbench.views.limits import bracket_cut_note, more_html, shown_brackets
from workbench.views.workbench import UNFINISHED_MORE, bracket_words

if TYPE_CHECKING:
    from workbench.session import Session

_SCRIPT_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def script_safe(json_text: str) -> str:
    """JSON text made safe inside ``<script type="application/json">``: the characters that
    could end the element or be read as markup become ``\\u`` escapes (only ever inside JSON
    strings, where an escape means the same character)."""
    return _SCRIPT_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def json_for_script(value: Any) -> str:
    """`value` as JSON safe inside ``<script type="application/json">`` (module doc)."""
    return script_safe(json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                                  allow_nan=False))


def _csp_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


@dataclass(frozen=True, slots=True)
class ReportResult:
    """What `write_report` wrote and how long it took."""

    path: Path
    bytes: int
    seconds: float
    events: int
    requests_total: int
    requests_shown: int
    notes: tuple[str, ...]
    ok: bool  # the log is clean and every audit check passes


def _figure_json(fig: Any) -> str:
    return script_safe(fig.to_json(validate=False, engine="json"))


def _figures(session: Session, meters: Sequence[str],
             notes: list[str]) -> list[tuple[str, str, str]]:
    """(div id, json id, figure JSON) for the token timeline and the bracket chart."""
    data = view_data(session)
    frame = timeline_frame_with_prompt(session.timeline_df(meters=meters))
    compactions = data.compactions
    timeline = token_timeline_figure(
        frame, meters=[f"surface_tokens_{m}" for m in meters], usage=[PROMPT_COLUMN],
        context_window=data.context_window, brackets=compactions, cursor=0,
        title="Surface tokens over the log (bands: compaction brackets)")
    if len(frame) > MAX_POINTS:
        notes.append(f"The token timeline has {len(frame):,} events; each line is drawn from its "
                     f"change points, thinned to at most {MAX_POINTS:,} points (bucket minima "
                     "and maxima, so peaks stay).")
    shown = shown_brackets(compactions)
    if cut := bracket_cut_note(len(shown), len(compactions)):
        notes.append(cut)
    out = [("wb-fig-timeline", "wb-fig-timeline-data", _figure_json(timeline))]
    if len(shown):
        chart = bracket_chart_figure(shown, cursor=0)
        out.append(("wb-fig-brackets", "wb-fig-brackets-data", _figure_json(chart)))
    return out


def brackets_in_words(session: Session) -> str:
    """Every compaction attempt that did not complete, in a sentence, and the colour legend."""
    data = view_data(session)
    if not data.brackets:
        return ""
    _total, lines, more = bracket_words(data)
    notes = "".join(f'<p class="wb-note"><b>{escape(line.split(":", 1)[0])}</b>:'
                    f"{escape(line.split(':', 1)[1])}</p>" for line in lines)
    return notes + more_html(more, UNFINISHED_MORE) + legend_html()


def render_report(session: Session, *, file_bytes: int | None = None,
                  meters: Sequence[str] = ("dsh",), max_steps: int = MAX_STEPS,
                  max_details: int = MAX_DETAILS, started: float | None = None
                  ) -> tuple[str, dict[str, Any]]:
    """The report page for `session` and facts about it (requests shown, notes, ok)."""
    started = time.perf_counter() if started is None else started
    notes: list[str] = []
    name = os.path.basename(session.path)
    figures = _figures(session, meters, notes) if len(session) else []
    steps = step_data(session, max_steps=max_steps)
    if steps.sampled:
        notes.append(f"The step viewer shows {steps.shown_requests:,} of "
                     f"{steps.total_requests:,} model requests: the first after every "
                     "compaction, the first, the last, and the rest evenly spaced.")
    report = session.audit
    details, left_out = compaction_details(session, report, max_details=max_details)
    if left_out:
        notes.append(f"Detail panels are shown for the first {max_details:,} compactions; "
                     f"{left_out:,} more are in the audit table.")
    ok = session.verdict == "clean" and report.ok
    elapsed = time.perf_counter() - started
    about = [("generated by", f"workbench {escape(__version__)}"),
             ("input", escape(session.path) + (f" ({file_bytes:,} bytes)" if file_bytes else "")),
             ("built in", f"{elapsed:.2f} s (loading and analysis included)"),
             ("sampling", "<br>".join(escape(n) for n in notes) if notes else "none: everything "
                                                                             "is shown")]
    plotly_js = get_plotlyjs()
    scripts = [plotly_js, REPORT_JS]
    csp = ("default-src 'none'; script-src " + " ".join(_csp_hash(s) for s in scripts)
           + "; style-src 'unsafe-inline'; img-src data: blob:; font-src data:")
    fig_divs = "".join(f'<div id="{div}" class="wb-figure" data-figure="{data_id}"></div>'
                       for div, data_id, _ in figures)
    fig_data = "".join(f'<script type="application/json" id="{data_id}">{payload}</script>'
                       for _, data_id, payload in figures)
    note_html = "".join(f'<p class="wb-note">{escape(n)}</p>' for n in notes)
    html = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>workbench report · {escape(name)}</title>
<style>{STYLE}{REPORT_CSS}</style>
</head><body class="wb-root">
<h1>Session report · {escape(name)}</h1>
<nav class="wb-toc"><a href="#wb-summary">summary</a><a href="#wb-timeline">token timeline</a>
<a href="#wb-audit">audit</a><a href="#wb-quality">quality</a>
<a href="#wb-compactions">compactions</a>
<a href="#wb-steps">step viewer</a><a href="#wb-defects">defects</a><a href="#wb-about">about</a></nav>
{note_html}
<h2 id="wb-summary">Summary</h2>
{summary_section(session, file_bytes=file_bytes)}
{brackets_in_words(session)}
<h2 id="wb-timeline">Token timeline and compaction brackets</h2>
{fig_divs if figures else "<p>The log has no events.</p>"}
<h2 id="wb-audit">Compaction audit</h2>
{audit_section(report)}
<h2 id="wb-quality">Compaction quality: kept, lost, invented, and the net cost</h2>
{quality_section(session)}
<h2 id="wb-compactions">What each compaction hid, and its summary</h2>
{details or "<p>No compaction attempt in this log.</p>"}
<h2 id="wb-steps-title">Step viewer: the log and the surface at each model request</h2>
<p>Keys: ← / → previous and next request, Home / End first and last. Left: the log around the
request (struck-through rows are hidden from the model, with the replacement that hid them;
grey rows are log-only; faint rows come later). Right: the surface the request was built from.</p>
<div id="wb-steps" class="wb-steps">
<div class="wb-steps-bar"><button id="wb-step-prev" type="button">◀ previous</button>
<input id="wb-step-range" type="range" min="0" max="0" value="0" aria-label="request">
<button id="wb-step-next" type="button">next ▶</button>
<a id="wb-step-link" class="wb-step-link" href="#seq=0">link to this step</a>
<span id="wb-step-label" class="wb-step-label">{"no model request in this log" if not steps.shown_requests else ""}</span></div>
<div class="wb-steps-panes"><div id="wb-step-log"></div><div id="wb-step-surface"></div></div>
</div>
<h2 id="wb-defects">Defects</h2>
{defects_section(session)}
<h2 id="wb-about">About this report</h2>
{kv_table(about)}
<p class="wb-footer">A self-contained file: it loads nothing from the network.</p>
{fig_data}
<script type="application/json" id="wb-steps-data">{json_for_script(steps.payload)}</script>
<script>{plotly_js}</script>
<script>{REPORT_JS}</script>
</body></html>
"""
    facts = {"requests_total": steps.total_requests, "requests_shown": steps.shown_requests,
             "notes": tuple(notes), "ok": ok}
    return html, facts


def write_report(source: str | os.PathLike | Session, out: str | os.PathLike, *,
                 meters: Sequence[str] = ("dsh",), max_steps: int = MAX_STEPS,
                 max_details: int = MAX_DETAILS, started: float | None = None) -> ReportResult:
    """Load `source` (a log path or a `Session`), write its report to `out`. `started`: a
    `time.perf_counter()` value to measure from (a caller that loaded the session itself)."""
    started = time.perf_counter() if started is None else started
    if isinstance(source, (str, os.PathLike)):
        from workbench.session import load
        session = load(source)
    else:
        session = source
    try:
        file_bytes: int | None = os.path.getsize(session.path)
    except OSError:
        file_bytes = None
    html, facts = render_report(session, file_bytes=file_bytes, meters=meters,
                                max_steps=max_steps, max_details=max_details, started=started)
    target = Path(out)
    data = html.encode("utf-8")
    target.write_bytes(data)
    return ReportResult(target, len(data), time.perf_counter() - started, len(session),
                        facts["requests_total"], facts["requests_shown"], facts["notes"],
                        facts["ok"])

"""HTML formatting: the one escaping helper and the pure `*_html()` formatters. Layer: views.

Every character that comes from a log reaches HTML through `escape` and nowhere else: a log that
holds ``<script>``, ``<img onerror=...>`` or ``javascript:`` links shows them as text. Formatters
never build an ``href`` or an event-handler attribute from log data; the only attributes filled
from data are ``data-seq`` (an int) and our own class names. `escape` also replaces lone
surrogates (JSON-legal, kept by `workbench.io.jsjson`) with U+FFFD: they cannot be encoded as
UTF-8, so a widget message carrying one would fail to reach the browser at all.

`escape` also isolates text that could reorder what surrounds it (`isolated`): a right-to-left
letter or a bidi control character (an override such as U+202E) in a session id would otherwise
turn our own "53 events" beside it into "35". Such text is wrapped in U+2068 FSI … U+2069 PDI,
the characters ``<bdi>`` stands for, balanced so that nothing the log opened outlives it; being
characters, not an element, the isolation also holds in attributes and in plotly's texts.

The formatters take small frozen row records, not frames, so the static report can reuse them
without the widgets. Rows meant to be clicked carry ``data-seq`` and ``data-act`` ("step" or
"select"); `ClickableHTML` turns such a click into a kernel-side event.
"""
from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.io.jsjson import ABSENT, number_to_str, stringify
from workbench.views.limits import more_html
from workbench.views.palette import STATUS_COLORS, STATUS_MEANING, STYLE

__all__ = [
    "Checkpoint", "LineageItem", "LogGap", "LogRow", "SurfaceRow", "checkpoint_html",
    "defect_where", "defects_html", "legend_html", "diff_html", "error_html", "escape", "json_html",
    "lineage_html", "log_table_html", "pretty_json", "request_html", "shorten", "style_html",
    "surface_table_html",
]

_UNENCODABLE = re.compile("[\ud800-\udfff\x00]")
_BIDI = re.compile("[\u0590-\u08ff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff"
                   "\ufe70-\ufefe\U00010800-\U00010fff\U0001e800-\U0001efff]")
"""Characters that can reorder their neighbours: right-to-left letters (Hebrew, Arabic, Syriac,
Thaana, N'Ko, ... and their presentation forms) and the bidi controls (marks, embeddings,
overrides, isolates)."""
_ISOLATES = re.compile("[\u2066-\u2069]")
_PARAGRAPHS = re.compile("(\r\n|[\n\r\x1c-\x1e\x85\u2029])")
"""Paragraph separators: each ends every isolate, so each line is isolated on its own."""
FSI, PDI = "\u2068", "\u2069"


def isolated(text: str) -> str:
    """`text` unable to reorder the text around it: each line holding a character of `_BIDI` is
    wrapped in FSI … PDI (direction from its first strong letter, like ``<bdi>``), with one more
    FSI first for each PDI it holds that closes nothing, and one more PDI at the end for each
    isolate it leaves open (a PDI also ends every embedding and override opened inside)."""
    if not _BIDI.search(text):
        return text
    return "".join(_isolated_line(part) for part in _PARAGRAPHS.split(text))


def _isolated_line(text: str) -> str:
    if not _BIDI.search(text):
        return text
    depth = stray = 0
    for mark in _ISOLATES.finditer(text):
        if mark.group() != PDI:
            depth += 1
        elif depth:
            depth -= 1
        else:
            stray += 1
    return FSI * (1 + stray) + text + PDI * (1 + depth)


def escape(value: object) -> str:
    """`value` as HTML text: ``& < > " '`` escaped, lone surrogates and NUL shown as U+FFFD,
    right-to-left or bidi-control text `isolated` (module doc).

    Non-strings are rendered the way JavaScript prints them (numbers via ``String(n)``, objects
    as compact JSON), so a number looks the same here as in the log."""
    if type(value) is str:
        text = value
    elif value is None or value is ABSENT:
        text = ""
    elif type(value) is bool:
        text = "true" if value else "false"
    elif type(value) in (int, float):
        text = number_to_str(value)
    elif isinstance(value, (list, dict)):
        text = stringify(value)
    else:
        text = str(value)
    return _html.escape(isolated(_UNENCODABLE.sub("\ufffd", text)), quote=True)


def shorten(text: str, limit: int = 120) -> str:
    """One line of at most `limit` characters (plain text; escape it afterwards)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def style_html() -> str:
    """The workbench stylesheet (static, ours; no log data)."""
    return f"<style>{STYLE}</style>"


def error_html(where: str, error: BaseException | str) -> str:
    """A visible error box: which view failed and the (escaped) error text."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return (f'<div class="wb-error"><b>{escape(where)} failed</b>'
            f"<pre>{escape(text)}</pre></div>")


# -- loader defects ---------------------------------------------------------------------------

def defect_where(defect: Any) -> str:
    """Where a loader `Defect` is: its file, zstd frame, record line, seq and byte offset."""
    where = defect.where()
    offset = getattr(defect, "byte_offset", None)
    return where + (f", byte {offset:,}" if type(offset) is int else "")


def defects_html(defects: Sequence[Any], limit: int, *, max_chars: int | None = None) -> str:
    """The loader's `Defect`s as a table (severity, rule, where, message; all escaped), the
    first `limit` of them and an "… and N more" line; `max_chars` shortens long messages. The
    widget's summary header and the report's defects section both show defects this way."""
    def text(value: str) -> str:
        return escape(shorten(value, max_chars) if max_chars else value)

    rows = "".join(
        f"<tr><td>{escape(d.severity)}</td><td>{escape(d.rule)}</td>"
        f"<td>{text(defect_where(d))}</td><td>{text(d.message)}</td></tr>"
        for d in defects[:limit])
    more = more_html(len(defects) - limit, "defects")
    return ('<table class="wb-table wb-audit wb-defects"><thead><tr><th>severity</th>'
            f"<th>rule</th><th>where</th><th>message</th></tr></thead><tbody>{rows}</tbody>"
            f"</table>{more}")


# -- brackets in words ------------------------------------------------------------------------

def legend_html() -> str:
    """What every bracket colour means, in words (static text)."""
    items = "".join(
        f'<span class="wb-legend-item"><span class="wb-swatch" style="background:{color}">'
        f'</span><b>{escape(name)}</b>: {escape(STATUS_MEANING[name])}</span>'
        for name, color in STATUS_COLORS.items())
    return f'<div class="wb-legend">compaction brackets: {items}</div>'


# -- log pane ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LogRow:
    """One event in the log window. `surface` is its state at the step being shown."""

    seq: int
    type: str
    role: str | None
    preview: str
    surface: Literal["on surface", "shadowed", "log-only", "rejected", "future"]
    hidden_by: int | None = None
    bracket: tuple[str, str] | None = None  # (status, "start" | "inside" | "end" | "single")
    is_step: bool = False
    is_focus: bool = False  # the row the window is centred on (scrolled into view)
    note: str = ""  # a bracket's status in words on its start row, when it did not complete
    replaces: tuple[int, int, int] | None = None  # a replacement: (first, last, node count)


@dataclass(frozen=True, slots=True)
class LogGap:
    """Rows left out of the log window: `count` events from `first` to `last` (`what` names
    them); clicking the row centres the window on `first`."""

    first: int
    last: int
    count: int
    what: str = "events"


def _replaces_html(replaces: tuple[int, int, int], act: str) -> str:
    start, end, count = replaces
    return (f'<span class="wb-replaces wb-click" data-seq="{int(start)}" data-act="{act}" '
            f'title="show the range it hid">replaces #{int(start)}…#{int(end)} '
            f"({int(count)} node{'s' if count != 1 else ''})</span> ")


def log_table_html(rows: Sequence[LogRow | LogGap], *, caption: str = "") -> str:
    """The log window: seq, type, role, preview; the step row highlighted, hidden rows marked
    with the replacement that hid them (a link to it), replacements with the range they hid,
    a bracket's start naming a status other than completed, brackets drawn as a coloured bar,
    left-out runs as one row with their count."""
    out = [f'<table class="wb-table wb-log"><caption>{escape(caption)}</caption>'
           "<thead><tr><th></th><th>seq</th><th>type</th><th>role</th><th>preview</th>"
           "</tr></thead><tbody>"]
    for r in rows:
        if isinstance(r, LogGap):
            out.append(f'<tr class="wb-row wb-gap wb-click" data-seq="{int(r.first)}" '
                       f'data-act="select"><td class="wb-gutter"></td><td colspan="4">… '
                       f"{int(r.count):,} {escape(r.what)} #{int(r.first)}–#{int(r.last)} "
                       "(click to show)</td></tr>")
            continue
        classes = ["wb-row", "wb-click", "wb-" + r.surface.replace(" ", "-")]
        if r.is_step:
            classes.append("wb-step")
        if r.is_focus:
            classes.append("wb-focus")
        mark = ""
        if r.hidden_by is not None:
            mark = (f'<span class="wb-hidden-by wb-click" data-seq="{int(r.hidden_by)}" '
                    f'data-act="step" title="go to the replacement">hidden by '
                    f"#{int(r.hidden_by)}</span> ")
        if r.replaces is not None:
            mark += _replaces_html(r.replaces, "select")
        if r.note:
            mark += f'<span class="wb-status-note">{escape(r.note)}</span> '
        bar = '<td class="wb-gutter"></td>'
        if r.bracket is not None:
            status, part = r.bracket
            color = STATUS_COLORS.get(status, "#888")
            bar = (f'<td class="wb-gutter wb-bar wb-bar-{escape(part)}" '
                   f'style="background:{color}" title="compaction {escape(status)}"></td>')
        out.append(
            f'<tr class="{" ".join(classes)}" data-seq="{int(r.seq)}" data-act="step">{bar}'
            f'<td class="wb-seq">{int(r.seq)}</td><td>{escape(r.type)}</td>'
            f"<td>{escape(r.role)}</td><td>{mark}{escape(r.preview)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


# -- surface pane -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LineageItem:
    """A node of a replacement's lineage tree: the event and what it replaced in turn."""

    seq: int
    type: str
    preview: str
    children: tuple[LineageItem, ...] = ()
    more: int = 0  # children left out to keep the tree small


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A compaction checkpoint's text: the summary body, the framed message as the model sees
    it, and its price by each meter."""

    body: str
    framed: str
    prices: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class SurfaceRow:
    """One model-visible node at the step."""

    position: int
    seq: int
    type: str
    role: str | None
    tokens: int | None
    preview: str
    replaces: tuple[int, int, int] | None = None  # (start seq, end seq, node count)
    lineage: tuple[LineageItem, ...] = ()
    changed: bool = False
    lineage_more: int = 0  # direct lineage entries left out
    checkpoint: Checkpoint | None = None
    is_focus: bool = False


def lineage_html(items: Iterable[LineageItem], more: int = 0) -> str:
    """Nested list of the original events a replacement stands for (through nested ones)."""
    parts = ['<ul class="wb-lineage">']
    for item in items:
        parts.append(f'<li class="wb-click" data-seq="{int(item.seq)}" data-act="select">'
                     f'<span class="wb-seq">#{int(item.seq)}</span> {escape(item.type)} '
                     f"{escape(item.preview)}")
        if item.children or item.more:
            parts.append(lineage_html(item.children, item.more))
        parts.append("</li>")
    if more:
        parts.append(f'<li class="wb-more">… {int(more)} more</li>')
    parts.append("</ul>")
    return "".join(parts)


def checkpoint_html(seq: int, checkpoint: Checkpoint) -> str:
    """A checkpoint's summary body in place (scrollable, expandable to its full height), its
    price by each meter, and the framed message one click away."""
    prices = " · ".join(f"{int(t):,} {escape(m)}" for m, t in checkpoint.prices)
    return ('<div class="wb-checkpoint"><div class="wb-checkpoint-head">checkpoint summary'
            + (f' · <span class="wb-prices" title="tokens of the framed message, by meter">'
               f"{prices} tokens</span>" if prices else "") + "</div>"
            f'<details class="wb-summary-box" open data-key="summary-{int(seq)}"><summary>'
            f"summary body ({len(checkpoint.body):,} characters; drag the corner to enlarge)"
            f'</summary><div class="wb-summary-body">{escape(checkpoint.body)}</div></details>'
            f'<details data-key="framed-{int(seq)}"><summary>full framed message as the model '
            f'sees it</summary><pre class="wb-pre">{escape(checkpoint.framed)}</pre></details>'
            "</div>")


def surface_table_html(rows: Sequence[SurfaceRow], *, caption: str = "") -> str:
    """The surface window: position, seq, role, tokens, preview; replacement nodes show their
    range (a link to it in the log pane) and expand to their lineage; a checkpoint shows its
    summary body in place; nodes new since the previous step carry a marker."""
    out = [f'<table class="wb-table wb-surface"><caption>{escape(caption)}</caption>'
           "<thead><tr><th>#</th><th>seq</th><th>role</th><th>tokens</th><th>message</th>"
           "</tr></thead><tbody>"]
    for r in rows:
        classes = "wb-row wb-node" + (" wb-changed" if r.changed else "") + (
            " wb-focus" if r.is_focus else "")
        marker = '<span class="wb-new" title="changed since the previous step">●</span> ' \
            if r.changed else ""
        body = escape(r.preview)
        if r.replaces is not None:
            head = _replaces_html(r.replaces, "select")
            lineage = lineage_html(r.lineage, r.lineage_more)
            if r.checkpoint is not None:
                body = (f"{head}{checkpoint_html(r.seq, r.checkpoint)}<details data-key="
                        f'"node-{int(r.seq)}"><summary>what it replaced</summary>{lineage}'
                        "</details>")
            else:
                body = (f'<details data-key="node-{int(r.seq)}"><summary>{head}{body}'
                        f"</summary>{lineage}</details>")
        tokens = "" if r.tokens is None else f"{int(r.tokens):,}"
        out.append(
            f'<tr class="{classes}" data-seq="{int(r.seq)}"><td>{int(r.position)}</td>'
            f'<td class="wb-seq wb-click" data-seq="{int(r.seq)}" data-act="select">'
            f"{marker}{int(r.seq)}</td><td>{escape(r.role or r.type)}</td>"
            f'<td class="wb-num">{tokens}</td><td>{body}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


# -- diff -------------------------------------------------------------------------------------

def diff_html(a: int, b: int, added: Sequence[SurfaceRow], removed: Sequence[SurfaceRow], *,
              replaced: Sequence[tuple[Sequence[int], Sequence[int], int, int]] = (),
              tokens_a: int | None = None, tokens_b: int | None = None,
              added_total: tuple[int, int] | None = None,
              removed_total: tuple[int, int] | None = None) -> str:
    """Nodes added, removed and replaced between the surfaces at steps `a` and `b`.

    `replaced`: one entry per hunk where nodes gave way to new ones: ``(removed seqs, added
    seqs, removed tokens, added tokens)``. `added_total` / `removed_total`: ``(count, tokens)``
    of all added / removed nodes when the row lists were cut (default: the rows themselves)."""
    def total(rows: Sequence[SurfaceRow], given: tuple[int, int] | None) -> tuple[int, int]:
        return given if given is not None else (len(rows), sum(r.tokens or 0 for r in rows))

    def more(rows: Sequence[SurfaceRow], count: int) -> str:
        left = count - len(rows)
        return f'<div class="wb-more">… {left} more</div>' if left > 0 else ""

    head = f"surface at #{int(a)} → #{int(b)}"
    if tokens_a is not None and tokens_b is not None:
        head += f": {tokens_a:,} → {tokens_b:,} tokens ({tokens_b - tokens_a:+,})"
    n_add, t_add = total(added, added_total)
    n_rem, t_rem = total(removed, removed_total)
    hunks = []
    for gone, new, t_gone, t_new in replaced:
        seqs = ", ".join(f"#{int(s)}" for s in new)
        hunks.append(f"<li>{seqs} replaced #{int(gone[0])}…#{int(gone[-1])} ({len(gone)} "
                     f"node{'s' if len(gone) != 1 else ''}): −{t_gone:,} → +{t_new:,} tokens "
                     f"({t_new - t_gone:+,})</li>")
    replaced_html = (f'<div class="wb-diff-replaced"><b>replaced {len(replaced)}</b>'
                     f'<ul>{"".join(hunks)}</ul></div>') if replaced else ""
    return (f'<div class="wb-diff"><div class="wb-title">{escape(head)}</div>{replaced_html}'
            f'<div class="wb-diff-added"><b>added {n_add} (+{t_add:,} tokens)</b>'
            f"{surface_table_html(added)}{more(added, n_add)}</div>"
            f'<div class="wb-diff-removed"><b>removed {n_rem} (−{t_rem:,} tokens)</b>'
            f"{surface_table_html(removed)}{more(removed, n_rem)}</div></div>")


from workbench.views.payload import json_html, pretty_json, request_html  # noqa: E402 - cycle

"""HTML formatting: the one escaping helper and the pure `*_html()` formatters. Layer: views.

Every character that comes from a log reaches HTML through `escape` and nowhere else: a log that
holds ``<script>``, ``<img onerror=...>`` or ``javascript:`` links shows them as text. Formatters
never build an ``href`` or an event-handler attribute from log data; the only attributes filled
from data are ``data-seq`` (an int) and our own class names. `escape` also replaces lone
surrogates (JSON-legal, kept by `workbench.io.jsjson`) with U+FFFD: they cannot be encoded as
UTF-8, so a widget message carrying one would fail to reach the browser at all.

The formatters take small frozen row records, not frames, so the static report can reuse them
without the widgets. Rows meant to be clicked carry ``data-seq`` and ``data-act`` ("step" or
"select"); `ClickableHTML` turns such a click into a kernel-side event.
"""
from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.io.jsjson import ABSENT, number_to_str, stringify
from workbench.views.palette import STATUS_COLORS, STYLE

__all__ = [
    "LineageItem", "LogRow", "SurfaceRow", "diff_html", "error_html", "escape", "json_html",
    "lineage_html", "log_table_html", "pretty_json", "request_html", "shorten", "style_html",
    "surface_table_html",
]

_UNENCODABLE = re.compile("[\ud800-\udfff\x00]")


def escape(value: object) -> str:
    """`value` as HTML text: ``& < > " '`` escaped, lone surrogates and NUL shown as U+FFFD.

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
    return _html.escape(_UNENCODABLE.sub("\ufffd", text), quote=True)


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


def log_table_html(rows: Sequence[LogRow], *, caption: str = "") -> str:
    """The log window: seq, type, role, preview; the step row highlighted, hidden rows marked
    with the replacement that hid them, compaction brackets drawn as a coloured bar."""
    out = [f'<table class="wb-table wb-log"><caption>{escape(caption)}</caption>'
           "<thead><tr><th></th><th>seq</th><th>type</th><th>role</th><th>preview</th>"
           "</tr></thead><tbody>"]
    for r in rows:
        classes = ["wb-row", "wb-click", "wb-" + r.surface.replace(" ", "-")]
        if r.is_step:
            classes.append("wb-step")
        if r.is_focus:
            classes.append("wb-focus")
        mark = ""
        if r.hidden_by is not None:
            mark = f'<span class="wb-hidden-by">hidden by #{r.hidden_by}</span> '
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


def surface_table_html(rows: Sequence[SurfaceRow], *, caption: str = "") -> str:
    """The surface window: position, seq, role, tokens, preview; replacement nodes show their
    range and expand to their lineage; nodes new since the previous step carry a marker."""
    out = [f'<table class="wb-table wb-surface"><caption>{escape(caption)}</caption>'
           "<thead><tr><th>#</th><th>seq</th><th>role</th><th>tokens</th><th>message</th>"
           "</tr></thead><tbody>"]
    for r in rows:
        classes = "wb-row wb-node" + (" wb-changed" if r.changed else "")
        marker = '<span class="wb-new" title="changed since the previous step">●</span> ' \
            if r.changed else ""
        body = escape(r.preview)
        if r.replaces is not None:
            start, end, count = r.replaces
            summary = (f'<span class="wb-replaces">replaces #{int(start)}…#{int(end)} '
                       f"({int(count)} node{'s' if count != 1 else ''})</span> ")
            body = (f'<details data-key="node-{int(r.seq)}"><summary>{summary}{body}</summary>'
                    f"{lineage_html(r.lineage, r.lineage_more)}</details>")
        tokens = "" if r.tokens is None else f"{int(r.tokens):,}"
        out.append(
            f'<tr class="{classes}" data-seq="{int(r.seq)}"><td>{int(r.position)}</td>'
            f'<td class="wb-seq wb-click" data-seq="{int(r.seq)}" data-act="select">'
            f"{marker}{int(r.seq)}</td><td>{escape(r.role or r.type)}</td>"
            f'<td class="wb-num">{tokens}</td><td>{body}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


# -- inspector --------------------------------------------------------------------------------

def json_html(value: Any, *, open_levels: int = 2, max_string: int = 4000,
              max_items: int = 200, max_values: int = 5000) -> str:
    """Pretty, collapsible JSON (``<details>`` per object/array), every string escaped.

    Numbers print as JavaScript prints them. Strings longer than `max_string`, containers longer
    than `max_items`, and everything after the first `max_values` values are cut with a visible
    note, so one huge event cannot stall a step."""
    limits = _JsonLimits(open_levels, max_string, max_items, max_values)
    return f'<div class="wb-json">{limits.render(value, 0)}</div>'


@dataclass(slots=True)
class _JsonLimits:
    open_levels: int
    max_string: int
    max_items: int
    budget: int

    def render(self, value: Any, depth: int) -> str:
        if self.budget <= 0:
            return '<span class="wb-more">… (cut: too many values)</span>'
        self.budget -= 1
        if isinstance(value, (dict, list)):
            return self._container(value, depth)
        if type(value) is str:
            cut = value[: self.max_string]
            rest = len(value) - len(cut)
            tail = f'<span class="wb-more"> … {rest} more chars</span>' if rest else ""
            return f'<span class="wb-j-str">{escape(stringify(cut))}</span>{tail}'
        if value is ABSENT:
            return '<span class="wb-j-lit">undefined</span>'
        if type(value) in (int, float):
            return f'<span class="wb-j-num">{escape(number_to_str(value))}</span>'
        return f'<span class="wb-j-lit">{escape(value if value is not None else "null")}</span>'

    def _container(self, value: dict | list, depth: int) -> str:
        is_dict = isinstance(value, dict)
        items = list(value.items()) if is_dict else list(enumerate(value))
        left, right = ("{", "}") if is_dict else ("[", "]")
        if not items:
            return f'<span class="wb-j-punct">{left}{right}</span>'
        shown = items[: self.max_items]
        lines = []
        for key, item in shown:
            label = f'<span class="wb-j-key">{escape(stringify(key))}</span>: ' if is_dict else ""
            lines.append(f"<div>{label}{self.render(item, depth + 1)}</div>")
        if len(items) > len(shown):
            lines.append(f'<div class="wb-more">… {len(items) - len(shown)} more</div>')
        attr = " open" if depth < self.open_levels else ""
        noun = ("key" if is_dict else "item") + ("" if len(items) == 1 else "s")
        return (f'<details{attr}><summary><span class="wb-j-punct">{left}</span>'
                f'<span class="wb-j-count">{len(items)} {noun}</span></summary>'
                f'<div class="wb-j-body">{"".join(lines)}</div>'
                f'<span class="wb-j-punct">{right}</span></details>')


def pretty_json(value: Any, *, max_string: int = 800, indent: str = "  ") -> str:
    """Indented JSON text with JavaScript number formatting and long strings cut (plain text:
    escape it before it reaches HTML). A cut string ends with ``… (N more chars)`` outside
    the quotes, so the text no longer parses as JSON exactly where something was left out."""
    out: list[str] = []

    def walk(item: Any, depth: int) -> None:
        pad = indent * depth
        if isinstance(item, dict) and item:
            out.append("{\n")
            keys = list(item)
            for i, key in enumerate(keys):
                out.append(f"{pad}{indent}{stringify(key)}: ")
                walk(item[key], depth + 1)
                out.append(",\n" if i < len(keys) - 1 else "\n")
            out.append(pad + "}")
        elif isinstance(item, list) and item:
            out.append("[\n")
            for i, element in enumerate(item):
                out.append(pad + indent)
                walk(element, depth + 1)
                out.append(",\n" if i < len(item) - 1 else "\n")
            out.append(pad + "]")
        elif type(item) is str and len(item) > max_string:
            out.append(f"{stringify(item[:max_string])} … ({len(item) - max_string} more chars)")
        elif item is ABSENT:
            out.append("undefined")
        else:
            out.append(stringify(item))

    walk(value, 0)
    return "".join(out)


def request_html(sections: Mapping[str, Any], *, title: str = "",
                 max_string: int = 400) -> str:
    """A rebuilt model request: one collapsible section per part (envelope, system, tools,
    messages), each message its own collapsible entry with a one-line summary. Bodies are
    indented JSON text (`pretty_json`, strings cut at `max_string`; the inspector's raw JSON of
    the event shows any one message in full)."""
    parts = [f'<div class="wb-request"><div class="wb-title">{escape(title)}</div>']
    for name, value in sections.items():
        size = f" ({len(value)})" if isinstance(value, (list, dict)) else ""
        if name == "messages" and isinstance(value, list):
            entries = []
            for i, message in enumerate(value):
                role = message.get("role") if isinstance(message, dict) else None
                content = message.get("content") if isinstance(message, dict) else None
                blocks = len(content) if isinstance(content, list) else 0
                head = shorten(_message_text(content), 100)
                entries.append(
                    f'<details data-key="request-message-{i}"><summary>#{i} {escape(role)} '
                    f"({blocks} block{'s' if blocks != 1 else ''}) {escape(head)}</summary>"
                    f'<pre class="wb-pre">{escape(pretty_json(message, max_string=max_string))}'
                    "</pre></details>")
            body = f'<div class="wb-j-body">{"".join(entries)}</div>'
        else:
            body = f'<pre class="wb-pre">{escape(pretty_json(value, max_string=max_string))}</pre>'
        parts.append(f'<details data-key="request-{escape(name)}"><summary>{escape(name)}{size}'
                     f"</summary>{body}</details>")
    parts.append("</div>")
    return "".join(parts)


def _message_text(content: Any) -> str:
    """The first text a message's blocks carry, for a one-line summary."""
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            for key in ("text", "name"):
                if type(block.get(key)) is str:
                    return block[key]
    return ""


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

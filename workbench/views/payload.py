"""HTML of payloads: collapsible JSON, indented JSON text and a rebuilt model request.
Layer: views. Every string goes through `workbench.views.html.escape`; re-exported by
`workbench.views.html`.

Readability without losing anything: epoch-millisecond ``time``/``createdAt`` numbers carry their
UTC reading beside them, and long runs of ascending integers (``sourceEventSeqs``) fold into
ranges (``8–9, 15, 19–21``) with the raw list one click away.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from workbench.io.jsjson import ABSENT, Deep, number_to_str, stringify
from workbench.views.html import escape, shorten

# -- JSON --------------------------------------------------------------------------------

def json_html(value: Any, *, open_levels: int = 2, max_string: int = 4000,
              max_items: int = 200, max_values: int = 5000) -> str:
    """Pretty, collapsible JSON (``<details>`` per object/array), every string escaped.

    Numbers print as JavaScript prints them. Strings longer than `max_string`, containers longer
    than `max_items`, and everything after the first `max_values` values are cut with a visible
    note, so one huge event cannot stall a step."""
    limits = _JsonLimits(open_levels, max_string, max_items, max_values)
    return f'<div class="wb-json">{limits.render(value, 0)}</div>'


TIME_KEYS = frozenset({"time", "createdAt", "updatedAt", "startedAt", "endedAt", "timestamp"})
"""Keys whose epoch-millisecond numbers get their UTC reading beside them."""
FOLD_INTS = 8
"""Ascending integer lists longer than this fold into ranges (the raw list one click away)."""


_MOMENT_MS = (-62_135_596_800_000, 253_402_300_799_000)
"""Epoch milliseconds a `datetime` holds: years 1 to 9999 (JavaScript's dates reach ±8.64e15 ms,
pandas' nanosecond timestamps only years 1677 to 2262)."""


def utc_moment(ms: Any) -> datetime | None:
    """The UTC moment of epoch milliseconds; None for a value that is no number or a moment
    outside `_MOMENT_MS` (a log may hold any number as a time)."""
    if type(ms) not in (int, float) or not _MOMENT_MS[0] <= ms <= _MOMENT_MS[1]:
        return None   # NaN fails the comparison too
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def utc_text(ms: Any) -> str | None:
    """``2026-11-30 04:50:27.165 UTC`` for epoch milliseconds (None: not a plausible time)."""
    moment = utc_moment(ms) if type(ms) in (int, float) and ms > 0 else None
    if moment is None:
        return None
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"


def seq_ranges(values: list[Any]) -> str | None:
    """``8–9, 15, 19–21`` for an ascending list of integers (None: not such a list)."""
    if not all(type(v) is int for v in values) or any(
            b <= a for a, b in zip(values, values[1:])):
        return None
    parts, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] != values[i - 1] + 1:
            a, b = values[start], values[i - 1]
            parts.append(str(a) if a == b else f"{a}–{b}")
            start = i
    return ", ".join(parts)


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
        if type(value) is Deep:
            shown, rest = _deep_text(value, self.max_string)
            tail = f" … {rest} more chars" if rest else ""
            return (f'<span class="wb-j-punct">{escape(shown)}</span><span class="wb-more">{tail}'
                    " (nested too deep to unfold: its JSON text as logged)</span>")
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
        folded = seq_ranges(value) if not is_dict and len(value) > FOLD_INTS else None
        if folded is not None:
            self.budget -= len(value)
            return (f'<details><summary><span class="wb-j-punct">[</span><span class="wb-j-num">'
                    f'{escape(folded)}</span><span class="wb-j-count">{len(value)} ascending '
                    f'integers</span><span class="wb-j-punct">]</span></summary>'
                    f'<div class="wb-j-body">{escape(stringify(value[:2000]))}'
                    f"{' …' if len(value) > 2000 else ''}</div></details>")
        shown = items[: self.max_items]
        lines = []
        for key, item in shown:
            label = f'<span class="wb-j-key">{escape(stringify(key))}</span>: ' if is_dict else ""
            when = utc_text(item) if is_dict and key in TIME_KEYS else None
            note = f' <span class="wb-j-time">{escape(when)}</span>' if when else ""
            lines.append(f"<div>{label}{self.render(item, depth + 1)}{note}</div>")
        if len(items) > len(shown):
            lines.append(f'<div class="wb-more">… {len(items) - len(shown)} more</div>')
        attr = " open" if depth < self.open_levels else ""
        noun = ("key" if is_dict else "item") + ("" if len(items) == 1 else "s")
        return (f'<details{attr}><summary><span class="wb-j-punct">{left}</span>'
                f'<span class="wb-j-count">{len(items)} {noun}</span></summary>'
                f'<div class="wb-j-body">{"".join(lines)}</div>'
                f'<span class="wb-j-punct">{right}</span></details>')


def _deep_text(value: Deep, limit: int) -> tuple[str, int]:
    """A `Deep` value's text as the log holds it, cut at `limit` characters, and how many were
    cut (`stringify` would normalise the whole text on every render)."""
    return value.text[:limit], max(0, len(value.text) - limit)


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
        elif type(item) is Deep:
            shown, rest = _deep_text(item, max_string)
            out.append(shown + (f" … ({rest} more chars)" if rest else ""))
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
    parts = ['<div class="wb-request">'
             + (f'<div class="wb-title">{escape(title)}</div>' if title else "")]
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



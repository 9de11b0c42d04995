"""One-line text previews of events and messages. Layer: frames (stdlib only).

A preview is for scanning a table, not for reading: at most `PREVIEW_CHARS` characters, line
breaks and runs of whitespace collapsed to one space, cut with ``…``. Message text comes from the
blocks the model sees (v0 spec §3.12): ``text`` and ``reasoning`` verbatim, a ``tool-call`` as
``name(arguments)``, a v0 ``tool-result`` wrapper through its inner blocks, anything else as
``[type]``. Log-only events preview the one field a reader looks for first (a tool name, a turn
end reason, a compaction error ...), or nothing.

Previews are plain strings built from untrusted log text: the HTML views escape them, as they
escape every log-derived string.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PREVIEW_CHARS = 120
"""Longest preview, in Python characters (a table cell, not the message)."""


def clip(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text` on one line, at most `limit` characters (``…`` marks a cut)."""
    head = " ".join(text[: limit * 2].split())
    if len(head) < limit and len(text) > limit * 2:  # mostly whitespace: look further
        head = " ".join(text[: limit * 64].split())
    return head if len(head) <= limit else head[: limit - 1] + "…"


def content_text(content: Any, limit: int = PREVIEW_CHARS) -> str:
    """The visible text of a content-block list (or a plain string), clipped."""
    parts: list[str] = []
    _collect(content, parts, limit * 4)
    return clip(" ".join(p for p in parts if p), limit)


def _collect(content: Any, parts: list[str], budget: int) -> int:
    if isinstance(content, str):
        parts.append(content[:budget])
        return budget - len(content)
    if not isinstance(content, list):
        return budget
    for block in content:
        if budget <= 0:
            break
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "reasoning"):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text[:budget])
                budget -= len(text)
        elif kind == "tool-call":
            name, args = block.get("name"), block.get("arguments")
            text = f"{name if isinstance(name, str) else ''}({args if isinstance(args, str) else ''})"
            parts.append(text[:budget])
            budget -= len(text)
        elif kind == "tool-result":
            budget = _collect(block.get("content"), parts, budget)
        else:
            parts.append(f"[{kind}]")
            budget -= 8
    return budget


def message_preview(message: Any, limit: int = PREVIEW_CHARS) -> str:
    """Preview of a model message (`{role, content, ...}`)."""
    if not isinstance(message, Mapping):
        return ""
    return content_text(message.get("content"), limit)


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def event_preview(event: Mapping[str, Any], limit: int = PREVIEW_CHARS) -> str | None:
    """Preview of any event: its message for surface events, a key field for log-only ones."""
    etype = event.get("type")
    data = event.get("data")
    if etype == "user/message":
        return message_preview(data, limit)
    if etype in ("assistant/message", "tool/result", "system/message", "developer/message"):
        return message_preview(_get(data, "message"), limit)
    if etype == "tool/call":
        return clip(f"{_str(_get(data, 'name'))}({_str(_get(data, 'arguments'))})", limit)
    if etype == "turn/end":
        reason = _get(data, "reason")
        kind = _str(_get(reason, "kind"))
        detail = _get(reason, "error", "message") or _get(reason, "reason", "kind")
        return clip(f"{kind}: {detail}" if isinstance(detail, str) else kind, limit)
    if etype == "compaction/end":
        error = _get(data, "error")
        return clip(error, limit) if isinstance(error, str) else "ok"
    if etype == "compaction/summary":
        return content_text(_get(data, "summary"), limit)
    if etype == "assistant/chunk":
        chunk = _get(data, "chunk")
        text = _get(chunk, "text")
        if not isinstance(text, str):
            text = _get(chunk, "argumentsDelta")
        return clip(text, limit) if isinstance(text, str) else _str(_get(chunk, "type"))
    if etype == "request/header":
        return _str(_get(data, "reason"))
    if etype == "session/title":
        return clip(_str(_get(data, "title")), limit)
    if etype == "command/run":
        return clip(_str(_get(data, "name")), limit)
    if etype == "llm/retry":
        return clip(_str(_get(data, "failure", "message")), limit)
    if etype == "todo/write":
        todos = _get(data, "todos")
        return f"{len(todos)} todos" if isinstance(todos, list) else None
    return None

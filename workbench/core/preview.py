"""One-line text previews of events and messages. Layer: core (stdlib and the
checkpoint framing only).

A preview is for scanning a table, not for reading: at most `PREVIEW_CHARS` characters, line
breaks and runs of whitespace collapsed to one space, cut with ``…``. Message text comes from the
blocks the model sees (v0 spec §3.12): ``text`` and ``reasoning`` verbatim, a ``tool-call`` as
``name(arguments)``, a v0 ``tool-result`` wrapper through its inner blocks, anything else as
``[type]``; a compaction checkpoint as ``[checkpoint]`` and its summary body (DSH's framing
preamble and tags left out: the inspector shows the framed message). Log-only events preview the one field a reader looks for first (a tool name, a turn
end reason, a compaction error ...), or nothing.

Previews are plain strings built from untrusted log text: the HTML views escape them, as they
escape every log-derived string.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.core.compaction.framing import checkpoint_body

PREVIEW_CHARS = 120
"""Longest preview, in Python characters (a table cell, not the message)."""


def clip(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text` on one line, at most `limit` characters (``…`` marks a cut)."""
    head = text[: limit * 2]
    # every whitespace character but the space is unprintable: a printable head with no
    # doubled, leading or trailing space is its own collapsed form
    if not (head.isprintable() and "  " not in head and head[:1] != " " and head[-1:] != " "):
        head = " ".join(head.split())
        if len(head) < limit and len(text) > limit * 2:  # mostly whitespace: look further
            head = " ".join(text[: limit * 64].split())
    return head if len(head) <= limit else head[: limit - 1] + "…"


def content_text(content: Any, limit: int = PREVIEW_CHARS) -> str:
    """The visible text of a content-block list (or a plain string), clipped."""
    parts: list[str] = []
    _collect(content, parts, limit * 4)
    return clip(" ".join(filter(None, parts)), limit)


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
    """Preview of a model message (`{role, content, ...}`); a checkpoint previews its summary."""
    if type(message) is not dict and not isinstance(message, Mapping):
        return ""
    body = checkpoint_body(message.get("content"))
    if body is not None:
        return clip(f"[checkpoint] {body}", limit)
    return content_text(message.get("content"), limit)


def failure_text(reason: Any) -> str | None:
    """``failed: CODE: message`` for a finish reason of kind ``error`` (else None)."""
    if _str(_get(reason, "kind")) != "error":
        return None
    failure = _get(reason, "failure")
    failure = failure if type(failure) is dict else (reason if type(reason) is dict else {})
    parts = [p for p in (_str(failure.get("code")), _str(failure.get("message"))) if p]
    return clip("failed: " + (": ".join(parts) or "error"))


def _attempt(data: dict) -> str | None:
    """A model-call attempt: its failure when its finish chunk is an error, else the finish."""
    stream = data.get("stream")
    for record in reversed(stream) if type(stream) is list else ():
        chunk = _get(record, "chunk")
        if type(chunk) is dict and chunk.get("type") == "finish":
            reason = chunk.get("reason")
            return failure_text(reason) or clip(f"finish {_str(_get(reason, 'kind'))}")
    return None


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if type(data) is not dict:
            return None
        data = data.get(key)
    return data


def _str(value: Any) -> str:
    return value if type(value) is str else ""


def _message(data: dict) -> str:
    return message_preview(data.get("message"))


def _tool_call(data: dict) -> str:
    return clip(f"{_str(data.get('name'))}({_str(data.get('arguments'))})")


def _turn_end(data: dict) -> str:
    reason = data.get("reason")
    kind = _str(_get(reason, "kind"))
    detail = _get(reason, "error", "message") or _get(reason, "reason", "kind")
    return clip(f"{kind}: {detail}" if type(detail) is str else kind)


def _compaction_end(data: dict) -> str:
    error = data.get("error")
    return clip(error) if type(error) is str else "ok"


def _chunk(data: dict) -> str | None:
    chunk = data.get("chunk")
    if type(chunk) is not dict:
        return None
    if chunk.get("type") == "finish":
        return failure_text(chunk.get("reason")) or _str(_get(chunk, "reason", "kind")) or "finish"
    text = chunk.get("text")
    if type(text) is not str:
        text = chunk.get("argumentsDelta")
    return clip(text) if type(text) is str else _str(chunk.get("type"))


def _todos(data: dict) -> str | None:
    todos = data.get("todos")
    return f"{len(todos)} todos" if type(todos) is list else None


PREVIEWS = {
    "user/message": message_preview,
    "assistant/message": _message, "tool/result": _message, "system/message": _message,
    "developer/message": _message,
    "tool/call": _tool_call,
    "turn/end": _turn_end,
    "compaction/end": _compaction_end,
    "compaction/summary": lambda data: content_text(data.get("summary")),
    "assistant/chunk": _chunk,
    "assistant/attempt": _attempt,
    "request/header": lambda data: _str(data.get("reason")),
    "session/title": lambda data: clip(_str(data.get("title"))),
    "command/run": lambda data: clip(_str(data.get("name"))),
    "llm/retry": lambda data: clip(_str(_get(data, "failure", "message"))),
    "todo/write": _todos,
}
"""Event type → preview of its `data` (a dict; ``{}`` when the event has none). Types not
listed have no preview; a listed one may have none (None)."""


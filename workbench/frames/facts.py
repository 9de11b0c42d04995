"""The few payload fields tool-call pairing and request timing read, taken while the scan has
each event parsed (so `tool_calls_df` and `requests_df` never parse a large log again).
Layer: frames.

Pairing key (v0 spec §3.8, v4 §3.8): `tool/call.data.callId` = the result's call id (v4:
`message.toolCallId`, v0: the wrapped block's `toolCallId`; both fall back to
`message.source.callId`) = the `tool-call` block id of the advertising assistant message.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.frames.preview import clip
from workbench.io.generations import tool_role

INT_LIMIT = 2**62
"""Integers kept in int64 arrays; anything larger (never a real seq, time or turn) is missing."""


def as_int(value: Any) -> int | None:
    """A JS-number integer as a Python int (``3.0`` → 3); None for anything else, and for
    integers too large for the int64 columns."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -INT_LIMIT < value < INT_LIMIT else None
    if isinstance(value, float) and value.is_integer() and abs(value) < INT_LIMIT:
        return int(value)
    return None


def result_fields(message: Any, version: int) -> tuple[str | None, bool | None]:
    """(call id, model-facing isError) of a tool-result message (v4: a tool-role message,
    v4 §3.8; v0: the one wrapped `tool-result` block, v0 §3.8)."""
    if type(message) is not dict:
        return None, None
    if tool_role(version):
        cid, err = message.get("toolCallId"), message.get("isError")
    else:
        content = message.get("content")
        block = content[0] if type(content) is list and content else None
        block = block if type(block) is dict else {}
        cid, err = block.get("toolCallId"), block.get("isError")
    if type(cid) is not str:
        source = message.get("source")
        cid = source.get("callId") if type(source) is dict else None
    return (cid if type(cid) is str else None), (err if type(err) is bool else None)


def _s(value: Any) -> str | None:
    return value if type(value) is str else None


def tool_fact(event: Mapping[str, Any], etype: str, version: int) -> tuple | None:
    """What tool-call pairing needs of one event, or None:
    ``("advertised", [(id, name, arguments preview), ...])`` for an assistant message with
    tool-call blocks, ``("started", id, name, arguments preview)`` for `tool/call`,
    ``("answered", id, isError, error name, error code)`` for an appended `tool/result`."""
    data = event.get("data")
    if type(data) is not dict:
        return None
    if etype == "assistant/message":
        message = data.get("message")
        content = message.get("content") if type(message) is dict else None
        calls = [(_s(b.get("id")), _s(b.get("name")), _clip_or_none(b.get("arguments")))
                 for b in (content if type(content) is list else ())
                 if type(b) is dict and b.get("type") == "tool-call"]
        return ("advertised", calls) if calls else None
    if etype == "tool/call":
        return ("started", _s(data.get("callId")), _s(data.get("name")),
                _clip_or_none(data.get("arguments")))
    if etype == "tool/result" and event.get("surfaceOp") == "append":
        cid, is_error = result_fields(data.get("message"), version)
        error = data.get("error")
        name = code = None
        if type(error) is dict:
            name, code = _s(error.get("name")), _s(error.get("code"))
        return ("answered", cid, is_error, name, code)
    return None


def _clip_or_none(value: Any) -> str | None:
    return clip(value) if type(value) is str else None


def stream_start(event: Mapping[str, Any]) -> int | None:
    """Time of the first record of a v4 assistant stream (v4 §2.1), if any."""
    data = event.get("data")
    stream = data.get("stream") if type(data) is dict else None
    if type(stream) is list and stream and type(stream[0]) is dict:
        first = stream[0]
        return as_int(first.get("time", first.get("time0")))
    return None

"""Retired syntax of format v3 and v4 rows, and the refusal every admission rule raises. Layer: io.

Reference ``assertV4RetiredSyntax`` and its v3 counterpart (v4 spec §0.3-0.4, §1.7):

* `retired_events(row, version)`: what the v2→v3 step retired, refused by both generations in
  their own words: a non-ignorable ``tool/code-dispatch*`` (the one *unsupported* refusal: a
  migration would be needed) and ``request/header.header.system`` (the prompt is a
  ``system/message`` node since v3);
* `retired_syntax(row)`: v4 also retires v3's ``tool-result`` wrapper blocks, in any interpreted
  content slot or stream chunk (v3 writes tool results that way, so v3 keeps them).

`SyntaxRefusal` is the SessionFormatError of the admission layer; `to_issue` makes it the fatal
`RowIssue` that refuses the whole log.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.jsjson import ABSENT
from workbench.io.jsvalues import js_str
from workbench.io.scan import RowIssue

_CODE_DISPATCH = ("tool/code-dispatch-start", "tool/code-dispatch")


class SyntaxRefusal(WorkbenchError):
    """A SessionFormatError of the v4 admission layer (`unsupported` for a migration refusal)."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.unsupported = unsupported

    def to_issue(self) -> RowIssue:
        if self.unsupported:
            return RowIssue("retired_or_forbidden_syntax", self.message, fatal=True,
                            name="SessionFormatUnsupportedError", klass="unsupported")
        return RowIssue("retired_or_forbidden_syntax", self.message, fatal=True, name="SessionFormatError")


def stream_chunks(data: dict) -> Iterator[dict]:
    """The chunk objects of a v4 assistant event's ``stream`` records, in order."""
    stream = data.get("stream")
    if type(stream) is list:
        for entry in stream:
            if type(entry) is dict and entry.get("type") == "chunk":
                chunk = entry.get("chunk")
                if type(chunk) is dict:
                    yield chunk


class _Wrapper(WorkbenchError):
    """A released tool-result wrapper was found; the caller names the row in the message."""


def _wrapper(block: Any) -> None:
    if type(block) is dict and block.get("type") == "tool-result":
        raise _Wrapper


def _wrappers(content: Any) -> None:
    if type(content) is list:
        for block in content:
            if type(block) is dict and block.get("type") == "tool-result":
                raise _Wrapper


def _message_wrappers(message: Any) -> None:
    if type(message) is dict:
        _wrappers(message.get("content"))


_WRAPPER_TYPES = frozenset((
    "user/message", "developer/message", "assistant/message", "team/message/queued",
    "agent/inbox/spliced", "session/title-llm-request", "compaction/summary", "tool/ptc-dispatch",
    "assistant/attempt"))


def retired_events(row: dict, version: int) -> bool:
    """What the v2→v3 step retired, refused by v3 and v4 alike in the words of `version`:
    a non-ignorable ``tool/code-dispatch*`` (unsupported: a migration would rename it
    ``tool/ptc-dispatch*``) and a ``request/header`` without data and header objects or with
    ``header.system``. True when the row is of one of those types (nothing more to screen)."""
    kind = row.get("type")
    if kind in _CODE_DISPATCH:
        if row.get("ignorable") is not True:
            raise SyntaxRefusal(f"format v{version} rejects retired event type {kind}", unsupported=True)
        return True
    if kind == "request/header":
        data = row.get("data")
        if type(data) is not dict or type(data.get("header")) is not dict:
            raise SyntaxRefusal(f"format v{version} request/header requires data and header objects")
        if "system" in data["header"]:
            raise SyntaxRefusal(f"format v{version} request/header rejects retired header.system")
        return True
    return False


def retired_syntax(row: dict, deep: bool = True) -> None:
    """Reference ``assertV4RetiredSyntax`` (`deep=False` skips content loops that cannot fail)."""
    if retired_events(row, 4):
        return
    kind = row.get("type")
    data = row.get("data")
    if type(data) is not dict or not deep or kind not in _WRAPPER_TYPES:
        return
    try:
        _retired_content(kind, data)
    except _Wrapper:
        subject = f"format v4 {js_str(row.get('type', ABSENT))} at seq {js_str(row.get('seq', ABSENT))} content"
        raise SyntaxRefusal(f"{subject} must not contain a released tool-result wrapper") from None


def _retired_content(kind: Any, data: dict) -> None:
    if kind == "user/message":
        _wrappers(data.get("content"))
    elif kind in ("developer/message", "assistant/message", "team/message/queued"):
        _message_wrappers(data.get("message"))
    elif kind in ("agent/inbox/spliced", "session/title-llm-request"):
        messages = data.get("inserted" if kind == "agent/inbox/spliced" else "messages")
        if type(messages) is list:
            for message in messages:
                _message_wrappers(message)
    elif kind == "compaction/summary":
        _wrappers(data.get("summary"))
        _wrappers(data.get("rawOutput"))
    elif kind == "tool/ptc-dispatch":
        _wrappers(data.get("content"))
    if kind == "assistant/message" or kind == "assistant/attempt":
        for chunk in stream_chunks(data):
            if chunk.get("type") == "block-end":
                _wrapper(chunk.get("block", ABSENT))
            if chunk.get("type") == "block-start" and chunk.get("blockType") == "tool-result":
                raise _Wrapper


__all__ = ["SyntaxRefusal", "retired_events", "retired_syntax", "stream_chunks"]

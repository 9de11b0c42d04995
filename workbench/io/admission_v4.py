"""Admission of format-v4 rows: retired and forbidden syntax. Layer: io (stdlib only).

Before a row is decoded, and even in a tail that would otherwise be dropped as torn, the reference
screens every parsed line (``assertV4RowAdmission``, v4 spec §1.7): a match refuses the whole log.

* developer data (``assertV4DeveloperData``): ``developer/message`` with its developer-role
  message, positive turn/step, tool-addition/removal blocks with a ``toolName`` and no inline
  ``tool``, ``headerSeq`` exactly with additions; tool-change blocks only in developer messages;
  ``deferLoading`` only ``true``;
* producer-owned message sources (no ``{kind:"plugin"}``);
* retired syntax (`workbench.io.retired`): ``tool-result`` wrapper blocks in any interpreted
  content slot or stream chunk, ``request/header.header.system``, non-ignorable
  ``tool/code-dispatch*`` (the one *unsupported* refusal: a migration would be needed);
* ``system/message`` fields and supported image attachments;
* ``tool/result`` tool-role messages and exact ``forked`` not-started results.

Every rule is keyed on the event type, so a row of another type costs one set lookup; the content
and stream loops run only when the line can hold one of the names they look for.
"""
from __future__ import annotations

from typing import Any

from workbench.io.jsjson import ABSENT, is_neg_zero, is_safe_int
from workbench.io.jsvalues import js_str
from workbench.io.retired import SyntaxRefusal, retired_syntax, stream_chunks

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_ADMISSION_TYPES = frozenset((
    "user/message", "developer/message", "system/message", "assistant/message", "assistant/attempt",
    "tool/result", "team/message/queued", "agent/inbox/spliced", "session/title-llm-request",
    "compaction/summary", "tool/ptc-dispatch", "request/header", "tool/code-dispatch-start",
    "tool/code-dispatch"))
_DEEP_TYPES = frozenset((
    "user/message", "developer/message", "system/message", "assistant/message", "assistant/attempt",
    "tool/result", "team/message/queued", "agent/inbox/spliced", "session/title-llm-request",
    "compaction/summary", "tool/ptc-dispatch"))
ADMISSION_TYPES = _ADMISSION_TYPES
"""The row types any admission rule applies to (a row of another type is admitted as it is)."""


def count(value: Any, label: str) -> Any:
    """Reference ``sessionFormatCount``: a non-negative safe integer other than ``-0``."""
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise SyntaxRefusal(f"{label} must be a non-negative safe integer")
    return value


# -- developer data (reference: assertV4DeveloperData) -----------------------------------------

def _tool_change(block: Any, developer: bool) -> None:
    if type(block) is not dict:
        return
    kind = block.get("type")
    if kind != "tool-addition" and kind != "tool-removal":
        return
    if not developer:
        raise SyntaxRefusal(f"format v4 {kind} requires developer role")
    name = block.get("toolName")
    if type(name) is not str or not name:
        raise SyntaxRefusal(f"format v4 {kind} requires a nonempty toolName")
    if kind == "tool-addition" and "tool" in block:
        raise SyntaxRefusal("format v4 tool-addition must omit inline tool definitions")


def _tool_changes(content: Any, developer: bool = False) -> None:
    if type(content) is list:
        for block in content:
            _tool_change(block, developer)


def _ordinary_message(value: Any, deep: bool) -> None:
    if type(value) is not dict:
        return
    if value.get("role") == "developer":
        raise SyntaxRefusal("format v4 developer/message and developer role must occur together")
    if deep:
        _tool_changes(value.get("content"))


def developer_data(row: dict, deep: bool = True) -> None:
    """Reference ``assertV4DeveloperData`` (`deep=False` skips content loops that cannot fail)."""
    kind = row.get("type")
    data = row.get("data")
    if type(data) is not dict:
        if kind == "developer/message":
            raise SyntaxRefusal("format v4 developer/message data must be an object")
        return
    if kind == "developer/message":
        message = data.get("message")
        if type(message) is not dict or message.get("role") != "developer":
            raise SyntaxRefusal("format v4 developer/message requires turn, step, and a developer message")
        for field in ("turn", "step"):
            if count(data.get(field, ABSENT), f"developer/message {field}") == 0:
                raise SyntaxRefusal(f"developer/message {field} must be positive")
        content = message.get("content")
        _tool_changes(content, True)
        source = message.get("source")
        mid = message.get("id")
        if (type(mid) is not str or not mid or type(content) is not list or type(source) is not dict
                or type(source.get("kind")) is not str or not source["kind"] or source["kind"] == "plugin"):
            raise SyntaxRefusal("format v4 developer message requires id, role, content, and a producer-owned source")
        if any(type(b) is dict and b.get("type") == "tool-addition" for b in content):
            count(data.get("headerSeq", ABSENT), "developer/message headerSeq")
        elif "headerSeq" in data:
            raise SyntaxRefusal("format v4 developer/message must omit headerSeq without tool additions")
    elif kind == "user/message":
        _ordinary_message(data, deep)
    elif kind in ("system/message", "assistant/message", "tool/result"):
        _ordinary_message(data.get("message"), deep)
    elif kind in ("agent/inbox/spliced", "session/title-llm-request"):
        messages = data.get("inserted" if kind == "agent/inbox/spliced" else "messages")
        if type(messages) is list:
            for message in messages:
                _ordinary_message(message, deep)
    if deep and kind == "compaction/summary":
        _tool_changes(data.get("summary"))
        _tool_changes(data.get("rawOutput"))
    if deep and (kind == "assistant/message" or kind == "assistant/attempt"):
        for chunk in stream_chunks(data):
            if chunk.get("type") == "block-end":
                _tool_change(chunk.get("block", ABSENT), False)
            if chunk.get("type") == "block-start" and chunk.get("blockType") in ("tool-addition", "tool-removal"):
                raise SyntaxRefusal("format v4 tool-change blocks require developer role")
    if kind == "request/header" and type(data.get("header")) is dict:
        tools = data["header"].get("tools")
        if type(tools) is list:
            for tool in tools:
                if type(tool) is dict and "deferLoading" in tool and tool["deferLoading"] is not True:
                    raise SyntaxRefusal("format v4 tool deferLoading must be true when present")


# -- message sources (reference: assertV4SourceRowAdmission / assertV4MessageSources) ----------

PLUGIN_SOURCE = "format v4 message requires a producer-owned source kind"


def source_row_admission(row: dict) -> None:
    data = row.get("data")
    if type(data) is not dict:
        return
    kind = row.get("type")
    if kind == "user/message":
        messages: Any = [data]
    elif kind in ("system/message", "assistant/message", "tool/result"):
        messages = [data.get("message")]
    elif kind == "agent/inbox/spliced":
        messages = data.get("inserted")
    elif kind == "session/title-llm-request":
        messages = data.get("messages")
    else:
        return
    if type(messages) is not list:
        return
    for message in messages:
        if type(message) is dict:
            source = message.get("source")
            if type(source) is dict and source.get("kind") == "plugin":
                raise SyntaxRefusal(PLUGIN_SOURCE)


# -- system/message fields (reference: assertV4SystemMessageFields) ----------------------------

def _srec(value: Any, subject: str) -> dict:
    if type(value) is not dict:
        raise SyntaxRefusal(f"format v4 {subject} requires an object")
    return value


def _sstr(value: Any, subject: str, nonempty: bool = False) -> None:
    if type(value) is not str or (nonempty and not value):
        raise SyntaxRefusal(f"format v4 {subject} requires a string{' with content' if nonempty else ''}")


def _positive(value: Any, subject: str) -> None:
    if count(value, subject) == 0:
        raise SyntaxRefusal(f"format v4 {subject} must be positive")


def _image(value: Any) -> None:
    attachment = _srec(value, "system image attachment")
    _sstr(attachment.get("attachmentId"), "system image attachmentId", True)
    if attachment.get("mediaType") not in _IMAGE_TYPES or type(attachment.get("mediaType")) is not str:
        raise SyntaxRefusal("format v4 system image requires a supported mediaType")
    count(attachment.get("bytes", ABSENT), "system image bytes")
    _positive(attachment.get("width", ABSENT), "system image width")
    _positive(attachment.get("height", ABSENT), "system image height")
    if "name" in attachment:
        _sstr(attachment["name"], "system image name")
    if "originalDimensions" in attachment:
        original = _srec(attachment["originalDimensions"], "system image originalDimensions")
        _positive(original.get("width", ABSENT), "system image original width")
        _positive(original.get("height", ABSENT), "system image original height")


def system_message_fields(row: dict) -> None:
    data = _srec(row.get("data", ABSENT), "system/message data")
    _positive(data.get("turn", ABSENT), "system/message turn")
    _positive(data.get("step", ABSENT), "system/message step")
    message = _srec(data.get("message", ABSENT), "system message")
    _sstr(message.get("id"), "system message id", True)
    if message.get("role") != "system":
        raise SyntaxRefusal("format v4 system message requires system role")
    content = message.get("content")
    if type(content) is not list:
        raise SyntaxRefusal("format v4 system message requires content array")
    for value in content:
        block = _srec(value, "system content block")
        _sstr(block.get("type"), "system content type", True)
        kind = block["type"]
        if kind in ("text", "reasoning"):
            _sstr(block.get("text"), "system content text")
        elif kind == "tool-call":
            _sstr(block.get("id"), "system tool-call id", True)
            _sstr(block.get("name"), "system tool-call name", True)
            _sstr(block.get("arguments"), "system tool-call arguments")
        elif kind == "image":
            _image(block.get("attachment", ABSENT))
        elif kind == "tool-result":
            raise SyntaxRefusal("format v4 system content rejects retired tool-result wrappers")


# -- tool results (reference: assertV4ToolResultMessage / assertV4ForkResult) -----------------

def tool_result_message(row: dict) -> None:
    problem = _tool_result_problem(row)
    if problem is not None:  # the subject is spelled only for a refusal
        raise SyntaxRefusal(f"format v4 {row['type']} at seq {js_str(row.get('seq', ABSENT))} {problem}")


def _tool_result_problem(row: dict) -> str | None:
    """What ``assertV4ToolResultMessage`` refuses in a ``tool/result`` row (the text after its
    subject), or None."""
    data = row.get("data")
    if type(data) is not dict:
        return "data must be an object"
    message = data.get("message")
    if type(message) is not dict:
        return "message must be an object"
    mid = message.get("id")
    source = message.get("source")
    tool_call_id = message.get("toolCallId", ABSENT)
    source_call_id = source.get("callId", ABSENT) if type(source) is dict else ABSENT
    if type(mid) is not str or not mid:
        return "requires a first-class message with a string id"
    if message.get("role") != "tool":
        return "requires a tool-role message"
    if type(tool_call_id) is not str or not tool_call_id or source_call_id != tool_call_id \
            or type(source_call_id) is not str:
        return "requires toolCallId matching its tool source"
    if type(source) is not dict or source.get("kind") != "tool":
        return "requires a tool source"
    content = message.get("content")
    if type(content) is not list:
        return "requires array content"
    for block in content:
        if type(block) is dict and block.get("type") == "tool-result":
            return "content must not contain a released tool-result wrapper"
    is_error = message.get("isError", ABSENT)
    if is_error is not ABSENT and type(is_error) is not bool:
        return "isError must be boolean when present"
    if "error" in data and is_error is not True:
        return "carries error metadata for a non-error tool result"
    return None


def _decimal(text: str) -> bool:
    return text.isdigit() and text.isascii() and (text == "0" or text[0] != "0")


def fork_result(row: dict) -> None:
    data = row.get("data")
    if type(data) is not dict:
        return
    error = data.get("error")
    message = data.get("message")
    if (type(error) is not dict or error.get("code") != "TOOL_NOT_STARTED" or type(message) is not dict
            or type(message.get("id")) is not str or not message["id"].startswith("forked-tool-result-")):
        return
    source = message.get("source")
    call_id = source.get("callId", ABSENT) if type(source) is dict else ABSENT
    prefix = f"forked-tool-result-{js_str(call_id)}-"
    mid = message["id"]
    suffix = mid[len(prefix):]
    operation = row.get("surfaceOp", ABSENT)
    replacement = type(operation) is dict and operation.get("op") == "replace"
    sequence = int(suffix) if _decimal(suffix) else None
    content = message.get("content")
    text = content[0] if type(content) is list and len(content) == 1 else ABSENT
    sources = row.get("sourceEventSeqs", ABSENT)
    seq = row.get("seq", ABSENT)
    bad = (type(call_id) is not str or not mid.startswith(prefix) or sequence is None
           or sequence > 2**53 - 1)
    if not bad:
        if replacement:
            bad = type(seq) not in (int, float) or type(seq) is bool or sequence >= seq
        else:
            bad = not (type(seq) in (int, float) and seq == sequence)
    bad = bad or error.get("name") != "ToolNotStartedError"
    if not bad and not replacement:
        bad = sources is not ABSENT or operation != "append"
    if not bad and replacement:
        bad = not (type(sources) is list and len(sources) == 1 and type(sources[0]) in (int, float)
                   and sources[0] == sequence)
    bad = bad or (message.get("role") != "tool" or message.get("isError") is not True
                  or message.get("toolCallId", ABSENT) != call_id or type(source) is not dict
                  or source.get("kind") != "tool" or type(text) is not dict or text.get("type") != "text"
                  or type(text.get("text")) is not str)
    if bad:
        raise SyntaxRefusal("invalid V4 not-started fork result")


# -- the admission entry point -------------------------------------------------------------------

_ONE_MESSAGE = frozenset(("user/message", "system/message", "assistant/message", "tool/result"))


def _plain_message(row: dict, kind: str) -> bool:
    """Whether a row of a one-message type (no content loops to run) passes developer data,
    sources and retired syntax: its message is not developer-role and has no plugin source."""
    data = row.get("data")
    if type(data) is not dict:
        return True
    message = data if kind == "user/message" else data.get("message")
    if type(message) is not dict:
        return True
    if message.get("role") == "developer":
        return False
    source = message.get("source")
    return type(source) is not dict or source.get("kind") != "plugin"


def _suspect(raw: bytes) -> bool:
    """Whether a row's bytes may hold a wrapper or tool-change block name: spelled out (``tool-re``
    begins ``tool-result`` and ``tool-removal``, ``tool-ad`` ``tool-addition``: two substring
    searches, cheaper than one regex on rows full of ``tool-call``), or with a ``\\u00XX``
    escape, the only escape that spells a character of these ASCII names (the short escapes
    give ``"``, ``\\``, ``/`` and control characters)."""
    return b"tool-re" in raw or b"tool-ad" in raw or b"\\u00" in raw


def admit_row(row: Any, raw: bytes | None = None) -> None:
    """Reference ``assertV4RowAdmission(row, KNOWN_SESSION_EVENT_TYPES)``; raises `SyntaxRefusal`.

    `raw` (the line's bytes) lets a row that cannot hold a wrapper or tool-change block skip the
    content and stream loops: those names must then appear literally (no ``\\u`` escapes).
    """
    if type(row) is not dict:
        return
    kind = row.get("type")
    if type(kind) is not str or kind not in _ADMISSION_TYPES:
        return  # every admission rule is keyed on one of these types
    deep = kind in _DEEP_TYPES and (raw is None or _suspect(raw))
    if not deep and kind in _ONE_MESSAGE and _plain_message(row, kind):
        # developer data, sources and retired syntax cannot refuse this row: only the per-type rules
        if kind == "system/message":
            system_message_fields(row)
        elif kind == "tool/result":
            tool_result_message(row)
            fork_result(row)
        return
    developer_data(row, deep)
    source_row_admission(row)
    retired_syntax(row, deep)
    if kind == "system/message":
        system_message_fields(row)
    elif kind == "tool/result":
        tool_result_message(row)
        fork_result(row)


__all__ = ["ADMISSION_TYPES", "SyntaxRefusal", "admit_row", "developer_data", "fork_result", "retired_syntax",
           "source_row_admission", "system_message_fields", "tool_result_message"]

"""Rows of a format-v4 log: admission of retired/forbidden syntax and the envelope decoder.
Layer: io (stdlib only).

Every line after the header is exactly one event (v4 spec §1.2). The reference reads a line in two
steps, reproduced here with its exact texts:

1. **row admission** (``assertV4RowAdmission``, spec §1.7): retired or forbidden syntax refuses the
   whole log even in a tail that would otherwise be dropped: tool-result wrapper blocks,
   ``{kind:"plugin"}`` message sources, ``request/header.header.system``, malformed
   ``system/message`` fields, developer/tool-change misuse, malformed fork results, non-ignorable
   ``tool/code-dispatch*`` (the only *unsupported* refusal here);
2. **envelope decode** (the released row framing, ``decodeEvent``/``decodeSeqRanges``, spec §1.4):
   exact key set, ``time`` a safe integer other than ``-0``, ``ignorable`` only ``true``,
   ``sourceEventSeqs`` range pairs ``[a,b]`` expanded (values unique and earlier than the event's
   seq; strictly increasing when a pair was used), then ``seq === index`` (JavaScript ``===``: ``3.0``
   is 3, ``-0`` is 0, ``"3"`` is not) and the inherited ``session/end-seed`` marker.

Problems become `RowIssue`s for the line scanner (`workbench.io.scan`); decode problems carry the
reference wrapper ``corrupt session log: invalid committed event at line N: <detail>``.
"""
from __future__ import annotations

import re
from typing import Any

from workbench.io.jsjson import ABSENT, is_neg_zero, is_safe_int, js_str
from workbench.io.scan import RowIssue

_EVENT_REQUIRED = ("type", "seq", "time", "data")
_EVENT_KEYS = frozenset(_EVENT_REQUIRED + ("ignorable", "sourceEventSeqs", "surfaceOp"))
_MAX = 2**53 - 1
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                     "Retry it if it is still needed.")
_SUSPECT_NAME = re.compile(rb"tool-(?:res|add|rem)")
_SUSPECT_ESCAPE = re.compile(rb"\\u")
_ADMISSION_TYPES = frozenset((
    "user/message", "developer/message", "system/message", "assistant/message", "assistant/attempt",
    "tool/result", "team/message/queued", "agent/inbox/spliced", "session/title-llm-request",
    "compaction/summary", "tool/ptc-dispatch", "request/header", "tool/code-dispatch-start",
    "tool/code-dispatch"))
_DEEP_TYPES = frozenset((
    "user/message", "developer/message", "system/message", "assistant/message", "assistant/attempt",
    "tool/result", "team/message/queued", "agent/inbox/spliced", "session/title-llm-request",
    "compaction/summary", "tool/ptc-dispatch"))
_CODE_DISPATCH = ("tool/code-dispatch-start", "tool/code-dispatch")


class SyntaxRefusal(Exception):
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


def count(value: Any, label: str) -> Any:
    """Reference ``sessionFormatCount``: a non-negative safe integer other than ``-0``."""
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise SyntaxRefusal(f"{label} must be a non-negative safe integer")
    return value


def _rec(value: Any) -> bool:
    return type(value) is dict


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


def _stream_chunks(data: dict):
    stream = data.get("stream")
    if type(stream) is list:
        for entry in stream:
            if type(entry) is dict and entry.get("type") == "chunk":
                chunk = entry.get("chunk")
                if type(chunk) is dict:
                    yield chunk


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
        for chunk in _stream_chunks(data):
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


# -- retired syntax (reference: assertV4RetiredSyntax) -----------------------------------------

class _Wrapper(Exception):
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


def retired_syntax(row: dict, deep: bool = True) -> None:
    """Reference ``assertV4RetiredSyntax``."""
    kind = row.get("type")
    if kind in _CODE_DISPATCH and row.get("ignorable") is not True:
        raise SyntaxRefusal(f"format v4 rejects retired event type {kind}", unsupported=True)
    data = row.get("data")
    if kind == "request/header":
        if type(data) is not dict or type(data.get("header")) is not dict:
            raise SyntaxRefusal("format v4 request/header requires data and header objects")
        if "system" in data["header"]:
            raise SyntaxRefusal("format v4 request/header rejects retired header.system")
        return
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
        for chunk in _stream_chunks(data):
            if chunk.get("type") == "block-end":
                _wrapper(chunk.get("block", ABSENT))
            if chunk.get("type") == "block-start" and chunk.get("blockType") == "tool-result":
                raise _Wrapper


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
    subject = f"format v4 {row['type']} at seq {js_str(row.get('seq', ABSENT))}"
    data = row.get("data")
    if type(data) is not dict:
        raise SyntaxRefusal(f"{subject} data must be an object")
    message = data.get("message")
    if type(message) is not dict:
        raise SyntaxRefusal(f"{subject} message must be an object")
    mid = message.get("id")
    source = message.get("source")
    tool_call_id = message.get("toolCallId", ABSENT)
    source_call_id = source.get("callId", ABSENT) if type(source) is dict else ABSENT
    if type(mid) is not str or not mid:
        raise SyntaxRefusal(f"{subject} requires a first-class message with a string id")
    if message.get("role") != "tool":
        raise SyntaxRefusal(f"{subject} requires a tool-role message")
    if type(tool_call_id) is not str or not tool_call_id or source_call_id != tool_call_id \
            or type(source_call_id) is not str:
        raise SyntaxRefusal(f"{subject} requires toolCallId matching its tool source")
    if type(source) is not dict or source.get("kind") != "tool":
        raise SyntaxRefusal(f"{subject} requires a tool source")
    content = message.get("content")
    if type(content) is not list:
        raise SyntaxRefusal(f"{subject} requires array content")
    if any(type(b) is dict and b.get("type") == "tool-result" for b in content):
        raise SyntaxRefusal(f"{subject} content must not contain a released tool-result wrapper")
    is_error = message.get("isError", ABSENT)
    if is_error is not ABSENT and type(is_error) is not bool:
        raise SyntaxRefusal(f"{subject} isError must be boolean when present")
    if "error" in data and is_error is not True:
        raise SyntaxRefusal(f"{subject} carries error metadata for a non-error tool result")


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
    deep = kind in _DEEP_TYPES and (raw is None or _SUSPECT_NAME.search(raw) is not None
                                    or _SUSPECT_ESCAPE.search(raw) is not None)
    developer_data(row, deep)
    source_row_admission(row)
    retired_syntax(row, deep)
    if kind == "system/message":
        system_message_fields(row)
    elif kind == "tool/result":
        tool_result_message(row)
        fork_result(row)


# -- envelope decode (reference: released v2 decodeEvent / decodeSeqRanges) ---------------------

class RowDecodeError(Exception):
    """A decoder failure: `kind` is ``row_invalid``, ``sources_storage`` or ``seq_gap_committed``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _storage_count(value: Any, label: str) -> Any:
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise RowDecodeError("sources_storage", f"{label} must be a non-negative safe integer")
    return value


def decode_seq_ranges(value: Any, max_entries: Any) -> list:
    """Expand storage-form ``sourceEventSeqs`` (members and inclusive ``[a,b]`` pairs)."""
    if type(value) is not list:
        raise RowDecodeError("sources_storage", "sourceEventSeqs must be an array")
    output: list = []
    has_range = False
    for entry in value:
        if type(entry) is not list:
            output.append(_storage_count(entry, "sourceEventSeqs member"))
            continue
        if len(entry) != 2:
            raise RowDecodeError("sources_storage", "sourceEventSeqs range must be a [start, end] pair")
        start = _storage_count(entry[0], "sourceEventSeqs range start")
        end = _storage_count(entry[1], "sourceEventSeqs range end")
        if start > end or end >= max_entries or end - start + 1 > max_entries - len(output):
            raise RowDecodeError("sources_storage", "sourceEventSeqs range exceeds its event seq")
        output.extend(range(int(start), int(end) + 1))
        has_range = True
    seen: set = set()
    for source in output:
        if source >= max_entries or source in seen:
            raise RowDecodeError("sources_storage", "sourceEventSeqs ranges must contain unique earlier seqs")
        seen.add(source)
    if has_range and any(output[i] <= output[i - 1] for i in range(1, len(output))):
        raise RowDecodeError("sources_storage", "sourceEventSeqs ranges must be strictly increasing")
    return output


def decode_envelope(value: Any, row: int) -> dict:
    """The logical event of one row (sources expanded); raises `RowDecodeError`."""
    if type(value) is not dict:
        raise RowDecodeError("row_invalid", f"released v2 row {row} must be an object")
    for key in _EVENT_REQUIRED:
        if key not in value:
            raise RowDecodeError("row_invalid", f"released v2 row {row} lacks required field {key}")
    if len(value) > 4:
        for key in value:
            if key not in _EVENT_KEYS:
                raise RowDecodeError("row_invalid", f"released v2 row {row} has unexpected field {key}")
    if type(value["type"]) is not str:
        raise RowDecodeError("row_invalid", f"released v2 row {row} type must be a string")
    time = value["time"]
    if not (type(time) is int and -_MAX <= time <= _MAX) and (not is_safe_int(time) or is_neg_zero(time)):
        raise RowDecodeError("row_invalid", f"released v2 row {row} time must be a safe integer")
    ignorable = value.get("ignorable", ABSENT)
    if ignorable is not ABSENT and ignorable is not True:
        raise RowDecodeError("row_invalid", f"released v2 row {row} ignorable must be true when present")
    sources = value.get("sourceEventSeqs", ABSENT)
    if sources is ABSENT:
        return value
    seq = value["seq"]
    if not is_safe_int(seq) or seq < 0 or is_neg_zero(seq):
        raise RowDecodeError("row_invalid", f"released v2 row {row} seq must be a non-negative safe integer")
    if type(sources) is list and all(type(s) is not list for s in sources):
        decoded = decode_seq_ranges(sources, seq)
        return value if decoded == sources else {**value, "sourceEventSeqs": decoded}
    return {**value, "sourceEventSeqs": decode_seq_ranges(sources, seq)}


def expand_sources(event: dict) -> dict:
    """Re-apply the (already validated) range expansion to a re-parsed event line."""
    sources = event.get("sourceEventSeqs")
    if type(sources) is list and any(type(s) is list for s in sources):
        out: list = []
        for entry in sources:
            if type(entry) is list:
                out.extend(range(int(entry[0]), int(entry[1]) + 1))
            else:
                out.append(entry)
        return {**event, "sourceEventSeqs": out}
    return event


def strict_equal(value: Any, expected: int) -> bool:
    """JavaScript ``value === expected`` for an integer `expected` (``3.0`` yes, ``true``/``"3"`` no)."""
    kind = type(value)
    return (kind is int or kind is float) and value == expected


class V4Codec:
    """`RowCodec` of format v4 for `workbench.io.scan.LineScanner` (one event per line).

    Tracks the inherited ``session/end-seed {"inherited": true}`` marker: `inherited` is the seq of
    the last one seen (the fork cut, spec v4 §1.3).
    """

    unparsable_kind = "unparsable_committed"
    inline = False
    packed = False

    __slots__ = ("row", "inherited")

    def __init__(self) -> None:
        self.row = 0
        self.inherited: Any = None

    def screen(self, value: Any, raw: bytes) -> None:
        if type(value) is dict:
            try:
                admit_row(value, raw)
            except SyntaxRefusal as exc:
                raise exc.to_issue() from None

    @staticmethod
    def holds_turn_end(value: Any) -> bool:
        return type(value) is dict and value.get("type") == "turn/end"

    def decode(self, value: Any, line: int, expected: int) -> list:
        row = self.row
        self.row = row + 1
        try:
            event = decode_envelope(value, row)
        except RowDecodeError as exc:
            raise RowIssue(exc.kind, f"corrupt session log: invalid committed event at line {line}: {exc.message}",
                           turn_end=self.holds_turn_end(value)) from None
        seq = event["seq"]
        if not strict_equal(seq, expected):
            raise RowIssue("seq_gap_committed",
                           f"corrupt session log: invalid committed event at line {line}: released v2 row {row} "
                           f"has seq gap (expected {expected}, got {js_str(seq)})",
                           turn_end=event["type"] == "turn/end")
        if event["type"] == "session/end-seed":
            data = event["data"]
            if type(data) is not dict:
                raise RowIssue("row_invalid", f"corrupt session log: invalid committed event at line {line}: "
                               f"session/end-seed {js_str(seq)} data must be an object")
            if data.get("inherited") is True:
                self.inherited = expected
        return [event]

    @staticmethod
    def reparse(event: dict) -> dict:
        """Bring a re-parsed line back to its logical form (sourceEventSeqs ranges expanded)."""
        return expand_sources(event)

    def finish(self, is_seeded: Any) -> RowIssue | None:
        """The decoder's end-of-log check of the inherited marker against the header."""
        if is_seeded is True and self.inherited is None:
            return RowIssue("inherited_marker", "released v2 seeded Session lacks an inherited end-seed marker",
                            name="SessionFormatError")
        if is_seeded is not True and self.inherited is not None:
            return RowIssue("inherited_marker", "released v2 unseeded Session contains an inherited end-seed marker",
                            name="SessionFormatError")
        return None

"""Rows of a format-v0 log: packed rows, fixture leniency and legacy normalization.
Layer: io (stdlib only; packed rows via `workbench.io.rows_v0`).

A v0 line is one event or one packed chunk row (v0 spec §2). Per line, as the 0.1.x scanner does
(v0 spec §1.7): parse, expand a packed row (a malformed row reads like unparsable JSON), then
require ``seq === running count`` for every expanded event (a gap discards the whole line). A
committed ``null`` line crashes the reference with a ``TypeError`` reading ``.seq``; that is
reported as such, never as corruption.

Three v0-only adjustments follow (they never touch runtime logs of the current shape):

* **fixture leniency** (v0 spec §1.11): the repository's snapshot fixtures carry no ``seq``/``time``
  (packed rows no ``seq0``/``time0``). When the first body record lacks them, the file is read as
  a fixture: a record without ``seq`` gets the running logical count and ``time`` 0 (a packed row
  gets ``seq0``/``time0`` before it is validated), so a row still consumes one seq per member;
* **legacy normalization** (v0 spec §1.10): pre-identity shapes are rewritten as the real loader
  does (``legacy-message:<sessionId>:<seq>`` ids, turn-end reasons, ``steering/message``). A shape
  that does not match a legacy pattern exactly is left as it is for validation to judge;
* **range pairs** (DSH 0.1.2): its writer stores ``sourceEventSeqs`` with inclusive ``[a,b]`` pairs
  (the v4 §1.4 encoding, e.g. ``[[12,25]]`` on ``assistant/message``); a list that decodes by that
  rule (`workbench.io.rows_v4.decode_seq_ranges`) is expanded, and charged to the log's bound on
  expanded pairs (`workbench.io.rows_v4.charge_ranges`); any other is left as written for the
  fold to judge (a v0 reader's "must densely contain non-negative safe integers").
"""
from __future__ import annotations

from typing import Any

from workbench.io.jsvalues import js_str
from workbench.io.rows_v4 import RowDecodeError, charge_ranges, decode_seq_ranges
from workbench.io.scan import RowIssue

_ROW_TAGS = frozenset(("text-chunks", "reasoning-chunks", "tool-call-chunks"))
_NORMALIZED = frozenset(("turn/start", "turn/end", "steering/message", "user/message", "assistant/message",
                         "tool/result"))
"""The types legacy normalization may rewrite (or remember a message id of)."""
_ROWS: Any = None


def _rows() -> Any:
    global _ROWS
    if _ROWS is None:
        from workbench.io import rows_v0
        _ROWS = rows_v0
    return _ROWS


def legacy_message_id(session_id: str, seq: int) -> str:
    return f"legacy-message:{session_id}:{seq}"


class V0Codec:
    """`RowCodec` of format v0 for `workbench.io.scan.LineScanner`.

    `changed` counts events whose logical form differs from their line (implicit seq/time or a
    normalized legacy shape); the event store keeps those as decoded dicts.
    """

    unparsable_kind = "unparsable_committed_event"
    after_issue_types = frozenset(("turn/end",))
    """Row types that still matter after the issue (only a ``turn/end`` makes it fatal)."""

    __slots__ = ("session_id", "implicit", "message_ids", "changed", "inline", "packed", "ranged")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.implicit: bool | None = None
        self.message_ids: dict[int, str] = {}
        self.changed = 0
        self.ranged = 0
        """Seqs the log's range pairs expanded to so far (`workbench.io.rows_v4.charge_ranges`)."""
        self.inline = False
        """Whether the events of the last decoded line differ from what re-parsing would give."""
        self.packed = False
        """Whether the last decoded line was a packed chunk row."""

    def screen(self, value: Any, raw: bytes) -> None:
        return None

    @staticmethod
    def holds_turn_end(value: Any) -> bool:
        return type(value) is dict and value.get("type") == "turn/end"

    def _complete(self, value: Any, expected: int) -> Any:
        """Fixture leniency: give a seq-less record its implicit seq/time (v0 spec §1.11)."""
        if type(value) is not dict:
            return value
        packed = value.get("type") in _ROW_TAGS
        if self.implicit is None:
            self.implicit = ("seq0" not in value) if packed else ("seq" not in value)
        if not self.implicit:
            return value
        if packed:
            if "seq0" in value:
                return value
            out = {"type": value["type"], "seq0": expected, "time0": value.get("time0", 0)}
        else:
            if "seq" in value:
                return value
            out = {"type": value.get("type"), "seq": expected, "time": value.get("time", 0)}
            if "type" not in value:
                del out["type"]
        for key, item in value.items():
            if key not in out:
                out[key] = item
        return out

    def take(self, value: Any, raw: bytes, line: int, expected: int) -> dict | list | None:
        """`decode` of a plain line in one call: the event itself, or the events of a valid packed
        row (none of them changed by normalization); None leaves the line to `decode` (the first
        record, a fixture, a legacy shape, a malformed row, a seq that is not the expected
        integer). Raises nothing of its own."""
        if self.implicit is False and type(value) is dict:
            kind = value.get("type")
            if type(kind) is not str:
                return None
            if kind in _ROW_TAGS:
                try:
                    events = _rows().decode_storage_record(value)
                except ValueError:
                    return None
                # members are assistant/chunk events with consecutive integer seqs from seq0
                return events if events and events[0]["seq"] == expected else None
            seq = value.get("seq")
            if type(seq) is int and seq == expected:
                if kind in _NORMALIZED and self.normalize(value) is not value:
                    return None
                return value
        return None

    def decode(self, value: Any, line: int, expected: int) -> list:
        value = self._complete(value, expected)
        self.packed = type(value) is dict and value.get("type") in _ROW_TAGS
        try:
            events = _rows().decode_storage_record(value)
        except ValueError:
            raise RowIssue(self.unparsable_kind,
                           f"corrupt session log: unparsable committed event at line {line}") from None
        count = expected
        for event in events:
            if event is None:
                raise RowIssue("type_error", "Cannot read properties of null (reading 'seq')",
                               fatal=True, name="TypeError")
            seq = event.get("seq") if type(event) is dict else None
            if type(event) is not dict or not (type(seq) in (int, float) and seq == count):
                shown = js_str(event.get("seq")) if type(event) is dict and "seq" in event else "undefined"
                turn_end = any(type(e) is dict and e.get("type") == "turn/end" for e in events)
                raise RowIssue("seq_gap_committed",
                               f"corrupt session log: seq gap in committed region at line {line} "
                               f"(expected {count}, got {shown})", turn_end=turn_end)
            count += 1
        inline = bool(self.implicit)
        out = []
        for event in events:
            normalized = self.normalize(event)
            if normalized is not event:
                inline = True
                sources = normalized.get("sourceEventSeqs")
                if sources is not event.get("sourceEventSeqs"):   # range pairs expanded
                    self.ranged = charge_ranges(self.ranged, len(sources), normalized["seq"], line)
            out.append(normalized)
        if inline:
            self.changed += len(out)
        self.inline = inline
        return out

    # -- legacy normalization (v0 spec §1.10) --------------------------------------------------

    def normalize(self, event: dict) -> dict:
        sources = event.get("sourceEventSeqs")
        if type(sources) is list and any(type(s) is list for s in sources):
            event = _expand_pairs(event, sources)
        kind = event.get("type")
        data = event.get("data")
        if type(data) is not dict:
            return event
        if kind == "turn/start":
            if "trigger" in data:
                event = {**event, "data": {k: v for k, v in data.items() if k != "trigger"}}
        elif kind == "turn/end":
            event = self._turn_end(event, data)
        elif kind == "steering/message":
            event = self._steering(event, data)
        if event.get("type") in ("user/message", "assistant/message", "tool/result"):
            event = self._message(event)
            self._remember(event)
        return event

    def _turn_end(self, event: dict, data: dict) -> dict:
        reason = data.get("reason")
        if type(reason) is not dict:
            return event
        kind = reason.get("kind")
        if kind == "aborted" and "reason" not in reason:
            current: dict = {"kind": "aborted", "reason": {"kind": "legacy"}}
        elif kind == "disposed":
            current = {"kind": "aborted", "reason": {"kind": "disposed"}}
        elif kind == "error" and "error" not in reason:
            if "failure" in reason:
                current = {"kind": "error", "error": reason["failure"]}
            elif type(reason.get("message")) is str:
                code = reason.get("code")
                current = {"kind": "error", "error": {"message": reason["message"],
                                                      "code": code if type(code) is str else "UNKNOWN"}}
            else:
                return event
        else:
            return event
        return {**event, "data": {**data, "reason": current}}

    def _steering(self, event: dict, data: dict) -> dict:
        if "message" in data:
            return {**event, "type": "user/message", "data": data["message"]}
        message = {k: v for k, v in data.items() if k != "turn"}
        message["id"] = legacy_message_id(self.session_id, event.get("seq"))
        message["role"] = "user"
        return {**event, "type": "user/message", "data": message}

    def _message(self, event: dict) -> dict:
        data = event["data"]
        if type(data) is not dict:
            return event
        kind = event["type"]
        seq = event.get("seq")
        if kind == "user/message":
            if "id" in data or "role" in data or "message" in data or "content" not in data or "source" not in data:
                return event
            return {**event, "data": {**data, "id": legacy_message_id(self.session_id, seq), "role": "user"}}
        if "message" in data:
            return event
        if kind == "assistant/message":
            source = data.get("provenance")
            if "content" not in data or type(source) is not dict:
                return event
            rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
            rest["message"] = {"id": legacy_message_id(self.session_id, seq), "role": "assistant",
                               "content": data["content"], "source": {**source, "kind": "model"}}
            return {**event, "data": rest}
        call_id, is_error = data.get("callId"), data.get("isError")
        if type(call_id) is not str or type(is_error) is not bool or "content" not in data:
            return event
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        op = event.get("surfaceOp")
        inherited = op.get("start") if type(op) is dict and op.get("op") == "replace" else None
        message_id = self.message_ids.get(inherited) if type(inherited) is int else None
        rest["message"] = {
            "id": message_id or legacy_message_id(self.session_id, seq), "role": "user",
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": data["content"],
                         "isError": is_error}],
            "source": {"kind": "tool", "callId": call_id},
        }
        return {**event, "data": rest}

    def _remember(self, event: dict) -> None:
        data = event.get("data")
        if type(data) is not dict:
            return
        message = data if event["type"] == "user/message" else data.get("message")
        if type(message) is dict and type(message.get("id")) is str and type(event.get("seq")) is int:
            self.message_ids[event["seq"]] = message["id"]

    def reparse(self, event: dict) -> dict:
        """Re-parsed line of an unchanged event: already logical (no change was recorded)."""
        return event


def _expand_pairs(event: dict, sources: list) -> dict:
    """``sourceEventSeqs`` with range pairs expanded when the list decodes (DSH 0.1.2 storage)."""
    seq = event.get("seq")
    if type(seq) not in (int, float) or type(seq) is bool:
        return event
    try:
        return {**event, "sourceEventSeqs": decode_seq_ranges(sources, seq)}
    except RowDecodeError:
        return event


__all__ = ["V0Codec", "legacy_message_id"]

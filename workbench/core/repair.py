"""Crash-repair closers: the synthetic events that balance an open final turn.
Layer: core (pure; imports io only).

A log whose last turn is open (a crash, a kill) is balanced on resume by deterministic synthetic
events (v0 spec §1.7, v4 spec §1.7; reference ``interruptedTurnClosers`` / ``openTurnClosers`` /
``ToolCallRecovery``):

1. one error ``tool/result`` per tool call advertised by an ``assistant/message`` and not yet
   answered by an appended result of the same turn and step, in assistant order: a call with a
   ``tool/call`` gets ``ToolOutcomeUnknownError`` citing that call, one without gets
   ``ToolNotStartedError``; the message id is ``<cause>-tool-result-<callId>-<seq>`` (its own seq);
   pending calls are forgotten at every ``turn/start``, ``turn/end`` and ``step/end``;
2. ``step/end`` for the open step, if any;
3. ``turn/end`` with reason ``{kind: <cause>}``.

Closers take consecutive seqs after the last event and reuse its ``time``. Causes: ``interrupted``
(crash repair) and ``forked`` (the tail of a fork seed). Message shapes per format: v4 tool-role
messages; v0 user-role messages wrapping one ``tool-result`` block. Crash repair never closes a
``compaction/*`` bracket. `CloserTracker` is the single-pass form the loader feeds while it scans.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from workbench.io.generations import tool_role

Cause = Literal["interrupted", "forked"]

TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"

CLOSER_TEXT: dict[str, dict[str, str]] = {
    "interrupted": {
        "started": ("The tool call was interrupted after it was recorded, but no result was durably "
                    "recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: "
                    "retry only if the operation is read-only or idempotent; if it may have side effects, "
                    "first verify external state or ask the user. Do not retry blindly."),
        "notStarted": ("The tool call was interrupted before the Harness recorded it as started. "
                       "Retry it if it is still needed."),
    },
    "forked": {
        "started": ("The history inherited by this branch records this tool call starting but does not "
                    "include its result. The parent session may have completed it after the fork point. "
                    "Decide whether to retry from the tool semantics: retry only if the operation is "
                    "read-only or idempotent; if it may have side effects, first verify external state or "
                    "ask the user. Do not retry blindly."),
        "notStarted": ("The history inherited by this branch has no record of this tool call starting. "
                       "The parent session may have executed it after the fork point. Decide whether to "
                       "retry from the tool semantics: retry only if the operation is read-only or "
                       "idempotent; if it may have side effects, first verify external state or ask the "
                       "user. Do not retry blindly."),
    },
}
"""Model-visible wording of the synthetic error results (literal reference texts)."""


def _result_call_id(data: Any, version: int) -> Any:
    """The call a tool/result answers: ``message.source.callId`` (v0 fallback: the block's id)."""
    message = data.get("message") if type(data) is dict else None
    if type(message) is not dict:
        return None
    source = message.get("source")
    if type(source) is dict and "callId" in source:
        return source["callId"]
    if not tool_role(version):
        content = message.get("content")
        if type(content) is list and content and type(content[0]) is dict:
            return content[0].get("toolCallId")
    return None


class CloserTracker:
    """Single-pass ``openTurnClosers``: `observe` each event in order, then `closers`."""

    __slots__ = ("version", "open_turn", "open_step", "pending", "last_seq", "last_time")

    def __init__(self, *, version: int) -> None:
        self.version = version
        self.open_turn: Any = None
        self.open_step: Any = None
        self.pending: dict[Any, list] = {}   # callId -> [turn, step, callSeq|None]
        self.last_seq: Any = None
        self.last_time: Any = None

    def observe(self, event: Mapping[str, Any]) -> None:
        self.last_seq = event.get("seq")
        self.last_time = event.get("time")
        kind = event.get("type")
        if kind in _TRACKED:
            self.track(event, kind)

    def note_last(self, event: Mapping[str, Any]) -> None:
        """`observe` of an event whose type is not tracked (closers continue from its seq/time)."""
        self.last_seq = event.get("seq")
        self.last_time = event.get("time")

    def track(self, event: Mapping[str, Any], kind: str) -> None:
        """The state change of one event of a tracked type (`TRACKED`), without `note_last`."""
        _STEPS[kind](self, event)

    def step(self, kind: str) -> Callable[[Mapping[str, Any]], None] | None:
        """`track` for events of type `kind`, for a caller that dispatches on the type once
        (None: not a tracked type)."""
        step = _STEPS.get(kind)
        return None if step is None else step.__get__(self)

    def _turn_start(self, event: Mapping[str, Any]) -> None:
        data = event.get("data")
        self.pending.clear()
        self.open_turn = data.get("turn") if type(data) is dict else None
        self.open_step = None

    def _turn_end(self, event: Mapping[str, Any]) -> None:
        self.pending.clear()
        self.open_turn = None
        self.open_step = None

    def _step_end(self, event: Mapping[str, Any]) -> None:
        self.pending.clear()
        self.open_step = None

    def _step_start(self, event: Mapping[str, Any]) -> None:
        data = event.get("data")
        self.open_step = data.get("step") if type(data) is dict else None

    def _assistant(self, event: Mapping[str, Any]) -> None:
        data = event.get("data")
        if type(data) is not dict:
            return
        message = data.get("message")
        content = message.get("content") if type(message) is dict else None
        if type(content) is not list:
            return
        for block in content:
            if type(block) is dict and block.get("type") == "tool-call":
                call_id = block.get("id")
                try:
                    self.pending[call_id] = [data.get("turn"), data.get("step"), None]
                except TypeError:
                    continue

    def _call(self, event: Mapping[str, Any]) -> None:
        data = event.get("data")
        if type(data) is dict:
            try:
                entry = self.pending.get(data.get("callId"))
            except TypeError:
                entry = None
            if entry is not None:
                entry[2] = event.get("seq")

    def _result(self, event: Mapping[str, Any]) -> None:
        if not self.pending:
            return
        data = event.get("data")
        call_id = _result_call_id(data, self.version)
        try:
            entry = self.pending.get(call_id)
        except TypeError:
            entry = None
        if (entry is not None and event.get("surfaceOp") == "append"
                and _same(entry[0], data.get("turn")) and _same(entry[1], data.get("step"))):
            del self.pending[call_id]

    def closers(self, cause: Cause = "interrupted") -> list[dict]:
        """The synthetic events that close the open final turn; [] when it is balanced."""
        if self.open_turn is None or self.last_seq is None:
            return []
        seq = _as_int(self.last_seq) + 1
        time = self.last_time
        out: list[dict] = []
        text = CLOSER_TEXT[cause]
        for call_id, (turn, step, call_seq) in self.pending.items():
            started = call_seq is not None
            body = [{"type": "text", "text": text["started" if started else "notStarted"]}]
            mid = f"{cause}-tool-result-{call_id}-{seq}"
            if tool_role(self.version):
                message: dict[str, Any] = {"id": mid, "role": "tool", "toolCallId": call_id, "isError": True,
                                           "source": {"kind": "tool", "callId": call_id}, "content": body}
            else:
                message = {"id": mid, "role": "user", "source": {"kind": "tool", "callId": call_id},
                           "content": [{"type": "tool-result", "toolCallId": call_id, "isError": True,
                                        "content": body}]}
            error = ({"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN} if started
                     else {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED})
            result: dict[str, Any] = {"type": "tool/result", "seq": seq, "time": time,
                                      "data": {"turn": turn, "step": step, "message": message, "error": error},
                                      "surfaceOp": "append"}
            if started:
                result["sourceEventSeqs"] = [call_seq]
            out.append(result)
            seq += 1
        if self.open_step is not None:
            out.append({"type": "step/end", "seq": seq, "time": time,
                        "data": {"turn": self.open_turn, "step": self.open_step}})
            seq += 1
        out.append({"type": "turn/end", "seq": seq, "time": time,
                    "data": {"turn": self.open_turn, "reason": {"kind": cause}}})
        return out


_STEPS: dict[str, Callable[[CloserTracker, Mapping[str, Any]], None]] = {
    "turn/start": CloserTracker._turn_start, "turn/end": CloserTracker._turn_end,
    "step/start": CloserTracker._step_start, "step/end": CloserTracker._step_end,
    "assistant/message": CloserTracker._assistant, "tool/call": CloserTracker._call,
    "tool/result": CloserTracker._result}
_TRACKED = frozenset(_STEPS)
TRACKED = _TRACKED
"""The event types whose order decides the closers (others only move the last seq/time)."""


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) in (int, float) and type(b) in (int, float):
        return a == b
    return type(a) is str and type(b) is str and a == b


def _as_int(value: Any) -> int:
    return int(value) if type(value) in (int, float) else 0


def open_turn_closers(events: Iterable[Mapping[str, Any]], cause: Cause, *, version: int) -> list[dict]:
    """Closers of an open final turn for `cause` (reference: openTurnClosers)."""
    tracker = CloserTracker(version=version)
    for event in events:
        tracker.observe(event)
    return tracker.closers(cause)


def interrupted_turn_closers(events: Iterable[Mapping[str, Any]], *, version: int) -> list[dict]:
    """Crash-repair closers (reference: interruptedTurnClosers)."""
    return open_turn_closers(events, "interrupted", version=version)


__all__ = ["CLOSER_TEXT", "CloserTracker", "TRACKED", "TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN",
           "interrupted_turn_closers", "open_turn_closers"]

"""The lifecycle state machine of a format-v4 log (v4 spec §3.3, §4.3 end, §5.2).
Layer: core (pure; imports io only).

Reference: the ``Relationships`` class behind ``assertV4LifecycleRelationships``. One pass over the
events of the relationship types, in order, enforcing: turns numbered 1, 2, ... with one open at a
time; steps 1, 2, ... per turn, closed before ``turn/end``; step events carrying the open turn and
step; tool calls advertised by the step's ``assistant/message``, started once by an exact
``tool/call`` and answered before ``step/end`` and ``turn/end`` (a call never started only by the
exact ``TOOL_NOT_STARTED`` repair); request header/context inside a turn; PTC dispatch pairs; retry
chains per (turn, step, provider, policyKey); titles citing human ``user/message`` events; command
run/done; compaction brackets owned by the open turn, at most one summary, spans naming the exact
current surface span; its own surface replay with the protected system head.

A ``turn/*`` event may cross an open bracket only when the bracket is orphaned, i.e. a
``session/end-seed`` follows before any ``compaction/end`` (the reference decides that with a pre-
scan). Here the crossing is kept pending until the end-seed (it vanishes) or the end of the log
(it becomes a violation), so the machine stays single-pass. After a violation the machine goes on
(best effort); `violations` are ``(seq, ordinal, message)`` with the reference's texts.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workbench.core.lifecycle_calls import CallRules
from workbench.core.lifecycle_surface import SurfaceRules
from workbench.core.lifecycle_values import (
    Violation,
    array,
    earlier,
    get,
    record,
    same,
    text,
)
from workbench.core.surface_order import SurfaceOrder
from workbench.io.jsjson import ABSENT

_SURFACE = frozenset(("system/message", "user/message", "developer/message", "assistant/message",
                      "tool/result"))
_STEP_EVENTS = frozenset(("system/message", "developer/message", "assistant/attempt"))
_RELATIONSHIP_TYPES = _SURFACE | _STEP_EVENTS | frozenset((
    "turn/start", "turn/end", "step/start", "step/end", "tool/call", "request/header",
    "request/context", "tool/ptc-dispatch-start", "tool/ptc-dispatch", "llm/retry",
    "llm/retry-started", "session/title", "session/title-llm-request", "command/run",
    "command/done", "compaction/start", "compaction/summary", "compaction/end", "compaction/prune",
    "session/end-seed"))
_PRESCAN = frozenset(("compaction/start", "compaction/end", "session/end-seed"))

RELATIONSHIP_TYPES = _RELATIONSHIP_TYPES
"""The event types the lifecycle looks at (the reference's RELATIONSHIP_TYPES)."""


class Lifecycle(CallRules, SurfaceRules):
    """The reference ``Relationships`` state: feed `accept` every known event in seq order
    (the tool-call and surface/compaction rules are the `CallRules` and `SurfaceRules` mixins)."""

    def __init__(self, event_at: Callable[[int], Any]) -> None:
        self.event_at = event_at
        self.violations: list[tuple[Any, int, str]] = []
        self._ordinal = 0
        self.turn: Any = None
        self.step: Any = None
        self.next_turn = 1
        self.next_step = 1
        self.provider: Any = ABSENT
        self.order = SurfaceOrder()
        self.protected_head: Any = ABSENT
        self.compaction: dict | None = None
        self.tools: dict[str, dict] = {}
        self.dispatches: dict[str, dict] = {}
        self.retries: list[dict] = []
        self.started_retries: set = set()
        self.commands: set = set()
        self.orphans: set = set()
        self._prescan_start: Any = None
        self._pending_crossings: dict[Any, list[tuple[Any, int, str]]] = {}

    def accept(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        """One event of a known type (other types are ignored by the reference)."""
        route = _ROUTES.get(kind)
        if route is None:
            return
        prescan, step_event, surface, handler = route
        if prescan:
            if kind == "compaction/start":
                self._prescan_start = seq
            elif kind == "compaction/end":
                self._prescan_start = None
            else:  # session/end-seed
                if self._prescan_start is not None:
                    self.orphans.add(self._prescan_start)
                    self._pending_crossings.pop(self._prescan_start, None)
                self._prescan_start = None
        self._ordinal = 0
        try:
            data = event.get("data", ABSENT)
            if type(data) is not dict:
                raise Violation(f"{kind} requires an object")
            if step_event:
                self._require_step(kind, data)
            if self.compaction is not None and kind.startswith("turn/"):
                start = self.compaction["seq"]
                if start not in self.orphans:
                    crossing = (seq, self._ordinal, f"{kind} crosses an open compaction")
                    self._ordinal += 1
                    if self._prescan_start is not None and same(self._prescan_start, start):
                        self._pending_crossings.setdefault(start, []).append(crossing)
                    else:
                        self.violations.append(crossing)
            if surface:
                self._fold_surface(event, kind, seq)
            if handler is not None:
                handler(self, event, kind, seq, data)
        except Violation as exc:
            self._note(seq, exc.message)
        except (TypeError, AttributeError, KeyError, IndexError) as exc:  # the reference's TypeError
            self._note(seq, f"{type(exc).__name__}: {exc}")

    def _note(self, seq: Any, message: str) -> None:
        self.violations.append((seq, self._ordinal, message))
        self._ordinal += 1

    def finish(self) -> list[tuple[Any, int, str]]:
        """Every violation, pending crossings settled, in event order."""
        found = list(self.violations)
        for pending in self._pending_crossings.values():
            found.extend(pending)
        found.sort(key=lambda v: (v[0], v[1]))
        return found

    def _require_turn(self, kind: str) -> None:
        if self.turn is None:
            raise Violation(f"{kind} is outside an open turn")

    def _require_step(self, kind: str, data: dict) -> None:
        # the open turn and step are integers: JavaScript === is a numeric comparison with a number
        turn, step = data.get("turn"), data.get("step")
        kind_turn, kind_step = type(turn), type(step)
        if (self.turn is None or self.step is None or not (kind_turn is int or kind_turn is float)
                or turn != self.turn or not (kind_step is int or kind_step is float) or step != self.step):
            raise Violation(f"{kind} does not match an open turn and step")

    def _close_tools(self, kind: str) -> None:
        if self.tools:
            raise Violation(f"{kind} leaves unresolved tool call {next(iter(self.tools))}")

    def _step_start(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        turn, step = data.get("turn"), data.get("step")
        kind_turn, kind_step = type(turn), type(step)
        if (self.turn is None or not (kind_turn is int or kind_turn is float) or turn != self.turn
                or self.step is not None or not (kind_step is int or kind_step is float)
                or step != self.next_step):
            raise Violation("step/start does not match the open turn and next step")
        self.step = self.next_step

    def _turn_start(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if self.turn is not None or not same(get(data, "turn"), self.next_turn):
            raise Violation("turn/start does not open the expected turn")
        self.turn = self.next_turn
        self.next_step = 1
        self.tools.clear()

    def _turn_end(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if self.turn is None or not same(get(data, "turn"), self.turn) or self.step is not None:
            raise Violation("turn/end does not match the open turn with no open step")
        self._close_tools(kind)
        self.turn = None
        self.next_turn += 1

    def _step_end(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_step(kind, data)
        self._close_tools(kind)
        self.step = None
        self.next_step += 1

    def _request_header(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)
        config = record(get(record(get(data, "header"), "request header"), "config"), "request config")
        self.provider = get(config, "provider")

    def _request_context(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)

    def _title(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        references = array(get(data, "messageSeqs"), "title messageSeqs")
        if kind == "session/title":
            user = get(record(get(data, "source"), "title source"), "kind") == "user"
            if (len(references) == 0) != user:
                raise Violation("session/title messageSeqs must be empty exactly for a user title")
        seen: set = set()
        for value in references:
            cited = earlier(value, seq, "title messageSeqs")
            source = self.event_at(int(cited))
            ok = (cited not in seen and type(source) is dict and source.get("type") == "user/message")
            if ok:
                title_input = record(record(source.get("data", ABSENT), "title input").get("source", ABSENT),
                                      "title input source")
                ok = title_input.get("kind") == "user"
            if not ok:
                raise Violation(f"{kind} messageSeqs must cite distinct earlier human user/message events")
            seen.add(cited)
        if kind != "session/title-llm-request":
            return
        messages = array(get(data, "messages"), "title messages")
        message = record(messages[0] if messages else ABSENT, "title message")
        content = array(get(message, "content"), "title content")
        block = content[0] if content else ABSENT
        if (not references or len(messages) != 1 or message.get("role") != "user"
                or get(record(get(message, "source"), "title source"), "kind") != "dsh-session-title-llm"
                or len(content) != 1 or type(block) is not dict or block.get("type") != "text"):
            raise Violation("session/title-llm-request messages do not represent messageSeqs")

    def _command_run(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        command = text(get(data, "commandId"), "commandId")
        if command in self.commands:
            raise Violation(f"command/run repeats commandId {command}")
        self.commands.add(command)

    def _command_done(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if text(get(data, "commandId"), "commandId") not in self.commands:
            raise Violation("command/done has no prior command/run")
        if "sourceEventSeq" in data:
            source = self.event_at(int(earlier(data["sourceEventSeq"], seq, "command sourceEventSeq")))
            source_type = source.get("type") if type(source) is dict else None
            if data.get("kind") != "success" or source_type in ("command/run", "command/done"):
                raise Violation("command/done has invalid sourceEventSeq")

    def _user_message(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        source = record(get(data, "source"), "user message source")
        op = event.get("surfaceOp")
        if not (type(op) is str and op == "append") and source.get("kind") == "compact-checkpoint":
            self._compaction_owner(source, "compaction checkpoint")

    def _end_seed(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self.compaction = None


_HANDLERS: dict[str, Callable[..., None]] = {
    "turn/start": Lifecycle._turn_start,
    "turn/end": Lifecycle._turn_end,
    "step/start": Lifecycle._step_start,
    "step/end": Lifecycle._step_end,
    "assistant/message": Lifecycle._advertise,
    "tool/call": Lifecycle._start,
    "tool/result": Lifecycle._answer,
    "developer/message": Lifecycle._developer,
    "request/header": Lifecycle._request_header,
    "request/context": Lifecycle._request_context,
    "tool/ptc-dispatch-start": Lifecycle._dispatch,
    "tool/ptc-dispatch": Lifecycle._dispatch,
    "llm/retry": Lifecycle._retry,
    "llm/retry-started": Lifecycle._retry,
    "session/title": Lifecycle._title,
    "session/title-llm-request": Lifecycle._title,
    "command/run": Lifecycle._command_run,
    "command/done": Lifecycle._command_done,
    "compaction/start": Lifecycle._compact,
    "compaction/summary": Lifecycle._compact,
    "compaction/end": Lifecycle._compact,
    "compaction/prune": Lifecycle._compact,
    "user/message": Lifecycle._user_message,
    "session/end-seed": Lifecycle._end_seed,
}

_ROUTES: dict[str, tuple[bool, bool, bool, Callable[..., None] | None]] = {
    kind: (kind in _PRESCAN, kind in _STEP_EVENTS, kind in _SURFACE, _HANDLERS.get(kind))
    for kind in _RELATIONSHIP_TYPES}
"""Per relationship type, read once per event: (orphan pre-scan, step event, surface replay, handler)."""


__all__ = ["Lifecycle", "RELATIONSHIP_TYPES", "Violation"]

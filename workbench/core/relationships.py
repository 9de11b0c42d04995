"""Lifecycle relationships of a format-v4 log, checked at load (v4 spec §3.3, §3.9, §5.2).
Layer: core (pure; imports io only).

The real v4 loader rejects a log whose events break these relationships (reference
``assertReleasedV4Relationships`` and its ``Relationships`` state machine):

* per event, first over the whole log: developer data, producer-owned message sources, delivery
  markers of the current generation (``throughSeq`` earlier, the session's own id unless inside a
  fork's inherited prefix), ``subagent/catalog`` children unique after the inherited cut;
* then the lifecycle, in one pass: turns and steps numbered 1, 2, ... with one open at a time; step
  events inside the open step; tool calls advertised, started once and answered before the step
  and turn end (or the exact ``TOOL_NOT_STARTED`` repair); PTC dispatch pairs; retry chains; titles
  citing human messages; command run/done; compaction brackets owned by the open turn (a
  ``turn/*`` may cross only a bracket orphaned by a later ``session/end-seed``); the relationship
  layer's own surface replay with the protected system head.

`RelationshipChecker` is a single-pass state machine: the loader feeds it each event while it
scans, so nothing is re-read. Facts that depend on later events (the final inherited cut, whether
an open bracket is orphaned) are kept pending and settled by `finish`. After a violation the
checker keeps going (best effort) so a debugger can list every violation; the first one is the
reference's error.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.events import KNOWN_TYPES_V4
from workbench.io.jsjson import ABSENT, deep_equal, is_neg_zero, is_safe_int, js_str
from workbench.io.rows_v4 import SyntaxRefusal, developer_data

NAME = "SessionFormatError"

_SURFACE = frozenset(("system/message", "user/message", "developer/message", "assistant/message",
                      "tool/result"))
_STEP_EVENTS = frozenset(("system/message", "developer/message", "assistant/attempt"))
_RELATIONSHIP_TYPES = _SURFACE | _STEP_EVENTS | frozenset((
    "turn/start", "turn/end", "step/start", "step/end", "tool/call", "request/header",
    "request/context", "tool/ptc-dispatch-start", "tool/ptc-dispatch", "llm/retry",
    "llm/retry-started", "session/title", "session/title-llm-request", "command/run",
    "command/done", "compaction/start", "compaction/summary", "compaction/end", "compaction/prune",
    "session/end-seed"))
_MESSAGE_SLOT = frozenset(("developer/message", "system/message", "assistant/message", "tool/result"))
_NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                     "Retry it if it is still needed.")


@dataclass(frozen=True, slots=True)
class RelationshipViolation:
    """One broken relationship: the event `seq` (None: the log as a whole), the reference's error
    `name` and exact `message`."""

    seq: int | None
    name: str
    message: str


class _Violation(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# -- JavaScript value semantics -----------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    """JavaScript ``a === b`` for JSON values (``ABSENT`` is undefined; objects by identity)."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a == b
    if ta is str and tb is str:
        return a == b
    return False


def _strict_list_equal(a: list, b: Any) -> bool:
    """``isDeepStrictEqual`` of two number arrays (``-0`` differs from ``0``)."""
    if type(b) is not list or len(a) != len(b):
        return False
    return all(_same(x, y) and is_neg_zero(x) == is_neg_zero(y) for x, y in zip(a, b))


def _record(value: Any, subject: str) -> dict:
    if type(value) is not dict:
        raise _Violation(f"{subject} requires an object")
    return value


def _text(value: Any, subject: str) -> str:
    if type(value) is not str or not value:
        raise _Violation(f"{subject} requires a nonempty string")
    return value


def _array(value: Any, subject: str) -> list:
    if type(value) is not list:
        raise _Violation(f"{subject} requires an array")
    return value


def _count(value: Any, label: str) -> Any:
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise _Violation(f"{label} must be a non-negative safe integer")
    return value


def _earlier(value: Any, seq: Any, subject: str) -> Any:
    coordinate = _count(value, subject)
    if coordinate >= seq:
        raise _Violation(f"{subject} must name an earlier event")
    return coordinate


def _get(data: dict, key: str) -> Any:
    return data.get(key, ABSENT)


# -- per-event artifact checks (the first loop of assertReleasedV4Relationships) ----------------

def _source(message: dict) -> None:
    value = message.get("source")
    if type(value) is not dict or type(value.get("kind")) is not str or not value["kind"] \
            or value["kind"] == "plugin":
        raise _Violation("format v4 message requires a producer-owned source kind")


def message_sources(event: Mapping[str, Any]) -> None:
    """Reference ``assertV4MessageSources`` (``mapEventMessages`` over declared message slots)."""
    data = event.get("data")
    if type(data) is not dict:
        return
    kind = event.get("type")
    if kind == "user/message":
        _source(data)
    elif kind in _MESSAGE_SLOT:
        message = data.get("message")
        if type(message) is not dict:
            raise _Violation(f"{kind} requires a message")
        _source(message)
    elif kind == "agent/inbox/spliced" or kind == "session/title-llm-request":
        messages = data.get("inserted" if kind == "agent/inbox/spliced" else "messages", ABSENT)
        if type(messages) is not list:
            raise _Violation(f"{kind} requires message array")
        for message in messages:
            if type(message) is not dict:
                raise _Violation(f"{kind} requires message objects")
        for message in messages:
            _source(message)


def delivery_session(event: Mapping[str, Any], current: int = 4) -> str | None:
    """Reference ``validateDeliveryAccepted``: the id a current-generation marker names."""
    data = event.get("data")
    if type(data) is not dict:
        raise _Violation("delivery-accepted data must be an object")
    version = data.get("sessionFormatVersion", ABSENT)
    if _count(0 if version is ABSENT else version, "delivery sessionFormatVersion") != current:
        return None
    if _count(_get(data, "throughSeq"), "delivery throughSeq") >= event.get("seq"):
        raise _Violation("delivery throughSeq must precede its marker")
    sid = data.get("sessionId")
    if type(sid) is not str or not sid:
        raise _Violation("delivery requires a nonempty Session id")
    return sid


def catalog_child(data: Any) -> str:
    """Reference ``catalogFact``: the child id of a valid versioned catalog fact."""
    bad = type(data) is not dict
    if not bad:
        version, mode, label = data.get("version", ABSENT), data.get("mode"), data.get("label", ABSENT)
        numeric = type(version) in (int, float)
        bad = (not (numeric and version in (0, 1, 2)) or type(data.get("childId")) is not str
               or mode not in ("continuable", "one-shot", "external", "unknown") or type(mode) is not str
               or (version == 2) != (mode == "external") or (version == 0 and mode == "unknown")
               or (mode == "continuable" and type(label) is not str)
               or (label is not ABSENT and type(label) is not str))
    if bad:
        raise _Violation("subagent/catalog requires a supported versioned catalog fact")
    _count(data.get("childCreatedAt", ABSENT), "catalog child creation time")
    return data["childId"]


# -- the checker --------------------------------------------------------------------------------

class RelationshipChecker:
    """Streaming ``assertReleasedV4Relationships``: call `accept` per event in seq order, then
    `finish` with the final inherited cut.

    `event_at(seq)` returns an earlier event (developer ``headerSeq``, title and command
    references). `admitted=True` skips the developer-data check already done by row admission.
    """

    def __init__(self, meta: Mapping[str, Any] | None, event_at: Callable[[int], Any], *,
                 admitted: bool = False) -> None:
        self.meta = meta or {}
        self.event_at = event_at
        self.admitted = admitted
        self.artifact_violations: list[tuple[int, int, str]] = []
        self.lifecycle_violations: list[tuple[int, int, str]] = []
        self._wrong_session: list[int] = []
        self._catalog: list[tuple[int, str | None, str | None]] = []
        self._ordinal = 0
        # lifecycle state (reference: class Relationships)
        self.turn: Any = None
        self.step: Any = None
        self.next_turn = 1
        self.next_step = 1
        self.provider: Any = ABSENT
        self.surface: list[Any] = []
        self.positions: dict[Any, int] = {}
        self.protected_head: Any = ABSENT
        self.compaction: dict | None = None
        self.tools: dict[str, dict] = {}
        self.dispatches: dict[str, dict] = {}
        self.retries: list[dict] = []
        self.started_retries: set = set()
        self.commands: set = set()
        self.orphans: set = set()
        self._prescan_start: Any = None
        self._pending_crossings: dict[Any, list[tuple[int, int, str]]] = {}

    # -- driver -----------------------------------------------------------------------------

    def accept(self, event: Mapping[str, Any]) -> None:
        """Check one event (the next in seq order)."""
        kind = event.get("type")
        if type(kind) is not str or kind not in KNOWN_TYPES_V4:
            return
        seq = event.get("seq")
        self._artifact(event, kind, seq)
        if kind == "compaction/start":
            self._prescan_start = seq
        elif kind == "compaction/end":
            self._prescan_start = None
        elif kind == "session/end-seed":
            if self._prescan_start is not None:
                self.orphans.add(self._prescan_start)
                self._pending_crossings.pop(self._prescan_start, None)
            self._prescan_start = None
        if kind in _RELATIONSHIP_TYPES:
            self._ordinal = 0
            try:
                self._accept(event, kind, seq)
            except _Violation as exc:
                self._note(seq, exc.message)
            except (TypeError, AttributeError, KeyError, IndexError) as exc:  # reference TypeError
                self._note(seq, f"{type(exc).__name__}: {exc}")

    def _note(self, seq: Any, message: str) -> None:
        self.lifecycle_violations.append((seq, self._ordinal, message))
        self._ordinal += 1

    def _artifact(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        try:
            if not self.admitted:
                try:
                    developer_data(event)  # type: ignore[arg-type]
                except SyntaxRefusal as exc:
                    raise _Violation(exc.message) from None
            if kind in _SURFACE or kind == "agent/inbox/spliced" or kind == "session/title-llm-request":
                message_sources(event)
            if kind == "session-log-deepseek/delivery-accepted":
                sid = delivery_session(event)
                if sid is not None and sid != self.meta.get("id"):
                    self._wrong_session.append(seq)
            if kind == "subagent/catalog":
                try:
                    self._catalog.append((seq, catalog_child(event.get("data")), None))
                except _Violation as exc:
                    self._catalog.append((seq, None, exc.message))
        except _Violation as exc:
            self.artifact_violations.append((seq, 0, exc.message))

    def finish(self, inherited_event_count: int = 0) -> list[RelationshipViolation]:
        """Settle pending facts; the violations, the reference's error first."""
        artifact = list(self.artifact_violations)
        parent = "parentSession" in self.meta
        for seq in self._wrong_session:
            if not (parent and seq < inherited_event_count):
                artifact.append((seq, 1, "current-generation delivery marker names the wrong Session"))
        seen: set = set()
        for seq, child, problem in self._catalog:
            if seq < inherited_event_count:
                continue
            if problem is not None:
                artifact.append((seq, 2, problem))
            elif child in seen:
                artifact.append((seq, 2, f"duplicate catalog child {child}"))
            else:
                seen.add(child)
        artifact.sort(key=lambda v: (v[0], v[1]))
        lifecycle = list(self.lifecycle_violations)
        for pending in self._pending_crossings.values():
            lifecycle.extend(pending)
        lifecycle.sort(key=lambda v: (v[0], v[1]))
        return [RelationshipViolation(seq, NAME, message) for seq, _, message in artifact + lifecycle]

    # -- lifecycle (reference: Relationships.accept) -----------------------------------------

    def _accept(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        data = _record(event.get("data", ABSENT), kind)
        if kind in _STEP_EVENTS:
            self._require_step(kind, data)
        if kind.startswith("turn/") and self.compaction is not None:
            start = self.compaction["seq"]
            if start not in self.orphans:
                crossing = (seq, self._ordinal, f"{kind} crosses an open compaction")
                self._ordinal += 1
                if self._prescan_start is not None and _same(self._prescan_start, start):
                    self._pending_crossings.setdefault(start, []).append(crossing)
                else:
                    self.lifecycle_violations.append(crossing)
        if kind in _SURFACE:
            self._fold_surface(event, kind, seq)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, kind, seq, data)

    def _require_turn(self, kind: str) -> None:
        if self.turn is None:
            raise _Violation(f"{kind} is outside an open turn")

    def _require_step(self, kind: str, data: dict) -> None:
        if (self.turn is None or self.step is None or not _same(_get(data, "turn"), self.turn)
                or not _same(_get(data, "step"), self.step)):
            raise _Violation(f"{kind} does not match an open turn and step")

    def _close_tools(self, kind: str) -> None:
        if self.tools:
            raise _Violation(f"{kind} leaves unresolved tool call {next(iter(self.tools))}")

    def _fold_surface(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        surface, positions = self.surface, self.positions
        if kind == "system/message" and surface and self.protected_head is ABSENT:
            raise _Violation("system/message requires a protected first surface head")
        op = event.get("surfaceOp", ABSENT)
        if type(op) is str and op == "append":
            if kind == "system/message" and not surface:
                self.protected_head = seq
            positions.setdefault(seq, len(surface))
            surface.append(seq)
            return
        operation = _record(op, f"{kind} surfaceOp")
        first = positions.get(_earlier(_get(operation, "startSeq"), seq, "replacement start"), -1)
        last = positions.get(_earlier(_get(operation, "endSeq"), seq, "replacement end"), -1)
        if first < 0 or last < first:
            raise _Violation(f"{kind} replacement range is not on the current surface")
        removed = surface[first:last + 1]
        sources = _array(event.get("sourceEventSeqs", ABSENT), "replacement sourceEventSeqs")
        cited = {s for s in sources if type(s) in (int, float)}
        if any(s not in cited for s in removed):
            raise _Violation("replacement sourceEventSeqs omit a shadowed surface node")
        head = self.protected_head
        if head is not ABSENT and head in removed:
            if kind != "system/message" or len(removed) != 1:
                raise _Violation("surface replacement cannot shadow the protected system head")
            self.protected_head = seq
        for node in removed:
            positions.pop(node, None)
        surface[first:last + 1] = [seq]
        if len(removed) != 1:
            for index in range(first, len(surface)):
                positions[surface[index]] = index
        else:
            positions[seq] = first

    def _tool(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if kind == "tool/result" and not (type(event.get("surfaceOp")) is str
                                          and event.get("surfaceOp") == "append"):
            self._require_turn(kind)
            return
        self._require_step(kind, data)
        if kind == "assistant/message":
            message = _record(_get(data, "message"), "assistant message")
            for value in _array(_get(message, "content"), "assistant content"):
                block = _record(value, "assistant content block")
                if block.get("type") != "tool-call":
                    continue
                call_id = _text(_get(block, "id"), "tool call id")
                if call_id in self.tools:
                    raise _Violation(f"assistant/message repeats advertised tool call {call_id}")
                self.tools[call_id] = {"name": _get(block, "name"), "arguments": _get(block, "arguments"),
                                       "started": False}
            return
        message = _record(_get(data, "message"), "tool result message") if kind == "tool/result" else None
        call_id = _text(_get(data, "callId") if message is None else _get(message, "toolCallId"), "tool call id")
        pending = self.tools.get(call_id)
        if pending is None:
            raise _Violation(f"{kind} {call_id} has no advertised tool lifecycle")
        if message is None:
            if (pending["started"] or not _same(pending["name"], _get(data, "name"))
                    or not _same(pending["arguments"], _get(data, "arguments"))):
                raise _Violation(f"tool/call {call_id} does not match one advertised tool call")
            pending["started"] = True
        else:
            if not pending["started"] and not _not_started_repair(event, data, message, call_id):
                raise _Violation(f"tool/result {call_id} is not the exact TOOL_NOT_STARTED repair")
            del self.tools[call_id]

    def _developer(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if "headerSeq" not in data:
            return
        header_seq = _earlier(data["headerSeq"], seq, "developer/message headerSeq")
        header_event = self.event_at(int(header_seq))
        if type(header_event) is not dict or header_event.get("type") != "request/header":
            raise _Violation("developer/message headerSeq must reference an earlier request/header")
        header = _record(_record(header_event.get("data", ABSENT), "request/header data").get("header", ABSENT),
                         "request header")
        tools = header.get("tools")
        content = _array(_get(_record(_get(data, "message"), "developer message"), "content"), "developer content")
        shown = int(header_seq)
        for value in content:
            if type(value) is not dict or value.get("type") != "tool-addition":
                continue
            name = value.get("toolName", ABSENT)
            definitions = [t for t in tools if type(t) is dict and _same(t.get("name", ABSENT), name)] \
                if type(tools) is list else []
            if len(definitions) != 1:
                raise _Violation(f'developer/message tool-addition "{js_str(name)}" must name exactly one tool '
                                 f"in headerSeq {shown}")
            definition = definitions[0]
            if type(definition.get("description")) is not str or type(definition.get("parameters")) is not dict:
                raise _Violation(f'developer/message tool-addition "{js_str(name)}" requires a complete tool '
                                 f"definition in headerSeq {shown}")

    def _dispatch(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)
        sub = _text(_get(data, "subCallId"), "PTC subCallId")
        root = _text(_get(data, "rootCallId"), "PTC rootCallId")
        parent = _text(_get(data, "parentCallId"), "PTC parentCallId")
        existing = self.dispatches.get(sub)
        if existing is not None and not _same(existing["data"].get("rootCallId", ABSENT), root):
            raise _Violation("PTC dispatch changes its rootCallId")
        if parent != root:
            owner = self.dispatches.get(parent)
            if owner is None or not _same(owner["data"].get("rootCallId", ABSENT), root):
                raise _Violation("PTC parentCallId does not belong to rootCallId")
        if kind == "tool/ptc-dispatch-start":
            if existing is not None:
                raise _Violation("PTC dispatch repeats subCallId")
            self.dispatches[sub] = {"data": data, "settled": False}
            return
        if existing is None or existing["settled"]:
            raise _Violation("PTC dispatch has no unique start")
        for key in ("rootCallId", "parentCallId", "name", "arguments"):
            a, b = existing["data"].get(key, ABSENT), data.get(key, ABSENT)
            if (a is ABSENT) != (b is ABSENT) or (a is not ABSENT and not deep_equal(a, b)):
                raise _Violation("PTC dispatch does not match its start")
        existing["settled"] = True

    def _retry(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        rid = _text(_get(data, "retryId"), "retryId")
        attempt = _count(_get(data, "retry"), "retry")
        if kind == "llm/retry-started":
            scheduled = next((item for item in self.retries
                              if _same(item.get("retryId", ABSENT), rid) and _same(item.get("retry", ABSENT), attempt)),
                             None)
            if scheduled is None:
                raise _Violation("llm/retry-started pairs no prior scheduled attempt")
            if not _same(_get(scheduled, "turn"), _get(data, "turn")) or \
                    not _same(_get(scheduled, "step"), _get(data, "step")):
                raise _Violation("llm/retry-started changes scheduled coordinates")
            key = (rid, attempt)
            if key in self.started_retries:
                raise _Violation("llm/retry-started repeats one scheduled attempt")
            self.started_retries.add(key)
            return
        step = self.step if self.step is not None else self.next_step - 1
        if self.turn is None or not _same(_get(data, "turn"), self.turn) or not _same(_get(data, "step"), step):
            raise _Violation("llm/retry does not match the current turn and step")
        if not _same(_get(data, "provider"), self.provider):
            raise _Violation("llm/retry provider does not match the open request/header")
        prior = None
        for item in reversed(self.retries):
            if all(_same(item.get(k, ABSENT), data.get(k, ABSENT)) for k in ("turn", "step", "provider", "policyKey")):
                prior = item
                break
        expected = 1 if prior is None else _count(_get(prior, "retry"), "prior retry") + 1
        if not _same(attempt, expected):
            raise _Violation("llm/retry skips its policy attempt sequence")
        if (any(_same(item.get("retryId", ABSENT), rid) for item in self.retries) if prior is None
                else not _same(_get(prior, "retryId"), rid)):
            raise _Violation("llm/retry must keep one retryId per policy chain")
        self.retries.append(data)

    def _compact(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if kind in ("compaction/prune", "compaction/summary"):
            self._span(kind, seq, data)
        if kind == "compaction/prune":
            return
        if kind == "compaction/start":
            if self.compaction is not None:
                raise _Violation("compaction/start overlaps an open compaction")
            turn = _get(data, "turn")
            owner = None if turn is None else _count(turn, "compaction turn")
            if not _same(owner, self.turn):
                raise _Violation("compaction/start does not match the open turn")
            self.compaction = {"id": _text(_get(data, "compactionId"), "compactionId"),
                               "command": _get(data, "sourceCommandId"), "turn": owner, "seq": seq,
                               "summarized": False}
            return
        current = self._compaction_owner(data, kind)
        if not _same(current["turn"], self.turn):
            raise _Violation(f"{kind} does not match the open turn")
        if kind == "compaction/summary":
            if current["summarized"]:
                raise _Violation("compaction/summary repeats")
            current["summarized"] = True
        else:
            if not _same(_get(data, "turn"), current["turn"]):
                raise _Violation("compaction/end changes its owner turn")
            if "error" not in data and not current["summarized"]:
                raise _Violation("successful compaction/end requires one summary")
            self.compaction = None

    def _compaction_owner(self, data: dict, subject: str) -> dict:
        current = self.compaction
        if (current is None or not _same(current["id"], _get(data, "compactionId"))
                or not _same(current["command"], _get(data, "sourceCommandId"))):
            raise _Violation(f"{subject} has no matching compaction/start")
        return current

    def _span(self, kind: str, seq: Any, data: dict) -> None:
        span = _record(_get(data, "shadowedRange"), "compaction shadowedRange")
        start = self.positions.get(_earlier(_get(span, "start"), seq, "compaction range start"), -1)
        end = self.positions.get(_earlier(_get(span, "end"), seq, "compaction range end"), -1)
        seqs = _array(_get(data, "shadowedSeqs"), "compaction shadowedSeqs")
        if start < 0 or end < start or not _strict_list_equal(self.surface[start:end + 1], seqs):
            raise _Violation(f"{kind} shadowedSeqs do not name an exact current surface span")
        if self.protected_head is not ABSENT and any(_same(s, self.protected_head) for s in seqs):
            raise _Violation("compaction cannot shadow the protected system head")

    def _turn_start(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if self.turn is not None or not _same(_get(data, "turn"), self.next_turn):
            raise _Violation("turn/start does not open the expected turn")
        self.turn = self.next_turn
        self.next_step = 1
        self.tools.clear()

    def _turn_end(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if self.turn is None or not _same(_get(data, "turn"), self.turn) or self.step is not None:
            raise _Violation("turn/end does not match the open turn with no open step")
        self._close_tools(kind)
        self.turn = None
        self.next_turn += 1

    def _step_start(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if (self.turn is None or not _same(_get(data, "turn"), self.turn) or self.step is not None
                or not _same(_get(data, "step"), self.next_step)):
            raise _Violation("step/start does not match the open turn and next step")
        self.step = self.next_step

    def _step_end(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_step(kind, data)
        self._close_tools(kind)
        self.step = None
        self.next_step += 1

    def _request_header(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)
        config = _record(_get(_record(_get(data, "header"), "request header"), "config"), "request config")
        self.provider = _get(config, "provider")

    def _request_context(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)

    def _title(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        references = _array(_get(data, "messageSeqs"), "title messageSeqs")
        if kind == "session/title":
            user = _get(_record(_get(data, "source"), "title source"), "kind") == "user"
            if (len(references) == 0) != user:
                raise _Violation("session/title messageSeqs must be empty exactly for a user title")
        seen: set = set()
        for value in references:
            cited = _earlier(value, seq, "title messageSeqs")
            source = self.event_at(int(cited))
            ok = (cited not in seen and type(source) is dict and source.get("type") == "user/message")
            if ok:
                title_input = _record(_record(source.get("data", ABSENT), "title input").get("source", ABSENT),
                                      "title input source")
                ok = title_input.get("kind") == "user"
            if not ok:
                raise _Violation(f"{kind} messageSeqs must cite distinct earlier human user/message events")
            seen.add(cited)
        if kind != "session/title-llm-request":
            return
        messages = _array(_get(data, "messages"), "title messages")
        message = _record(messages[0] if messages else ABSENT, "title message")
        content = _array(_get(message, "content"), "title content")
        block = content[0] if content else ABSENT
        if (not references or len(messages) != 1 or message.get("role") != "user"
                or _get(_record(_get(message, "source"), "title source"), "kind") != "dsh-session-title-llm"
                or len(content) != 1 or type(block) is not dict or block.get("type") != "text"):
            raise _Violation("session/title-llm-request messages do not represent messageSeqs")

    def _command_run(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        command = _text(_get(data, "commandId"), "commandId")
        if command in self.commands:
            raise _Violation(f"command/run repeats commandId {command}")
        self.commands.add(command)

    def _command_done(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if _text(_get(data, "commandId"), "commandId") not in self.commands:
            raise _Violation("command/done has no prior command/run")
        if "sourceEventSeq" in data:
            source = self.event_at(int(_earlier(data["sourceEventSeq"], seq, "command sourceEventSeq")))
            source_type = source.get("type") if type(source) is dict else None
            if data.get("kind") != "success" or source_type in ("command/run", "command/done"):
                raise _Violation("command/done has invalid sourceEventSeq")

    def _user_message(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        source = _record(_get(data, "source"), "user message source")
        op = event.get("surfaceOp")
        if not (type(op) is str and op == "append") and source.get("kind") == "compact-checkpoint":
            self._compaction_owner(source, "compaction checkpoint")

    def _end_seed(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self.compaction = None


_HANDLERS: dict[str, Callable[..., None]] = {
    "turn/start": RelationshipChecker._turn_start,
    "turn/end": RelationshipChecker._turn_end,
    "step/start": RelationshipChecker._step_start,
    "step/end": RelationshipChecker._step_end,
    "assistant/message": RelationshipChecker._tool,
    "tool/call": RelationshipChecker._tool,
    "tool/result": RelationshipChecker._tool,
    "developer/message": RelationshipChecker._developer,
    "request/header": RelationshipChecker._request_header,
    "request/context": RelationshipChecker._request_context,
    "tool/ptc-dispatch-start": RelationshipChecker._dispatch,
    "tool/ptc-dispatch": RelationshipChecker._dispatch,
    "llm/retry": RelationshipChecker._retry,
    "llm/retry-started": RelationshipChecker._retry,
    "session/title": RelationshipChecker._title,
    "session/title-llm-request": RelationshipChecker._title,
    "command/run": RelationshipChecker._command_run,
    "command/done": RelationshipChecker._command_done,
    "compaction/start": RelationshipChecker._compact,
    "compaction/summary": RelationshipChecker._compact,
    "compaction/end": RelationshipChecker._compact,
    "compaction/prune": RelationshipChecker._compact,
    "user/message": RelationshipChecker._user_message,
    "session/end-seed": RelationshipChecker._end_seed,
}


def _not_started_repair(event: Mapping[str, Any], data: dict, message: dict, call_id: str) -> bool:
    """The exact ``TOOL_NOT_STARTED`` closer that may answer a call never started."""
    error = _record(_get(data, "error"), "not-started error")
    if (error.get("name") != "ToolNotStartedError" or error.get("code") != "TOOL_NOT_STARTED"
            or message.get("isError") is not True or "sourceEventSeqs" in event):
        return False
    mid = _text(_get(message, "id"), "not-started message id")
    if mid.startswith(f"forked-tool-result-{call_id}-"):
        return True
    prefix = f"interrupted-tool-result-{call_id}-"
    suffix = mid[len(prefix):]
    content = _array(_get(message, "content"), "not-started content")
    block = content[0] if content else ABSENT
    return (mid.startswith(prefix) and suffix.isascii() and suffix.isdigit()
            and (suffix == "0" or suffix[0] != "0") and int(suffix) <= 2**53 - 1 and len(content) == 1
            and type(block) is dict and block.get("type") == "text" and block.get("text") == _NOT_STARTED_TEXT)


def check_relationships(meta: Mapping[str, Any] | None, events: Sequence[Mapping[str, Any]], *,
                        inherited_event_count: int = 0, collect: bool = False) -> list[RelationshipViolation]:
    """The relationship violations of a v4 log (reference ``assertReleasedV4Relationships``).

    With ``collect=False`` at most the first violation (the reference's error); with
    ``collect=True`` every violation found (best effort after the first, sorted by seq).
    """
    def event_at(seq: int) -> Any:
        return events[seq] if 0 <= seq < len(events) else None

    checker = RelationshipChecker(meta, event_at)
    for event in events:
        checker.accept(event)
    found = checker.finish(inherited_event_count)
    if not collect:
        return found[:1]
    return sorted(found, key=lambda v: -1 if v.seq is None else v.seq)

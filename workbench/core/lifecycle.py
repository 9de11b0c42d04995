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

from workbench.errors import WorkbenchError
from workbench.io.jsjson import ABSENT, deep_equal, is_neg_zero, is_safe_int, js_str

_SURFACE = frozenset(("system/message", "user/message", "developer/message", "assistant/message",
                      "tool/result"))
_STEP_EVENTS = frozenset(("system/message", "developer/message", "assistant/attempt"))
_RELATIONSHIP_TYPES = _SURFACE | _STEP_EVENTS | frozenset((
    "turn/start", "turn/end", "step/start", "step/end", "tool/call", "request/header",
    "request/context", "tool/ptc-dispatch-start", "tool/ptc-dispatch", "llm/retry",
    "llm/retry-started", "session/title", "session/title-llm-request", "command/run",
    "command/done", "compaction/start", "compaction/summary", "compaction/end", "compaction/prune",
    "session/end-seed"))
_MAX = 2**53 - 1
_PRESCAN = frozenset(("compaction/start", "compaction/end", "session/end-seed"))
_NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                     "Retry it if it is still needed.")


RELATIONSHIP_TYPES = _RELATIONSHIP_TYPES
"""The event types the lifecycle looks at (the reference's RELATIONSHIP_TYPES)."""


class Violation(WorkbenchError):
    """A broken relationship with the reference's message."""

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
        raise Violation(f"{subject} requires an object")
    return value


def _text(value: Any, subject: str) -> str:
    if type(value) is not str or not value:
        raise Violation(f"{subject} requires a nonempty string")
    return value


def _array(value: Any, subject: str) -> list:
    if type(value) is not list:
        raise Violation(f"{subject} requires an array")
    return value


def _count(value: Any, label: str) -> Any:
    if type(value) is int and 0 <= value <= _MAX:
        return value
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise Violation(f"{label} must be a non-negative safe integer")
    return value


def _earlier(value: Any, seq: Any, subject: str) -> Any:
    coordinate = _count(value, subject)
    if coordinate >= seq:
        raise Violation(f"{subject} must name an earlier event")
    return coordinate


def _get(data: dict, key: str) -> Any:
    return data.get(key, ABSENT)



class Lifecycle:
    """The reference ``Relationships`` state: feed `accept` every known event in seq order."""

    def __init__(self, event_at: Callable[[int], Any]) -> None:
        self.event_at = event_at
        self.violations: list[tuple[Any, int, str]] = []
        self._ordinal = 0
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
        self._pending_crossings: dict[Any, list[tuple[Any, int, str]]] = {}

    def accept(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        """One event of a known type (other types are ignored by the reference)."""
        if kind in _PRESCAN:
            if kind == "compaction/start":
                self._prescan_start = seq
            elif kind == "compaction/end":
                self._prescan_start = None
            else:  # session/end-seed
                if self._prescan_start is not None:
                    self.orphans.add(self._prescan_start)
                    self._pending_crossings.pop(self._prescan_start, None)
                self._prescan_start = None
        if kind not in _RELATIONSHIP_TYPES:
            return
        self._ordinal = 0
        try:
            self._accept(event, kind, seq)
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

    def _accept(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        data = event.get("data", ABSENT)
        if type(data) is not dict:
            raise Violation(f"{kind} requires an object")
        if kind in _STEP_EVENTS:
            self._require_step(kind, data)
        if self.compaction is not None and kind.startswith("turn/"):
            start = self.compaction["seq"]
            if start not in self.orphans:
                crossing = (seq, self._ordinal, f"{kind} crosses an open compaction")
                self._ordinal += 1
                if self._prescan_start is not None and _same(self._prescan_start, start):
                    self._pending_crossings.setdefault(start, []).append(crossing)
                else:
                    self.violations.append(crossing)
        if kind in _SURFACE:
            self._fold_surface(event, kind, seq)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, kind, seq, data)

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

    def _fold_surface(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        surface, positions = self.surface, self.positions
        if kind == "system/message" and surface and self.protected_head is ABSENT:
            raise Violation("system/message requires a protected first surface head")
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
            raise Violation(f"{kind} replacement range is not on the current surface")
        removed = surface[first:last + 1]
        sources = _array(event.get("sourceEventSeqs", ABSENT), "replacement sourceEventSeqs")
        cited = {s for s in sources if type(s) in (int, float)}
        if any(s not in cited for s in removed):
            raise Violation("replacement sourceEventSeqs omit a shadowed surface node")
        head = self.protected_head
        if head is not ABSENT and head in removed:
            if kind != "system/message" or len(removed) != 1:
                raise Violation("surface replacement cannot shadow the protected system head")
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
        if kind == "tool/result":
            op = event.get("surfaceOp")
            if not (type(op) is str and op == "append"):
                self._require_turn(kind)
                return
        self._require_step(kind, data)
        tools = self.tools
        if kind == "assistant/message":
            message = _record(data.get("message", ABSENT), "assistant message")
            for block in _array(message.get("content", ABSENT), "assistant content"):
                if type(block) is not dict:
                    _record(block, "assistant content block")
                if block.get("type") != "tool-call":
                    continue
                call_id = block.get("id", ABSENT)
                if type(call_id) is not str or not call_id:
                    _text(call_id, "tool call id")
                if call_id in tools:
                    raise Violation(f"assistant/message repeats advertised tool call {call_id}")
                tools[call_id] = {"name": block.get("name", ABSENT), "arguments": block.get("arguments", ABSENT),
                                  "started": False}
            return
        if kind == "tool/result":
            message = _record(data.get("message", ABSENT), "tool result message")
            call_id = message.get("toolCallId", ABSENT)
        else:
            message = None
            call_id = data.get("callId", ABSENT)
        if type(call_id) is not str or not call_id:
            _text(call_id, "tool call id")
        pending = tools.get(call_id)
        if pending is None:
            raise Violation(f"{kind} {call_id} has no advertised tool lifecycle")
        if message is None:
            if (pending["started"] or not _same(pending["name"], _get(data, "name"))
                    or not _same(pending["arguments"], _get(data, "arguments"))):
                raise Violation(f"tool/call {call_id} does not match one advertised tool call")
            pending["started"] = True
        else:
            if not pending["started"] and not _not_started_repair(event, data, message, call_id):
                raise Violation(f"tool/result {call_id} is not the exact TOOL_NOT_STARTED repair")
            del self.tools[call_id]

    def _developer(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if "headerSeq" not in data:
            return
        header_seq = _earlier(data["headerSeq"], seq, "developer/message headerSeq")
        header_event = self.event_at(int(header_seq))
        if type(header_event) is not dict or header_event.get("type") != "request/header":
            raise Violation("developer/message headerSeq must reference an earlier request/header")
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
                raise Violation(f'developer/message tool-addition "{js_str(name)}" must name exactly one tool '
                                 f"in headerSeq {shown}")
            definition = definitions[0]
            if type(definition.get("description")) is not str or type(definition.get("parameters")) is not dict:
                raise Violation(f'developer/message tool-addition "{js_str(name)}" requires a complete tool '
                                 f"definition in headerSeq {shown}")

    def _dispatch(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)
        sub = _text(_get(data, "subCallId"), "PTC subCallId")
        root = _text(_get(data, "rootCallId"), "PTC rootCallId")
        parent = _text(_get(data, "parentCallId"), "PTC parentCallId")
        existing = self.dispatches.get(sub)
        if existing is not None and not _same(existing["data"].get("rootCallId", ABSENT), root):
            raise Violation("PTC dispatch changes its rootCallId")
        if parent != root:
            owner = self.dispatches.get(parent)
            if owner is None or not _same(owner["data"].get("rootCallId", ABSENT), root):
                raise Violation("PTC parentCallId does not belong to rootCallId")
        if kind == "tool/ptc-dispatch-start":
            if existing is not None:
                raise Violation("PTC dispatch repeats subCallId")
            self.dispatches[sub] = {"data": data, "settled": False}
            return
        if existing is None or existing["settled"]:
            raise Violation("PTC dispatch has no unique start")
        for key in ("rootCallId", "parentCallId", "name", "arguments"):
            a, b = existing["data"].get(key, ABSENT), data.get(key, ABSENT)
            if (a is ABSENT) != (b is ABSENT) or (a is not ABSENT and not deep_equal(a, b)):
                raise Violation("PTC dispatch does not match its start")
        existing["settled"] = True

    def _retry(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        rid = _text(_get(data, "retryId"), "retryId")
        attempt = _count(_get(data, "retry"), "retry")
        if kind == "llm/retry-started":
            scheduled = next((item for item in self.retries
                              if _same(item.get("retryId", ABSENT), rid) and _same(item.get("retry", ABSENT), attempt)),
                             None)
            if scheduled is None:
                raise Violation("llm/retry-started pairs no prior scheduled attempt")
            if not _same(_get(scheduled, "turn"), _get(data, "turn")) or \
                    not _same(_get(scheduled, "step"), _get(data, "step")):
                raise Violation("llm/retry-started changes scheduled coordinates")
            key = (rid, attempt)
            if key in self.started_retries:
                raise Violation("llm/retry-started repeats one scheduled attempt")
            self.started_retries.add(key)
            return
        step = self.step if self.step is not None else self.next_step - 1
        if self.turn is None or not _same(_get(data, "turn"), self.turn) or not _same(_get(data, "step"), step):
            raise Violation("llm/retry does not match the current turn and step")
        if not _same(_get(data, "provider"), self.provider):
            raise Violation("llm/retry provider does not match the open request/header")
        prior = None
        for item in reversed(self.retries):
            if all(_same(item.get(k, ABSENT), data.get(k, ABSENT)) for k in ("turn", "step", "provider", "policyKey")):
                prior = item
                break
        expected = 1 if prior is None else _count(_get(prior, "retry"), "prior retry") + 1
        if not _same(attempt, expected):
            raise Violation("llm/retry skips its policy attempt sequence")
        if (any(_same(item.get("retryId", ABSENT), rid) for item in self.retries) if prior is None
                else not _same(_get(prior, "retryId"), rid)):
            raise Violation("llm/retry must keep one retryId per policy chain")
        self.retries.append(data)

    def _compact(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if kind in ("compaction/prune", "compaction/summary"):
            self._span(kind, seq, data)
        if kind == "compaction/prune":
            return
        if kind == "compaction/start":
            if self.compaction is not None:
                raise Violation("compaction/start overlaps an open compaction")
            turn = _get(data, "turn")
            owner = None if turn is None else _count(turn, "compaction turn")
            if not _same(owner, self.turn):
                raise Violation("compaction/start does not match the open turn")
            self.compaction = {"id": _text(_get(data, "compactionId"), "compactionId"),
                               "command": _get(data, "sourceCommandId"), "turn": owner, "seq": seq,
                               "summarized": False}
            return
        current = self._compaction_owner(data, kind)
        if not _same(current["turn"], self.turn):
            raise Violation(f"{kind} does not match the open turn")
        if kind == "compaction/summary":
            if current["summarized"]:
                raise Violation("compaction/summary repeats")
            current["summarized"] = True
        else:
            if not _same(_get(data, "turn"), current["turn"]):
                raise Violation("compaction/end changes its owner turn")
            if "error" not in data and not current["summarized"]:
                raise Violation("successful compaction/end requires one summary")
            self.compaction = None

    def _compaction_owner(self, data: dict, subject: str) -> dict:
        current = self.compaction
        if (current is None or not _same(current["id"], _get(data, "compactionId"))
                or not _same(current["command"], _get(data, "sourceCommandId"))):
            raise Violation(f"{subject} has no matching compaction/start")
        return current

    def _span(self, kind: str, seq: Any, data: dict) -> None:
        span = _record(_get(data, "shadowedRange"), "compaction shadowedRange")
        start = self.positions.get(_earlier(_get(span, "start"), seq, "compaction range start"), -1)
        end = self.positions.get(_earlier(_get(span, "end"), seq, "compaction range end"), -1)
        seqs = _array(_get(data, "shadowedSeqs"), "compaction shadowedSeqs")
        if start < 0 or end < start or not _strict_list_equal(self.surface[start:end + 1], seqs):
            raise Violation(f"{kind} shadowedSeqs do not name an exact current surface span")
        if self.protected_head is not ABSENT and any(_same(s, self.protected_head) for s in seqs):
            raise Violation("compaction cannot shadow the protected system head")

    def _step_start(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        turn, step = data.get("turn"), data.get("step")
        kind_turn, kind_step = type(turn), type(step)
        if (self.turn is None or not (kind_turn is int or kind_turn is float) or turn != self.turn
                or self.step is not None or not (kind_step is int or kind_step is float)
                or step != self.next_step):
            raise Violation("step/start does not match the open turn and next step")
        self.step = self.next_step

    def _turn_start(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if self.turn is not None or not _same(_get(data, "turn"), self.next_turn):
            raise Violation("turn/start does not open the expected turn")
        self.turn = self.next_turn
        self.next_step = 1
        self.tools.clear()

    def _turn_end(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if self.turn is None or not _same(_get(data, "turn"), self.turn) or self.step is not None:
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
        config = _record(_get(_record(_get(data, "header"), "request header"), "config"), "request config")
        self.provider = _get(config, "provider")

    def _request_context(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)

    def _title(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        references = _array(_get(data, "messageSeqs"), "title messageSeqs")
        if kind == "session/title":
            user = _get(_record(_get(data, "source"), "title source"), "kind") == "user"
            if (len(references) == 0) != user:
                raise Violation("session/title messageSeqs must be empty exactly for a user title")
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
                raise Violation(f"{kind} messageSeqs must cite distinct earlier human user/message events")
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
            raise Violation("session/title-llm-request messages do not represent messageSeqs")

    def _command_run(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        command = _text(_get(data, "commandId"), "commandId")
        if command in self.commands:
            raise Violation(f"command/run repeats commandId {command}")
        self.commands.add(command)

    def _command_done(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if _text(_get(data, "commandId"), "commandId") not in self.commands:
            raise Violation("command/done has no prior command/run")
        if "sourceEventSeq" in data:
            source = self.event_at(int(_earlier(data["sourceEventSeq"], seq, "command sourceEventSeq")))
            source_type = source.get("type") if type(source) is dict else None
            if data.get("kind") != "success" or source_type in ("command/run", "command/done"):
                raise Violation("command/done has invalid sourceEventSeq")

    def _user_message(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        source = _record(_get(data, "source"), "user message source")
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
    "assistant/message": Lifecycle._tool,
    "tool/call": Lifecycle._tool,
    "tool/result": Lifecycle._tool,
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


__all__ = ["Lifecycle", "RELATIONSHIP_TYPES", "Violation"]

"""Request reconstruction: the model request of every attempt (v0 spec §7, v4 spec §7).
Layer: core (pure; imports io only).

* Attempts (§7.1). v4: every `assistant/message` / `assistant/attempt` event is one attempt and
  its request was built from the events before it. v0: the `assistant/chunk` events of one
  (turn, step) are split into attempts; an attempt ends at its `finish` chunk, and a change of
  turn/step, an `assistant/message`, `step/end`, `turn/end` or an `llm/retry*` event closes an
  unterminated one (a stream cut by cancellation has no finish). The attempt whose chunks an
  `assistant/message` cites is the successful one; its request was built before its first chunk.
* Envelope (§7.2): the canonical form (`workbench.core.header.canonical_header`) of the latest
  `request/header` before the attempt: provider, model and the optional config fields, v0
  `system`, `tools`. Without a header the envelope is unknown and those keys are absent.
* Messages (§7.3): the surface just before the attempt, projected (§4.8, with v4 `image/offload`
  projections), taken from a `SurfaceTimeline` (no refold). v4 developer messages are dropped
  unless the route supports tool updates (no corpus route does).
* Assembled request (§7.4): `{provider, model, reasoningEffort?, temperature?, maxTokens?, stop?,
  system? (v0), tools?, messages, sessionId}`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.core.header import canonical_header
from workbench.core.timeline import SurfaceTimeline
from workbench.errors import NotAnAttempt
from workbench.io.generations import nested_streams, system_node
from workbench.io.jsjson import is_safe_int

_CONFIG_FIELDS = ("provider", "model", "reasoningEffort", "temperature", "maxTokens", "stop")
_V0_CLOSERS = frozenset({"assistant/message", "step/end", "turn/end", "llm/retry",
                         "llm/retry-started"})
_V4_TYPES = frozenset({"assistant/message", "assistant/attempt"})
_V0_TYPES = _V0_CLOSERS | {"assistant/chunk"}
ATTEMPT_TYPES = _V4_TYPES | _V0_TYPES
"""Every event type an attempt pass of either format reads."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One model call. `seq` identifies it (v4: the settling event; v0: its first chunk) and
    `before` is the first seq that was not part of its request (v4: `seq`; v0: the first chunk).
    `message_seq` is the `assistant/message` that settled it (None: failed or cancelled).
    `finish` is the finish chunk's `reason` when one was logged."""

    seq: int
    before: int
    kind: Literal["message", "attempt", "chunks"]
    turn: Any
    step: Any
    chunk_seqs: tuple[int, ...] = ()
    message_seq: int | None = None
    finish: Any = None


def _data(event: Mapping[str, Any]) -> dict:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def _v4_finish(stream: Any, shared: dict[str, dict]) -> Any:
    """The `reason` of the last raw `finish` chunk of a v4 stream (v4 §2), if any. A reason
    that is just ``{"kind": <string>}`` is the first equal one `shared` holds (a long log
    keeps one dict per kind, not one per attempt; like events, reasons are never mutated)."""
    if not isinstance(stream, list):
        return None
    for record in reversed(stream):
        chunk = record.get("chunk") if isinstance(record, dict) else None
        if isinstance(chunk, dict) and chunk.get("type") == "finish":
            reason = chunk.get("reason")
            if type(reason) is dict and len(reason) == 1:
                kind = reason.get("kind")
                if type(kind) is str:
                    return shared.setdefault(kind, reason)
            return reason
    return None


class AttemptCollector:
    """Model-call attempts, one event at a time: `feed(seq, event)` each event of a type in
    `types` in log order (events of other types change nothing), then `finish()`. Each call
    returns the attempts it completed, in log order. `iter_attempts` is this over a sequence;
    `workbench.load` runs it while the loader scans the log."""

    def __init__(self, *, version: int) -> None:
        self.v4 = nested_streams(version)  # v3 and v4: one settling event per attempt
        self.types = _V4_TYPES if self.v4 else _V0_TYPES
        self._chunks: list[int] = []
        self._key: tuple[Any, Any] | None = None
        self._pending: list[tuple[list[int], Any, Any, Any]] = []  # closed, not yet matched
        self._finish: Any = None
        self._reasons: dict[str, dict] = {}   # the one dict of each ``{"kind": k}`` reason

    def feed(self, seq: int, event: Mapping[str, Any]) -> list[Attempt]:
        etype = event.get("type")
        if self.v4:
            if etype != "assistant/message" and etype != "assistant/attempt":
                return []
            return [self._settled(seq, event, etype == "assistant/message")]
        if etype == "assistant/chunk":
            data = _data(event)
            key = (data.get("turn"), data.get("step"))
            if self._key is not None and key != self._key:
                self._close()
            self._key = key
            self._chunks.append(seq)
            chunk = data.get("chunk")
            if isinstance(chunk, dict) and chunk.get("type") == "finish":
                self._finish = chunk.get("reason")
                self._close()
            return []
        if etype not in _V0_CLOSERS:
            return []
        self._close()
        if etype == "assistant/message":
            raw = event.get("sourceEventSeqs")
            cited = {int(s) for s in raw if is_safe_int(s)} if isinstance(raw, list) else set()
            if not any(chunks[0] in cited for chunks, *_ in self._pending):
                # no chunk stream (legacy data or a known-empty stream): the message is the attempt
                out = self._flush(set(), None)
                data = _data(event)
                out.append(Attempt(seq, seq, "message", data.get("turn"), data.get("step"),
                                   message_seq=seq))
                return out
            return self._flush(cited, seq)
        if etype in ("step/end", "turn/end"):
            return self._flush(set(), None)
        return []

    def _settled(self, seq: int, event: Mapping[str, Any], is_message: bool) -> Attempt:
        """The v4 attempt an `assistant/message` or `assistant/attempt` settles."""
        data = _data(event)
        return Attempt(seq, seq, "message" if is_message else "attempt", data.get("turn"),
                       data.get("step"), message_seq=seq if is_message else None,
                       finish=_v4_finish(data.get("stream"), self._reasons))

    def steps(self, found: list[Attempt]) -> dict[str, Callable[[int, Mapping[str, Any]], None]]:
        """The step of each type in `types` (`workbench.core.steps`), adding the attempts each
        event completes to `found`."""
        add, extend, settled, feed = found.append, found.extend, self._settled, self.feed
        if self.v4:
            def message(seq: int, event: Mapping[str, Any]) -> None:
                add(settled(seq, event, True))

            def attempt(seq: int, event: Mapping[str, Any]) -> None:
                add(settled(seq, event, False))
            return {"assistant/message": message, "assistant/attempt": attempt}

        def step(seq: int, event: Mapping[str, Any]) -> None:
            extend(feed(seq, event))
        return dict.fromkeys(self.types, step)

    def finish(self) -> list[Attempt]:
        if self.v4:
            return []
        self._close()
        return self._flush(set(), None)

    def _close(self) -> None:
        if self._chunks:
            self._pending.append((self._chunks, self._key[0], self._key[1], self._finish))
        self._chunks, self._key, self._finish = [], None, None

    def _flush(self, cited: set, message_seq: int | None) -> list[Attempt]:
        out = [Attempt(chunks[0], chunks[0], "chunks", turn, step, tuple(chunks),
                       message_seq if cited and chunks[0] in cited else None, fin)
               for chunks, turn, step, fin in self._pending]
        self._pending.clear()
        return out


def iter_attempts(events: Sequence[Mapping[str, Any]], *, version: int,
                  base_seq: int = 0) -> Iterator[Attempt]:
    """Every model-call attempt of the log, in log order (§7.1); lazy: it reads `events` in
    order only as far as the next attempt needs."""
    collector = AttemptCollector(version=version)
    feed, types = collector.feed, collector.types
    for index, event in enumerate(events):
        if event.get("type") in types:
            yield from feed(base_seq + index, event)
    yield from collector.finish()


def find_attempt(events: Sequence[Mapping[str, Any]], seq: int, *, version: int,
                 base_seq: int = 0) -> Attempt | None:
    """The attempt identified by `seq`: its settling event (v4), or in v0 any of its chunks or
    the `assistant/message` that cites it."""
    for attempt in iter_attempts(events, version=version, base_seq=base_seq):
        if attempt.seq == seq or attempt.message_seq == seq or seq in attempt.chunk_seqs:
            return attempt
    return None


def header_before(events: Sequence[Mapping[str, Any]], seq: int, *, version: int,
                  base_seq: int = 0) -> tuple[int, dict] | None:
    """`(header seq, canonical header)` of the latest `request/header` with a seq < `seq`."""
    for index in range(min(seq - base_seq, len(events)) - 1, -1, -1):
        event = events[index]
        if event.get("type") == "request/header":
            canonical = canonical_header(_data(event).get("header"), version=version)
            if canonical is not None:
                return base_seq + index, canonical
    return None


def rebuild_request(events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
                    attempt_seq: int | Attempt, *, version: int, session_id: str | None,
                    developer_messages: bool = False) -> dict:
    """The model request of one attempt (§7.4 shape), rebuilt from the header snapshots and the
    timeline's surface just before the attempt. `attempt_seq` is an `Attempt` or a seq accepted
    by `find_attempt`. Raises LookupError when the seq names no attempt."""
    base_seq = timeline.base_seq
    attempt = attempt_seq if isinstance(attempt_seq, Attempt) else find_attempt(
        events, attempt_seq, version=version, base_seq=base_seq)
    if attempt is None:
        raise NotAnAttempt(f"seq {attempt_seq} is not a model-call attempt")
    request: dict[str, Any] = {}
    found = header_before(events, attempt.before, version=version, base_seq=base_seq)
    if found is not None:
        header = found[1]
        config = header.get("config")
        if isinstance(config, dict):
            for key in _CONFIG_FIELDS:
                if key in config:
                    request[key] = config[key]
        if not system_node(version) and "system" in header:
            request["system"] = header["system"]
        if "tools" in header:
            request["tools"] = header["tools"]
    messages = []
    for _, message in timeline.messages_at(attempt.before - 1):
        if (not developer_messages and isinstance(message, dict)
                and message.get("role") == "developer"):
            continue
        messages.append(message)
    request["messages"] = messages
    request["sessionId"] = session_id
    return request

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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.core.header import canonical_header
from workbench.core.timeline import SurfaceTimeline
from workbench.errors import NotAnAttempt
from workbench.io.jsjson import is_safe_int

_CONFIG_FIELDS = ("provider", "model", "reasoningEffort", "temperature", "maxTokens", "stop")
_V0_CLOSERS = frozenset({"assistant/message", "step/end", "turn/end", "llm/retry",
                         "llm/retry-started"})


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


def _v4_finish(stream: Any) -> Any:
    """The `reason` of the last raw `finish` chunk of a v4 stream (v4 §2), if any."""
    if not isinstance(stream, list):
        return None
    for record in reversed(stream):
        chunk = record.get("chunk") if isinstance(record, dict) else None
        if isinstance(chunk, dict) and chunk.get("type") == "finish":
            return chunk.get("reason")
    return None


def _iter_v4(events: Sequence[Mapping[str, Any]], base_seq: int) -> Iterator[Attempt]:
    for index, event in enumerate(events):
        etype = event.get("type")
        if etype != "assistant/message" and etype != "assistant/attempt":
            continue
        seq = base_seq + index
        data = _data(event)
        is_message = etype == "assistant/message"
        yield Attempt(seq, seq, "message" if is_message else "attempt", data.get("turn"),
                      data.get("step"), message_seq=seq if is_message else None,
                      finish=_v4_finish(data.get("stream")))


def _iter_v0(events: Sequence[Mapping[str, Any]], base_seq: int) -> Iterator[Attempt]:
    open_chunks: list[int] = []
    open_key: tuple[Any, Any] | None = None
    pending: list[tuple[list[int], Any, Any, Any]] = []   # closed, not yet matched to a message
    finish: Any = None

    def close() -> None:
        nonlocal open_chunks, open_key, finish
        if open_chunks:
            pending.append((open_chunks, open_key[0], open_key[1], finish))
        open_chunks, open_key, finish = [], None, None

    def flush(cited: set, message_seq: int | None) -> Iterator[Attempt]:
        for chunks, turn, step, fin in pending:
            matched = message_seq if cited and chunks[0] in cited else None
            yield Attempt(chunks[0], chunks[0], "chunks", turn, step, tuple(chunks),
                          matched, fin)
        pending.clear()

    for index, event in enumerate(events):
        seq = base_seq + index
        etype = event.get("type")
        if etype == "assistant/chunk":
            data = _data(event)
            key = (data.get("turn"), data.get("step"))
            if open_key is not None and key != open_key:
                close()
            open_key = key
            open_chunks.append(seq)
            chunk = data.get("chunk")
            if isinstance(chunk, dict) and chunk.get("type") == "finish":
                finish = chunk.get("reason")
                close()
            continue
        if etype in _V0_CLOSERS:
            close()
            if etype == "assistant/message":
                raw = event.get("sourceEventSeqs")
                cited = {int(s) for s in raw if is_safe_int(s)} if isinstance(raw, list) else set()
                if not any(chunks[0] in cited for chunks, *_ in pending):
                    # no chunk stream (legacy data or a known-empty stream): the message is the attempt
                    yield from flush(set(), None)
                    data = _data(event)
                    yield Attempt(seq, seq, "message", data.get("turn"), data.get("step"),
                                  message_seq=seq)
                    continue
                yield from flush(cited, seq)
            elif etype in ("step/end", "turn/end"):
                yield from flush(set(), None)
    close()
    yield from flush(set(), None)


def iter_attempts(events: Sequence[Mapping[str, Any]], *, version: int,
                  base_seq: int = 0) -> Iterator[Attempt]:
    """Every model-call attempt of the log, in log order (§7.1)."""
    if version >= 4:
        return _iter_v4(events, base_seq)
    return _iter_v0(events, base_seq)


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
        if version < 4 and "system" in header:
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

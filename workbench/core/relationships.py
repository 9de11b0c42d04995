"""Lifecycle relationships of a format-v4 log, checked at load (v4 spec §3.3, §3.9, §5.2).
Layer: core (pure; imports io only).

The real v4 loader rejects a log whose events break these relationships (reference
``assertReleasedV4Relationships``):

* per event, first over the whole log: developer data, producer-owned message sources, delivery
  markers of the current generation (``throughSeq`` earlier, the session's own id unless inside a
  fork's inherited prefix), ``subagent/catalog`` children unique after the inherited cut;
* then the lifecycle state machine (`workbench.core.lifecycle`): turns, steps, tool calls,
  dispatches, retries, titles, commands, compaction brackets and the protected system head.

`RelationshipChecker` is single-pass: the loader feeds it each event while it scans, so nothing is
re-read. Facts that depend on later events (the final inherited cut, whether an open bracket is
orphaned) stay pending until `finish`. After a violation the checker keeps going (best effort) so a
debugger can list every violation; the first one is the reference's error.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.events import KNOWN_TYPES_V4
from workbench.core.lifecycle import RELATIONSHIP_TYPES, Lifecycle, Violation
from workbench.core.lifecycle_values import count
from workbench.core.migration import OpenTurns, lift_event
from workbench.errors import MigrationRefused
from workbench.io.admission_v4 import SyntaxRefusal, developer_data
from workbench.io.generations import producer_sources
from workbench.io.jsjson import ABSENT

NAME = "SessionFormatError"
Step = Callable[[Mapping[str, Any], str, Any], None]

_SURFACE = frozenset(("system/message", "user/message", "developer/message", "assistant/message",
                      "tool/result"))
_MESSAGE_SLOT = frozenset(("developer/message", "system/message", "assistant/message", "tool/result"))


INTEREST: frozenset[str] = KNOWN_TYPES_V4 & (
    _SURFACE | RELATIONSHIP_TYPES | {"agent/inbox/spliced", "session/title-llm-request",
                                     "session-log-deepseek/delivery-accepted", "subagent/catalog",
                                     "compaction/start", "compaction/end", "session/end-seed",
                                     "compaction/summary", "assistant/attempt", "request/header"})
"""The types `RelationshipChecker.accept` looks at (artifact checks, developer data, the lifecycle
and its pre-scan); an event of any other type leaves it unchanged."""


_ARTIFACT = _SURFACE | {"agent/inbox/spliced", "session/title-llm-request", "session-log-deepseek/delivery-accepted",
                        "subagent/catalog"}
"""The types the artifact checks look at once developer data is admitted."""
_LIFECYCLE = RELATIONSHIP_TYPES | {"compaction/start", "compaction/end", "session/end-seed"}
"""The types the lifecycle (and its orphaned-bracket pre-scan) looks at."""


@dataclass(frozen=True, slots=True)
class RelationshipViolation:
    """One broken relationship: the event `seq` (None: the log as a whole), the reference's error
    `name` and exact `message`."""

    seq: int | None
    name: str
    message: str


def _get(data: dict, key: str) -> Any:
    return data.get(key, ABSENT)


# -- per-event artifact checks (the first loop of assertReleasedV4Relationships) ----------------

def _source(message: dict) -> None:
    value = message.get("source")
    if type(value) is not dict or type(value.get("kind")) is not str or not value["kind"] \
            or value["kind"] == "plugin":
        raise Violation("format v4 message requires a producer-owned source kind")


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
            raise Violation(f"{kind} requires a message")
        _source(message)
    elif kind == "agent/inbox/spliced" or kind == "session/title-llm-request":
        messages = data.get("inserted" if kind == "agent/inbox/spliced" else "messages", ABSENT)
        if type(messages) is not list:
            raise Violation(f"{kind} requires message array")
        for message in messages:
            if type(message) is not dict:
                raise Violation(f"{kind} requires message objects")
        for message in messages:
            _source(message)


def delivery_session(event: Mapping[str, Any], current: int = 4) -> str | None:
    """Reference ``validateDeliveryAccepted``: the id a current-generation marker names."""
    data = event.get("data")
    if type(data) is not dict:
        raise Violation("delivery-accepted data must be an object")
    version = data.get("sessionFormatVersion", ABSENT)
    if count(0 if version is ABSENT else version, "delivery sessionFormatVersion") != current:
        return None
    if count(_get(data, "throughSeq"), "delivery throughSeq") >= event.get("seq"):
        raise Violation("delivery throughSeq must precede its marker")
    sid = data.get("sessionId")
    if type(sid) is not str or not sid:
        raise Violation("delivery requires a nonempty Session id")
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
        raise Violation("subagent/catalog requires a supported versioned catalog fact")
    count(data.get("childCreatedAt", ABSENT), "catalog child creation time")
    return data["childId"]


class RelationshipChecker:
    """Streaming ``assertReleasedV4Relationships``: call `accept` per event in seq order, then
    `finish` with the final inherited cut.

    `event_at(seq)` returns an earlier event (developer ``headerSeq``, title and command
    references). `admitted=True` skips the developer-data check already done by row admission.
    A v3 log (`version` 3) is checked in its v4 spelling (`workbench.core.migration.lift_event`:
    tool-role results, producer sources), as DSH 0.2.1 checks an older log after migrating it,
    with the ``turn/end`` closers the migration inserts (`workbench.core.migration.OpenTurns`: a
    turn left open before the next ``turn/start``), each checked at the seq of that ``turn/start``.
    """

    def __init__(self, meta: Mapping[str, Any] | None, event_at: Callable[[int], Any], *,
                 admitted: bool = False, version: int = 4) -> None:
        self.meta = meta or {}
        self.admitted = admitted
        self.lift = not producer_sources(version)
        self._turns = OpenTurns()
        self.artifact_violations: list[tuple[Any, int, str]] = []
        self._wrong_session: list[Any] = []
        self._catalog: list[tuple[Any, str | None, str | None]] = []
        self.lifecycle = Lifecycle(event_at)

    def accept(self, event: Mapping[str, Any]) -> None:
        """Check one event (the next in seq order)."""
        kind = event.get("type")
        if type(kind) is not str or kind not in KNOWN_TYPES_V4:
            return
        seq = event.get("seq")
        if self.lift:
            event = self._migrated(event, seq)
        self._artifact(event, kind, seq)
        self.lifecycle.accept(event, kind, seq)

    def accept_known(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        """`accept` for a caller that read the event's `kind` (a known v4 type) and `seq`."""
        if self.lift:
            event = self._migrated(event, seq)
        for step in self._steps(kind):
            if step is not None:
                step(event, kind, seq)

    def _migrated(self, event: Mapping[str, Any], seq: Any) -> Mapping[str, Any]:
        """A v3 event in its v4 spelling, after checking the closer the migration inserts before it
        (a turn left open inside a step has none: the lifecycle then refuses the ``turn/start``)."""
        turns = self._turns
        try:
            closer = turns.closer(event)
        except MigrationRefused:
            closer = None
        if closer is not None:
            self.lifecycle.accept(closer, "turn/end", seq)
        turns.observe(event)
        return lift_event(event)

    def route(self, kind: str) -> tuple[Step | None, Step | None]:
        """What `accept_known` runs for an event of the known type `kind`, for a caller that
        dispatches on the type once: ``(artifact checks, lifecycle step)``, each called with
        ``(event, kind, seq)`` and None when no rule of it concerns the type (a v3 log's event,
        lifted first, goes through `accept_known` as one step)."""
        if kind not in INTEREST:
            return None, None
        return (self.accept_known, None) if self.lift else self._steps(kind)

    def _steps(self, kind: str) -> tuple[Step | None, Step | None]:
        return (self._artifact if kind in _ARTIFACT or not self.admitted else None,
                self.lifecycle.accept if kind in _LIFECYCLE else None)

    def _artifact(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        try:
            if not self.admitted:
                try:
                    developer_data(event)  # type: ignore[arg-type]
                except SyntaxRefusal as exc:
                    raise Violation(exc.message) from None
            if kind in _SURFACE or kind == "agent/inbox/spliced" or kind == "session/title-llm-request":
                message_sources(event)
            if kind == "session-log-deepseek/delivery-accepted":
                sid = delivery_session(event)
                if sid is not None and sid != self.meta.get("id"):
                    self._wrong_session.append(seq)
            if kind == "subagent/catalog":
                try:
                    self._catalog.append((seq, catalog_child(event.get("data")), None))
                except Violation as exc:
                    self._catalog.append((seq, None, exc.message))
        except Violation as exc:
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
        return [RelationshipViolation(seq, NAME, message)
                for seq, _, message in artifact + self.lifecycle.finish()]


def check_relationships(meta: Mapping[str, Any] | None, events: Sequence[Mapping[str, Any]], *,
                        inherited_event_count: int = 0, collect: bool = False,
                        version: int = 4) -> list[RelationshipViolation]:
    """The relationship violations of a v4 log (reference ``assertReleasedV4Relationships``).

    With ``collect=False`` at most the first violation (the reference's error); with
    ``collect=True`` every violation found (best effort after the first, sorted by seq).
    """
    def event_at(seq: int) -> Any:
        return events[seq] if 0 <= seq < len(events) else None

    checker = RelationshipChecker(meta, event_at, version=version)
    for event in events:
        checker.accept(event)
    found = checker.finish(inherited_event_count)
    if not collect:
        return found[:1]
    return sorted(found, key=lambda v: -1 if v.seq is None else v.seq)


__all__ = ["INTEREST", "RelationshipChecker", "RelationshipViolation", "catalog_child",
           "check_relationships", "delivery_session", "message_sources"]

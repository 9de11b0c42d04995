"""Session restore: the checks and the fold a resume runs over a stored log.
Layer: core (pure; imports io only).

Reference ``Session.fromRestore`` (v4; v0 spec §1.9 item 6 for format v0). In order:

1. v4 with a header: the session-level header checks (``session header ...``);
2. per seed event at index ``i``, stopping at the first failure:
   * the envelope: only the seven envelope keys, ``type`` a string, ``seq`` a non-negative safe
     integer (v4: not ``-0``), ``time`` a safe integer, ``data`` present, ``ignorable`` only ``true``
     (``seed event at index i has an invalid event envelope``);
   * v0: the legacy ``request/header`` reason ``fallback``;
   * v4: ``validateSessionEventData`` and the LLM shapes (request header provider/model,
     reasoningEffort, adapterDefaults, reason, startsSeries; assistant settlement fields; message
     shapes), subject ``seed <type> at index i``;
   * ``seq == i``;
   * v0: the request header and message shapes;
   * the surface fold step (`workbench.core.surface`), wrapped as
     ``invalid seed event at index i: <fold message>``;
3. v4: the inherited cut against the header; then a ``session/end-seed`` is appended unless the
   seed already ends with one.

`RestoreChecker` is the single-pass form the loader feeds while it scans; `restore_session` runs it
over a list. Errors are `RestoreError(message, kind)`; kinds: ``seed_header``, ``seed_envelope``,
``seed_legacy_fallback``, ``seed_event_data``, ``seed_request_header``, ``seed_settlement``,
``seed_message_<shape>``, ``seed_seq``, ``seed_surface:<fold kind>``, ``seed_inherited``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.stored import ShapeMemo
from workbench.core.surface import SurfaceState, apply_plan, plan_event
from workbench.core.timeline import TimelineBuilder
from workbench.errors import FoldError, WorkbenchError
from workbench.io.generations import nested_streams
from workbench.io.jsjson import ABSENT, is_neg_zero, is_safe_int
from workbench.io.jsvalues import js_str

_ENVELOPE = frozenset(("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"))
_MESSAGE_TYPES_V4 = frozenset(("developer/message", "system/message", "user/message",
                               "assistant/message", "tool/result"))
_MESSAGE_TYPES_V0 = frozenset(("user/message", "assistant/message", "tool/result"))
_LLM_TYPES_V4 = _MESSAGE_TYPES_V4 | {"request/header", "assistant/attempt"}
_FOLD_TYPES = _MESSAGE_TYPES_V4 | {"image/offload"}
_REASONS_V4 = ("initial", "resume", "change", "series")
_ADAPTER_KEYS = frozenset(("reasoningEffort", "maxTokens"))
INTEREST: frozenset[str] = _LLM_TYPES_V4 | _FOLD_TYPES | _MESSAGE_TYPES_V0 | {"request/header", "session/end-seed"}
"""The types some restore rule or fold step concerns (either format). An event of another type,
with a valid envelope, ``seq`` equal to its index and no ``surfaceOp``/``sourceEventSeqs``, changes
nothing but the count and the last type (`RestoreChecker.skip`)."""
_MAX = 2**53 - 1


class RestoreError(WorkbenchError):
    """A resume refusal: the reference's exact `message` and a stable `kind`; `index` is the seed
    event it concerns (None for the header or the whole log)."""

    def __init__(self, message: str, kind: str, index: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.index = index

    def __repr__(self) -> str:
        return f"RestoreError(kind={self.kind!r}, message={self.message!r})"


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """A successful restore: the surface `nodes` and whether a ``session/end-seed`` was appended."""

    nodes: tuple[int, ...]
    appended_end_seed: bool


# -- header (reference: validateSessionHeader) ---------------------------------------------------

def _count(value: Any) -> bool:
    return type(value) in (int, float) and is_safe_int(value) and value >= 0


def header_problem(header: Any, session_id: Any, version: int = 4) -> str | None:
    """The v4 session-level header check as the reference's message, or None (a v3 header has
    the same shape, with its own `version`)."""
    if type(header) is not dict:
        return "session header is not a plain JSON record"
    if "seedLength" in header:
        return 'session header has invalid field "seedLength"'
    found = header.get("version", ABSENT)
    if not (type(found) in (int, float) and found == version):
        return f"session header version must be {version}, got {js_str(found)}"
    if header.get("id", ABSENT) != session_id or type(header.get("id")) is not str:
        return f'session header id "{js_str(header.get("id", ABSENT))}" does not match session id "{js_str(session_id)}"'
    if not _count(header.get("createdAt", ABSENT)):
        return "session header createdAt must be a non-negative safe integer"
    cwd = header.get("cwd", ABSENT)
    if cwd is not ABSENT:
        if type(cwd) is not str:
            return "session header cwd must be a string"
        if not cwd.startswith("/"):
            return f'session header cwd must be an absolute path, got "{cwd}"'
    parent = header.get("parentSession", ABSENT)
    if parent is not ABSENT and type(parent) is not str:
        return "session header parentSession must be a string"
    if type(header.get("isSeeded")) is not bool:
        return "session header isSeeded must be a boolean"
    origin = header.get("origin", ABSENT)
    if origin is not ABSENT and origin != "subagent":
        return 'session header origin must be "subagent"'
    depth = header.get("delegationDepth", ABSENT)
    if depth is not ABSENT and not _count(depth):
        return "session header delegationDepth must be a non-negative safe integer"
    preset = header.get("agentPreset", ABSENT)
    if preset is not ABSENT and type(preset) is not str:
        return "session header agentPreset must be a string"
    return None


# -- per-event seed checks ------------------------------------------------------------------------

def _envelope_ok(event: Any, version: int) -> bool:
    if type(event) is not dict:
        return False
    if len(event) > 4 and not _ENVELOPE.issuperset(event.keys()):
        return False
    seq, time = event.get("seq", ABSENT), event.get("time", ABSENT)
    if not (type(seq) is int and 0 <= seq <= _MAX):
        if not (is_safe_int(seq) and seq >= 0 and (not nested_streams(version) or not is_neg_zero(seq))):
            return False
    if not (type(time) is int and -_MAX <= time <= _MAX) and not is_safe_int(time):
        return False
    ignorable = event.get("ignorable", ABSENT)
    return (type(event.get("type")) is str and "data" in event
            and (ignorable is ABSENT or ignorable is True))


def request_header_problem(event: Mapping[str, Any], *, version: int) -> str | None:
    """``assertCurrentLlmShape`` for a request/header, as a message suffix (subject first)."""
    data = event.get("data")
    record = data if type(data) in (dict, list) else None
    header = record.get("header") if type(record) is dict else None
    config = header.get("config") if type(header) is dict else None
    if type(config) is not dict or type(config.get("provider")) is not str or not config["provider"] \
            or type(config.get("model")) is not str or not config["model"]:
        return "lacks provider/model"
    effort = config.get("reasoningEffort", ABSENT)
    if effort is not ABSENT and (type(effort) is not str or not effort):
        return "has an invalid reasoningEffort"
    defaults = header.get("adapterDefaults", ABSENT)
    if defaults is not ABSENT:
        if (type(defaults) is not dict or any(k not in _ADAPTER_KEYS for k in defaults)
                or any(v is not True for v in defaults.values())
                or (defaults.get("reasoningEffort") is True and "reasoningEffort" not in config)
                or (defaults.get("maxTokens") is True and "maxTokens" not in config)):
            return "has invalid adapterDefaults"
    if nested_streams(version):
        reason = record.get("reason") if type(record) is dict else None
        if reason not in _REASONS_V4 or type(reason) is not str:
            return "has an invalid reason"
        starts = record.get("startsSeries", ABSENT) if type(record) is dict else ABSENT
        if starts is not ABSENT and starts is not True:
            return "has an invalid startsSeries marker"
    return None


def _settlement_ok(data: Any) -> bool:
    if type(data) is not dict:
        return False
    turn, step = data.get("turn", ABSENT), data.get("step", ABSENT)
    if type(turn) is int and type(step) is int:
        return 0 <= turn <= _MAX and 0 <= step <= _MAX and type(data.get("stream")) is list
    return (is_safe_int(turn) and turn >= 0 and not is_neg_zero(turn) and is_safe_int(step) and step >= 0
            and not is_neg_zero(step) and type(data.get("stream")) is list)


class RestoreChecker:
    """Single-pass ``Session.fromRestore``: `accept` each seed event in order, then `finish`.

    `events` gives random access to earlier seed events (the fold's shadowed nodes, ``headerSeq``
    and offload targets). `error` is the first error (the reference throws there). After an error
    that is not a fold error the checker keeps folding (best effort, for a debugger) and records
    a later fold failure as `fold_error`.

    The fold step is the log's one fold, `fold` (a `workbench.core.timeline.TimelineBuilder`):
    given one, the caller feeds it every event of the log before this checker sees the event
    (the loader does), and the checker reads its outcome; without one the checker owns a
    builder and feeds it each event it accepts. While the checker folds (no error that stops
    it), the builder's surface is exactly the restored one: every event the checker folds it
    folds the same way, and the events the checker is not given change no surface. Events past
    the log (the resume's closers) fold on a copy of that surface, never on the timeline.

    The loader's fast lane: ``decoded=True`` says every event already passed the v4 row decoder
    (`workbench.io.rows_v4.decode_envelope`), so an event with an integer ``seq`` has a valid
    envelope; `memo` shares the shape rules' results with the stored-event validation; `skip`
    records events the caller knows no check applies to.
    """

    def __init__(self, *, version: int, events: Sequence[Mapping[str, Any]], header: Any = None,
                 session_id: Any = ABSENT, decoded: bool = False, memo: ShapeMemo | None = None,
                 fold: TimelineBuilder | None = None) -> None:
        self.version = version
        self.events = events
        self.header = header
        self.decoded = decoded and nested_streams(version)
        self.memo = memo if memo is not None and memo.version == version else ShapeMemo(version)
        self._feeds = fold is None   # the checker feeds its own builder
        self.fold = TimelineBuilder(events, version=version) if fold is None else fold
        self.state: SurfaceState = self.fold.state
        self.count = 0
        self.error: RestoreError | None = None
        self.fold_error: RestoreError | None = None
        self.last_type: Any = None
        self.inherited_markers: list[int] = []
        self._enveloped = False
        if nested_streams(version) and header is not None:
            sid = header.get("id", ABSENT) if session_id is ABSENT and type(header) is dict else session_id
            problem = header_problem(header, sid, version)
            if problem is not None:
                self.error = RestoreError(problem, "seed_header")

    def skip(self, count: int, last_type: Any) -> None:
        """The events before `count` not given to `accept` need no check (the caller knows their
        types: no restore rule, fold step or end-seed marker concerns them); the last was a
        `last_type`."""
        if count > self.count:
            self.count = count
            if self.error is None:
                self.last_type = last_type

    def accept(self, event: Any, index: int | None = None, *, enveloped: bool = False) -> None:
        """Check the next seed event (at `index`: the caller skipped the events before it);
        ``enveloped=True``: the caller vouches that its envelope is valid."""
        if index is None:
            index = self.count
        if self._feeds and index == self.fold.count and type(event) is dict:
            self.fold.feed(event)
        self.count = index + 1
        self._enveloped = enveloped
        if self.error is not None:
            if self.fold_error is None and self._keeps_folding(self.error):
                self._fold_only(event, index)
            return
        try:
            self._check(event, index)
        except RestoreError as exc:
            self.error = exc
            if self._keeps_folding(exc):
                self._fold_only(event, index)

    @staticmethod
    def _keeps_folding(error: RestoreError) -> bool:
        """A shape error leaves the fold meaningful; an envelope, seq or fold error does not."""
        return error.index is not None and error.kind not in ("seed_envelope", "seed_seq") \
            and not error.kind.startswith("seed_surface:")

    def _fold_only(self, event: Any, index: int) -> None:
        if type(event) is not dict:
            return
        try:
            self._fold(event, index)
        except RestoreError as exc:
            self.fold_error = exc

    def _check(self, event: Any, index: int) -> None:
        version = self.version
        if not (self._enveloped or (self.decoded and type(event.get("seq")) is int)) \
                and not _envelope_ok(event, version):
            raise RestoreError(f"seed event at index {index} has an invalid event envelope", "seed_envelope", index)
        kind = event["type"]
        data = event["data"]
        if nested_streams(version):
            if kind in _LLM_TYPES_V4:
                self._llm_shape_v4(event, kind, index)
        elif kind == "request/header" and type(data) is dict and data.get("reason") == "fallback":
            raise RestoreError(f'seed event at index {index} uses unsupported legacy request/header reason "fallback"',
                               "seed_legacy_fallback", index)
        seq = event["seq"]
        if seq != index:
            raise RestoreError(f"seed event at index {index} has seq {js_str(seq)} (expected {index}); "
                               "seed must be contiguous from 0", "seed_seq", index)
        if not nested_streams(version):
            subject = f"seed {kind} at index {index}"
            if kind == "request/header":
                problem = request_header_problem(event, version=0)
                if problem is not None:
                    raise RestoreError(f"{subject} {problem}", "seed_request_header", index)
            elif kind in _MESSAGE_TYPES_V0:
                shape = self.memo.shape(event)
                if shape is not None:
                    raise RestoreError(f"{subject} {shape[1]}", f"seed_message_{shape[0]}", index)
        if kind == "session/end-seed" and type(data) is dict and data.get("inherited") is True:
            self.inherited_markers.append(index)
        self.last_type = kind
        self._fold(event, index)

    def _fold(self, event: Mapping[str, Any], index: int) -> None:
        kind = event.get("type")
        if (type(kind) is not str or kind not in _FOLD_TYPES) and "surfaceOp" not in event \
                and "sourceEventSeqs" not in event:
            return
        fold = self.fold
        if index < fold.count and self.state is fold.state:
            failed = fold.rejected.get(index)    # the one fold planned this event on this surface
        else:                                    # past the log: a closer, on a copy
            if self.state is fold.state:
                self.state = self.state.copy()
            failed = None
            try:
                apply_plan(self.state, plan_event(self.state, event, index, version=self.version,
                                                  events=self.events))
            except FoldError as exc:
                failed = exc
        if failed is not None:
            raise RestoreError(f"invalid seed event at index {index}: {failed.message}",
                               f"seed_surface:{failed.kind}", index)

    def _llm_shape_v4(self, event: Mapping[str, Any], kind: str, index: int) -> None:
        subject = f"seed {kind} at index {index}"
        memo = self.memo
        problem = memo.event_data(event)
        if problem is not None:
            raise RestoreError(f"{subject} {problem}", "seed_event_data", index)
        if kind == "request/header":
            problem = request_header_problem(event, version=4)
            if problem is not None:
                raise RestoreError(f"{subject} {problem}", "seed_request_header", index)
            return
        if kind == "assistant/attempt":
            if not _settlement_ok(event.get("data")):
                raise RestoreError(f"{subject} has invalid settlement fields", "seed_settlement", index)
            return
        shape = memo.shape(event)
        if shape is not None:
            raise RestoreError(f"{subject} {shape[1]}", f"seed_message_{shape[0]}", index)
        if kind == "assistant/message" and not _settlement_ok(event.get("data")):
            raise RestoreError(f"{subject} has invalid settlement fields", "seed_settlement", index)

    @staticmethod
    def passes_cleared(event: Mapping[str, Any], kind: str) -> bool:
        """Whether a message event the caller knows passes every shape rule this checker shares
        with the stored validation (`ShapeMemo.cleared`), with a valid envelope, at its index,
        folded without a `FoldError` on the restored surface, passes every check of `accept`,
        so that giving it to `accept` would change nothing but the count and the last type
        (`skip`): all that is left is an ``assistant/message``'s settlement fields."""
        return kind != "assistant/message" or _settlement_ok(event.get("data"))

    def finish(self, inherited_event_count: int = 0) -> RestoreResult:
        """The restored surface; raises the first `RestoreError`."""
        if self.error is not None:
            raise self.error
        if nested_streams(self.version):
            seeded = self.header.get("isSeeded") is True if type(self.header) is dict else False
            if not seeded and inherited_event_count != 0:
                raise RestoreError("unseeded session inherited event count must be 0", "seed_inherited")
            if inherited_event_count > self.count:
                raise RestoreError("session inherited event count exceeds its event log", "seed_inherited")
            if inherited_event_count in self.inherited_markers and any(
                    m > inherited_event_count for m in self.inherited_markers):
                raise RestoreError("session inherited event count must identify the final inherited marker",
                                   "seed_inherited")
        return RestoreResult(tuple(self.state.nodes), self.last_type != "session/end-seed")


def restore_session(events: Sequence[Mapping[str, Any]], *, version: int, header: Any = None,
                    inherited_event_count: int = 0) -> RestoreResult:
    """Restore a session from `events` (reference ``Session.fromRestore``); raises `RestoreError`.

    Without a `header` the header checks are skipped (a valid header is assumed).
    """
    checker = RestoreChecker(version=version, events=events, header=header)
    for event in events:
        checker.accept(event)
        if checker.error is not None:
            break
    return checker.finish(inherited_event_count)


__all__ = ["INTEREST", "RestoreChecker", "RestoreError", "RestoreResult", "header_problem",
           "request_header_problem", "restore_session"]

"""Format v0 compaction invariant, replayed over a whole log. Layer: core.

Reference: the compaction invariant companion of DSH 0.1.1 (`compaction/src/invariant.ts`:
`validateCompactionEvent`, `validateCheckpoint`, `validateOwner`, `validateTurnBoundary`,
`inheritedOrphanStartSeqs`), in its *seed replay* form, the one a restored session goes through.
Spec v0 §3.9, §5.1–5.2. (Format v4 moved these rules into the loader's relationship layer,
`workbench.core.relationships`; this module is v0 only.)

What it enforces, per event in log order (first failure wins, messages are the reference's):

* brackets never nest; `compaction/start` names the open turn, or `turn: null` between turns;
* summary and end repeat the start's `compactionId` and `sourceCommandId`; at most one summary;
  `shadowedSeqs` non-empty, framed by `shadowedRange`; `shadowedTokenCount` a safe int >= 0;
* `compaction/end.turn` equals the start's; an error-free end needs a summary;
* a checkpoint replacement (`source {kind:"plugin", plugin:"compact"}`) belongs to the open
  bracket;
* a turn boundary never crosses an open bracket, except one left open by a crash in an earlier
  lifecycle (an unmatched start followed by `session/end-seed`), whose repair closers precede
  the end-seed that clears it.

Equality is JavaScript's strict `===`: `1 === 1.0`, but `true !== 1`, `null !== undefined`
(an absent key is `jsjson.ABSENT`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.jsjson import ABSENT, is_safe_int
from workbench.io.jsvalues import js_str, js_typeof

_COMPACTION_TYPES = frozenset({"compaction/start", "compaction/summary", "compaction/end"})
_SURFACE_TYPES_V0 = frozenset({"user/message", "assistant/message", "tool/result"})


@dataclass(frozen=True, slots=True)
class InvariantFailure:
    """The first invariant the log breaks: the seq of the event and the reference text."""

    seq: int
    message: str


class _Fail(WorkbenchError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _fail(message: str) -> None:
    raise _Fail(message)


@dataclass(slots=True)
class _Bracket:
    compaction_id: Any
    source_command_id: Any
    start_seq: int
    turn: Any
    summarized: bool = False


@dataclass(slots=True)
class _Trace:
    open_turn: Any = None
    compaction: _Bracket | None = None


def _strict_eq(a: Any, b: Any) -> bool:
    """JavaScript `a === b` for parsed JSON scalars (objects compare by identity)."""
    if a is ABSENT or b is ABSENT:
        return a is b
    if a is None or b is None:
        return a is b
    ta, tb = js_typeof(a), js_typeof(b)
    if ta != tb:
        return False
    if ta in ("number", "string", "boolean"):
        return a == b
    return a is b


def _get(record: Any, key: str) -> Any:
    return record.get(key, ABSENT) if isinstance(record, dict) else ABSENT


def _validate_id(value: Any, label: str) -> None:
    if type(value) is not str or value == "":
        _fail(f"{label} must be a non-empty string")


def _validate_source_command_id(event_type: str, value: Any, expected: Any) -> None:
    if value is not ABSENT:
        _validate_id(value, f"{event_type} sourceCommandId")
    if not _strict_eq(value, expected):
        _fail(f"{event_type} sourceCommandId {js_str(value)} does not match "
              f"compaction/start sourceCommandId {js_str(expected)}")


def _validate_owner(owner: Any, open_turn: Any, event_type: str) -> None:
    if owner is None:
        if open_turn is not None:
            _fail(f"{event_type} is standalone but turn {js_str(open_turn)} is open")
        return
    if open_turn is None:
        _fail(f"{event_type} for turn {js_str(owner)} appended outside any open turn")
    if not _strict_eq(owner, open_turn):
        _fail(f"{event_type} names turn {js_str(owner)} but open turn is {js_str(open_turn)}")


def is_checkpoint_replacement(event: Mapping[str, Any]) -> bool:
    """A v0 compaction checkpoint: a replacing `user/message` with a compact plugin source."""
    if event.get("type") != "user/message":
        return False
    op = event.get("surfaceOp", ABSENT)
    if op is ABSENT or op == "append":
        return False
    source = _get(event.get("data"), "source")
    return _get(source, "kind") == "plugin" and _get(source, "plugin") == "compact"


def _validate_checkpoint(trace: _Trace, event: Mapping[str, Any]) -> None:
    source = _get(event.get("data"), "source")
    compaction_id = _get(source, "compactionId")
    command_id = _get(source, "sourceCommandId")
    _validate_id(compaction_id, "compaction checkpoint compactionId")
    if command_id is not ABSENT:
        _validate_id(command_id, "compaction checkpoint sourceCommandId")
    open_ = trace.compaction
    if open_ is None:
        _fail("compaction checkpoint has no matching compaction/start")
        return
    if not _strict_eq(compaction_id, open_.compaction_id):
        _fail(f"compaction checkpoint id {js_str(compaction_id)} does not match "
              f"compaction/start id {js_str(open_.compaction_id)}")
    _validate_source_command_id("compaction checkpoint", command_id, open_.source_command_id)


def _validate_event(trace: _Trace, event: Mapping[str, Any]) -> tuple[str, _Bracket | None] | None:
    """Validate one event; return the bracket transition it commits (kind, new bracket)."""
    kind = event.get("type")
    if kind == "session/end-seed":
        return ("end-seed", None)
    if is_checkpoint_replacement(event):
        _validate_checkpoint(trace, event)
        return None
    if kind not in _COMPACTION_TYPES:
        return None
    data = event.get("data")
    open_ = trace.compaction
    compaction_id = _get(data, "compactionId")
    command_id = _get(data, "sourceCommandId")
    _validate_id(compaction_id, f"{kind} compactionId")
    if command_id is not ABSENT:
        _validate_id(command_id, f"{kind} sourceCommandId")
    if kind == "compaction/start":
        if open_ is not None:
            owner = ("standalone compaction" if open_.turn is None
                     else f"turn {js_str(open_.turn)}")
            _fail(f"compaction/start while {owner} is still compacting")
        turn = _get(data, "turn")
        _validate_owner(turn, trace.open_turn, kind)
        return ("start", _Bracket(compaction_id, command_id, event["seq"], turn))
    if open_ is None:
        _fail(f"{kind} has no matching compaction/start")
        return None
    if not _strict_eq(compaction_id, open_.compaction_id):
        _fail(f"{kind} id {js_str(compaction_id)} does not match compaction/start id "
              f"{js_str(open_.compaction_id)}")
    _validate_source_command_id(kind, command_id, open_.source_command_id)
    if kind == "compaction/summary":
        _validate_owner(open_.turn, trace.open_turn, kind)
        if open_.summarized:
            _fail("compaction/summary repeated within one compaction")
        _validate_summary_fields(data)
        return ("summary", _Bracket(open_.compaction_id, open_.source_command_id,
                                    open_.start_seq, open_.turn, True))
    end_turn = _get(data, "turn")
    if not _strict_eq(end_turn, open_.turn):
        _fail(f"compaction/end owner {js_str(end_turn)} does not match compaction/start owner "
              f"{js_str(open_.turn)}")
    _validate_owner(open_.turn, trace.open_turn, kind)
    if _get(data, "error") is ABSENT and not open_.summarized:
        _fail("successful compaction/end requires one compaction/summary")
    return ("end", None)


def _validate_summary_fields(data: Any) -> None:
    seqs = _get(data, "shadowedSeqs")
    seqs = seqs if isinstance(seqs, list) else []
    if len(seqs) == 0:
        _fail("compaction/summary shadowedSeqs must be non-empty")
    shadowed_range = _get(data, "shadowedRange")
    if (not _strict_eq(seqs[0], _get(shadowed_range, "start"))
            or not _strict_eq(seqs[-1], _get(shadowed_range, "end"))):
        _fail("compaction/summary shadowedRange must match the first and last shadowedSeqs")
    count = _get(data, "shadowedTokenCount")
    if not (type(count) in (int, float) and is_safe_int(count)) or count < 0:
        _fail("compaction/summary shadowedTokenCount must be a non-negative safe integer")


def inherited_orphan_start_seqs(events: Sequence[Mapping[str, Any]]) -> frozenset[int]:
    """Starts still unmatched when a later `session/end-seed` proved them stale
    (reference `inheritedOrphanStartSeqs`)."""
    stale: set[int] = set()
    open_seq: int | None = None
    for event in events:
        kind = event.get("type")
        if kind == "compaction/start":
            open_seq = event["seq"]
        elif kind == "compaction/end":
            open_seq = None
        elif kind == "session/end-seed":
            if open_seq is not None:
                stale.add(open_seq)
            open_seq = None
    return frozenset(stale)


def check_compaction_invariant(events: Sequence[Mapping[str, Any]]) -> InvariantFailure | None:
    """Replay the v0 invariant's seed over `events`; the first failure, or None."""
    trace = _Trace()
    stale = inherited_orphan_start_seqs(events)
    for event in events:
        try:
            kind = event.get("type")
            if (kind in ("turn/start", "turn/end") and trace.compaction is not None
                    and trace.compaction.start_seq not in stale):
                owner = ("standalone compaction" if trace.compaction.turn is None
                         else f"compaction for turn {js_str(trace.compaction.turn)}")
                _fail(f"{kind} cannot cross an open {owner}")
            transition = _validate_event(trace, event)
        except _Fail as failure:
            return InvariantFailure(event.get("seq"), failure.message)
        if transition is not None:
            trace.compaction = transition[1]
        if kind == "turn/start":
            trace.open_turn = _get(event.get("data"), "turn")
        elif kind == "turn/end":
            trace.open_turn = None
    return None

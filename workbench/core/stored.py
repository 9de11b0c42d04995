"""Stored-event validation: the checks a loader applies to the decoded events of a log.
Layer: core (pure; imports io only).

Format v4 (spec §1.9 item 4; reference ``validateStoredEvents`` then ``adoptSessionEvent``):

1. over all events: an unknown type without ``ignorable: true`` refuses the log as written by a
   newer harness; a ``request/header`` with reason ``fallback`` refuses it as retired;
2. then per event: ``validateSessionEventData`` (developer role and tool changes, request-header
   empty fields and ``system``, tool-result error flag), ``validateSurfaceMetadata`` (the fold's
   event-local rules) and ``assertMessageEventShape`` (role per type, identified message, source,
   content array, model/tool/system-prompt sources, matching tool-call ids). A failure is
   corruption, reported as ``stored session "<id>" failed validation: Error: <message>``.

Format v0 (spec §1.9 items 2-4): legacy events refused (``request/header-delta``, ``mode/set``,
``request/header`` reason ``fallback``), message shapes of §3.5-3.8 (the tool result wraps exactly
one ``tool-result`` block), unknown types refused. The 0.1.x texts are not published; these reuse
the v4 wording.

The shape checks return message *suffixes* so the same rule serves this validation (subject
``session event at seq N``) and session restore (subject ``seed <type> at index N``). When the
loader runs both over the same event, a `ShapeMemo` shared by the two computes each rule once.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.core import (
    surface_rules as _fold,  # the fold owns the surface rules (one rule, one place)
)
from workbench.core.events import known_types
from workbench.core.migration import lift_event
from workbench.errors import FoldError
from workbench.io.generations import nested_streams, seq_replace_keys, tool_role
from workbench.io.jsjson import ABSENT, is_neg_zero, is_safe_int
from workbench.io.jsvalues import js_str

StoredClass = Literal["corrupt", "unsupported"]


@dataclass(frozen=True, slots=True)
class StoredViolation:
    """One stored-event problem: `kind` (``unsupported_newer``, ``stored_vocabulary``,
    ``stored_invalid``), the reference `klass` and error `name`, and the exact `message`."""

    seq: Any
    kind: str
    klass: StoredClass
    name: str
    message: str


_SURFACE_V4 = frozenset(("system/message", "developer/message", "user/message", "assistant/message",
                         "tool/result"))
_ROLE_V4 = {"system/message": "system", "developer/message": "developer", "user/message": "user",
            "assistant/message": "assistant", "tool/result": "tool"}
_ROLE_V0 = {"user/message": "user", "assistant/message": "assistant", "tool/result": "user"}
_SURFACE_V0 = frozenset(_ROLE_V0)
_TOOL_CHANGES = ("tool-addition", "tool-removal")


def _is_event_seq(value: Any) -> bool:
    return is_safe_int(value) and value >= 0 and not is_neg_zero(value)


# -- validateSessionEventData (v4) ------------------------------------------------------------

def event_data_problem(event: Mapping[str, Any]) -> str | None:
    """Reference ``validateSessionEventData`` as a message suffix after the subject, or None."""
    kind = event.get("type")
    data = event.get("data")
    if kind in _SURFACE_V4 and type(data) is dict:
        message = data if kind == "user/message" else data.get("message")
        if type(message) is dict:
            role = message.get("role")
            if (kind == "developer/message") != (role == "developer"):
                return "developer/message and developer role must occur together"
            content = message.get("content")
            if role != "developer" and type(content) is list:
                for block in content:
                    if type(block) is dict and block.get("type") in _TOOL_CHANGES:
                        return "tool-change blocks require developer role"
            if kind == "developer/message" and type(content) is list:
                additions = False
                for block in content:
                    if type(block) is not dict or block.get("type") not in _TOOL_CHANGES:
                        continue
                    name = block.get("toolName")
                    if type(name) is not str or not name:
                        return f"{block['type']} requires a nonempty toolName"
                    if block["type"] == "tool-addition":
                        additions = True
                        if "tool" in block:
                            return "tool-addition must omit inline tool definitions"
                if (not _is_event_seq(data.get("headerSeq", ABSENT))) if additions else "headerSeq" in data:
                    return "requires headerSeq exactly when tool additions are present"
    if kind == "request/header":
        if type(data) is not dict:
            return "data must be an object"
        header = data.get("header")
        if type(header) is not dict:
            return "header must be an object"
        if "system" in header:
            return "must omit header.system; use system/message"
        if type(header.get("tools")) is list and not header["tools"]:
            return "must omit empty tools"
        defaults = header.get("adapterDefaults")
        if type(defaults) is dict and not defaults:
            return "must omit empty adapterDefaults"
    elif kind == "tool/result":
        if type(data) is not dict:
            return "data must be an object"
        if "error" not in data:
            return None
        message = data.get("message")
        if type(message) is not dict or message.get("isError") is not True:
            return "error requires message.isError === true"
    return None


# -- validateSurfaceMetadata ------------------------------------------------------------------

def surface_metadata_problem(event: Mapping[str, Any], *, version: int) -> FoldError | None:
    """Reference ``validateSurfaceMetadata``: the fold's event-local rules (no surface needed)."""
    kind = event.get("type")
    if "surfaceOp" not in event and "sourceEventSeqs" not in event and kind not in _SURFACE_V4:
        return None
    seq = event.get("seq")
    if type(seq) is int and _plain_append(event, kind, seq, version):
        return None
    fold = _fold
    if type(seq) is float and seq.is_integer():
        seq = int(seq)
    shown = seq if type(seq) is int else js_str(seq)
    try:
        op = fold._surface_op(event, kind, seq, version)
        if op is None:
            return None
        if seq_replace_keys(version) and op != "append" and (op["startSeq"] >= seq or op["endSeq"] >= seq):
            return FoldError("replace_endpoints_not_earlier", seq, f"surface replace at seq {shown}: "
                             "startSeq and endSeq must reference earlier events")
        fold._check_sources(event, kind, seq, version)
    except FoldError as exc:
        return exc
    except TypeError as exc:  # a seq that is not a number: JavaScript compares it anyway
        return FoldError("invalid_event", seq, str(exc))
    return None


def _plain_append(event: Mapping[str, Any], kind: Any, seq: int, version: int) -> bool:
    """Whether the fold's rules surely pass an append of an eligible type whose sources, if any,
    are distinct integer seqs before `seq` (a shortcut: False means "ask the fold")."""
    op = event.get("surfaceOp")
    if not (type(op) is str and op == "append" and kind in (_SURFACE_V4 if nested_streams(version) else _SURFACE_V0)):
        return False
    return _fold.plain_sources(event.get("sourceEventSeqs", _fold._MISSING), kind, seq, version)


# -- assertMessageEventShape --------------------------------------------------------------------

def _provider_model(value: Any) -> bool:
    return (type(value) is dict and type(value.get("provider")) is str and bool(value["provider"])
            and type(value.get("model")) is str and bool(value["model"]))


def message_shape_problem(event: Mapping[str, Any], *, version: int) -> tuple[str, str] | None:
    """Reference ``assertMessageEventShape`` as ``(kind, message suffix)``, or None.

    Kinds: unidentified, role, source, content, system_source, model_source, tool_source,
    tool_block (v0), tool_ids.
    """
    kind = event.get("type")
    roles = _ROLE_V4 if tool_role(version) else _ROLE_V0
    expected = roles.get(kind) if type(kind) is str else None
    if expected is None:
        return None
    data = event.get("data")
    message = data if kind == "user/message" else (data.get("message") if type(data) is dict else None)
    if type(message) is not dict or type(message.get("id")) is not str or not message["id"]:
        return "unidentified", "lacks an identified message"
    if message.get("role") != expected:
        return "role", f'message must have role "{expected}"'
    source = message.get("source")
    if type(source) is not dict or type(source.get("kind")) is not str or not source["kind"]:
        return "source", "message has invalid source"
    content = message.get("content")
    if type(content) is not list:
        return "content", "message has invalid content"
    if kind == "system/message":
        if source["kind"] != "system-prompt":
            return "system_source", "message must have system-prompt source"
        return None
    if kind == "assistant/message":
        if source["kind"] != "model" or not _provider_model(source):
            return "model_source", "message must have model source"
        return None
    if kind != "tool/result":
        return None
    call_id = source.get("callId")
    if source["kind"] != "tool" or type(call_id) is not str or not call_id:
        return "tool_source", "message must have tool source"
    if tool_role(version):
        if message.get("toolCallId", ABSENT) != call_id or type(message.get("toolCallId")) is not str:
            return "tool_ids", "message has mismatched tool call ids"
        return None
    block = content[0] if len(content) == 1 else None
    if type(block) is not dict or block.get("type") != "tool-result" or type(block.get("content")) is not list:
        return "tool_block", "message must contain one tool-result block"
    if type(block.get("toolCallId")) is not str or block.get("toolCallId") != call_id:
        return "tool_ids", "message has mismatched tool call ids"
    return None


# -- one event's rule results, shared by stored validation and restore ----------------------------

_UNSET: Any = object()


class ShapeMemo:
    """The results of `event_data_problem`, `surface_metadata_problem` and `message_shape_problem`
    for the event being checked (the last one asked about), so the stored-event validation and
    the restore check of one event compute each rule once. Keeps a reference to that one event.

    A v3 log's data and message shapes are checked on the event in its v4 spelling
    (`workbench.core.migration.lift_event`), as DSH 0.2.1 checks an older log after migrating it;
    its surface metadata keeps the v3 rules."""

    __slots__ = ("version", "_lift", "_event", "_data", "_surface", "_shape")

    def __init__(self, version: int) -> None:
        self.version = version
        self._lift = nested_streams(version) and not tool_role(version)
        self._event: Any = None
        self._data: Any = _UNSET
        self._surface: Any = _UNSET
        self._shape: Any = _UNSET

    def _switch(self, event: Mapping[str, Any]) -> None:
        self._event = event
        self._data = self._surface = self._shape = _UNSET

    def event_data(self, event: Mapping[str, Any]) -> str | None:
        if self._event is not event:
            self._switch(event)
        if self._data is _UNSET:
            self._data = event_data_problem(lift_event(event) if self._lift else event)
        return self._data

    def surface(self, event: Mapping[str, Any]) -> FoldError | None:
        if self._event is not event:
            self._switch(event)
        if self._surface is _UNSET:
            self._surface = surface_metadata_problem(event, version=self.version)
        return self._surface

    def planned(self, event: Mapping[str, Any]) -> None:
        """The load's fold planned `event` at its own (integer) seq without a `FoldError`: the
        event-local rules `surface` applies are that plan's first checks, in the same order, so
        they pass (one reading of ``surfaceOp``/``sourceEventSeqs`` per event)."""
        if self._event is not event:
            self._switch(event)
        self._surface = None

    def cleared(self, event: Mapping[str, Any], kind: str) -> bool:
        """`planned` for a format-v4 message event (`kind` a surface type other than
        ``developer/message``) that passed v4 row admission, then whether it passes every other
        per-event stored rule too (its shape verdict, computed here, is None).

        Such an event passes ``validateSessionEventData``, whose rules for these types are a
        subset of admission's: admission refuses a developer-role message outside
        ``developer/message`` and a tool-change block in its content (``assertV4DeveloperData``;
        a row whose bytes hold no such name nor a ``\\u00`` escape has none), and, for a
        ``tool/result``, data that is not an object and error metadata without
        ``isError: true`` (``assertV4ToolResultMessage``). Its data verdict is None without a
        reading. A ``tool/result`` also passes ``assertMessageEventShape``, whose tool-result
        rules are a subset of admission's (string id, tool role, tool source whose ``callId`` is
        its ``toolCallId``, array content)."""
        self._event = event
        self._surface = self._data = None
        self._shape = shape = None if kind == "tool/result" else message_shape_problem(event, version=4)
        return shape is None

    def shape(self, event: Mapping[str, Any]) -> tuple[str, str] | None:
        if self._event is not event:
            self._switch(event)
        if self._shape is _UNSET:
            self._shape = (message_shape_problem(lift_event(event), version=4) if self._lift
                           else message_shape_problem(event, version=self.version))
        return self._shape


# -- the validator ------------------------------------------------------------------------------

class StoredValidator:
    """Single-pass `validateStoredEvents`: `accept` each event, then `finish`.

    `location` is the raw-log path the reference appends to refusals (`` (raw log: <path>)``).
    """

    def __init__(self, meta: Mapping[str, Any] | None, *, version: int, location: str | None = None,
                 memo: ShapeMemo | None = None) -> None:
        self.meta = meta or {}
        self.version = version
        self.memo = memo if memo is not None and memo.version == version else ShapeMemo(version)
        self.location = location
        self.known = known_types(version)
        sid = self.meta.get("id", ABSENT)
        self.session_id = sid if type(sid) is str else js_str(sid)
        self.refusals: list[StoredViolation] = []
        self.invalid: list[StoredViolation] = []
        self.unknown: list[StoredViolation] = []

    def _unsupported(self, reason: str) -> str:
        return reason if self.location is None else f"{reason} (raw log: {self.location})"

    def _corrupt(self, seq: Any, text: str) -> None:
        self.invalid.append(StoredViolation(seq, "stored_invalid", "corrupt", "SessionPersistenceCorruptionError",
                                            f'stored session "{self.session_id}" failed validation: Error: {text}'))

    def accept(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if type(kind) is not str or kind not in self.known:
            if event.get("ignorable") is not True:
                self._unknown(event, kind)
        elif kind in _CHECKED:
            self._check(event, kind)
        elif "surfaceOp" in event or "sourceEventSeqs" in event:
            self._check(event, kind)

    def _unknown(self, event: Mapping[str, Any], kind: Any) -> None:
        problem = StoredViolation(event.get("seq"), "unsupported_newer", "unsupported", "SessionFormatUnsupportedError",
                                  self._unsupported(
                                      f'session "{self.session_id}" contains event type "{js_str(kind)}" '
                                      f"(seq {js_str(event.get('seq', ABSENT))}) unknown to this harness and not "
                                      "marked ignorable; refusing to interpret the log \u2014 it was likely written "
                                      "by a newer harness"))
        (self.refusals if nested_streams(self.version) else self.unknown).append(problem)
        if not nested_streams(self.version) and kind in ("request/header-delta", "mode/set"):
            self.refusals.append(StoredViolation(
                event.get("seq"), "stored_vocabulary", "unsupported", "SessionFormatUnsupportedError",
                self._unsupported(f'session "{self.session_id}" contains unsupported legacy {kind} event '
                                  f"at seq {js_str(event.get('seq', ABSENT))}")))
        if "surfaceOp" in event or "sourceEventSeqs" in event:
            self._check(event, kind)

    def _check(self, event: Mapping[str, Any], kind: Any) -> None:
        seq = event.get("seq")
        if kind == "request/header":
            data = event.get("data")
            if type(data) is dict and data.get("reason") == "fallback":
                self.refusals.append(StoredViolation(
                    seq, "stored_vocabulary", "unsupported", "SessionFormatUnsupportedError",
                    self._unsupported(f'session "{self.session_id}" contains a request/header event '
                                      f'(seq {js_str(seq)}) with the unsupported legacy reason "fallback"; refusing '
                                      "to interpret the log \u2014 it was written by a retired pre-release harness")))
        memo = self.memo
        if nested_streams(self.version):
            problem_text = memo.event_data(event) if kind in _DATA_TYPES else None
            if problem_text is not None:
                self._corrupt(seq, f"session event at seq {js_str(seq)} {problem_text}")
                return
            fold_problem = memo.surface(event)
            if fold_problem is not None:
                self._corrupt(seq, fold_problem.message)
                return
        shape = memo.shape(event) if kind in _SHAPE_TYPES else None
        if shape is not None:
            self._corrupt(seq, f"session event at seq {js_str(seq)} {shape[1]}")

    def finish(self) -> list[StoredViolation]:
        """Every violation, the reference's error first (refusals, then per-event problems)."""
        if nested_streams(self.version):
            return self.refusals + self.invalid
        return self.refusals + self.invalid + self.unknown


_DATA_TYPES = _SURFACE_V4 | {"request/header"}
_SHAPE_TYPES = _SURFACE_V4
_CHECKED = _DATA_TYPES
CHECKED_TYPES: frozenset[str] = _CHECKED
"""The known types `StoredValidator.accept` checks; an event of another known type without
``surfaceOp``/``sourceEventSeqs`` leaves it unchanged."""


def validate_stored_events(meta: Mapping[str, Any] | None, events: Sequence[Mapping[str, Any]], *,
                           version: int, location: str | None = None,
                           collect: bool = False) -> list[StoredViolation]:
    """The stored-event violations of a log (reference ``validateStoredEvents``); the first is the
    reference's error, and ``collect=False`` returns only it."""
    validator = StoredValidator(meta, version=version, location=location)
    for event in events:
        validator.accept(event)
    found = validator.finish()
    return found if collect else found[:1]


__all__ = ["CHECKED_TYPES", "ShapeMemo", "StoredValidator", "StoredViolation", "event_data_problem",
           "message_shape_problem", "surface_metadata_problem", "validate_stored_events"]

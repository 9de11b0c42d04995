"""The surface fold: one event's surface transition, planned and applied (v0 spec §4, v4 spec §4).
Layer: core (pure; imports io only).

`plan_event` checks every rule for one event against the current surface, in the reference order,
and returns a `Plan` (or None: no surface change) without mutating anything; `apply_plan` commits
a plan and never raises. The whole-log fold (`fold_surface`) and the step-by-step timeline
(`workbench.core.timeline`) both use this pair (reference: planSurfaceEvent / applySurfacePlan).

Order of checks (all-or-nothing per event):

* both formats: seq contiguity (strict JS equality), then `surfaceOpOf` (eligibility, missing /
  invalid / invalid replace op);
* v0: append → provenance with no shadowed nodes; replace → range (start found, end found,
  start <= end positionally) → provenance covering the shadowed nodes → tool/result rewrite
  (only `message.content[0].content` may differ);
* v4 (and v3, DSH 0.1.5): replace endpoints earlier than the event → provenance (never on
  assistant/message, never empty) → developer/message data and `headerSeq` → `image/offload`
  projection → append, or replace: range → coverage → tool/result rewrite (v4: only
  `message.content` may differ; v3 wraps results like v0: only the wrapped block's `content`) →
  protected system head.

The rules themselves live in `workbench.core.surface_rules`. A violation raises
`FoldError(kind, seq, message)` with the reference's exact message; `seq` is the
position of the failing event (`base_seq + index`). The nodes and their positions are a
`workbench.core.surface_order.SurfaceOrder`: an append or a replacement never renumbers the surface.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from workbench.core.events import known_types
from workbench.core.projection import image_offload_messages
from workbench.core.surface_order import SurfaceOrder
from workbench.core.surface_rules import (
    _MISSING,
    _SURFACE_V0,
    _SURFACE_V4,
    _check_coverage,
    _check_developer,
    _check_sources,
    _check_system_head,
    _check_tool_rewrite,
    _event_at,
    _replacement_range,
    _surface_op,
)
from workbench.errors import FoldError
from workbench.io.generations import nested_streams
from workbench.io.jsjson import is_number
from workbench.io.jsvalues import js_str

# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replacement:
    """One applied replacement: the event `seq` took the place of `shadowed` (surface order),
    the range named by the op's endpoints `start`..`end` (positional: `start` may be > `end`)."""

    seq: int
    start: int
    end: int
    shadowed: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """The reference's record shape `{seq, start, end, shadowedSeqs}`."""
        return {"seq": self.seq, "start": self.start, "end": self.end,
                "shadowedSeqs": list(self.shadowed)}


@dataclass(frozen=True, slots=True)
class Plan:
    """A validated transition of one event. `kind` is ``append``, ``replace`` or ``project``
    (v4 `image/offload`: new projected `messages`, no node change)."""

    kind: Literal["append", "replace", "project"]
    seq: int
    start: int = -1
    end: int = -1
    start_idx: int = -1
    end_idx: int = -1
    shadowed: tuple[int, ...] = ()
    messages: Mapping[int, dict] | None = None

    def replacement(self) -> Replacement | None:
        if self.kind != "replace":
            return None
        return Replacement(self.seq, self.start, self.end, self.shadowed)


@dataclass(slots=True)
class SurfaceState:
    """Mutable fold state: the model-visible nodes in order with their positions (`order`;
    `nodes` is its list), the generations and the v4 message projections (reference:
    createFoldState)."""

    order: SurfaceOrder = field(default_factory=SurfaceOrder)
    replace_generation: int = 0
    content_generation: int = 0
    projected_messages: dict[int, dict] = field(default_factory=dict)

    @property
    def nodes(self) -> list[int]:
        """The model-visible nodes in order (read only: change them through `order`)."""
        return self.order.nodes

    def copy(self) -> SurfaceState:
        """An independent copy (the projected messages themselves are shared, never mutated)."""
        return SurfaceState(self.order.copy(), self.replace_generation, self.content_generation,
                            dict(self.projected_messages))

    def __contains__(self, seq: object) -> bool:
        return seq in self.order


@dataclass(frozen=True, slots=True)
class SurfaceFold:
    """Result of folding a log (prefix): current nodes, replacement history, generations and
    the v4 `image/offload` projections (seq → projected message)."""

    nodes: tuple[int, ...]
    replacements: tuple[Replacement, ...]
    replace_generation: int
    content_generation: int
    projected_messages: Mapping[int, dict]


# -- plan / apply ------------------------------------------------------------------------------

def log_only_types(version: int) -> frozenset[str]:
    """Known types `plan_event` leaves alone: given at its seq (an int) and without
    ``surfaceOp``/``sourceEventSeqs``, an event of one of them changes no surface (None)."""
    special = {"developer/message", "image/offload"} if nested_streams(version) else set()
    return frozenset(known_types(version) - (_SURFACE_V4 if nested_streams(version) else _SURFACE_V0) - special)


def plain_append_types(version: int) -> frozenset[str]:
    """Types for which `plan_event` on an event at its seq (an int), with ``surfaceOp`` the
    string ``"append"`` and no ``sourceEventSeqs`` (or ones `surface_rules.plain_sources` passes),
    returns an append: nothing else is checked."""
    return frozenset((_SURFACE_V4 - {"developer/message", "image/offload"}) if nested_streams(version)
                     else _SURFACE_V0)


def plan_event(state: SurfaceState, event: Mapping[str, Any], expected_seq: int, *, version: int,
               events: Sequence[Mapping[str, Any]], base_seq: int = 0) -> Plan | None:
    """Validate `event` (expected at `expected_seq`) against `state`; never mutates.

    `events` is the log (window) the event belongs to, indexed by `seq - base_seq`, used to look
    up shadowed nodes, `headerSeq` headers and `image/offload` targets. Returns None when the
    event does not change the surface. Raises `FoldError` (reference: planSurfaceEvent)."""
    seq = expected_seq
    got = event.get("seq", _MISSING) if isinstance(event, dict) else _MISSING
    if not (is_number(got) and got == seq):
        shown = "undefined" if got is _MISSING else js_str(got)
        raise FoldError("seq_not_contiguous", seq,
                        f"session event seq {shown} is not contiguous; expected {seq}")
    etype = event.get("type")
    op = _surface_op(event, etype, seq, version)
    if not nested_streams(version):
        if op is None:
            return None
        if op == "append":
            _check_sources(event, etype, seq, version)
            return Plan("append", seq)
        start, end = int(op["start"]), int(op["end"])
        start_idx, end_idx, shadowed = _replacement_range(state, start, end, seq)
        _check_coverage(_check_sources(event, etype, seq, version), shadowed, seq)
        if etype == "tool/result":
            _check_tool_rewrite(event, shadowed, seq, events, base_seq, version)
        return Plan("replace", seq, start, end, start_idx, end_idx, shadowed)

    sources = None
    if op is not None:
        if op != "append" and (op["startSeq"] >= seq or op["endSeq"] >= seq):
            raise FoldError("replace_endpoints_not_earlier", seq, f"surface replace at seq {seq}: "
                            "startSeq and endSeq must reference earlier events")
        sources = _check_sources(event, etype, seq, version)
    if etype == "developer/message":
        _check_developer(event, seq, events, base_seq)
    if etype == "image/offload":
        messages = image_offload_messages(
            event, seq, is_node=state.order.__contains__,
            event_at=lambda s: _event_at(events, s, base_seq), current=state.projected_messages)
        return Plan("project", seq, messages=messages)
    if op is None:
        return None
    if op == "append":
        return Plan("append", seq)
    start, end = int(op["startSeq"]), int(op["endSeq"])
    start_idx, end_idx, shadowed = _replacement_range(state, start, end, seq)
    _check_coverage(sources, shadowed, seq)
    if etype == "tool/result":
        _check_tool_rewrite(event, shadowed, seq, events, base_seq, version)
    _check_system_head(etype, state, start_idx, shadowed, seq, events, base_seq)
    return Plan("replace", seq, start, end, start_idx, end_idx, shadowed)


def apply_plan(state: SurfaceState, plan: Plan | None) -> None:
    """Commit a plan made by `plan_event` against this same state (reference: applySurfacePlan)."""
    if plan is None:
        return
    if plan.kind == "append":
        state.order.append(plan.seq)
    elif plan.kind == "replace":
        state.order.replace(plan.start_idx, plan.end_idx, plan.seq)
        state.replace_generation += 1
        state.content_generation += 1
    elif plan.kind == "project":
        state.projected_messages.update(plan.messages or {})
        state.content_generation += 1


def fold_surface(events: Sequence[Mapping[str, Any]], *, version: int, through: int | None = None,
                 base_seq: int = 0) -> SurfaceFold:
    """Fold events `base_seq..through` (default: all) and return the surface; raises the first
    `FoldError` (reference: foldSurface, and `SurfaceManager(log, baseSeq)` for a window)."""
    state = SurfaceState()
    replacements = []
    count = len(events) if through is None else max(0, min(len(events), through - base_seq + 1))
    for index in range(count):
        plan = plan_event(state, events[index], base_seq + index, version=version, events=events,
                          base_seq=base_seq)
        if plan is not None:
            apply_plan(state, plan)
            if plan.kind == "replace":
                replacements.append(plan.replacement())
    return SurfaceFold(tuple(state.nodes), tuple(replacements), state.replace_generation,
                       state.content_generation, MappingProxyType(dict(state.projected_messages)))

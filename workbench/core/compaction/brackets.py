"""Compaction attempts and tool-result prunes, reconstructed from the log. Layer: core.

Spec v0 §3.9, §5.1–5.2, §5.8–5.10; v4 §3.9, §5.1–5.2, §5.8–5.10. One `CompactionRecord` per
`compaction/start`, in log order, keyed by `compactionId`:

* the summary and end are the first `compaction/summary` / `compaction/end` carrying the same id
  while the attempt is open; the replacement is the checkpoint `user/message` replace whose
  `source.compactionId` names it (v0 source `{kind:"plugin", plugin:"compact"}`, v4
  `{kind:"compact-checkpoint"}`) while it is open. A `session/end-seed` closes every open attempt
  for good: nothing of an earlier process lifecycle can arrive after it (reference: the
  relationship layer resets its bracket state there).
* status: `completed` (an end without `error`), `failed` (an end with `error`), `interrupted`
  (never closed: a crash mid-compaction, or still running at the log tail) or `stale` (never
  closed, and a later `session/end-seed` proves its process ended, so the lock is released).
  `completed` says the bracket closed cleanly; whether a replacement landed is `replacement_seq`
  (the audit checks it).
* trigger: `manual` for a standalone bracket (`turn: null`, with its `command/run`), `overflow` for
  a numbered bracket opened inside an open step (after a context-window-exceeded attempt),
  `pressure` for one opened between steps (the pre-step phase, v0 §5.8 / v4 §5.8).

Prices come from the heuristic token meter (`workbench.core.tokens.heuristic`): the logged
`shadowedTokenCount` must equal the sum of node prices of the shadowed nodes (v0 §6.5, v4 §6.5).
`frame_summary` reproduces the checkpoint framing (reference `frameSummary`, v0 §5.5) so the
framed price and the replacement's content can be checked without the summarizer.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from workbench.core.compaction.framing import (  # noqa: F401 - re-exported
    CHECKPOINT_PREAMBLE, SUMMARY_CLOSE_TAG, SUMMARY_OPEN_TAG, checkpoint_body, frame_summary)
from workbench.core.compaction.eventfacts import CollectingEvents, EventFacts
from workbench.core.compaction.invariant import is_checkpoint_replacement as _is_v0_checkpoint
from workbench.core.compaction.prunes import PruneRecord, prune_record
from workbench.core.requests import iter_attempts
from workbench.core.timeline import SurfaceTimeline
from workbench.core.tokens.heuristic import estimate_message, node_price
from workbench.io.generations import nested_streams, producer_sources, seq_replace_keys
from workbench.io.jsjson import ABSENT, deep_equal
from workbench.io.payloads import seqs_of_type, type_reader

Status = Literal["completed", "failed", "interrupted", "stale"]
TriggerKind = Literal["pressure", "overflow", "manual"]

NOT_SMALLER = re.compile(r"summary is not smaller than the shadowed content "
                         r"\((\d+) estimated framed tokens >= (\d+)\)")
"""The shrink-check failure text of `summarizeCompaction` (v0 §5.4, v4 §5.4)."""


def framed_summary_tokens(summary: Any, *, version: int) -> int:
    """`estimateMessage` of the checkpoint user message framing `summary`."""
    return estimate_message({"role": "user", "content": frame_summary(summary)}, version=version)


def _data(event: Mapping[str, Any]) -> dict:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def replace_range(event: Mapping[str, Any], *, version: int) -> tuple[Any, Any] | None:
    """The (start, end) endpoints of a replace `surfaceOp` (v0 `start`/`end`, v4 `startSeq`/
    `endSeq`), or None for an append or no op."""
    op = event.get("surfaceOp")
    if not isinstance(op, dict):
        return None
    keys = ("startSeq", "endSeq") if seq_replace_keys(version) else ("start", "end")
    return op.get(keys[0]), op.get(keys[1])


def is_checkpoint(event: Mapping[str, Any], *, version: int) -> bool:
    """A compaction checkpoint: a replacing `user/message` whose source marks it as one."""
    if not producer_sources(version):  # v0, v3: {kind: "plugin", plugin: "compact"}
        return _is_v0_checkpoint(event)
    if event.get("type") != "user/message" or not isinstance(event.get("surfaceOp"), dict):
        return False
    source = _data(event).get("source")
    return isinstance(source, dict) and source.get("kind") == "compact-checkpoint"


def _is_replace(event: Mapping[str, Any]) -> bool:
    return isinstance(event.get("surfaceOp"), dict)


@dataclass(frozen=True, slots=True)
class Trigger:
    """What opened an attempt: `turn` is the owner (None for manual); a manual attempt names its
    `command/run` (`command_seq`, `command_id`, `command` such as ``/compact``) when logged."""

    kind: TriggerKind
    turn: Any = None
    command_id: Any = None
    command_seq: int | None = None
    command: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "turn": self.turn, "command_id": self.command_id,
                "command_seq": self.command_seq, "command": self.command}


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """One compaction attempt (see the module doc). Seqs are None when the event is absent;
    `logged_*` fields are what `compaction/summary` says, `span_*` / `fold_*` what the surface
    says: `span_seqs` is the current surface span between the logged range endpoints at the
    summary, `fold_shadowed_seqs` what the replacement actually removed (None when it did not
    land). Token fields are heuristic prices (`*_tokens`)."""

    compaction_id: Any
    owner: Any
    source_command_id: Any          # ABSENT when the start has none
    start_seq: int
    summary_seq: int | None
    replacement_seq: int | None
    end_seq: int | None
    end_seed_seq: int | None        # first session/end-seed after a never-closed start
    status: Status
    error: Any                      # compaction/end.error (ABSENT when none)
    trigger: Trigger
    start_time: Any = None
    end_time: Any = None
    provider: Any = None
    model: Any = None
    max_tokens: Any = None
    usage: Any = None
    summary: Any = None             # logged summary blocks
    logged_range: tuple[Any, Any] | None = None
    logged_shadowed_seqs: tuple[Any, ...] | None = None
    logged_shadowed_tokens: Any = None
    span_seqs: tuple[int, ...] | None = None
    span_tokens: int | None = None
    framed_summary_tokens: int | None = None
    replacement_range: tuple[Any, Any] | None = None
    replacement_sources: tuple[Any, ...] | None = None
    replacement_content_is_framed: bool | None = None
    replacement_tokens: int | None = None
    fold_shadowed_seqs: tuple[int, ...] | None = None
    fold_tokens: int | None = None

    @property
    def duration_ms(self) -> float | None:
        """End time minus start time (None while the attempt is open or times are absent)."""
        if isinstance(self.start_time, (int, float)) and isinstance(self.end_time, (int, float)):
            return self.end_time - self.start_time
        return None

    @property
    def not_smaller(self) -> tuple[int, int] | None:
        """(framed, shadowed) parsed from a shrink-check failure, else None."""
        match = NOT_SMALLER.search(self.error) if isinstance(self.error, str) else None
        return (int(match.group(1)), int(match.group(2))) if match else None

    @property
    def replacement_landed(self) -> bool:
        return self.fold_shadowed_seqs is not None


# -- pass 1: who belongs to which attempt ------------------------------------------------------

@dataclass(slots=True)
class _Open:
    start_seq: int
    compaction_id: Any
    trigger: Trigger
    summary_seq: int | None = None
    replacement_seq: int | None = None
    end_seq: int | None = None
    end_seed_seq: int | None = None


_BOUNDARY = frozenset({"turn/start", "turn/end", "step/end"})


def _scan(events: Sequence[Mapping[str, Any]], version: int, replacements: Set[int],
          marked: Sequence[int] | None = None
          ) -> tuple[list[_Open], list[tuple[int, int | None]]]:
    """Group compaction events into attempts and pair prunes with their replacements.

    Only compaction events, `command/run` and the `replacements` candidates (every seq the fold
    replaced or rejected) are parsed; boundaries are read by type (`workbench.io.payloads.type_reader`).
    `marked` lists the seqs worth looking at when known (`eventfacts.EventFacts.marked`:
    every event this scan acts on), else every seq is."""
    attempts: list[_Open] = []
    open_: list[_Open] = []
    prunes: list[tuple[int, int | None]] = []
    pending_prune: int | None = None
    commands: dict[Any, tuple[int, str]] = {}
    open_step = False
    type_of = type_reader(events)

    def find(cid: Any) -> _Open | None:
        for attempt in reversed(open_):
            if attempt.compaction_id == cid and type(attempt.compaction_id) is type(cid):
                return attempt
        return None

    for seq in range(len(events)) if marked is None else marked:
        kind = type_of(seq)
        if kind in _BOUNDARY:
            open_step = False
        elif kind == "step/start":
            open_step = True
        elif kind == "session/end-seed":
            for attempt in open_:
                attempt.end_seed_seq = seq
            open_.clear()
        elif kind == "command/run":
            data = _data(events[seq])
            args = data.get("args")
            text = f"/{data.get('name')}" + (f" {args}" if isinstance(args, str) and args else "")
            commands[data.get("commandId")] = (seq, text)
        elif kind == "compaction/start":
            data = _data(events[seq])
            owner = data.get("turn")
            if owner is None:
                cid = data.get("sourceCommandId")
                seq_text = commands.get(cid) if isinstance(cid, str) else None
                trigger = Trigger("manual", None, cid, *(seq_text or (None, None)))
            else:
                trigger = Trigger("overflow" if open_step else "pressure", owner)
            attempt = _Open(seq, data.get("compactionId"), trigger)
            attempts.append(attempt)
            open_.append(attempt)
        elif kind == "compaction/summary":
            attempt = find(_data(events[seq]).get("compactionId"))
            if attempt is not None and attempt.summary_seq is None:
                attempt.summary_seq = seq
        elif kind == "compaction/end":
            attempt = find(_data(events[seq]).get("compactionId"))
            if attempt is not None:
                attempt.end_seq = seq
                open_.remove(attempt)
        elif kind == "compaction/prune":
            prunes.append((seq, None))
            pending_prune = len(prunes) - 1
        elif seq in replacements and kind in ("tool/result", "user/message"):
            event = events[seq]
            if kind == "tool/result" and _is_replace(event):
                if pending_prune is not None:
                    prunes[pending_prune] = (prunes[pending_prune][0], seq)
                    pending_prune = None
            elif is_checkpoint(event, version=version):
                source = _data(event).get("source")
                attempt = find(source.get("compactionId") if isinstance(source, dict) else None)
                if attempt is not None and attempt.replacement_seq is None:
                    attempt.replacement_seq = seq
    return attempts, prunes


# -- pass 2: what the surface says --------------------------------------------------------------

def _span(surface: Sequence[int], start: Any, end: Any) -> tuple[int, ...]:
    """The exact surface span between two endpoints ([] when one is missing or they cross),
    as the v4 relationship layer computes it (`assertCurrentSurfaceSpan`)."""
    try:
        i = surface.index(start)
        j = surface.index(end)
    except ValueError:
        return ()
    return tuple(surface[i:j + 1]) if i <= j else ()


def _record(attempt: _Open, events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
            price: Callable[[int], int], version: int) -> CompactionRecord:
    start = events[attempt.start_seq]
    start_data = _data(start)
    fields: dict[str, Any] = {}
    error: Any = ABSENT
    if attempt.end_seq is not None:
        end = events[attempt.end_seq]
        error = _data(end).get("error", ABSENT)
        status: Status = "completed" if error is ABSENT else "failed"
        fields["end_time"] = end.get("time")
    else:
        status = "stale" if attempt.end_seed_seq is not None else "interrupted"
    summary_data: dict = {}
    if attempt.summary_seq is not None:
        summary_data = _data(events[attempt.summary_seq])
        rng = summary_data.get("shadowedRange")
        rng = (rng.get("start"), rng.get("end")) if isinstance(rng, dict) else (None, None)
        seqs = summary_data.get("shadowedSeqs")
        span = _span(timeline.surface_at(attempt.summary_seq - 1), *rng)
        fields.update(
            provider=summary_data.get("provider"), model=summary_data.get("model"),
            max_tokens=summary_data.get("maxTokens"), usage=summary_data.get("usage"),
            summary=summary_data.get("summary"), logged_range=rng,
            logged_shadowed_seqs=tuple(seqs) if isinstance(seqs, list) else None,
            logged_shadowed_tokens=summary_data.get("shadowedTokenCount"),
            span_seqs=span, span_tokens=sum(price(s) for s in span),
            framed_summary_tokens=framed_summary_tokens(summary_data.get("summary"),
                                                        version=version))
    if attempt.replacement_seq is not None:
        replacement = events[attempt.replacement_seq]
        sources = replacement.get("sourceEventSeqs")
        fields.update(
            replacement_range=replace_range(replacement, version=version),
            replacement_sources=tuple(sources) if isinstance(sources, list) else None,
            replacement_tokens=price(attempt.replacement_seq))
        if attempt.summary_seq is not None:
            fields["replacement_content_is_framed"] = deep_equal(
                _data(replacement).get("content"), frame_summary(summary_data.get("summary")))
        landed = timeline.replacement_by_seq.get(attempt.replacement_seq)
        if landed is not None:
            fields.update(fold_shadowed_seqs=landed.shadowed,
                          fold_tokens=sum(price(s) for s in landed.shadowed))
    return CompactionRecord(
        compaction_id=attempt.compaction_id, owner=start_data.get("turn"),
        source_command_id=start_data.get("sourceCommandId", ABSENT),
        start_seq=attempt.start_seq, summary_seq=attempt.summary_seq,
        replacement_seq=attempt.replacement_seq, end_seq=attempt.end_seq,
        end_seed_seq=attempt.end_seed_seq, status=status, error=error, trigger=attempt.trigger,
        start_time=start.get("time"), **fields)


@dataclass(frozen=True, slots=True)
class Compactions:
    """Every compaction attempt and prune of a log, with the timeline they were read against."""

    records: tuple[CompactionRecord, ...]
    prunes: tuple[PruneRecord, ...]
    timeline: SurfaceTimeline
    price: Callable[[int], int]
    facts: EventFacts | None = None
    """What the audit reads, when collected during the fold (`eventfacts`)."""


def price_cache(events: Sequence[Mapping[str, Any]], *, version: int) -> Callable[[int], int]:
    """Heuristic node price by seq, computed once per seq."""
    cache: dict[int, int] = {}

    def price(seq: int) -> int:
        value = cache.get(seq)
        if value is None:
            value = cache[seq] = node_price(events[seq], version=version)
        return value
    return price


def compactions(events: Sequence[Mapping[str, Any]], *, version: int,
                timeline: SurfaceTimeline | None = None,
                price: Callable[[int], int] | None = None,
                facts: EventFacts | None = None) -> Compactions:
    """Reconstruct every compaction attempt and prune of a seq-indexed log (module doc).

    Without `timeline` and `price`, the log is folded through `eventfacts.CollectingEvents`: the one pass also prices every event and collects what the
    audit reads (`Compactions.facts`). A caller with its own pass over the log can collect them
    there instead: `facts = EventFacts.for_log(events, version=...)`, `facts.feed(seq, event)`
    for every event in order, `facts.finish()`, then pass `facts` here."""
    if timeline is None and price is None:
        ride = None
        if seqs_of_type(events, ("compaction/start",)):   # else the audit reads nothing
            facts = EventFacts.for_log(events, version=version)
            if not nested_streams(version):   # v0 attempts need their chunks: a whole pass, this one
                ride = partial(iter_attempts, version=version)
        collecting = CollectingEvents(events, version, facts, ride)
        timeline = SurfaceTimeline(collecting, version=version)
        price = recorded_prices(collecting.prices, events, version)
        if len(collecting.prices) != len(events):   # the fold stopped early: facts incomplete
            facts = None
        elif facts is not None:
            facts.attempts = collecting.ridden()
            facts.finish()
    if timeline is None:
        timeline = SurfaceTimeline(events, version=version)
    if price is None:
        price = price_cache(events, version=version)
    candidates = set(timeline.replacement_by_seq)
    candidates.update(e.seq for e in timeline.errors if isinstance(e.seq, int))
    marked = None
    if facts is not None and facts.complete:
        events, marked = facts.view(), facts.marked   # the scan's events were kept in the pass
    attempts, prunes = _scan(events, version, candidates, marked)
    return Compactions(
        tuple(_record(a, events, timeline, price, version) for a in attempts),
        tuple(prune_record(p, r, events, timeline, price, version) for p, r in prunes),
        timeline, price, facts)


def recorded_prices(prices: Sequence[int], events: Sequence[Mapping[str, Any]],
              version: int) -> Callable[[int], int]:
    """Price by seq: recorded ones by index, any other (an unfinished pass) computed."""
    fallback = price_cache(events, version=version)

    def price(seq: int) -> int:
        return prices[seq] if 0 <= seq < len(prices) else fallback(seq)
    return price

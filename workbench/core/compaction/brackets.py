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

Which events form which attempt is pass 1 (`workbench.core.compaction.grouping.BracketScan`);
the records are pass 2, here. `extend_compactions` continues both for a log that grew: pass 1
from its last seq, pass 2 for the attempts and prunes that were not final.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from workbench.core.compaction.eventfacts import EventFacts
from workbench.core.compaction.framing import (  # noqa: F401 - re-exported
    CHECKPOINT_PREAMBLE,
    SUMMARY_CLOSE_TAG,
    SUMMARY_OPEN_TAG,
    checkpoint_body,
    frame_summary,
)
from workbench.core.compaction.grouping import (  # noqa: F401 - re-exported
    BracketScan,
    Trigger,
    TriggerKind,
    _data,
    _Open,
    is_checkpoint,
    replace_range,
    scan_brackets,
)
from workbench.core.compaction.prunes import PruneRecord, prune_record
from workbench.core.surface_arrays import position_of, surface_array
from workbench.core.timeline import SurfaceTimeline
from workbench.core.tokens.heuristic import estimate_message, node_price
from workbench.io.jsjson import ABSENT
from workbench.io.jsvalues import deep_equal

Status = Literal["completed", "failed", "interrupted", "stale"]

NOT_SMALLER = re.compile(r"summary is not smaller than the shadowed content "
                         r"\((\d+) estimated framed tokens >= (\d+)\)")
"""The shrink-check failure text of `summarizeCompaction` (v0 §5.4, v4 §5.4)."""


def framed_summary_tokens(summary: Any, *, version: int) -> int:
    """`estimateMessage` of the checkpoint user message framing `summary`."""
    return estimate_message({"role": "user", "content": frame_summary(summary)}, version=version)


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

    @property
    def canonical_sources(self) -> list[Any] | None:
        """`[startSeq, summarySeq, ...shadowedSeqs]`, what the checkpoint's `sourceEventSeqs`
        must be (v0 §5.1 step 4, v4 §5.1(b)); None without a summary."""
        if self.summary_seq is None:
            return None
        return [self.start_seq, self.summary_seq, *(self.logged_shadowed_seqs or ())]

    @property
    def replacement_sources_canonical(self) -> bool:
        """Whether the checkpoint cites exactly `canonical_sources`, compared as the logical
        (range-expanded) seqs by value, so `3.0` cites seq 3."""
        expected = self.canonical_sources
        return (expected is not None and self.replacement_sources is not None
                and deep_equal(list(self.replacement_sources), expected))

    @property
    def replacement_adjacent(self) -> bool:
        """Whether the checkpoint is the event right after the summary (v0 §5.1 step 4: pricing
        consumers pair them)."""
        return (self.summary_seq is not None and self.replacement_seq is not None
                and self.replacement_seq == self.summary_seq + 1)


# -- pass 2: what the surface says --------------------------------------------------------------

def _span(surface: np.ndarray, start: Any, end: Any) -> tuple[int, ...]:
    """The exact surface span between two endpoints ([] when one is missing or they cross),
    as the v4 relationship layer computes it (`assertCurrentSurfaceSpan`)."""
    i, j = position_of(surface, start), position_of(surface, end)
    return tuple(surface[i:j + 1].tolist()) if i is not None and j is not None and i <= j else ()


def _record(attempt: _Open, events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
            price: NodePrices, version: int) -> CompactionRecord:
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
        span = _span(surface_array(timeline, attempt.summary_seq - 1), *rng)
        fields.update(
            provider=summary_data.get("provider"), model=summary_data.get("model"),
            max_tokens=summary_data.get("maxTokens"), usage=summary_data.get("usage"),
            summary=summary_data.get("summary"), logged_range=rng,
            logged_shadowed_seqs=tuple(seqs) if isinstance(seqs, list) else None,
            logged_shadowed_tokens=summary_data.get("shadowedTokenCount"),
            span_seqs=span, span_tokens=price.total(span),
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
                          fold_tokens=price.total(landed.shadowed))
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
    price: NodePrices
    facts: EventFacts | None = None
    """What the audit reads, when collected during the fold (`eventfacts`)."""
    scan: BracketScan | None = None
    """Pass 1's state after the last event, when it scanned every seq (`extend_compactions`)."""


class NodePrices:
    """The heuristic node price by seq as the records and the audit read it: `prices(seq)`, and
    `prices.total(seqs)`, the sum over `seqs`. Made of a per-seq price column (`column`: -1 for
    a log-only type, read as 0; `total` is one numpy sum, indexing as `column[seq]` does) or of
    a function of one seq (`each`; `total` adds its values one by one)."""

    __slots__ = ("column", "each")

    def __init__(self, *, column: Any = None, each: Callable[[int], int] | None = None) -> None:
        self.column = None if column is None else np.asarray(column, dtype=np.int64)
        self.each = each

    def __call__(self, seq: int) -> int:
        if self.column is None:
            return self.each(seq)  # type: ignore[misc]
        value = self.column.item(seq)
        return value if value > 0 else 0

    def total(self, seqs: Sequence[int]) -> int:
        column = self.column
        if column is None:
            each = self.each
            return sum(each(s) for s in seqs)  # type: ignore[misc]
        if not len(seqs):
            return 0
        return int(np.maximum(column[np.asarray(seqs, dtype=np.int64)], 0).sum())


def node_prices(price: Callable[[int], int]) -> NodePrices:
    """`price` as `NodePrices` (a function of one seq is wrapped)."""
    return price if type(price) is NodePrices else NodePrices(each=price)


def price_cache(events: Sequence[Mapping[str, Any]], *, version: int) -> NodePrices:
    """Heuristic node price by seq, computed once per seq."""
    cache: dict[int, int] = {}

    def price(seq: int) -> int:
        value = cache.get(seq)
        if value is None:
            value = cache[seq] = node_price(events[seq], version=version)
        return value
    return NodePrices(each=price)


def compactions(events: Sequence[Mapping[str, Any]], *, version: int,
                timeline: SurfaceTimeline | None = None,
                price: Callable[[int], int] | None = None,
                facts: EventFacts | None = None) -> Compactions:
    """Reconstruct every compaction attempt and prune of a seq-indexed log (module doc).

    Without `timeline` and `price`, the log is folded once here (`log_pass.fold_compactions`): the
    one pass also prices every event and collects what the audit reads (`Compactions.facts`). A
    caller with its own pass over the log collects them there (`log_pass.LogPass`, or
    `EventFacts.growing` fed every event in order, then `facts.finish()`) and passes `facts`."""
    if timeline is None and price is None:
        from workbench.core.log_pass import fold_compactions
        return fold_compactions(events, version=version)
    if timeline is None:
        timeline = SurfaceTimeline(events, version=version)
    price = price_cache(events, version=version) if price is None else node_prices(price)
    candidates = set(timeline.replacement_by_seq)
    candidates.update(e.seq for e in timeline.errors if isinstance(e.seq, int))
    marked = None
    if facts is not None and facts.complete:
        events, marked = facts.view(), facts.marked   # the scan's events were kept in the pass
    scan = scan_brackets(events, version, candidates, marked)
    return Compactions(
        tuple(_record(a, events, timeline, price, version) for a in scan.attempts),
        tuple(prune_record(p, r, events, timeline, price, version) for p, r in scan.prunes),
        timeline, price, facts, scan)


def extend_compactions(found: Compactions, events: Sequence[Mapping[str, Any]], *, version: int,
                       timeline: SurfaceTimeline, price: Callable[[int], int],
                       facts: EventFacts | None = None) -> Compactions | None:
    """`found` (of a prefix of `events`) extended by the events appended since: pass 1 goes on
    from its last seq (over `facts.marked` when `facts` were fed every event, else every new
    seq), records of the attempts and prunes that were final are kept, the others are made
    again. Equal to `compactions(events, ...)`. None when `found` cannot be extended (not of a
    prefix of `events`): build it again."""
    scan, price = found.scan, node_prices(price)
    if scan is None or scan.version != version or scan.scanned > len(events):
        return None
    final = {id(a): r for a, r in zip(scan.attempts, found.records)
             if a.end_seq is not None or a.end_seed_seq is not None}
    settled = len(scan.prunes) - (scan.pending_prune is not None)
    scan = scan.copy()   # closed attempts stay the same objects: `final` finds them
    candidates = {s for s in timeline.replacement_by_seq if s >= scan.scanned}
    candidates.update(e.seq for e in timeline.errors if isinstance(e.seq, int) and e.seq >= scan.scanned)
    n = len(events)
    seqs: Sequence[int] = range(scan.scanned, n)
    if facts is not None and facts.complete:
        events, marked = facts.view(), facts.marked   # the scan's events were kept in the pass
        seqs = marked[bisect_left(marked, scan.scanned):]
    else:
        facts = None
    scan.run(events, candidates, seqs)
    scan.scanned = n
    records = tuple(final.get(id(a)) or _record(a, events, timeline, price, version) for a in scan.attempts)
    prunes = found.prunes[:settled] + tuple(
        prune_record(p, r, events, timeline, price, version) for p, r in scan.prunes[settled:])
    return Compactions(records, prunes, timeline, price, facts, scan)

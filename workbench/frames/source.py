"""What frame builders are functions of. Layer: frames (stdlib, numpy, core).

`FrameSource` is the one interface every frame builder (`events`, `surface`, `timeline`,
`compactions`, `calls`, `turns`, `meters`) reads: the loaded log, the one pass's results (the
log index `workbench.core.index.LogIndex`, timeline, usage, attempts), the surface arrays, prices, compactions and audit. `Session`
implements it; builders never import `workbench.session` (`tests/test_layering.py`), so the
dependency points one way: session → builders → this module → core.

`LogPass` is the one pass over a log's events that fills it; `Riding` hands that pass to the
loader so it runs while the log is scanned (parsed once). `SurfaceArrays` turns the timeline
into per-seq numpy arrays.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from workbench.core.compaction.eventfacts import EventFacts
from workbench.core.prefix import Prefix
from workbench.core.requests import Attempt, AttemptCollector
from workbench.core.timeline import APPENDED, REJECTED, REPLACEMENT, SurfaceTimeline, TimelineBuilder
from workbench.core.tokens.usage import USAGE_TYPES, UsageCollector, UsageSample
from workbench.core.index import LogIndex, LogIndexBuilder
from workbench.io.generations import rules_for

if TYPE_CHECKING:
    from workbench.core.compaction.audit import AuditReport
    from workbench.core.compaction.brackets import Compactions
    from workbench.io.model import Log


class FrameSource(Protocol):
    """One analysed log, as the frame builders read it (`Session` is the implementation)."""

    log: Log
    meter_counts: dict[str, np.ndarray]

    @property
    def path(self) -> str: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def version(self) -> int: ...
    @property
    def verdict(self) -> str: ...
    @property
    def has_times(self) -> bool: ...
    @property
    def events(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def defects(self) -> list: ...
    @property
    def index(self) -> LogIndex: ...
    @property
    def timeline(self) -> SurfaceTimeline: ...
    @property
    def surface(self) -> SurfaceArrays: ...
    @property
    def prices(self) -> np.ndarray: ...
    @property
    def usage(self) -> tuple[UsageSample, ...]: ...
    @property
    def attempts(self) -> tuple[Attempt, ...]: ...
    @property
    def compactions(self) -> Compactions: ...
    @property
    def audit(self) -> AuditReport: ...
    def price(self, seq: int) -> int: ...
    def __len__(self) -> int: ...


class LogPass:
    """The one pass a session makes over its events: each event is fed once to the log index
    (`workbench.core.index`), to the compaction audit's facts (`EventFacts`, given the node
    price the index took) and, by type, to the usage and model-call attempt
    collectors; the surface timeline is the load's one fold (`workbench.core.timeline
    .TimelineBuilder`, fed by the loader before this pass: `fold`). `workbench.load` hands
    `Riding.start` to the loader, which feeds every event while it scans the log, so the log is
    parsed once for the load and all of these; `run` makes the same pass, and the fold, over a
    log loaded without it."""

    def __init__(self, events: Sequence[Mapping[str, Any]], *, version: int, spare: bool = False,
                 fold: TimelineBuilder | None = None) -> None:
        self.version = version
        self.indexer = LogIndexBuilder(version=version, spare=spare)
        self.fold = TimelineBuilder(events, version=version) if fold is None else fold
        self.usage = UsageCollector(version=version)
        self.attempts = AttemptCollector(version=version)
        self.facts = EventFacts.growing(events, version=version, texts=False)
        found: list[Attempt] = []
        self._found = found
        index, use, attempt = self.indexer.feed, self.usage.feed, self.attempts.feed
        audited = self.facts.feed
        usage_types, attempt_types = USAGE_TYPES, self.attempts.types
        count = [0]

        def feed(event: Mapping[str, Any]) -> None:
            price = index(event)
            audited(count[0], event, price if price >= 0 else None)
            etype = event.get("type")
            if etype in attempt_types:
                found.extend(attempt(count[0], event))
            if etype in usage_types:
                use(event)
            count[0] += 1
        self.feed = feed

    @classmethod
    def run(cls, events: Sequence[Mapping[str, Any]], *, version: int) -> LogPass:
        """The pass over `events` and their fold, in order through the sequence's own iterator."""
        done = cls(events, version=version)
        feed, fold = done.feed, done.fold.feed
        for event in events:
            fold(event)
            feed(event)
        return done

    @property
    def count(self) -> int:
        return self.indexer.count

    def finish(self, events: Sequence[Mapping[str, Any]], *, has_times: bool) -> Passed:
        """What the pass found so far. Repeatable: a followed log feeds more events afterwards
        (the open model-call attempt is closed on a copy of the collector)."""
        open_attempts = copy.deepcopy(self.attempts).finish()
        return Passed(self.indexer.finish(has_times=has_times), self.fold.finish(events),
                      self.usage.samples(), Prefix(self._found, extra=open_attempts), self.facts)


@dataclass(frozen=True, slots=True)
class Passed:
    """What one `LogPass` found."""

    index: LogIndex
    timeline: SurfaceTimeline
    usage: Sequence[UsageSample]
    attempts: Sequence[Attempt]
    facts: EventFacts | None = None
    """What the compaction audit reads from each event (`core.compaction.eventfacts`, no texts),
    fed during the same pass."""


class Riding:
    """The loader's feeder hook for a `LogPass` (`workbench.core.load.load_log(feeders=)`):
    `start` is called once the header is read, with the format generation, the growing event
    store and the load's fold; `passed` is the pass, or None when the loader never started one."""

    def __init__(self, *, spare: bool = False) -> None:
        self.passed: LogPass | None = None
        self.spare = spare   # a followed log: the index's columns keep room to grow

    def start(self, version: int, events: Sequence[Mapping[str, Any]],
              fold: TimelineBuilder) -> Callable[[Mapping[str, Any]], None]:
        self.passed = LogPass(events, version=rules_for(version), spare=self.spare, fold=fold)
        return self.passed.feed


class SurfaceArrays:
    """Per-seq surface facts from the timeline, as numpy arrays (index = seq).

    `node`: the event joined the surface (append or replacement); `shadowed_by`: the replacing
    seq (-1: never hidden); `replaced`: the event is an applied replacement; `rejected`: the
    fold refused the event; `size`: surface node count after the event; `generation`:
    replacements applied so far; `totals(prices)`: the surface total of any per-seq price array
    after every event (one vectorised pass)."""

    def __init__(self, timeline: SurfaceTimeline, n: int) -> None:
        codes, shadow = timeline.event_codes()
        status = np.zeros(n, dtype=np.uint8)   # LOG_ONLY past the events the fold saw
        status[:len(codes)] = np.frombuffer(codes, dtype=np.uint8)[:n]
        shadowed_by = np.full(n, -1, dtype=np.int64)
        if len(shadow):
            shadowed_by[:len(shadow)] = np.frombuffer(shadow, dtype=np.int64)[:n]
        node = (status == APPENDED) | (status == REPLACEMENT)
        size_delta = node.astype(np.int64)
        self._hidden: list[tuple[int, np.ndarray]] = []
        for rep in timeline.replacements:
            hidden = np.asarray(rep.shadowed, dtype=np.int64)
            size_delta[rep.seq] = 1 - len(hidden)
            self._hidden.append((rep.seq, hidden))
        self.node = node
        self.shadowed_by = shadowed_by
        self.rejected = status == REJECTED
        self.size = np.cumsum(size_delta)
        self.replaced = status == REPLACEMENT
        self.generation = np.cumsum(self.replaced, dtype=np.int64)
        self.final_nodes = timeline.final_nodes

    def totals(self, prices: np.ndarray) -> np.ndarray:
        """Surface total after every event for per-seq node `prices` (>= 0)."""
        delta = np.where(self.node, prices, 0)
        for seq, hidden in self._hidden:
            delta[seq] = prices[seq] - int(prices[hidden].sum())
        return np.cumsum(delta)

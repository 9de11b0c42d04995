"""The one pass over a log's events: every consumer fed once per event. Layer: core.

`LogPass.start` is a `workbench.core.load.Feeder`: the loader feeds it every event once, in seq
order, as it scans the log. Each consumer says what it does per event type
(`workbench.core.steps`); the pass merges their tables into one, so per event it looks the
type up once and runs only what that type needs, after the index's row (type and time, and a
surface op or sources where the event carries them). The consumers are

* the log index (`workbench.core.index_builder.LogIndexBuilder`: its columns, the node price
  among them), the provider usage collector (`core.tokens.usage`) and the model-call attempt
  collector (`core.requests.AttemptCollector`) when `index` is set (what frames and views
  read); without it only the node price (`index_builder.price_steps`), and v0 attempts (the
  audit needs them and they need every chunk in order; v4 attempts are found from the store's
  type index later);
* the compaction audit's facts (`eventfacts.EventFacts`), which keep per seq only what the
  price column and the index do not hold, with the lost-fact probe's text facts of the messages
  before `texts` (0: none, None: every message);
* with `quality`, the compaction-quality node facts (`core.quality.facts.FactReader`: anchors,
  tool calls, answered calls) and the log's schema words; one `compaction.textscan.TextScan`
  reads each message's text for both the probe and the anchors (in batches of new lines:
  `finish` hands the last batch's results over).

The per-seq values live in the index (or, without it, the pass's price column): the facts
read the node price there and, with the index, the open-call deltas from its tool facts.

Beside it runs the load's own fold (the surface timeline's `core.timeline.TimelineBuilder`,
which the loader feeds first and hands to `start`). So a log is parsed once for the load and
everything `workbench.core.analysis.AnalysedLog` computes from it. `run` makes the same pass,
and the fold, over events loaded without it; `finish` is repeatable (a followed log feeds more
events afterwards).

Anchors depend on the schema words of every header: a node read before a header that brought
new tool words is read again at `finish` (by index; in DSH logs the tools are advertised before
the messages, so that is the few messages before the first header).

`fold_compactions(events, version=)` is `brackets.compactions` without a timeline: this pass
over the events, with no index and no quality facts, and the probe texts only of the messages
before the last `compaction/summary` (no later one can be hidden by an attempt).
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.compaction.brackets import (
    Compactions,
    NodePrices,
    compactions,
    price_cache,
)
from workbench.core.compaction.eventfacts import EventFacts
from workbench.core.compaction.textscan import TextScan
from workbench.core.index import LogIndex
from workbench.core.index_builder import LogIndexBuilder, price_steps
from workbench.core.index_columns import GrowColumn, SparseInts
from workbench.core.prefix import Prefix
from workbench.core.quality.facts import FactReader, SchemaWords
from workbench.core.requests import Attempt, AttemptCollector
from workbench.core.steps import Steps, merged
from workbench.core.timeline import SurfaceTimeline, TimelineBuilder
from workbench.core.tokens.usage import UsageCollector, UsageSample
from workbench.io.generations import nested_streams, rules_for
from workbench.io.payloads import seqs_of_type


@dataclass(frozen=True, slots=True)
class Passed:
    """What one `LogPass` found so far. `index`, `usage` and `attempts` are None when the pass
    was made without `index` (v0 attempts are always there); `prices` is the node price by seq
    (-1 for a log-only type: the index's column, or the pass's own array without an index)."""

    count: int
    timeline: SurfaceTimeline
    facts: EventFacts
    prices: Sequence[int]
    index: LogIndex | None = None
    usage: Sequence[UsageSample] | None = None
    attempts: Sequence[Attempt] | None = None
    reader: FactReader | None = None


class LogPass:
    """The one pass over a log (module doc): made with what it feeds, started by the loader."""

    def __init__(self, *, index: bool = True, texts: int | None = 0, quality: bool = False,
                 spare: bool = False) -> None:
        self.wants: dict[str, Any] = {"index": index, "texts": texts, "quality": quality}
        """What the pass feeds (the constructor's arguments but `spare`)."""
        self.index = index
        self.texts = texts
        """Seqs below which the probe's text facts are kept (0: none, None: every message)."""
        self.quality = quality
        self.spare = spare   # a followed log: the index's columns keep room to grow
        self.version = 0
        self.started = False
        self.fold: TimelineBuilder | None = None
        self.facts: EventFacts | None = None
        self.reader: FactReader | None = None
        self._indexer: LogIndexBuilder | None = None
        self._usage: UsageCollector | None = None
        self._collector: AttemptCollector | None = None
        self._found: list[Attempt] = []
        self._fed = [0]
        self._prices = SparseInts("q", -1)   # without the index: the node price by seq
        self._price_column = GrowColumn(np.int64)
        self._schema = SchemaWords()
        self._stale_before = 0

    def start(self, version: int, events: Sequence[Mapping[str, Any]], fold: TimelineBuilder
              ) -> Callable[[Mapping[str, Any]], None]:
        v = self.version = rules_for(version)   # the loader's generation (0, 3 or 4)
        self.fold, self.started = fold, True
        texts = self.texts
        scan = TextScan(probe=texts != 0, anchors=self.quality, batch=True)   # both measures
        facts = self.facts = EventFacts.growing(events, version=v, texts=texts != 0,
                                                texts_before=texts, scan=scan, priced=True,
                                                tool_deltas=self.index)
        tables: list[Steps] = []
        row: Any = None
        if self.index:   # the index's row, and its steps (the node price among them)
            indexer = self._indexer = LogIndexBuilder(version=v, spare=self.spare)
            row = indexer.row
            tables.append(indexer.steps)
        else:
            tables.append(price_steps(self._prices, v))
        tables.append(facts.steps())
        if self.quality:
            reader = self.reader = FactReader(events, frozenset(), scan)
            tables.append({**dict.fromkeys(facts.node_types, reader.feed),
                           "request/header": self._header})
        if self.index or not nested_streams(v):
            collector = self._collector = AttemptCollector(version=v)
            tables.append(collector.steps(self._found))
        if self.index:
            self._usage = UsageCollector(version=v)
            tables.append(self._usage.steps())
        steps, fed = merged(tables), self._fed

        def feed(event: Mapping[str, Any]) -> None:
            seq, etype = fed[0], event.get("type")
            if type(etype) is not str:
                etype = str(etype)
            row(seq, event, etype)
            for step in steps.get(etype, ()):
                step(seq, event)
            fed[0] = seq + 1

        def feed_plain(event: Mapping[str, Any]) -> None:   # no index: no row
            seq, etype = fed[0], event.get("type")
            for step in steps.get(etype if type(etype) is str else str(etype), ()):
                step(seq, event)
            fed[0] = seq + 1
        return feed if row is not None else feed_plain

    @property
    def count(self) -> int:
        """Events fed so far."""
        return self._fed[0]

    def _header(self, seq: int, event: Mapping[str, Any]) -> None:
        schema, reader = self._schema, self.reader
        schema.feed(event)
        words = schema.words
        if reader is not None and words != reader.stop:
            reader.stop = words
            self._stale_before = seq

    @classmethod
    def run(cls, events: Sequence[Mapping[str, Any]], *, version: int,
            fold: TimelineBuilder | None = None, **wants: Any) -> LogPass:
        """The pass (`wants`: as the constructor's) over `events`, and their fold unless `fold`
        (the load's, fed every event already) is given; in order through the sequence's own
        iterator (a lazily parsed store reads ahead in large windows there; `zip` stops at
        `len(events)` first)."""
        done = cls(**wants)
        folding = fold is None
        fold = TimelineBuilder(events, version=version) if fold is None else fold
        fold_, feed = fold.feed, done.start(version, events, fold)
        for _index, event in zip(range(len(events)), events):
            if folding:
                fold_(event)
            feed(event)
        return done

    def finish(self, events: Sequence[Mapping[str, Any]], *, has_times: bool = True) -> Passed:
        """What the pass found so far (module doc). Repeatable: the open model-call attempt is
        closed on a copy of the collector; the facts are marked complete when the pass saw
        every event of `events`."""
        facts, fold = self.facts, self.fold
        assert facts is not None and fold is not None, "the pass was never started"
        facts.scan.flush()
        attempts = None
        collector = self._collector
        if collector is not None:
            attempts = Prefix(self._found, extra=copy.deepcopy(collector).finish())
            if not self.index and facts.attempts is None:   # v0, for the audit (`audit_events`)
                facts.attempts = sorted(attempts, key=lambda a: a.before)
        reader = self.reader
        if reader is not None and self._stale_before:
            stale = [s for s in reader.facts.anchors if s < self._stale_before]
            reader.forget(stale)
            reader.read(stale)
            self._stale_before = 0
        index = None
        if self._indexer is not None:
            index = self._indexer.finish(has_times=has_times)
            prices = index.price
        else:
            column = self._price_column
            if len(column) < self.count or not len(column):
                column.extend(self._prices.dense(self.count))
            prices = column.view()
        facts.finish(self.count, prices=prices, index=index)
        return Passed(self.count, fold.finish(events), facts, prices, index,
                      None if self._usage is None else self._usage.samples(), attempts, reader)


def fold_compactions(events: Sequence[Mapping[str, Any]], *, version: int) -> Compactions:
    """Every compaction attempt and prune of `events`, folded in one direct pass (module doc)."""
    summaries = seqs_of_type(events, ("compaction/summary",))
    done = LogPass.run(events, version=version, index=False,
                       texts=summaries[-1] if summaries else 0)
    if done.count != len(events):   # the iteration stopped early: prices computed when asked
        assert done.fold is not None
        return compactions(events, version=version, timeline=done.fold.finish(events),
                           price=price_cache(events, version=version))
    passed = done.finish(events)
    return compactions(events, version=version, timeline=passed.timeline,
                       price=NodePrices(column=passed.prices), facts=passed.facts)



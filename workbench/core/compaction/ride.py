"""The compaction audit's one pass over a log: riding on the load, or folding once. Layer: core.

`AuditRide.start` is a `workbench.core.load.Feeder`: the loader feeds it every event once, as it
scans the log, and it feeds each one on to

* the node price (`heuristic.node_price`), beside the load's own fold (the surface timeline's
  `workbench.core.timeline.TimelineBuilder`, which the loader feeds and hands to `start`);
* the audit's per-seq facts (`eventfacts.EventFacts`, with the lost-fact probe's text facts of
  every message);
* the compaction-quality node facts (`workbench.core.quality.facts.FactReader`: anchors, tool
  calls, answered calls) and the log's schema words (`quality=False`: left out);
* v0: the model-call attempts (`requests.AttemptCollector`; v4 attempts come from the store's
  type index without a parse).

`finish(log)` turns that into the `brackets.Compactions` the audit and the quality measures read,
so `workbench audit` parses the log once: every message's text is read once, while it is in
hand. Anchors depend on the schema words of every header: a node read before a header that
brought new tool words is read again at the end (by index; in DSH logs the tools are advertised
before the messages, so that is the few messages before the first header).

`fold_compactions(events, version=)` is the same pass run directly over a log that was not
loaded with the ride (`brackets.compactions` without a timeline): one in-order iteration feeds
a `TimelineBuilder` and the ride, with no quality facts, and the probe texts only of the
messages before the last `compaction/summary` (no later one can be hidden by an attempt).
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.core.compaction.brackets import (
    Compactions, compactions, price_cache, recorded_prices)
from workbench.core.compaction.eventfacts import MARKED_TYPES, EventFacts
from workbench.core.quality.facts import FactReader, SchemaWords
from workbench.core.requests import Attempt, AttemptCollector
from workbench.core.timeline import TimelineBuilder
from workbench.core.tokens.heuristic import message_types, node_price
from workbench.io.generations import nested_streams, rules_for
from workbench.io.payloads import seqs_of_type


class AuditRide:
    """The audit's and the quality's facts from the load's own pass (module doc)."""

    def __init__(self, *, quality: bool = True, texts_before: int | None = None) -> None:
        self.quality = quality
        self.texts_before = texts_before
        """Seqs below which the probe's text facts are kept (None: every message)."""
        self.version = 0
        self.fold: TimelineBuilder | None = None
        self.facts: EventFacts | None = None
        self.reader: FactReader | None = None
        self.prices = array("q")
        self.attempts: list[Attempt] | None = None
        self._collector: AttemptCollector | None = None
        self._schema = SchemaWords()
        self._stale_before = 0

    def start(self, version: int, events: Sequence[Mapping[str, Any]], fold: TimelineBuilder
              ) -> Callable[[Mapping[str, Any]], None]:
        v = self.version = version   # the loader's generation (0, 3 or 4)
        self.fold = fold
        texts_before = self.texts_before
        facts = self.facts = EventFacts.growing(events, version=v, texts=texts_before != 0,
                                                texts_before=texts_before)
        reader = self.reader = FactReader(events, frozenset()) if self.quality else None
        prices = self.prices
        collector = None if nested_streams(v) else AttemptCollector(version=v)
        self._collector = collector
        found: list[Attempt] = []
        self.attempts = None if collector is None else found
        attempt_types = frozenset() if collector is None else collector.types
        priced = message_types(v)
        price_ = prices.append
        node, header, mark = facts.node, facts.header, facts.mark
        read = reader.feed if reader is not None else None
        grow = facts._grow
        texts = facts.texts_before

        def feed(event: Mapping[str, Any]) -> None:
            seq = len(prices)
            grow(seq + 1)
            kind = event.get("type") if type(event) is dict else None
            if kind in priced:
                price = node_price(event, version=v)
                price_(price)
                node(seq, event, text=seq < texts, price=price)
                if read is not None:
                    read(seq, event)
            else:
                price_(0)
                if kind == "request/header":
                    header(seq, event)
                    if read is not None:
                        self._header(seq, event)
                elif kind in MARKED_TYPES:
                    mark(seq, event, kind)
            if kind in attempt_types:
                found.extend(collector.feed(seq, event))  # type: ignore[union-attr]
        return feed

    def _header(self, seq: int, event: Mapping[str, Any]) -> None:
        schema, reader = self._schema, self.reader
        schema.feed(event)
        words = schema.words
        if reader is not None and words != reader.stop:
            reader.stop = words
            reader.clear_memo()
            self._stale_before = seq

    def finish(self, log: Any) -> tuple[Compactions, FactReader | None]:
        """The compactions of the loaded `log` (with the audit's facts when the pass saw every
        event; else folded again) and the quality's node facts (None: read them later)."""
        events = log.events
        found = self.compactions(events)
        if found is None:
            return fold_compactions(events, version=rules_for(log.format_version or 0)), None
        reader = self.reader
        if reader is not None:
            stale = [s for s in reader.facts.anchors if s < self._stale_before]
            reader.forget(stale)
            reader.read(stale)
        return found, reader

    def compactions(self, events: Sequence[Mapping[str, Any]]) -> Compactions | None:
        """The compactions of `events` from this pass, with the audit's facts (None: the pass
        did not see every event)."""
        v, fold, facts = self.version, self.fold, self.facts
        if fold is None or facts is None or fold.count != len(events):
            return None
        facts.finish()
        if self._collector is not None:
            found = self.attempts
            found.extend(self._collector.finish())  # type: ignore[union-attr]
            facts.attempts = sorted(found, key=lambda a: a.before)  # type: ignore[union-attr]
        return compactions(events, version=v, timeline=fold.finish(events),
                           price=recorded_prices(self.prices, events, v), facts=facts)


def fold_compactions(events: Sequence[Mapping[str, Any]], *, version: int) -> Compactions:
    """Every compaction attempt and prune of `events`, folded in one direct pass (module doc)."""
    v = version
    summaries = seqs_of_type(events, ("compaction/summary",))
    ride = AuditRide(quality=False, texts_before=summaries[-1] if summaries else 0)
    fold = TimelineBuilder(events, version=v)
    fold_, feed = fold.feed, ride.start(v, events, fold)
    # In order through the sequence's own iterator: a lazily parsed store reads ahead in large
    # windows there (zip stops at `len(events)` first).
    for _index, event in zip(range(len(events)), events):
        fold_(event)
        feed(event)
    found = ride.compactions(events)
    if found is None:   # the iteration stopped early: no facts, prices computed when asked
        return compactions(events, version=v, timeline=fold.finish(events),
                           price=price_cache(events, version=v))
    return found

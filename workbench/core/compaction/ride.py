"""The compaction audit's one pass, riding on the load. Layer: core.

`AuditRide.start` is a `workbench.core.load.Feeder`: the loader feeds it every event once, as it
scans the log, and it feeds each one on to

* the node price (`heuristic.node_price`), beside the load's own fold (the surface timeline's
  `workbench.core.timeline.TimelineBuilder`, which the loader feeds and hands to `start`);
* the audit's per-seq facts (`eventfacts.EventFacts`, with the lost-fact probe's text facts of
  every message);
* the compaction-quality node facts (`workbench.core.quality.facts.FactReader`: anchors, tool
  calls, answered calls) and the log's schema words;
* v0: the model-call attempts (`requests.AttemptCollector`; v4 attempts come from the store's
  type index without a parse).

`finish(log)` turns that into the `brackets.Compactions` the audit and the quality measures read,
so `workbench audit` parses the log once: every message's text is read once, while it is in
hand. Anchors depend on the schema words of every header: a node read before a header that
brought new tool words is read again at the end (by index; in DSH logs the tools are advertised
before the messages, so that is the few messages before the first header).
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.core.compaction.brackets import Compactions, compactions, recorded_prices
from workbench.core.compaction.eventfacts import MARKED_TYPES, EventFacts
from workbench.core.quality.facts import FactReader, SchemaWords
from workbench.core.requests import Attempt, AttemptCollector
from workbench.core.timeline import TimelineBuilder
from workbench.core.tokens.heuristic import message_types, node_price
from workbench.io.generations import nested_streams, rules_for


class AuditRide:
    """The audit's and the quality's facts from the load's own pass (module doc)."""

    def __init__(self) -> None:
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
        v = self.version = rules_for(version)
        self.fold = fold
        facts = self.facts = EventFacts.growing(events, version=v, texts=True)
        reader = self.reader = FactReader(events, frozenset())
        prices = self.prices
        collector = None if nested_streams(v) else AttemptCollector(version=v)
        self._collector = collector
        found: list[Attempt] = []
        self.attempts = None if collector is None else found
        attempt_types = frozenset() if collector is None else collector.types
        priced = message_types(v)
        price_ = prices.append
        node, read, header, mark = facts.node, reader.feed, facts.header, facts.mark
        grow = facts._grow

        def feed(event: Mapping[str, Any]) -> None:
            seq = len(prices)
            grow(seq + 1)
            kind = event.get("type") if type(event) is dict else None
            if kind in priced:
                price = node_price(event, version=v)
                price_(price)
                node(seq, event, text=True, price=price)
                read(seq, event)
            else:
                price_(0)
                if kind == "request/header":
                    header(seq, event)
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
        events, v = log.events, self.version
        fold, facts, reader = self.fold, self.facts, self.reader
        if fold is None or facts is None or reader is None or fold.count != len(events):
            return compactions(events, version=rules_for(log.format_version or 0)), None
        facts.finish()
        if self._collector is not None:
            found = self.attempts
            found.extend(self._collector.finish())  # type: ignore[union-attr]
            facts.attempts = sorted(found, key=lambda a: a.before)  # type: ignore[union-attr]
        stale = [s for s in reader.facts.anchors if s < self._stale_before]
        reader.forget(stale)
        reader.read(stale)
        found_ = compactions(events, version=v, timeline=fold.finish(events),
                             price=recorded_prices(self.prices, events, v), facts=facts)
        return found_, reader

"""Compaction quality, measured offline from the log alone. Layer: core (pure, no pandas).

Modules, one concept each:

* `workbench.core.compaction.anchors` — the anchor extractor and its rules (one table);
* `facts` — the per-node facts every measure reads, in one in-order pass over the log;
* `citation` — per compaction: anchors kept / lost / invented by kind, nested levels, the score;
* `refetch` — tool calls after a compaction that fetch again what it hid;
* `ledger`, `prices` — the net cost of each compaction by meter and in money.

`analyse(events, version=, timeline=, records=)` computes citations and re-fetches once;
`Quality.lifeline(text)` follows any text through the chain of summaries; `Quality.ledger(...)`
prices it all by the meters asked for.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.compaction.anchors import KINDS, Anchor, extract_anchors, states
from workbench.core.quality.citation import (
    AnchorRow,
    Citation,
    citations,
    find_text,
    summary_text,
)
from workbench.core.quality.facts import FactReader, log_schema_words
from workbench.core.quality.ledger import LedgerRow, ledger, session_totals
from workbench.core.quality.prices import DEFAULT_PRICES, PriceTable, price_table
from workbench.core.quality.refetch import Refetch, refetches, windows
from workbench.core.surface_arrays import nodes_seen_at
from workbench.core.timeline import SurfaceTimeline
from workbench.io.payloads import seqs_of_type
from workbench.io.reader import paused_gc

__all__ = ["KINDS", "Anchor", "AnchorRow", "Citation", "DEFAULT_PRICES", "LedgerRow",
           "LifelineStep", "PriceTable", "Quality", "Refetch", "analyse", "node_pricer", "extract_anchors",
           "price_table", "session_totals"]


@dataclass(frozen=True, slots=True)
class LifelineStep:
    """One summary in the replacement chain of a text: the compaction, its checkpoint seq, the
    level (1: the compaction that first hid it) and whether its summary still states it."""

    text: str
    kind: str
    born_seq: int
    compaction_id: Any
    replacement_seq: int
    level: int
    stated: bool


def hidden_sets(records: Sequence[Any]) -> list[tuple[int, ...] | None]:
    """What each attempt hid: the fold's removal, else the span its summary names."""
    return [r.fold_shadowed_seqs if r.fold_shadowed_seqs is not None else r.span_seqs
            for r in records]


@dataclass
class Quality:
    """Citations and re-fetches of every compaction of one log (`analyse`)."""

    events: Sequence[Mapping[str, Any]]
    version: int
    timeline: SurfaceTimeline
    records: Sequence[Any]
    citations: list[Citation]
    refetches: list[Refetch]
    reader: FactReader

    def by_replacement(self) -> dict[int, Citation]:
        return {c.replacement_seq: c for c in self.citations if c.replacement_seq is not None}

    def lifeline(self, text: str, kind: str | None = None) -> list[LifelineStep]:
        """Follow `text` from the first node that carries it through every summary that hid it
        (or a node standing for it) until one no longer states it or it is still on the
        surface. Empty when no node carries it or nothing ever hid it."""
        timeline = self.timeline
        nodes = timeline.appended_through(timeline.end_seq)
        born = find_text(self.events, nodes, text)
        if born is None:
            return []
        kind = kind or next((k for k, t in self.reader.keys([("user", text)]) if t == text),
                            "text")
        checkpoints = self.by_replacement()
        steps: list[LifelineStep] = []
        node, level = born, 1
        while True:
            shadow = timeline.shadowed_by(node)
            if shadow is None:
                return steps
            node = shadow.hidden_at
            citation = checkpoints.get(node)
            if citation is None:        # another replacement (a pruned copy): same level
                continue
            record = self.records[citation.index]
            summary = summary_text(record.summary)
            stated = text in summary if kind == "text" else states(summary, kind, text)
            steps.append(LifelineStep(text, kind, born, citation.compaction_id, node, level,
                                      stated))
            if not stated:
                return steps
            level += 1

    def ledger(self, price: Callable[[str, Sequence[int]], Sequence[int]],
               meters: Sequence[str], prices: Any = None,
               attempts: Sequence[Any] | None = None) -> list[LedgerRow]:
        """The cost ledger (`ledger` module doc) by `meters`, priced by `price(meter, seqs)`;
        `attempts`: the model attempts when known (else found here)."""
        from workbench.core.compaction.audit import _attempt_around, model_requests
        if attempts is None:
            attempts = model_requests(self.events, version=self.version)
        attempts = sorted(attempts, key=lambda a: a.before)
        befores = [a.before for a in attempts]
        around = [_attempt_around(attempts, befores, r) for r in self.records]
        with paused_gc():
            return ledger(self.records, self.timeline, around, self._usage, self.refetches,
                          price, meters, price_table(prices))

    def _usage(self, attempt: Any) -> Any:
        seq = None if attempt is None else (attempt.message_seq or attempt.seq)
        if seq is None:
            return None
        data = self.events[seq].get("data")
        return data.get("usage") if isinstance(data, Mapping) else None


def node_pricer(events: Sequence[Mapping[str, Any]], *, version: int, timeline: SurfaceTimeline,
                prices: np.ndarray) -> Callable[[str, Sequence[int] | np.ndarray], np.ndarray]:
    """`price(meter, seqs)` for the ledger: the pass's DSH node price per seq (`prices`, -1
    log-only: 0) for the heuristic, else each meter's count of every surface node, computed
    once (one in-order pass per meter)."""
    from workbench.core.tokens.meters import get_meter
    counts: dict[str, np.ndarray] = {}

    def price(meter: str, seqs: Sequence[int] | np.ndarray) -> np.ndarray:
        seqs = np.asarray(seqs, dtype=np.int64)
        if meter == "dsh":
            return np.maximum(prices[seqs], 0)
        if meter not in counts:
            nodes = sorted({*timeline.appended_through(timeline.end_seq),
                            *(r.seq for r in timeline.replacements)})
            counts[meter] = np.asarray(get_meter(meter, version=version).count_events(
                events, positions=nodes), dtype=np.int64)
        return counts[meter][seqs]

    return price


def analyse(events: Sequence[Mapping[str, Any]], *, version: int, timeline: SurfaceTimeline,
            records: Sequence[Any], reader: FactReader | None = None) -> Quality:
    """Citation audit and re-fetches of every compaction (one in-order read of the nodes not
    in `reader` yet: a reader fed during the load, `core.log_pass.LogPass(quality=True)`, has
    them).
    The cyclic GC is paused meanwhile, as during the load and the audit: the facts are many
    small acyclic containers, and collections would rescan the whole loaded heap again and
    again (6x the extraction's own time on the bench log)."""
    with paused_gc():
        return _analyse(events, version, timeline, records, reader)


def _analyse(events: Sequence[Mapping[str, Any]], version: int, timeline: SurfaceTimeline,
             records: Sequence[Any], reader: FactReader | None) -> Quality:
    if reader is None:
        reader = FactReader(events, log_schema_words(events,
                                                     seqs_of_type(events, ("request/header",))))
    hidden = hidden_sets(records)
    spans = windows(records, timeline)
    cited = [(record, seqs) for record, seqs in zip(records, hidden)
             if record.summary_seq is not None and seqs]
    wanted = set(nodes_seen_at(timeline, [r.summary_seq - 1 for r, _ in cited]).tolist())
    for _, seqs in cited:
        wanted.update(seqs)
    for _, nodes in spans:
        wanted.update(nodes)
    reader.read(wanted)
    found = citations(records, hidden, timeline, reader)
    return Quality(events, version, timeline, records, found,
                   refetches(records, reader.facts, timeline, spans), reader)

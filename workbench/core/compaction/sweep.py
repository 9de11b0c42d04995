"""What the compaction audit reads from the events, planned and gathered in one pass. Layer: core.

Per attempt the audit looks at the surface around its checkpoint (tool pairing), at what it hid
(originals, lost facts) and at the two model requests around it (cache break). On a 1.3M-event
log with ~1,800 compactions that is a few hundred nodes each, and each one read by index is a
`pread` and a parse (`workbench.io.store`); rebuilding both requests also re-derives and
re-prices every message. Every one of those reads is a pure function of one event
(`eventfacts.EventFacts`), so:

* when the audit folds the log itself (`brackets.compactions`) the facts
  ride on the fold's own pass (`log_pass.fold_compactions`): no other pass;
* otherwise `AuditPlan` lists the seqs the checks need and `AuditFacts.read` reads them once in
  seq order (`workbench.io.payloads.read_events`).

`AuditFacts` then answers the checks: pairing (`cut_balanced`) and the newest tool result
(`newest_result`), each a numpy sum or selection over the whole surface of an attempt, originals,
the lost-fact probe of every attempt (hidden messages' interned facts merged in hidden order)
and the cache break.
The results equal the per-attempt reference computations (`pairing.cut_balanced`,
`probe.lost_probe`, `probe.cache_break`): the audit tests compare them on generated logs.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from workbench.core.compaction.eventfacts import (
    DEVELOPER,
    NO_MESSAGE,
    UNREAD,
    EventFacts,
)
from workbench.core.compaction.pairing import cuts_from_deltas
from workbench.core.compaction.probe import (
    CacheBreak,
    LostProbe,
    message_text,
    probe_distinct,
)
from workbench.core.header import canonical_header
from workbench.core.requests import Attempt
from workbench.core.surface_arrays import surface_array
from workbench.core.timeline import SurfaceTimeline
from workbench.core.tokens.heuristic import estimate_header, estimate_message
from workbench.io.generations import system_node
from workbench.io.jsvalues import deep_equal
from workbench.io.memo import Memo
from workbench.io.payloads import read_events, seqs_of_type, type_reader


def newest_result(nodes: Sequence[Any], events: Sequence[Mapping[str, Any]]) -> Any:
    """The highest seq of a ``tool/result`` among `nodes`, by the events' types (None: none is
    one); `AuditFacts.newest_result` is the same in numpy."""
    type_of = type_reader(events)
    found = [s for s in nodes if type_of(s) == "tool/result"]
    return max(found) if found else None


def _seq_array(nodes: Sequence[Any] | np.ndarray, count: int) -> np.ndarray | None:
    """`nodes` (a surface: the fold's seqs) as an int64 array of seqs of a log of `count`
    events; None when one is not such a seq (nothing but integers makes an integer array)."""
    try:
        seqs = np.asarray(nodes)
    except (TypeError, ValueError, OverflowError):
        return None
    if seqs.dtype.kind != "i" or seqs.ndim != 1 or (
            len(seqs) and (seqs.min() < 0 or seqs.max() >= count)):
        return None if len(seqs) else np.zeros(0, np.int64)
    return seqs


def _listed(nodes: Sequence[Any] | np.ndarray) -> Sequence[Any]:
    """`nodes` for a walk by the rule (Python ints, as the fold hands them out)."""
    return nodes.tolist() if isinstance(nodes, np.ndarray) else nodes


_CONFIG_FIELDS = ("provider", "model", "reasoningEffort", "temperature", "maxTokens", "stop")


@dataclass(frozen=True, slots=True)
class _Probe:
    """One attempt's lost-fact probe: its hidden nodes, as of seq `at`, against `summary`."""

    hidden: tuple[int, ...]
    at: int
    summary: Any


class AuditPlan:
    """The seqs the audit will read from a log of `count` events: surface nodes (a mask: a
    surface per compaction costs no Python work per node) and the hidden nodes to probe."""

    def __init__(self, count: int) -> None:
        self._wanted = np.zeros(count, dtype=bool)
        self.probes: dict[int, _Probe] = {}
        self.texts: set[int] = set()
        self.requests = False

    def surface(self, seqs: Sequence[int] | np.ndarray) -> None:
        """Nodes whose delta, seq and origin the checks read (seqs outside the log: none)."""
        seqs = np.asarray(seqs, dtype=np.int64)
        self._wanted[seqs[(seqs >= 0) & (seqs < len(self._wanted))]] = True

    def request(self, surface: Sequence[int] | np.ndarray) -> None:
        """The surface of a request the cache break rebuilds (its messages and its header)."""
        self.surface(surface)
        self.requests = True

    def probe(self, key: int, hidden: tuple[int, ...], at: int, summary: Any) -> None:
        """Probe the messages of `hidden` as of seq `at` against `summary` (result under `key`)."""
        self.surface(hidden)
        self.texts.update(hidden)
        self.probes[key] = _Probe(hidden, at, summary)

    def nodes(self) -> set[int]:
        """Every planned node."""
        return set(np.flatnonzero(self._wanted).tolist())


def _planned(events: Sequence[Mapping[str, Any]], plan: AuditPlan
             ) -> tuple[set[int], set[int]]:
    headers = set(seqs_of_type(events, ("request/header",))) if plan.requests else set()
    return plan.nodes(), headers


def _feed(facts: EventFacts, plan: AuditPlan, nodes: set[int], headers: set[int],
          price: Callable[[int], int] | None, seq: int, event: Mapping[str, Any]) -> None:
    if seq in headers:
        facts.header(seq, event)
    if seq in nodes:
        facts.node(seq, event, text=seq in plan.texts,
                   price=None if price is None else price(seq))


class AuditFacts:
    """The facts of the planned seqs and the finished probes (module doc)."""

    def __init__(self, timeline: SurfaceTimeline, plan: AuditPlan, facts: EventFacts) -> None:
        self.timeline = timeline
        self.facts = facts
        self.events = facts.events
        self.version = facts.version
        self.delta, self.message = facts.delta, facts.message
        self.headers = facts.headers
        self._envelopes: Memo = Memo(8)
        self._results: np.ndarray | None = None   # per seq: a tool/result (`newest_result`)
        end = timeline.end_seq
        self._projections = timeline.content_generation_at(end) != timeline.replace_generation_at(
            end)
        self._projected = np.fromiter(timeline.projected_nodes(), np.int64)
        self.probes: dict[int, LostProbe] = {
            key: self._probe(job) for key, job in plan.probes.items()}

    @classmethod
    def read(cls, events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
             plan: AuditPlan, *, version: int, price: Callable[[int], int] | None = None,
             facts: EventFacts | None = None) -> AuditFacts:
        """The facts of `plan`: from `facts` when they were collected during the fold (every
        message-type event and header, texts before the last summary), else read now (the
        planned seqs in order). `price` is the node price by seq when known
        (`heuristic.node_price`): a message the node derives as it is prices the same."""
        if facts is None:
            facts = EventFacts(events, version=version, texts=bool(plan.texts))
            nodes, headers = _planned(events, plan)
            for seq, event in read_events(events, nodes | headers):
                _feed(facts, plan, nodes, headers, price, seq, event)
        return cls(timeline, plan, facts)

    def _probe(self, job: _Probe) -> LostProbe:
        """The lost-fact probe of one attempt from the interned facts of its hidden messages
        (`probe.lost_probe` of `timeline.message_at(s, at)` for each hidden `s`)."""
        facts, timeline, count = self.facts, self.timeline, len(self.events)
        lengths: list[int] = []
        ids: list[Sequence[int]] = []
        for seq in job.hidden:
            in_log = 0 <= seq < count
            kept = facts.text_of(seq) if in_log else None
            if kept is None:
                if in_log and self.message[seq] == NO_MESSAGE:
                    shown = timeline.projected_at(seq, job.at) if self._projections else None
                else:
                    shown = timeline.message_at(seq, job.at)
                if shown is None:
                    continue
                text = message_text(shown)
                kept = (len(text), facts.facts_of(text))
            lengths.append(kept[0])
            ids.append(kept[1])
        distinct = facts.distinct
        merged = [distinct[i] for i in dict.fromkeys(chain.from_iterable(ids))]
        return probe_distinct(merged, sum(lengths) + max(len(lengths) - 1, 0), job.summary)

    # -- pairing and originals -----------------------------------------------------------------

    def misplaced(self, seq: int) -> bool:
        """Whether the event at `seq` (in the log) carries another seq."""
        self.facts.ensure(seq)
        return seq in self.facts.misplaced

    def rewritten(self, seq: int) -> bool:
        """Whether the event at `seq` is a transcript event that is not append-origin."""
        self.facts.ensure(seq)
        return seq in self.facts.rewritten

    def cut_balanced(self, nodes: Sequence[int] | np.ndarray) -> Sequence[bool]:
        """`pairing.cut_balanced(nodes, events)` from the recorded deltas: one cumulative sum
        over the surface in numpy (an audit makes one per compaction, of the whole surface:
        pass it as an int64 array, and get a bool array); a surface the rule refuses is walked
        again by `pairing.cuts_from_deltas`, which names its first bad node."""
        count = len(self.events)
        delta, message, facts = self.delta, self.message, self.facts
        misplaced = facts.misplaced

        def node_delta(seq: Any) -> int | None:
            if not (isinstance(seq, int) and 0 <= seq < count):
                return None
            if message[seq] == UNREAD:
                facts.ensure(seq)
            return None if seq in misplaced else delta[seq]
        seqs = _seq_array(nodes, count)
        if seqs is None:
            return cuts_from_deltas(_listed(nodes), node_delta)
        for seq in seqs[np.frombuffer(message, dtype=np.int32)[seqs] == UNREAD].tolist():
            facts.ensure(seq)
        if misplaced and np.isin(seqs, np.fromiter(misplaced, np.int64, len(misplaced))).any():
            return cuts_from_deltas(_listed(nodes), node_delta)
        open_calls = np.cumsum(np.frombuffer(delta, dtype=np.int32)[seqs], dtype=np.int64)
        if len(open_calls) and open_calls.min() < 0:
            return cuts_from_deltas(_listed(nodes), node_delta)
        return np.concatenate((np.ones(1, dtype=bool), open_calls == 0))

    def newest_result(self, nodes: Sequence[int] | np.ndarray) -> int | None:
        """The highest seq of a ``tool/result`` among `nodes` (None: none is one)."""
        if self._results is None:
            results = np.zeros(len(self.events), dtype=bool)
            results[seqs_of_type(self.events, ("tool/result",))] = True
            self._results = results
        seqs = _seq_array(nodes, len(self.events))
        if seqs is None:
            return newest_result(_listed(nodes), self.events)
        found = seqs[self._results[seqs]]
        return int(found.max()) if len(found) else None

    # -- requests ------------------------------------------------------------------------------

    def _messages(self, at: int) -> tuple[np.ndarray, np.ndarray, dict[int, Any]]:
        """The request history after `at`: its nodes and their prices (int64 arrays) and the
        `image/offload` projection in force of each projected one (by node)."""
        surface = surface_array(self.timeline, at)
        message = np.frombuffer(self.message, dtype=np.int32)
        for node in surface[message[surface] == UNREAD].tolist():
            self.facts.ensure(node)
        prices = message[surface].astype(np.int64)
        shown: dict[int, Any] = {}
        if self._projections:
            for i in np.flatnonzero(np.isin(surface, self._projected)).tolist():
                node = int(surface[i])
                projected = self.timeline.projected_at(node, at)
                if projected is not None:
                    shown[node] = projected
                    prices[i] = _price(projected, self.version)
        kept = prices >= 0
        return surface[kept], prices[kept], shown

    def _envelope(self, before: int) -> tuple[dict[str, Any], int, int | None]:
        """The request fields of the latest canonical header before seq `before`, their
        envelope price and the header's seq (`requests.rebuild_request`, §7.2)."""
        i = bisect_left(self.headers, before)
        seq = self.headers[i - 1] if i > 0 else None
        cached = self._envelopes.get(seq)
        if cached is None:
            request: dict[str, Any] = {}
            if seq is not None:
                data = self.events[seq].get("data")
                header = canonical_header(data.get("header"), version=self.version) or {}
                config = header.get("config")
                if isinstance(config, dict):
                    for key in _CONFIG_FIELDS:
                        if key in config:
                            request[key] = config[key]
                if not system_node(self.version) and "system" in header:
                    request["system"] = header["system"]
                if "tools" in header:
                    request["tools"] = header["tools"]
            tools = {k: request[k] for k in ("system", "tools") if k in request}
            cached = self._envelopes.remember(
                seq, (request, estimate_header(tools, version=self.version)))
        return cached[0], cached[1], seq

    def _shown(self, node: int, shown: Mapping[int, Any], at: int) -> Any:
        projected = shown.get(node)
        return projected if projected is not None else self.timeline.message_at(node, at)

    def cache_break(self, before: Attempt, after: Attempt) -> CacheBreak:
        """`probe.cache_break` from the recorded prices: equal nodes (with the same projection)
        are equal messages; different ones are compared in full, from the first one on."""
        a_at, b_at = before.before - 1, after.before - 1
        nodes_a, prices_a, shown_a = self._messages(a_at)
        nodes_b, prices_b, shown_b = self._messages(b_at)
        limit = min(len(nodes_a), len(nodes_b))
        differs = nodes_a[:limit] != nodes_b[:limit]
        moved = [n for n in set(shown_a) | set(shown_b) if shown_a.get(n) is not shown_b.get(n)]
        if moved:   # an equal node shown differently is compared in full too
            differs |= np.isin(nodes_a[:limit], np.array(moved, dtype=np.int64))
        position = limit
        for i in np.flatnonzero(differs).tolist():
            if not deep_equal(self._shown(int(nodes_a[i]), shown_a, a_at),
                              self._shown(int(nodes_b[i]), shown_b, b_at)):
                position = i
                break
        envelope_a, tokens_a, header_a = self._envelope(before.before)
        envelope_b, tokens_b, header_b = self._envelope(after.before)
        changed = header_a != header_b and not deep_equal(envelope_a, envelope_b)
        prefix = 0 if changed else tokens_a + int(prices_a[:position].sum())
        return CacheBreak(before.seq, after.seq, len(nodes_a), len(nodes_b), changed,
                          0 if changed else position, prefix, tokens_a + int(prices_a.sum()),
                          tokens_b + int(prices_b.sum()))


def _price(message: Any, version: int) -> int:
    """The price a request counts for `message` (`NO_MESSAGE`, `DEVELOPER` when it drops it)."""
    if message is None:
        return NO_MESSAGE
    if isinstance(message, dict) and message.get("role") == "developer":
        return DEVELOPER
    return estimate_message(message, version=version)

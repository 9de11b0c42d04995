"""What the compaction audit reads from the events, gathered in one in-order pass. Layer: core.

Per attempt the audit looks at the surface around its checkpoint (tool pairing), at what it hid
(originals, lost facts) and at the two model requests around it (cache break). On a 1.3M-event
log with ~1,800 compactions that is a few hundred nodes each, and each one read by index is a
`pread` and a parse (`workbench.io.store`); rebuilding both requests also refolds nothing but
re-derives and re-prices every message. Every one of those reads is a pure function of one
event, so the audit first plans the seqs it needs (`AuditPlan`), then `sweep` reads them once in
seq order (`sparse.read_in_order`: the store's read-ahead iterator, or by index when few) and
keeps per seq only small numbers:

* `delta` — the node's change of open tool calls (`pairing.event_delta`);
* `message` — the price (`estimate_message`) of the message the node derives before any v4
  `image/offload` projection, `NO_MESSAGE` when it derives none, `DEVELOPER` for a
  developer-role message (requests drop those, `requests.rebuild_request`);
* `misplaced` — events whose `seq` field is not their index; `rewritten` — transcript events
  that are not append-origin (v0 §4.9);
* the `request/header` events with a canonical header (the envelope of a request, v0/v4 §7.2);
* the lost-fact probe of every attempt (`probe.probe_facts`): each hidden message's facts are
  extracted when its event is read and merged in hidden order as soon as the attempt's last
  hidden node has been read, so memory follows the open attempts, not the log.

The results equal the per-attempt reference computations (`pairing.cut_balanced`,
`probe.lost_probe`, `probe.cache_break`): the audit tests compare them on a generated log.
"""
from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.compaction.pairing import ToolPairingError, event_delta
from workbench.core.compaction.probe import (
    CacheBreak, LineFacts, LostProbe, message_text, probe_facts)
from workbench.core.compaction.sparse import read_in_order, seqs_of_type
from workbench.core.header import canonical_header
from workbench.core.projection import derive_message
from workbench.core.requests import Attempt
from workbench.core.timeline import SurfaceTimeline
from workbench.core.tokens.heuristic import derive_message as node_message
from workbench.core.tokens.heuristic import estimate_header, estimate_message
from workbench.io.jsjson import deep_equal

NO_MESSAGE, DEVELOPER, UNREAD = -1, -2, -3
_TRANSCRIPT_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_CONFIG_FIELDS = ("provider", "model", "reasoningEffort", "temperature", "maxTokens", "stop")


@dataclass(slots=True)
class _Probe:
    """One attempt's lost-fact probe while its hidden nodes are being read."""

    hidden: tuple[int, ...]
    at: int
    summary: Any
    parts: list[tuple[int, list[tuple[str, str]]] | None]
    pending: int


@dataclass(slots=True)
class AuditPlan:
    """The seqs the audit will read: surface nodes and the hidden nodes to probe."""

    nodes: set[int] = field(default_factory=set)
    probes: dict[int, _Probe] = field(default_factory=dict)
    requests: bool = False

    def surface(self, seqs: Iterable[int]) -> None:
        """Nodes whose delta, seq and origin the checks read."""
        self.nodes.update(seqs)

    def request(self, surface: Iterable[int]) -> None:
        """The surface of a request the cache break rebuilds (its messages and its header)."""
        self.nodes.update(surface)
        self.requests = True

    def probe(self, key: int, hidden: tuple[int, ...], at: int, summary: Any) -> None:
        """Probe the messages of `hidden` as of seq `at` against `summary` (result under `key`)."""
        self.nodes.update(hidden)
        self.probes[key] = _Probe(hidden, at, summary, [None] * len(hidden), len(hidden))


class AuditFacts:
    """Per-seq facts of the planned nodes and the finished probes (module doc)."""

    def __init__(self, events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
                 plan: AuditPlan, *, version: int, price: Callable[[int], int] | None = None
                 ) -> None:
        self.events = events
        self._node_price = price
        self._facts = LineFacts()
        self.timeline = timeline
        self.version = version
        n = len(events)
        self.delta = array("q", bytes(8 * n)) if plan.nodes else array("q")
        self.message = array("q", [UNREAD]) * n if plan.nodes else array("q")
        self.misplaced: set[int] = set()
        self.rewritten: set[int] = set()
        self.headers: list[int] = []
        self.probes: dict[int, LostProbe] = {}
        self._envelopes: dict[int | None, tuple[dict[str, Any], int]] = {}
        end = timeline.end_seq
        self._projections = timeline.content_generation_at(end) != timeline.replace_generation_at(
            end)
        self._plan = plan
        self._nodes = {s for s in plan.nodes if 0 <= s < n}
        self._header_seqs = (set(seqs_of_type(events, ("request/header",))) if plan.requests
                             else set())
        self._wanted: dict[int, list[tuple[int, int]]] = {}
        for key, job in plan.probes.items():
            for position, seq in enumerate(job.hidden):
                self._wanted.setdefault(seq, []).append((key, position))
            if job.pending == 0:
                self._finish(key, job)

    @classmethod
    def read(cls, events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
             plan: AuditPlan, *, version: int, price: Callable[[int], int] | None = None
             ) -> AuditFacts:
        """Read the planned seqs (in order, `sparse.read_in_order`) and return the facts.
        `price` is the node price by seq when known (`heuristic.node_price`): a message the
        node derives as it is prices the same, so it is not priced again."""
        facts = cls(events, timeline, plan, version=version, price=price)
        visit = facts._visit
        for seq, event in read_in_order(events, sorted(facts._nodes | facts._header_seqs)):
            visit(seq, event)
        facts._close()
        return facts

    def stream(self) -> Iterator[Mapping[str, Any]]:
        """Every event in order, visiting the planned ones on the way: another pass that needs
        the whole log (v0 model attempts) rides on this one. Exhaust it before using the facts."""
        visit, planned = self._visit, self._nodes | self._header_seqs
        for seq, event in enumerate(self.events):
            if seq in planned:
                visit(seq, event)
            yield event
        self._close()

    # -- the pass ------------------------------------------------------------------------------

    def _visit(self, seq: int, event: Mapping[str, Any]) -> None:
        version = self.version
        if seq in self._header_seqs:
            data = event.get("data")
            if isinstance(data, dict) and canonical_header(data.get("header"),
                                                           version=version) is not None:
                self.headers.append(seq)
            if seq not in self._nodes:
                return
        if event.get("seq") != seq:
            self.misplaced.add(seq)
        kind = event.get("type")
        if kind in _TRANSCRIPT_TYPES:
            if event.get("surfaceOp") != "append":
                self.rewritten.add(seq)
            if kind == "tool/result":
                self.delta[seq] = -1
            elif kind == "assistant/message":
                self.delta[seq] = event_delta(event)
        derived = derive_message(event, version=version)
        if derived is None:
            self.message[seq] = NO_MESSAGE
        elif isinstance(derived, dict) and derived.get("role") == "developer":
            self.message[seq] = DEVELOPER
        elif self._node_price is not None and node_message(event, version=version) is derived:
            self.message[seq] = self._node_price(seq)   # node_price prices that very message
        else:
            self.message[seq] = estimate_message(derived, version=version)
        wanted = self._wanted.get(seq)
        if wanted is None:
            return
        # An `image/offload` projection only marks image blocks (v4 §4.8) and the text probe
        # reads no image, so the projected message has the text of the derived one.
        text = None if derived is None else message_text(derived)
        facts = None if text is None else (len(text), self._facts(text))
        for key, position in wanted:
            job = self._plan.probes[key]
            shown = derived
            if derived is None and self._projections:
                shown = self.timeline.projected_at(seq, job.at)
            if shown is not None:
                job.parts[position] = facts if shown is derived else (
                    len(message_text(shown)), self._facts(message_text(shown)))
            job.pending -= 1
            if job.pending == 0:
                self._finish(key, job)

    def _close(self) -> None:
        for key, job in self._plan.probes.items():   # hidden seqs outside the log: what was read
            if key not in self.probes:
                self._finish(key, job)
        self._wanted = {}

    def _finish(self, key: int, job: _Probe) -> None:
        self.probes[key] = probe_facts((p for p in job.parts if p is not None), job.summary)
        job.parts = []

    # -- pairing and originals -----------------------------------------------------------------

    def cut_balanced(self, nodes: Sequence[int]) -> tuple[bool, ...]:
        """`pairing.cut_balanced(nodes, events)` from the recorded deltas."""
        out = [True]
        open_calls = 0
        count = len(self.events)
        delta, message, misplaced = self.delta, self.message, self.misplaced
        for seq in nodes:
            if not (isinstance(seq, int) and 0 <= seq < count) or seq in misplaced:
                msg = (f"tool-pairing balance: surface seq {seq} has no matching session event "
                       "(corrupt surface)")
                raise ToolPairingError(seq, msg)
            if message[seq] == UNREAD:
                raise LookupError(f"seq {seq} was not planned")
            open_calls += delta[seq]
            if open_calls < 0:
                msg = (f"tool-pairing balance: tool/result at surface seq {seq} has no matching "
                       "tool-call (corrupt surface)")
                raise ToolPairingError(seq, msg)
            out.append(open_calls == 0)
        return tuple(out)

    # -- requests ------------------------------------------------------------------------------

    def _messages(self, at: int) -> tuple[list[int], list[Any], list[int]]:
        """The request history after `at` as (nodes, projections or None, prices)."""
        surface = self.timeline.surface_at(at)
        message = self.message
        if not self._projections:
            kept = [s for s in surface if message[s] >= 0]
            if len(kept) == len(surface) or UNREAD not in {message[s] for s in surface}:
                return kept, [None] * len(kept), [message[s] for s in kept]
        nodes: list[int] = []
        shown: list[Any] = []
        prices: list[int] = []
        for node in surface:
            projected = self.timeline.projected_at(node, at) if self._projections else None
            if projected is None and message[node] == UNREAD:
                projected = self.timeline.message_at(node, at)
                if projected is None:
                    continue
            price = message[node] if projected is None else _price(projected, self.version)
            if price < 0:
                continue
            nodes.append(node)
            shown.append(projected)
            prices.append(price)
        return nodes, shown, prices

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
                if self.version < 4 and "system" in header:
                    request["system"] = header["system"]
                if "tools" in header:
                    request["tools"] = header["tools"]
            tools = {k: request[k] for k in ("system", "tools") if k in request}
            cached = (request, estimate_header(tools, version=self.version))
            if len(self._envelopes) >= 8:
                self._envelopes.clear()
            self._envelopes[seq] = cached
        return cached[0], cached[1], seq

    def _shown(self, node: int, projected: Any, at: int) -> Any:
        return projected if projected is not None else self.timeline.message_at(node, at)

    def cache_break(self, before: Attempt, after: Attempt) -> CacheBreak:
        """`probe.cache_break` from the recorded prices: equal nodes (with the same projection)
        are equal messages; different ones are compared in full."""
        a_at, b_at = before.before - 1, after.before - 1
        nodes_a, shown_a, prices_a = self._messages(a_at)
        nodes_b, shown_b, prices_b = self._messages(b_at)
        position = 0
        limit = min(len(nodes_a), len(nodes_b))
        while position < limit:
            na, nb = nodes_a[position], nodes_b[position]
            pa, pb = shown_a[position], shown_b[position]
            if not (na == nb and pa is pb) and not deep_equal(
                    self._shown(na, pa, a_at), self._shown(nb, pb, b_at)):
                break
            position += 1
        envelope_a, tokens_a, header_a = self._envelope(before.before)
        envelope_b, tokens_b, header_b = self._envelope(after.before)
        changed = header_a != header_b and not deep_equal(envelope_a, envelope_b)
        prefix = 0 if changed else tokens_a + sum(prices_a[:position])
        return CacheBreak(before.seq, after.seq, len(nodes_a), len(nodes_b), changed,
                          0 if changed else position, prefix, tokens_a + sum(prices_a),
                          tokens_b + sum(prices_b))


def _price(message: Any, version: int) -> int:
    """The price a request counts for `message` (`NO_MESSAGE`, `DEVELOPER` when it drops it)."""
    if message is None:
        return NO_MESSAGE
    if isinstance(message, dict) and message.get("role") == "developer":
        return DEVELOPER
    return estimate_message(message, version=version)

"""Per-seq facts of the events the compaction audit reads, collected in seq order. Layer: core.

The audit (`workbench.core.compaction.audit`) checks each attempt against the surface around its
checkpoint, the nodes it hid and the two model requests around it. Everything it needs from an
event is a small pure function of that one event, so an `EventFacts` is fed events in seq order
(during the log's one pass, `core.log_pass.LogPass`, or in a pass over the planned seqs,
`sweep.AuditFacts`) and keeps only:

* `delta[seq]` — the node's change of open tool calls (`pairing.event_delta`);
* `message[seq]` — the price (`estimate_message`) of the message the event derives before any v4
  `image/offload` projection; `NO_MESSAGE` when it derives none, `DEVELOPER` for a
  developer-role message (requests drop those, `requests.rebuild_request`), `UNREAD` for an event
  not fed (readers fall back to reading it);
* `misplaced` — events whose `seq` field is not their index; `rewritten` — transcript events
  that are not append-origin (v0 §4.9);
* `headers` — the `request/header` seqs with a canonical header (a request's envelope, §7.2);
* the lost-probe facts of a message (`probe.text_facts`, read by `textscan.TextScan`: each
  distinct fact once, in order of first appearance) and its text length, for the events fed
  with `text=True`. Facts are interned (one string per distinct fact, a 4-byte id per
  occurrence): a 1.3M-event log keeps a few arrays and its distinct facts, never its texts;
* `marked` / `kept` — when every event is fed (`feed`, `finish`): the seqs of the events the
  bracket scan and the v0 invariant act on (`MARKED_TYPES`, and replacing user messages and tool
  results) and those of them that are parsed (`kept_types`: the bracket scan reads the turn and
  step boundaries and end-seeds by type; only the v0 invariant, not run on nested-stream
  formats, reads turn boundaries and end-seeds), so neither reads the log again; `attempts` — the
  model attempts when the same pass found them (v0, `core.log_pass.LogPass`).

Per-seq values live where the pass already holds them: a fed event keeps only what it has (a
message value, a non-zero delta, a text), by seq, and `message` / `delta` are made dense when
first read. In the log's pass the message price is the pass's node price column (`priced`: a
node whose message is the one `heuristic.node_price` priced keeps nothing) and, with the log
index, the delta is read from the index's tool facts (`tool_deltas`: one advertised call per
`tool-call` block, -1 per `tool/result`, the rule of `pairing.event_delta`).

An `image/offload` projection only marks image blocks `offloaded` (v4 §4.8) and the probe reads no
image, so a projected message has the facts of the message it projects.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from workbench.core.compaction.pairing import event_delta
from workbench.core.compaction.textscan import TextScan
from workbench.core.header import canonical_header
from workbench.core.projection import derive_message
from workbench.core.tokens.heuristic import (
    estimate_message,
    message_types,
    slot_message,
)
from workbench.io.generations import nested_streams
from workbench.io.payloads import Overlay

NO_MESSAGE, DEVELOPER, UNREAD = -1, -2, -3
_TRANSCRIPT_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
MARKED_TYPES = frozenset({"compaction/start", "compaction/summary", "compaction/end",
                          "compaction/prune", "command/run", "session/end-seed", "turn/start",
                          "turn/end", "step/start", "step/end"})
"""Events the bracket scan and the v0 invariant act on (`brackets._scan`,
`invariant.check_compaction_invariant`); with every rewriting (not append-origin) user message
and tool result they are `marked`; the events of `kept_types` are `kept`."""
_SCANNED_TYPES = frozenset({"compaction/start", "compaction/summary", "compaction/end",
                            "compaction/prune", "command/run"})
"""`MARKED_TYPES` the bracket scan parses (it reads the others by type)."""


def kept_types(version: int) -> frozenset[str]:
    """The `MARKED_TYPES` whose events `EventFacts.kept` holds: what the bracket scan parses,
    and for the v0 invariant (formats without nested streams) the turn boundaries and
    end-seeds it reads."""
    if nested_streams(version):
        return _SCANNED_TYPES
    return _SCANNED_TYPES | {"turn/start", "turn/end", "session/end-seed"}


class EventFacts:
    """What the audit reads from each fed event (module doc)."""

    def __init__(self, events: Sequence[Mapping[str, Any]], *, version: int,
                 texts: bool = True, texts_before: int = 0, size: int | None = None,
                 scan: TextScan | None = None, priced: bool = False, tool_deltas: bool = False
                 ) -> None:
        self.events = events
        self.version = version
        self.texts_before = texts_before
        self.count = len(events) if size is None else size
        """Events the per-seq reads cover (set by `finish` for a growing pass)."""
        self.priced = priced
        """The price column `finish` is given holds every fed node's `heuristic.node_price`:
        a node whose message is the one that price priced keeps no value of its own."""
        self.tool_deltas = tool_deltas
        """The deltas are read from the index `finish` is given (its tool facts and types)."""
        self._rows, self._values = array("q"), array("i")          # message values by seq
        self._delta_rows, self._deltas = array("q"), array("i")    # non-zero deltas by seq
        self._prices: Any = None
        self._index: Any = None
        self._message: array | None = None   # the dense forms, made when first read
        self._delta: array | None = None
        self._steps: dict[str, Callable[[int, Mapping[str, Any]], None]] | None = None
        self.misplaced: set[int] = set()
        self.rewritten: set[int] = set()
        self.headers: list[int] = []
        self.node_types = message_types(version)
        self.texts = texts
        self._text_seq, self._text_chars = array("q"), array("i")
        self._text_start, self._text_end = array("q"), array("q")
        self._text_rows: array | None = None
        self._ids = array("I")
        self.scan = TextScan(anchors=False) if scan is None else scan
        """Reads the probe's facts (shared with the quality's `FactReader` in one pass)."""
        self.attempts: list[Any] | None = None
        """Model attempts found during the same pass (`core.log_pass.LogPass`, v0), if any."""
        self.marked = array("q")
        """Ascending seqs (int64 array: 8 bytes a seq, no int object per seq)."""
        self.kept: dict[int, Mapping[str, Any]] = {}
        self._kept_types = kept_types(version)
        self.complete = False
        """Whether every event of the log was fed (`feed`), so `marked` and `kept` are whole."""

    @classmethod
    def growing(cls, events: Sequence[Mapping[str, Any]], *, version: int,
                texts: bool, texts_before: int | None = None, scan: TextScan | None = None,
                priced: bool = False, tool_deltas: bool = False) -> EventFacts:
        """Facts fed in one in-order pass (`core.log_pass.LogPass`, or `feed`):
        `events` is the log or the store as it grows, each event is fed once in seq order;
        `texts` keeps the probe facts of the messages before seq `texts_before` (None: of
        every message), read by `scan`; `priced`, `tool_deltas`: what `finish` is given."""
        before = (1 << 62 if texts_before is None else texts_before) if texts else 0
        return cls(events, version=version, texts=texts, texts_before=before, size=0, scan=scan,
                   priced=priced, tool_deltas=tool_deltas)

    # -- feeding -------------------------------------------------------------------------------

    def steps(self) -> dict[str, Callable[[int, Mapping[str, Any]], None]]:
        """The step of each type the facts read (`workbench.core.steps`), for an in-order pass
        over every event (see `growing`)."""
        node, before = self.node, self.texts_before
        marked_, kept, kept_types_ = self.marked.append, self.kept, self._kept_types

        def node_step(seq: int, event: Mapping[str, Any]) -> None:
            node(seq, event, text=seq < before)

        def mark(seq: int, event: Mapping[str, Any]) -> None:
            marked_(seq)

        def keep(seq: int, event: Mapping[str, Any]) -> None:
            marked_(seq)
            kept[seq] = event
        table: dict[str, Callable[[int, Mapping[str, Any]], None]] = dict.fromkeys(
            self.node_types, node_step)
        table["request/header"] = self.header
        table.update({kind: keep if kind in kept_types_ else mark for kind in MARKED_TYPES})
        return table

    def feed(self, seq: int, event: Mapping[str, Any]) -> None:
        """The event at `seq` of an in-order pass over the whole log (see `growing`)."""
        if self._steps is None:
            self._steps = self.steps()
        etype = event.get("type")
        step = self._steps.get(etype) if type(etype) is str else None
        if step is not None:
            step(seq, event)
        self.count = max(self.count, seq + 1)

    def finish(self, count: int | None = None, *, prices: Any = None, index: Any = None) -> None:
        """Every event of the log has been fed, in order (`count` of them: the pass's count;
        None: as `feed` counted); `prices` is the pass's node price column (with `priced`),
        `index` its `LogIndex` (with `tool_deltas`)."""
        if count is not None:
            self.count = count
        self._prices, self._index = prices, index
        self._message = self._delta = None
        self.complete = self.count == len(self.events)

    def header(self, seq: int, event: Mapping[str, Any]) -> None:
        """A `request/header` event (call in seq order)."""
        data = event.get("data")
        if isinstance(data, dict) and canonical_header(data.get("header"),
                                                       version=self.version) is not None:
            self.headers.append(seq)

    def node(self, seq: int, event: Mapping[str, Any], *, text: bool = False,
             price: int | None = None) -> None:
        """An event that is (or may be) a surface node; `text` keeps its probe facts; `price`
        is its `heuristic.node_price` when known (with `priced`: the price column's), so the
        message it prices is not priced again."""
        version = self.version
        if event.get("seq") != seq:
            self.misplaced.add(seq)
        kind = event.get("type")
        if kind in _TRANSCRIPT_TYPES:
            if event.get("surfaceOp") != "append":
                self.rewritten.add(seq)
                if kind != "assistant/message" and "surfaceOp" in event:
                    self.marked.append(seq)   # a replacement (checkpoint, pruned copy)
                    self.kept[seq] = event
            if not self.tool_deltas:
                delta = -1 if kind == "tool/result" else (
                    event_delta(event) if kind == "assistant/message" else 0)
                if delta:
                    self._put(self._delta_rows, self._deltas, self._delta, seq, delta)
        derived = derive_message(event, version=version)
        if derived is None:
            value: int | None = NO_MESSAGE
        elif isinstance(derived, dict) and derived.get("role") == "developer":
            value = DEVELOPER
        elif (self.priced or price is not None) and type(event) is dict \
                and slot_message(kind, derived, version=version) is derived:
            value = price   # node_price priced that very message (None: the price column's)
        else:
            value = estimate_message(derived, version=version)
        if value is not None:
            self._put(self._rows, self._values, self._message, seq, value)
        if text and derived is not None:
            self._keep_text(seq, derived)

    @staticmethod
    def _put(rows: array, values: array, dense: array | None, seq: int, value: int) -> None:
        rows.append(seq)
        values.append(value)
        if dense is not None and seq < len(dense):
            dense[seq] = value

    def _keep_text(self, seq: int, message: Any) -> None:
        self.scan.probe_later(seq, message, self._put_text)

    def _put_text(self, seq: int, chars: int, found: list[int]) -> None:
        """The probe's facts of the message at `seq` (a batched scan hands them over later,
        not necessarily in seq order)."""
        ids = self._ids
        self._text_seq.append(seq)
        self._text_start.append(len(ids))
        self._text_chars.append(chars)
        ids.extend(found)
        self._text_end.append(len(ids))
        self._text_rows = None

    # -- reading -------------------------------------------------------------------------------

    @property
    def message(self) -> array:
        """Per seq: the price (`estimate_message`) of the message the event derives before any
        v4 `image/offload` projection; `NO_MESSAGE`, `DEVELOPER`, `UNREAD` (module doc)."""
        if self._message is None:
            n, prices = self.count, self._prices
            if self.priced and prices is not None:
                column = np.asarray(prices, dtype=np.int64)[:n]
                dense = np.where(column >= 0, column, UNREAD).astype(np.int32)
            else:
                dense = np.full(n, UNREAD, dtype=np.int32)
            _scatter(dense, self._rows, self._values)
            self._message = array("i", dense.tobytes())
        return self._message

    @property
    def delta(self) -> array:
        """Per seq: the node's change of open tool calls (`pairing.event_delta`)."""
        if self._delta is None:
            n, index = self.count, self._index
            dense = np.zeros(n, dtype=np.int32)
            if self.tool_deltas and index is not None:   # the index's facts, same rule
                from workbench.core.tool_facts import (
                    ADVERTISED,  # tool_facts -> compaction
                )
                code = index.types.codes.get("tool/result")
                if code is not None:
                    dense[index.type_codes[:n] == code] = -1
                tools = index.tools
                np.add.at(dense, tools.seq[tools.kind == ADVERTISED], 1)
            _scatter(dense, self._delta_rows, self._deltas)
            self._delta = array("i", dense.tobytes())
        return self._delta

    def ensure(self, seq: int) -> None:
        """Read an event that was not fed (by index: the rare node of an unexpected type)."""
        message = self._message
        if (self.message if message is None else message)[seq] == UNREAD:
            self.node(seq, self.events[seq])

    def text_of(self, seq: int) -> tuple[int, Sequence[int]] | None:
        """(text length, fact ids) of a message fed with `text=True`, else None."""
        if not self.texts:
            return None
        rows = self._text_rows
        if rows is None:   # made when first read: each seq's row (-1: none)
            seqs = np.array(self._text_seq, dtype=np.int64)   # a copy: the array grows
            dense = np.full(max(self.count, int(seqs.max()) + 1 if len(seqs) else 0), -1,
                            dtype=np.int32)
            dense[seqs] = np.arange(len(seqs), dtype=np.int32)
            rows = self._text_rows = array("i", dense.tobytes())
        row = rows[seq] if 0 <= seq < len(rows) else -1
        if row < 0:
            return None
        return self._text_chars[row], self._ids[self._text_start[row]:self._text_end[row]]

    def view(self) -> Overlay:
        """The events, with the `kept` ones served without reading the log again."""
        return Overlay(self.events, self.kept)

    def facts_of(self, text: str) -> list[int]:
        """Interned ids of the distinct facts of a text not fed (a projected message)."""
        return self.scan.fact_ids((text,))

    @property
    def distinct(self) -> list[tuple[str, str]]:
        """Every interned fact `(category, value)` by id."""
        return self.scan.facts


def _scatter(dense: np.ndarray, rows: array, values: array) -> None:
    if len(rows):
        keep = np.array(rows, dtype=np.int64)   # copies: `rows` and `values` may grow
        inside = keep < len(dense)
        dense[keep[inside]] = np.array(values, dtype=np.int32)[inside]

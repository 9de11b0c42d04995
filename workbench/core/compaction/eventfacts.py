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

An `image/offload` projection only marks image blocks `offloaded` (v4 §4.8) and the probe reads no
image, so a projected message has the facts of the message it projects.
"""
from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.compaction.pairing import event_delta
from workbench.core.compaction.textscan import TextScan
from workbench.core.header import canonical_header
from workbench.core.projection import derive_message
from workbench.core.tokens.heuristic import derive_message as node_message
from workbench.core.tokens.heuristic import estimate_message, message_types
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
                 scan: TextScan | None = None) -> None:
        self.events = events
        self.version = version
        self.texts_before = texts_before
        n = len(events) if size is None else size
        self.delta = array("i", bytes(4 * n))
        self.message = array("i", [UNREAD]) * n
        self.misplaced: set[int] = set()
        self.rewritten: set[int] = set()
        self.headers: list[int] = []
        self.node_types = message_types(version)
        self.texts = texts
        self._text_start = array("i", [-1]) * n if texts else array("i")
        self._text_end = array("i", bytes(4 * n)) if texts else array("i")
        self._text_chars = array("i", bytes(4 * n)) if texts else array("i")
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
                texts: bool, texts_before: int | None = None, scan: TextScan | None = None
                ) -> EventFacts:
        """Facts fed in one in-order pass (`core.log_pass.LogPass`):
        `events` is the log or the store as it grows, each event is fed once in seq order
        (arrays grow with it); `texts` keeps the probe facts of the messages before seq
        `texts_before` (None: of every message), read by `scan`."""
        before = (1 << 62 if texts_before is None else texts_before) if texts else 0
        return cls(events, version=version, texts=texts, texts_before=before, size=0, scan=scan)

    @property
    def count(self) -> int:
        """Events the per-seq arrays cover."""
        return len(self.message)

    # -- feeding -------------------------------------------------------------------------------

    def feed(self, seq: int, event: Mapping[str, Any], price: int | None = None) -> None:
        """The event at `seq` of an in-order pass over the whole log (see `growing`); `price`
        is its node price when known."""
        if seq >= len(self.message):
            self._grow(seq + 1)
        kind = event.get("type") if type(event) is dict else None
        if kind in self.node_types:
            self.node(seq, event, text=seq < self.texts_before, price=price)
        elif kind == "request/header":
            self.header(seq, event)
        elif kind in MARKED_TYPES:
            self.mark(seq, event, kind)

    def _grow(self, n: int) -> None:
        more = n - len(self.message)
        if more == 1:
            self.delta.append(0)
            self.message.append(UNREAD)
            if self.texts:
                self._text_start.append(-1)
                self._text_end.append(0)
                self._text_chars.append(0)
            return
        self.delta.extend(array("i", bytes(4 * more)))
        self.message.extend(array("i", [UNREAD]) * more)
        if self.texts:
            self._text_start.extend(array("i", [-1]) * more)
            self._text_end.extend(array("i", bytes(4 * more)))
            self._text_chars.extend(array("i", bytes(4 * more)))

    def finish(self) -> None:
        """Every event of the log has been fed, in order."""
        self.complete = len(self.message) == len(self.events)

    def mark(self, seq: int, event: Mapping[str, Any], kind: Any) -> None:
        """An event of `MARKED_TYPES` (call in seq order)."""
        self.marked.append(seq)
        if kind in self._kept_types:
            self.kept[seq] = event

    def header(self, seq: int, event: Mapping[str, Any]) -> None:
        """A `request/header` event (call in seq order)."""
        data = event.get("data")
        if isinstance(data, dict) and canonical_header(data.get("header"),
                                                       version=self.version) is not None:
            self.headers.append(seq)

    def node(self, seq: int, event: Mapping[str, Any], *, text: bool = False,
             price: int | None = None) -> None:
        """An event that is (or may be) a surface node; `text` keeps its probe facts; `price`
        is its `heuristic.node_price` when known (the message it prices is then not priced
        again)."""
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
            if kind == "tool/result":
                self.delta[seq] = -1
            elif kind == "assistant/message":
                self.delta[seq] = event_delta(event)
        derived = derive_message(event, version=version)
        if derived is None:
            self.message[seq] = NO_MESSAGE
            return
        if isinstance(derived, dict) and derived.get("role") == "developer":
            self.message[seq] = DEVELOPER
        elif price is not None and node_message(event, version=version) is derived:
            self.message[seq] = price   # node_price priced that very message
        else:
            self.message[seq] = estimate_message(derived, version=version)
        if text:
            self._keep_text(seq, derived)

    def _keep_text(self, seq: int, message: Any) -> None:
        self.scan.probe_later(seq, message, self._put_text)

    def _put_text(self, seq: int, chars: int, found: list[int]) -> None:
        ids = self._ids
        self._text_start[seq] = len(ids)
        self._text_chars[seq] = chars
        ids.extend(found)
        self._text_end[seq] = len(ids)

    # -- reading -------------------------------------------------------------------------------

    def ensure(self, seq: int) -> None:
        """Read an event that was not fed (by index: the rare node of an unexpected type)."""
        if self.message[seq] == UNREAD:
            self.node(seq, self.events[seq])

    def text_of(self, seq: int) -> tuple[int, Sequence[int]] | None:
        """(text length, fact ids) of a message fed with `text=True`, else None."""
        if not self.texts or not 0 <= seq < len(self._text_start) or self._text_start[seq] < 0:
            return None
        return self._text_chars[seq], self._ids[self._text_start[seq]:self._text_end[seq]]

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

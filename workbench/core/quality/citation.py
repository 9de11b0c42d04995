"""The citation audit of every compaction: what its summary kept, lost and invented. Layer: core.

For each attempt that logged a summary, its *anchors* are those of the nodes it hid (what the
fold removed; for an attempt whose replacement did not land, the span its summary names):

* a hidden ordinary node contributes its own anchors at **level 1**, born at its lineage root
  (the appended event it stands for; a pruned copy is born at its original);
* a hidden checkpoint of an earlier compaction contributes the anchors that compaction's summary
  still *stated* (kept or invented there), one level up: level 2 for the next summary in the
  chain, and so on. An anchor a summary dropped is gone from the surface, so its lifeline ends
  at the first summary that does not state it.

`status` is ``kept`` when the summary states the anchor (`anchors.states`), ``lost`` otherwise;
``invented`` rows are anchors the summary states that occur nowhere in what it could have read:
not as an anchor nor inside an anchor's text of the nodes it hid or of the rest of the surface
when it was written, and not as an anchor of anything the hidden checkpoints themselves stood for
(through every nested level). Inventions are *candidates* (a summary
may derive a literal, e.g. a count).

Headline score (``score``, sortable, in [0, 1]): the harmonic mean of

* ``recall``: the mean over kinds of kept / (kept + lost), over the kinds the hidden span has
  (a macro average, so 200 numbers cannot swamp three paths);
* ``precision``: 1 − invented / stated, over the distinct anchors the summary states (1 when it
  states none): ``stated`` counts every anchor of the summary text (found in what it hid, on the
  surface it was written against, in an earlier level, or nowhere: invented) together with the
  hidden anchors it keeps (`Citation.stated`).

``score`` is None when the hidden span has no anchor.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain as _chain
from typing import Any

import numpy as np

from workbench.core.compaction.anchors import KINDS, message_texts, states
from workbench.core.quality.facts import FactReader
from workbench.core.surface_arrays import SurfaceWalk
from workbench.core.timeline import SurfaceTimeline

STATUSES = ("kept", "lost", "invented")


@dataclass(frozen=True, slots=True)
class AnchorRow:
    """One anchor of one compaction (see the module doc)."""

    kind: str
    text: str
    born_seq: int | None
    status: str
    level: int


@dataclass(frozen=True, slots=True)
class Citation:
    """The citation audit of one compaction attempt (module doc)."""

    index: int
    compaction_id: Any
    summary_seq: int
    replacement_seq: int | None
    hidden_seqs: tuple[int, ...]
    rows: tuple[AnchorRow, ...]
    stated: int = 0
    """Distinct anchors the summary states: its own anchors and the hidden ones it keeps."""

    def of(self, status: str, kind: str | None = None) -> tuple[str, ...]:
        return tuple(r.text for r in self.rows
                     if r.status == status and (kind is None or r.kind == kind))

    def counts(self, kind: str) -> tuple[int, int, int]:
        """(kept, lost, invented) of one kind."""
        return self._tally().get(kind, (0, 0, 0))

    def _tally(self) -> dict[str, tuple[int, int, int]]:
        """`counts` of every kind, in one pass over the rows."""
        out: dict[str, list[int]] = {}
        index = STATUSES.index
        for r in self.rows:
            counts = out.get(r.kind)
            if counts is None:
                counts = out[r.kind] = [0, 0, 0]
            counts[index(r.status)] += 1
        return {kind: (c[0], c[1], c[2]) for kind, c in out.items()}

    def recall_of(self, kind: str) -> float | None:
        return _recall(self.counts(kind))

    @property
    def recall(self) -> float | None:
        return _mean_recall(self._tally())

    @property
    def precision(self) -> float:
        """1 − invented / stated (module doc); 1 when the summary states no anchor."""
        invented = sum(r.status == "invented" for r in self.rows)
        return 1.0 - invented / self.stated if self.stated else 1.0

    @property
    def score(self) -> float | None:
        return _score(self.recall, self.precision)

    def as_json(self) -> dict[str, Any]:
        tally = self._tally()
        by_kind = {}
        for kind in KINDS:
            kept, lost, invented = tally.get(kind, (0, 0, 0))
            by_kind[kind] = {"kept": kept, "lost": lost, "invented": invented,
                             "recall": _recall((kept, lost, invented))}
        recall, precision = _mean_recall(tally), self.precision
        return {"compaction_id": self.compaction_id, "score": _score(recall, precision),
                "recall": recall, "precision": precision, "kinds": by_kind,
                "lost": list(self.of("lost")[:50]), "invented": list(self.of("invented")[:50])}


def _recall(counts: tuple[int, int, int]) -> float | None:
    kept, lost, _ = counts
    return kept / (kept + lost) if kept + lost else None


def _mean_recall(tally: Mapping[str, tuple[int, int, int]]) -> float | None:
    """The mean of the kinds' recalls (kinds without kept or lost anchors left out)."""
    values = [r for r in (_recall(tally.get(k, (0, 0, 0))) for k in KINDS) if r is not None]
    return sum(values) / len(values) if values else None


def _score(recall: float | None, precision: float) -> float | None:
    if recall is None:
        return None
    return 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)


def summary_text(summary: Any) -> str:
    """The text of logged summary blocks, framing stripped."""
    return "\n".join(t for _, t in message_texts({"role": "assistant", "content": summary}))


@dataclass(slots=True)
class _Carry:
    """What a landed checkpoint carries into the compaction that hides it: its citation and
    the chain of everything it stood for (moved, not copied: a checkpoint is hidden at most
    once)."""

    citation: Citation
    chain: _Chain


class _Chain:
    """The landed compactions a checkpoint stands for, through every nested level: its own and
    those of the checkpoints it hid. A text is in the chain when a node holding it was on the
    surface a member's summary was written against (`seen.counts` then) or a member hid it (its
    `support`): the union of those texts, asked of the nodes holding a text instead of kept as
    a set (which would copy the whole surface's texts into it at every compaction).

    `ats` are the members' summary seqs minus one, ascending; `hiders` their replacement seqs;
    a node `n` is on the surface at `t` exactly when ``n <= t < until``, `until` the seq that
    hid it (none: never), and a member hid exactly the nodes whose `until` is its replacement."""

    __slots__ = ("ats", "hiders")

    def __init__(self) -> None:
        self.ats: list[int] = []
        self.hiders: set[int] = set()

    def merged(self, other: _Chain) -> _Chain:
        """Both chains as one (the larger one, grown)."""
        big, small = (self, other) if len(self.ats) >= len(other.ats) else (other, self)
        if len(small.ats) == 1:
            insort(big.ats, small.ats[0])
        elif small.ats:
            big.ats = sorted(big.ats + small.ats)
        big.hiders |= small.hiders
        return big

    def add(self, at: int, hider: int) -> None:
        insort(self.ats, at)
        self.hiders.add(hider)

    def holds(self, nodes: Sequence[int], timeline: SurfaceTimeline) -> bool:
        """Whether a text held by `nodes` is in the chain (class doc)."""
        ats, hiders = self.ats, self.hiders
        for node in nodes:
            if not timeline.is_node(node):
                continue
            hidden = timeline.shadowed_by(node)
            until = _NEVER if hidden is None else hidden.hidden_at
            if until in hiders:
                return True
            i = bisect_left(ats, node)
            if i < len(ats) and ats[i] < until:
                return True
        return False


_NEVER = 2**63


def citations(records: Sequence[Any], hidden_sets: Sequence[tuple[int, ...] | None],
              timeline: SurfaceTimeline, reader: FactReader) -> list[Citation]:
    """The citation audit of every record with a summary and a hidden set (module doc).
    `records` are `CompactionRecord`s in log order, `hidden_sets` what each one hid; `reader`
    has read the facts of every node hidden or on the surface before a summary (`analyse`)."""
    out: list[Citation] = []
    carries: dict[int, _Carry] = {}
    facts = reader.facts
    texts = {seq: tuple(t for _, t in found) for seq, found in facts.anchors.items() if found}
    walk, seen = SurfaceWalk(timeline), _Seen()
    holders: dict[str, list[int]] | None = None   # text -> the nodes holding it (when asked)
    for index, (record, hidden) in enumerate(zip(records, hidden_sets)):
        if record.summary_seq is None or not hidden:
            continue
        joined_nodes, left_nodes = walk.move(record.summary_seq - 1)
        seen.drop(left_nodes, texts)
        seen.add(joined_nodes, texts)
        text = summary_text(record.summary)
        lowered = text.lower()
        stated_keys = reader.keys([("text", text)])
        rows: dict[tuple[str, str], AnchorRow] = {}
        support: set[str] = set()
        chain = _Chain()
        for seq in hidden:
            carry = carries.pop(seq, None)
            if carry is not None:
                chain = chain.merged(carry.chain)
                for row in carry.citation.rows:
                    if row.status != "lost":
                        _put(rows, row.kind, row.text, row.born_seq, row.level + 1)
            else:
                born = timeline.lineage(seq)[:1] or (seq,)
                for kind, value in facts.anchors.get(seq, ()):
                    _put(rows, kind, value, born[0], 1)
            support.update(texts.get(seq, ()))
        # and every other node the summarizer saw: `seen.counts` (its keys: the surface's texts)
        on_surface = seen.counts
        joined: dict[str, str] = {}   # the hidden and the surface texts, joined when needed
        final = [AnchorRow(r.kind, r.text, r.born_seq,
                           "kept" if states(text, r.kind, r.text, lowered=lowered) else "lost",
                           r.level) for r in rows.values()]
        known = set(rows)
        born_at = record.replacement_seq if record.replacement_seq is not None \
            else record.summary_seq
        for kind, value in stated_keys:
            if (kind, value) in known or kind == "constraint":
                continue
            if value in support or value in on_surface:
                continue
            if chain.ats:
                if holders is None:
                    holders = {}
                    for seq, held in texts.items():
                        for held_text in held:
                            holders.setdefault(held_text, []).append(seq)
                if chain.holds(holders.get(value, ()), timeline):
                    continue
            if not _inside(value, support, on_surface, seen, joined):
                final.append(AnchorRow(kind, value, born_at, "invented", 1))
        stated = set(stated_keys)
        stated.update((r.kind, r.text) for r in final if r.status == "kept")
        citation = Citation(index, record.compaction_id, record.summary_seq,
                            record.replacement_seq, tuple(hidden), tuple(final), len(stated))
        out.append(citation)
        if record.replacement_seq is not None and record.fold_shadowed_seqs is not None:
            chain.add(record.summary_seq - 1, record.replacement_seq)
            carries[record.replacement_seq] = _Carry(citation, chain)
    return out


def _inside(value: str, support: set[str], on_surface: Mapping[str, int], seen: _Seen,
            joined: dict[str, str]) -> bool:
    """Whether `value` occurs inside a hidden (`support`) or surface text: each side joined
    once per summary (in `joined`), the surface's only when no text ever on it rules the value
    out (`_Seen.may_hold`). A value without a line break cannot span two joined texts."""
    if "\n" in value:
        return value in "\n".join(_chain(support, on_surface))
    if "support" not in joined:
        joined["support"] = "\n".join(support)
    if value in joined["support"]:
        return True
    if not seen.may_hold(value):
        return False
    if "surface" not in joined:
        joined["surface"] = "\n".join(on_surface)
    return value in joined["surface"]


class _Seen:
    """How many nodes of the surface at the walk's seq hold each anchor text (a text is
    present while its count is positive: `counts`' keys are the surface's texts), and a superset
    of them, joined in blocks that merge as they grow (`may_hold`): every text on the surface
    since the blocks were last rebuilt from `counts`, which they are once they hold more than
    twice the surface's characters (and `SLACK` more), so a test reads O(surface), not every
    text the log ever showed. A hashed set of the blocks' 4- and 8-byte windows (`_windows`)
    rules out at once a value with a window no block has."""

    SLACK = 1 << 16
    """Characters the blocks may hold beyond twice the surface's before they are rebuilt."""
    WINDOW_BITS = 22
    """The window set is a table of 2**WINDOW_BITS flags."""
    PIECE = 1 << 20
    """Bytes of text hashed at a time (`_mark`)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._ever: set[str] = set()
        self._new: list[str] = []
        self._blocks: list[str] = []
        self._ever_chars = 0
        self._surface_chars = 0
        self._windows = np.zeros(1 << self.WINDOW_BITS, dtype=np.bool_)

    def add(self, seqs: Sequence[int], texts: Mapping[int, tuple[str, ...]]) -> None:
        counts, ever = self.counts, self._ever
        for seq in seqs:
            for text in texts.get(seq, ()):
                count = counts.get(text, 0)
                if not count:
                    self._surface_chars += len(text)
                    if text not in ever:
                        ever.add(text)
                        self._new.append(text)
                        self._ever_chars += len(text)
                counts[text] = count + 1

    def may_hold(self, value: str) -> bool:
        """False when no text of the blocks contains `value` (a superset of the surface's
        texts: each text is copied into a block O(log texts) times between rebuilds)."""
        if self._ever_chars > 2 * self._surface_chars + self.SLACK:
            self._ever, self._new, self._blocks = set(self.counts), list(self.counts), []
            self._ever_chars = self._surface_chars
            self._windows[:] = False
        blocks = self._blocks
        if self._new:
            blocks.append("\n".join(self._new))
            self._new = []
            self._mark(blocks[-1])
            while len(blocks) > 1 and len(blocks[-1]) >= len(blocks[-2]):
                last = blocks.pop()
                blocks[-1] = blocks[-1] + "\n" + last
        found = self._windows[_windows(value.encode("utf-8", "surrogatepass"), self.WINDOW_BITS)]
        if not found.all():
            return False   # a substring's UTF-8 windows are windows of the text's UTF-8
        return any(value in block for block in blocks)

    def _mark(self, text: str) -> None:
        """Flag the windows of `text`, `PIECE` bytes of its UTF-8 at a time (and the 7 bytes
        the last windows of a piece reach into the next), so the hashes' arrays stay small."""
        data, piece = text.encode("utf-8", "surrogatepass"), self.PIECE
        for start in range(0, max(len(data) - 7, 1), piece):
            self._windows[_windows(data[start:start + piece + 7], self.WINDOW_BITS)] = True

    def drop(self, seqs: Sequence[int], texts: Mapping[int, tuple[str, ...]]) -> None:
        counts = self.counts
        for seq in seqs:
            for text in texts.get(seq, ()):
                left = counts[text] - 1
                if left:
                    counts[text] = left
                else:
                    del counts[text]
                    self._surface_chars -= len(text)


def _windows(data: bytes, bits: int) -> np.ndarray:
    """A hash in [0, 2**bits) of each 4-byte and each 8-byte window of `data`: none of a width
    longer than it."""
    data = np.frombuffer(data, dtype=np.uint8).astype(np.uint32)
    four = data[:-3] << 24 | data[1:-2] << 16 | data[2:-1] << 8 | data[3:]
    eight = four[:-4] * _MIX_EIGHT ^ four[4:]   # two windows' words into one (collisions allowed)
    shift = np.uint32(32 - bits)
    return np.concatenate(((four * _MIX_FOUR) >> shift, (eight * _MIX_FOUR) >> shift))


_MIX_FOUR, _MIX_EIGHT = np.uint32(0x9E3779B1), np.uint32(0x85EBCA77)
"""Odd multipliers (golden-ratio and xxHash's primes); a product's top bits hash a word."""


def _put(rows: dict[tuple[str, str], AnchorRow], kind: str, text: str, born: int | None,
         level: int) -> None:
    key = (kind, text)
    old = rows.get(key)
    if old is None or (born is not None and (old.born_seq is None or born < old.born_seq)):
        rows[key] = AnchorRow(kind, text, born, "", level)


def find_text(events: Sequence[Mapping[str, Any]], nodes: Sequence[int], text: str
              ) -> int | None:
    """The first node (ascending `nodes`) whose message text contains `text`."""
    from workbench.core.compaction.anchors import event_texts
    from workbench.io.payloads import read_events
    for seq, event in read_events(events, nodes):
        if isinstance(event, Mapping) and any(text in t for _, t in event_texts(event)):
            return seq
    return None

"""The one reading of message text for the lost-fact probe and the quality anchors. Layer: core
(pure).

Two measures read what a model was shown: the lost-fact probe (`probe.text_facts` of the text
`probe.message_text` joins) and the compaction-quality anchors (`anchors.piece_anchors` of the
pieces `anchor_texts.message_texts` yields). `TextScan` serves both from one walk of a message's
content and memos of the texts and lines it has read:

* `message(m)` walks the content once for both views (`anchor_texts.message_views`): the
  probe's parts (every text, tool-call name and raw arguments, tool-result content) and the
  anchors' pieces (the same texts but the tool calls' parsed argument values, no harness
  boilerplate, no checkpoint framing), and with the anchors the tool blocks the quality's calls
  are read from (`tool_blocks`). The walk of the last message is remembered: the log's
  one pass hands each message to both measures (`eventfacts.EventFacts`,
  `quality.facts.FactReader`, sharing one scan).
* a distinct text is read once per measure (logs repeat file reads, command output, argument
  boilerplate, the checkpoint preamble of every nested checkpoint) and, inside texts not seen
  yet, a distinct line is scanned once per measure. Both measures are defined line by line (no
  probe pattern matches across a line break, `probe.text_facts`; anchors are scanned per line,
  `anchors.text_anchors`), so a text's results are its lines' results in turn: exact. Each
  measure keeps its own regular expression (`probe._FACTS`, the anchors' `RULES`): they claim
  spans in different orders, so one alternation cannot serve both.
* the probe's facts are interned (`probe.interned_lines`): `facts[i]` is the `(category,
  value)` of id `i`, ids in order of first appearance; a message keeps a few ids, never its
  text.
* anchors depend on the schema words `stop` (never anchors): setting another `stop` forgets the
  anchors remembered (not the probe's facts).
* a batching scan (`batch=True`, the log's one pass) hands a message's results to a sink
  (`probe_later`, `anchors_later`) when the batch of waiting requests is read (`flush`: when
  `BATCH` requests or `BATCH_CHARS` characters wait, when `stop` changes, and by the caller
  before it reads the results): each distinct text of the batch is looked up once, the lines
  of the texts no memo holds are split once and those no memo holds scanned, each measure's in
  one run, then each text's result is made from its lines'. A line's results are those of its
  own scan whenever it runs, so every message gets what it would get at once, and each
  measure's sinks are called in the order asked.

Memory is bounded: at most `TEXTS` texts of up to `TEXT_CHARS` characters, `TEXT_BUDGET`
characters in all, and `LINES` lines of up to `LINE_CHARS`, `LINE_BUDGET` in all, are remembered
per measure (a full memo is cleared); at most `BATCH` requests wait,
with at most `BATCH_CHARS` characters of text in all (beyond the last request's).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import Any

from workbench.core.compaction.anchor_texts import message_views
from workbench.core.compaction.anchors import lines_anchors, piece_anchors
from workbench.core.compaction.probe import fact_index, interned_lines
from workbench.io.memo import Memo

Pieces = list[tuple[str, str]]


class TextScan:
    """Probe facts and anchors of messages and texts, each distinct text and line read once per
    measure (module doc). `probe` / `anchors`: which measures the walk of `message` serves."""

    TEXTS = 1 << 16
    TEXT_CHARS = 8192
    TEXT_BUDGET = 1 << 26
    LINES = 1 << 16
    LINE_CHARS = 2048
    LINE_BUDGET = 1 << 25
    BATCH = 2048
    """At most this many requests wait before the batch is read (`flush`; a message asked by
    both measures is two)."""
    BATCH_CHARS = 1 << 20

    def __init__(self, *, probe: bool = True, anchors: bool = True,
                 stop: frozenset[str] = frozenset(), batch: bool = False) -> None:
        self.probe_parts = probe
        self.anchor_pieces = anchors
        self.batch = batch
        """`probe_later` / `anchors_later` wait for a batch of new lines (module doc)."""
        self._stop = stop
        self._probes: list[tuple[Callable[..., None], int, list[str], int]] = []
        """Probe requests waiting for the batch: `(sink, seq, parts, their joined length)`."""
        self._pieces: list[tuple[Callable[..., None], int, Pieces]] = []
        """Anchor requests waiting for the batch: `(sink, seq, pieces)`."""
        self._waiting_chars = 0
        self._text_ids = Memo(self.TEXTS, self.TEXT_BUDGET)
        """Text -> the ids of its distinct facts, in order."""
        self._line_ids = Memo(self.LINES, self.LINE_BUDGET)
        """Line -> its fact ids in order."""
        self._text_anchors = Memo(self.TEXTS, self.TEXT_BUDGET)
        """`(how, text)` piece -> its distinct anchors, in order."""
        self._line_anchors = Memo(self.LINES, self.LINE_BUDGET)
        """Line -> its anchors in order."""
        self._index = fact_index()
        self.facts: list[tuple[str, str]] = []
        """Every interned probe fact `(category, value)`, by id."""
        self._walked: Any = None
        self._walk: tuple[list[str], Pieces] = ([], [])
        self._blocks: list[dict] = []

    @property
    def stop(self) -> frozenset[str]:
        """Schema words that are never anchors."""
        return self._stop

    @stop.setter
    def stop(self, words: frozenset[str]) -> None:
        if words != self._stop:
            self.flush()   # the waiting anchors are those of the words they were asked with
            self._stop = words
            self._text_anchors.clear()
            self._line_anchors.clear()

    # -- messages ------------------------------------------------------------------------------

    def message(self, message: Any) -> tuple[list[str], Pieces]:
        """`(probe parts, anchor pieces)` of a model message (`probe.message_parts`,
        `anchor_texts.message_texts`; a view this scan does not serve is empty)."""
        if message is not self._walked:
            self._walked = message
            self._blocks = [] if self.anchor_pieces else None  # type: ignore[assignment]
            self._walk = message_views(message, parts=self.probe_parts,
                                       pieces=self.anchor_pieces, blocks=self._blocks)
        return self._walk

    def tool_blocks(self, message: Any) -> list[dict]:
        """The tool-call and tool-result blocks of a model message's own content
        (`anchor_texts.message_views`' `blocks`; read in the same walk as the anchors)."""
        if message is not self._walked or self._blocks is None:
            blocks: list[dict] = []
            message_views(message, parts=False, pieces=False, blocks=blocks)
            return blocks
        return self._blocks

    def probe(self, message: Any) -> tuple[int, list[int]]:
        """`(len(probe.message_text(message)), ids of its distinct facts in order)`."""
        parts = (self._walk if message is self._walked else self.message(message))[0]
        return _chars(parts), self.fact_ids(parts)

    def anchors(self, message: Any) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of a model message in order (`anchors.anchor_keys` of its
        `message_texts`)."""
        return self.anchor_keys(
            (self._walk if message is self._walked else self.message(message))[1])

    # -- batches -------------------------------------------------------------------------------

    def probe_later(self, seq: int, message: Any,
                    sink: Callable[[int, int, Sequence[int]], None]) -> None:
        """`sink(seq, *probe(message))`: now when the scan does not batch, else when the batch
        is read (`flush`)."""
        parts = (self._walk if message is self._walked else self.message(message))[0]
        chars = _chars(parts)
        if self.batch:
            self._probes.append((sink, seq, parts, chars))
            self._wait(chars)
        else:
            sink(seq, chars, self.fact_ids(parts))

    def anchors_later(self, seq: int, message: Any,
                      sink: Callable[[int, tuple[tuple[str, str], ...]], None]) -> None:
        """`sink(seq, anchors(message))`, now or when the batch is read (as `probe_later`)."""
        pieces = (self._walk if message is self._walked else self.message(message))[1]
        if self.batch:
            self._pieces.append((sink, seq, pieces))
            self._wait(sum([len(text) for _, text in pieces]))
        else:
            sink(seq, self.anchor_keys(pieces))

    def _wait(self, chars: int) -> None:
        self._waiting_chars += chars
        if len(self._probes) + len(self._pieces) >= self.BATCH \
                or self._waiting_chars >= self.BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        """Read the texts of the waiting requests: each distinct text once, those no memo holds
        by their lines, the lines no memo holds scanned in one run per measure (its expression
        and rule tables stay warm); then each measure's requests are handed their results, in
        the order asked."""
        probes, pieces = self._probes, self._pieces
        if not (probes or pieces):
            return
        self._probes, self._pieces, self._waiting_chars = [], [], 0
        if probes:
            ids = self._read(dict.fromkeys(chain.from_iterable(
                [parts for _, _, parts, _ in probes])), False).__getitem__
            for sink, seq, parts, chars in probes:
                sink(seq, chars, ids(parts[0]) if len(parts) == 1 else tuple(
                    dict.fromkeys(chain.from_iterable(map(ids, parts)))))
        if pieces:
            anchors = self._read(dict.fromkeys(chain.from_iterable(
                [items for _, _, items in pieces])), True).__getitem__
            for sink, seq, items in pieces:
                sink(seq, anchors(items[0]) if len(items) == 1 else tuple(
                    dict.fromkeys(chain.from_iterable(map(anchors, items)))))

    def _read(self, items: Iterable[Any], pieces: bool) -> dict[Any, tuple]:
        """The results of the texts (or `(how, text)` pieces) `items`, by distinct item: those
        remembered, and the others read now: each new text split once, its distinct lines no
        memo holds scanned in one run (`probe.interned_lines`, `anchors.lines_anchors`), then
        each new text's result made from its lines' (the probe's: its distinct facts; the
        anchors': `anchors.piece_anchors`, distinct). Texts up to `TEXT_CHARS` and lines up to
        `LINE_CHARS` characters are remembered."""
        texts, lines = ((self._text_anchors, self._line_anchors) if pieces
                        else (self._text_ids, self._line_ids))
        known = texts.get
        done = {item: known(item) for item in items}
        new = [item for item, result in done.items() if result is None]
        if not new:
            return done  # type: ignore[return-value]
        split = [item[1].split("\n") for item in new] if pieces else [
            item.split("\n") for item in new]
        remembered = lines.get
        found = {line: remembered(line) for line in dict.fromkeys(chain.from_iterable(split))}
        missing = [line for line, result in found.items() if result is None]
        if missing:
            scanned = (lines_anchors(missing, self._stop) if pieces
                       else interned_lines(missing, self._index, self.facts))
            found.update(zip(missing, scanned))
            limit = self.LINE_CHARS
            kept = {line: result for line, result in zip(missing, scanned) if len(line) <= limit}
            lines.remember_many(kept, sum(map(len, kept)))
        of_line = found.__getitem__
        if pieces:
            stop = self._stop
            results = [tuple(dict.fromkeys(piece_anchors(how, text, stop, list(
                chain.from_iterable(map(of_line, text_lines))))))
                for (how, text), text_lines in zip(new, split)]
        else:
            results = [tuple(dict.fromkeys(chain.from_iterable(map(of_line, text_lines))))
                       for text_lines in split]
        done.update(zip(new, results))
        limit = self.TEXT_CHARS
        sizes = [len(item[1]) for item in new] if pieces else list(map(len, new))
        kept = {item: result for item, result, size in zip(new, results, sizes) if size <= limit}
        texts.remember_many(kept, sum(size for size in sizes if size <= limit))
        return done  # type: ignore[return-value]

    # -- texts ---------------------------------------------------------------------------------

    def fact_ids(self, parts: Sequence[str]) -> list[int]:
        """Ids of the distinct facts of `"\\n".join(parts)`, in order of first appearance."""
        read = self._read(parts, False)
        return _distinct(_joined(parts, read.__getitem__))  # type: ignore[arg-type]

    def anchor_keys(self, pieces: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of `(how, text)` pieces, in order of first appearance."""
        read = self._read(pieces, True)
        return tuple(_distinct(_joined(pieces, read.__getitem__)))  # type: ignore[arg-type]


def _chars(parts: Sequence[str]) -> int:
    """`len("\\n".join(parts))`."""
    return sum(map(len, parts)) + len(parts) - 1 if parts else 0


def _joined(items: Iterable[Any], result: Callable[[Any], tuple | None]) -> list | None:
    """The results of `items` (`result(item)`: a tuple, None when not known) one after the
    other; None when one is not known."""
    out: list = []
    for item in items:
        found = result(item)
        if found is None:
            return None
        if found:
            out += found
    return out


def _distinct(found: list) -> list:
    """`found` without repeats, in order."""
    return list(dict.fromkeys(found)) if len(found) > 1 else found

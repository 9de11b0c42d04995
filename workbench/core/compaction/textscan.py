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
* the probe's facts are interned (`probe.interned_facts`): `facts[i]` is the `(category,
  value)` of id `i`, ids in order of first appearance; a message keeps a few ids, never its
  text.
* anchors depend on the schema words `stop` (never anchors): setting another `stop` forgets the
  anchors remembered (not the probe's facts).
* a batching scan (`batch=True`, the log's one pass) hands a message's results to a sink
  (`probe_later`, `anchors_later`): at once when every text of it is remembered, else when the
  batch of waiting messages is read (`flush`: when `BATCH` messages or `BATCH_CHARS`
  characters wait, when `stop` changes, and by the caller before it reads the results): the
  lines of their texts that no memo holds are scanned, each measure's in one run, then each
  text's result is made from its lines'. A line's results are those of its own scan whenever
  it runs, so every message gets what it would get at once; only the order in which sinks are
  called changes (a waiting message is handed its results after later messages whose texts
  were all remembered).

Memory is bounded: at most `TEXTS` texts of up to `TEXT_CHARS` and `LINES` lines of up to
`LINE_CHARS` characters are remembered (a full memo is cleared); at most `BATCH` messages wait,
with at most `BATCH_CHARS` characters of text in all (beyond the last message's).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from workbench.core.compaction.anchor_texts import message_views
from workbench.core.compaction.anchors import line_anchors, piece_anchors
from workbench.core.compaction.probe import fact_index, interned_facts
from workbench.io.memo import Memo

Pieces = list[tuple[str, str]]


class TextScan:
    """Probe facts and anchors of messages and texts, each distinct text and line read once per
    measure (module doc). `probe` / `anchors`: which measures the walk of `message` serves."""

    TEXTS = 1 << 16
    TEXT_CHARS = 8192
    LINES = 1 << 16
    LINE_CHARS = 2048
    BATCH = 1024
    """At most this many messages wait before the batch is read (`flush`)."""
    BATCH_CHARS = 1 << 20

    def __init__(self, *, probe: bool = True, anchors: bool = True,
                 stop: frozenset[str] = frozenset(), batch: bool = False) -> None:
        self.probe_parts = probe
        self.anchor_pieces = anchors
        self.batch = batch
        """`probe_later` / `anchors_later` wait for a batch of new lines (module doc)."""
        self._stop = stop
        self._waiting: list[tuple[bool, Callable[..., None], int, list]] = []
        """Messages waiting for the batch: `(probe?, sink, seq, parts or pieces)`, in order."""
        self._waiting_chars = 0
        self._text_ids = Memo(self.TEXTS)
        """Text -> the ids of its distinct facts, in order."""
        self._line_ids = Memo(self.LINES)
        """Line -> its fact ids in order."""
        self._text_anchors = Memo(self.TEXTS)
        """`(how, text)` piece -> its distinct anchors, in order."""
        self._line_anchors = Memo(self.LINES)
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

    def probe_later(self, seq: int, message: Any, sink: Callable[[int, int, list[int]], None]
                    ) -> None:
        """`sink(seq, *probe(message))`, now when every text of it is remembered (or the scan
        does not batch), else when the batch is scanned (`flush`)."""
        parts = (self._walk if message is self._walked else self.message(message))[0]
        if self.batch and not _all_in(parts, self._text_ids):
            self._wait(True, sink, seq, parts)
        else:
            sink(seq, _chars(parts), self.fact_ids(parts))

    def anchors_later(self, seq: int, message: Any,
                      sink: Callable[[int, tuple[tuple[str, str], ...]], None]) -> None:
        """`sink(seq, anchors(message))`, now or when the batch is scanned (as `probe_later`)."""
        pieces = (self._walk if message is self._walked else self.message(message))[1]
        if self.batch and not _all_in(pieces, self._text_anchors):
            self._wait(False, sink, seq, pieces)
        else:
            sink(seq, self.anchor_keys(pieces))

    def flush(self) -> None:
        """Read the texts of the waiting messages: the lines no memo holds are scanned, each
        measure's in one run (its expression and rule tables stay warm); then every waiting
        message is handed its results, in the order asked."""
        waiting = self._waiting
        if not waiting:
            return
        self._waiting, self._waiting_chars = [], 0
        texts: dict[str, None] = {}
        pieces: dict[tuple[str, str], None] = {}
        for probe, _sink, _seq, items in waiting:
            (texts if probe else pieces).update(dict.fromkeys(items))
        ids = self._read_batch(texts, False) if texts else {}
        anchors = self._read_batch(pieces, True) if pieces else {}
        for probe, sink, seq, items in waiting:
            if probe:
                sink(seq, _chars(items), self.fact_ids(items, ids))
            else:
                sink(seq, self.anchor_keys(items, anchors))

    def _wait(self, probe: bool, sink: Callable[..., None], seq: int, items: list) -> None:
        waiting = self._waiting
        waiting.append((probe, sink, seq, items))
        self._waiting_chars += _chars(items) if probe else sum(len(t) for _, t in items)
        if len(waiting) >= self.BATCH or self._waiting_chars >= self.BATCH_CHARS:
            self.flush()

    def _read_batch(self, items: dict[Any, None], pieces: bool) -> dict[Any, tuple]:
        """The results of the texts (or `(how, text)` pieces) `items` not remembered yet: their
        lines no memo holds are scanned in one run, then each text's result is made from its
        lines' (kept in the text memo as `_scan_ids` / `_scan_anchors` keep them)."""
        texts, lines, scan = ((self._text_anchors, self._line_anchors, self._anchor_line)
                              if pieces else (self._text_ids, self._line_ids, self._probe_line))
        split = [(item, (item[1] if pieces else item).split("\n"))
                 for item in items if item not in texts]
        new: dict[str, None] = {}
        for _, text_lines in split:
            for line in text_lines:
                if line not in lines:
                    new[line] = None
        found = {line: scan(line) for line in new}
        limit = self.LINE_CHARS
        for line, result in found.items():
            if len(line) <= limit:
                lines.remember(line, result)
        done: dict[Any, tuple] = {}
        for item, text_lines in split:
            out: list[Any] = []
            for line in text_lines:
                result = found.get(line)
                if result is None:
                    result = lines.get(line)
                    if result is None:   # forgotten since (a full memo is emptied)
                        result = scan(line)
                if result:
                    out += result
            done[item] = self._anchors_of(item, out) if pieces else self._ids_of(item, out)
        return done

    def _probe_line(self, line: str) -> tuple[int, ...]:
        return tuple(interned_facts(line, self._index, self.facts))

    def _anchor_line(self, line: str) -> tuple[tuple[str, str], ...]:
        return tuple(line_anchors(line, self._stop))

    # -- texts ---------------------------------------------------------------------------------

    def fact_ids(self, parts: Iterable[str], read: Mapping[str, tuple] | None = None
                 ) -> list[int]:
        """Ids of the distinct facts of `"\\n".join(parts)`, in order of first appearance
        (`read`: results of texts just read, `flush`)."""
        known = self._text_ids
        out: list[int] = []
        for part in parts:
            found = None if read is None else read.get(part)
            if found is None:
                found = known.get(part)
                if found is None:
                    found = self._scan_ids(part)
            if found:
                out += found
        return list(dict.fromkeys(out)) if len(out) > 1 else out

    def anchor_keys(self, pieces: Sequence[tuple[str, str]],
                    read: Mapping[tuple[str, str], tuple] | None = None
                    ) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of `(how, text)` pieces, in order of first appearance (`read`: as
        in `fact_ids`)."""
        known = self._text_anchors
        seen: dict[tuple[str, str], None] = {}
        found: tuple[tuple[str, str], ...] | None = ()
        for piece in pieces:
            found = None if read is None else read.get(piece)
            if found is None:
                found = known.get(piece)
                if found is None:
                    found = self._scan_anchors(piece)
            if found:
                seen.update(dict.fromkeys(found))
        return found if len(pieces) == 1 else tuple(seen)  # type: ignore[return-value]

    def _scan_ids(self, text: str) -> tuple[int, ...]:
        return self._ids_of(text, self._lines(text, self._line_ids, self._probe_line))

    def _ids_of(self, text: str, ids: list[int]) -> tuple[int, ...]:
        result = tuple(dict.fromkeys(ids)) if len(ids) > 1 else tuple(ids)
        return self._text_ids.remember(text, result) if len(text) <= self.TEXT_CHARS else result

    def _scan_anchors(self, piece: tuple[str, str]) -> tuple[tuple[str, str], ...]:
        return self._anchors_of(piece, self._lines(piece[1], self._line_anchors,
                                                   self._anchor_line))

    def _anchors_of(self, piece: tuple[str, str], scanned: list[tuple[str, str]]
                    ) -> tuple[tuple[str, str], ...]:
        how, text = piece
        result = tuple(dict.fromkeys(piece_anchors(how, text, self._stop, scanned)))
        return self._text_anchors.remember(piece, result) if len(text) <= self.TEXT_CHARS \
            else result

    def _lines(self, text: str, known: Memo, scan: Callable[[str], tuple]) -> list[Any]:
        """What `scan` finds in each line of `text`, concatenated; a line's finds are read from
        (and, up to `LINE_CHARS` characters, kept in) the measure's line memo `known`."""
        out: list[Any] = []
        for line in text.split("\n"):
            found = known.get(line)
            if found is None:
                found = scan(line)
                if len(line) <= self.LINE_CHARS:
                    known.remember(line, found)
            if found:
                out += found
        return out


def _chars(parts: Sequence[str]) -> int:
    """`len("\\n".join(parts))`."""
    return sum(map(len, parts)) + len(parts) - 1 if parts else 0


def _all_in(items: Iterable[Any], memo: Memo) -> bool:
    for item in items:
        if item not in memo:
            return False
    return True

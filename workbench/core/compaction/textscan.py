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
  (`probe_later`, `anchors_later`): at once when every line of its texts is remembered, else
  when the lines no memo holds are scanned, each measure's in one run over up to `BATCH` new
  lines (`flush`: when the batch is full, when `stop` changes, and by the caller before it reads
  the results). Each line's results are those of its own scan whenever it runs, so a
  message's results are the same as at once; only the order in which sinks are called
  changes (a message waiting for its lines is handed its results after later messages whose
  lines were all known).

Memory is bounded: at most `TEXTS` texts of up to `TEXT_CHARS` and `LINES` lines of up to
`LINE_CHARS` characters are remembered (a full memo is cleared); at most `BATCH` messages wait
for at most `BATCH` new lines of up to `BATCH_CHARS` characters in all (beyond one line).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
    """At most this many new lines (and messages waiting for them) before a batch is scanned."""
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
        self._new_ids: dict[str, None] = {}
        self._new_anchors: dict[str, None] = {}
        """The lines of waiting messages that no line memo holds, per measure, in order."""
        self._new_chars = 0
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
        return self._probe_of(
            (self._walk if message is self._walked else self.message(message))[0])

    def _probe_of(self, parts: list[str]) -> tuple[int, list[int]]:
        chars = sum(map(len, parts)) + len(parts) - 1 if parts else 0
        return chars, self.fact_ids(parts)

    def anchors(self, message: Any) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of a model message in order (`anchors.anchor_keys` of its
        `message_texts`)."""
        return self.anchor_keys(
            (self._walk if message is self._walked else self.message(message))[1])

    # -- batches -------------------------------------------------------------------------------

    def probe_later(self, seq: int, message: Any, sink: Callable[[int, int, list[int]], None]
                    ) -> None:
        """`sink(seq, *probe(message))`, now when every line is known (or the scan does not
        batch), else when the batch is scanned (`flush`)."""
        parts = (self._walk if message is self._walked else self.message(message))[0]
        ids = self._fact_ids(parts, self._new_ids if self.batch else None)
        if ids is None:
            self._wait(True, sink, seq, parts)
        else:
            sink(seq, sum(map(len, parts)) + len(parts) - 1 if parts else 0, ids)

    def anchors_later(self, seq: int, message: Any,
                      sink: Callable[[int, tuple[tuple[str, str], ...]], None]) -> None:
        """`sink(seq, anchors(message))`, now or when the batch is scanned (as `probe_later`)."""
        pieces = (self._walk if message is self._walked else self.message(message))[1]
        keys = self._anchor_keys(pieces, self._new_anchors if self.batch else None)
        if keys is None:
            self._wait(False, sink, seq, pieces)
        else:
            sink(seq, keys)

    def flush(self) -> None:
        """Scan the new lines of the waiting messages, each measure's in one run (its
        expression and rule tables stay warm), then hand every waiting message its result, in
        the order asked."""
        waiting = self._waiting
        if not waiting:
            return
        self._waiting = []
        kept = self._scan_new(self._new_ids, self._line_ids, self._probe_line)
        kept += self._scan_new(self._new_anchors, self._line_anchors, self._anchor_line)
        self._new_ids, self._new_anchors, self._new_chars = {}, {}, 0
        for probe, sink, seq, items in waiting:
            if probe:
                sink(seq, *self._probe_of(items))
            else:
                sink(seq, self.anchor_keys(items))
        for known, line in kept:   # over-long lines: only for this batch
            known.pop(line, None)

    def _wait(self, probe: bool, sink: Callable[..., None], seq: int, items: list) -> None:
        waiting = self._waiting
        waiting.append((probe, sink, seq, items))
        if len(self._new_ids) + len(self._new_anchors) >= self.BATCH or len(waiting) >= \
                self.BATCH or self._new_chars >= self.BATCH_CHARS:
            self.flush()

    def _scan_new(self, new: dict[str, None], known: Memo, scan: Callable[[str], tuple]
                  ) -> list[tuple[Memo, str]]:
        """Scan and remember every line of `new` (over-long ones too: returned, to forget)."""
        kept = []
        remember, limit = known.remember, self.LINE_CHARS
        for line in new:
            remember(line, scan(line))
            if len(line) > limit:
                kept.append((known, line))
        return kept

    def _probe_line(self, line: str) -> tuple[int, ...]:
        return tuple(interned_facts(line, self._index, self.facts))

    def _anchor_line(self, line: str) -> tuple[tuple[str, str], ...]:
        return tuple(line_anchors(line, self._stop))

    # -- texts ---------------------------------------------------------------------------------

    def fact_ids(self, parts: Iterable[str]) -> list[int]:
        """Ids of the distinct facts of `"\\n".join(parts)`, in order of first appearance."""
        return self._fact_ids(parts, None)  # type: ignore[return-value]

    def anchor_keys(self, pieces: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of `(how, text)` pieces, in order of first appearance."""
        return self._anchor_keys(pieces, None)  # type: ignore[return-value]

    def _fact_ids(self, parts: Iterable[str], new: dict[str, None] | None) -> list[int] | None:
        """`fact_ids`; None when some line waits for the batch (`new`: batching, `_lines`)."""
        known = self._text_ids
        out: list[int] | None = []
        for part in parts:
            found = known.get(part)
            if found is None:
                found = self._scan_ids(part, new)
                if found is None:
                    out = None
                    continue
            if found and out is not None:
                out += found
        return out if out is None or len(out) < 2 else list(dict.fromkeys(out))

    def _anchor_keys(self, pieces: Sequence[tuple[str, str]], new: dict[str, None] | None
                     ) -> tuple[tuple[str, str], ...] | None:
        """`anchor_keys`; None when some line waits for the batch (as `_fact_ids`)."""
        known = self._text_anchors
        seen: dict[tuple[str, str], None] = {}
        found: tuple[tuple[str, str], ...] | None = ()
        ready = True
        for piece in pieces:
            found = known.get(piece)
            if found is None:
                found = self._scan_anchors(piece, new)
                if found is None:
                    ready = False
                    continue
            if found:
                seen.update(dict.fromkeys(found))
        if not ready:
            return None
        return found if len(pieces) == 1 else tuple(seen)

    def _scan_ids(self, text: str, new: dict[str, None] | None) -> tuple[int, ...] | None:
        ids = self._lines(text, self._line_ids, self._probe_line, new)
        if ids is None:
            return None
        result = tuple(dict.fromkeys(ids)) if len(ids) > 1 else tuple(ids)
        return self._text_ids.remember(text, result) if len(text) <= self.TEXT_CHARS else result

    def _scan_anchors(self, piece: tuple[str, str], new: dict[str, None] | None
                      ) -> tuple[tuple[str, str], ...] | None:
        how, text = piece
        scanned = self._lines(text, self._line_anchors, self._anchor_line, new)
        if scanned is None:
            return None
        result = tuple(dict.fromkeys(piece_anchors(how, text, self._stop, scanned)))
        return self._text_anchors.remember(piece, result) if len(text) <= self.TEXT_CHARS \
            else result

    def _lines(self, text: str, known: Memo, scan: Callable[[str], tuple],
               new: dict[str, None] | None) -> list[Any] | None:
        """What `scan` finds in each line of `text`, concatenated; a line's finds are read from
        (and, up to `LINE_CHARS` characters, kept in) the measure's line memo `known`. Batching
        (`new` given), a line no memo holds joins `new` instead, and the text's finds are None."""
        out: list[Any] | None = []
        for line in text.split("\n"):
            found = known.get(line)
            if found is None:
                if new is not None:
                    if line not in new:
                        new[line] = None
                        self._new_chars += len(line)
                    out = None
                    continue
                found = scan(line)
                if len(line) <= self.LINE_CHARS:
                    known.remember(line, found)
            if found and out is not None:
                out += found
        return out

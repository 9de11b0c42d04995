"""The one reading of message text for the lost-fact probe and the quality anchors. Layer: core
(pure).

Two measures read what a model was shown: the lost-fact probe (`probe.text_facts` of the text
`probe.message_text` joins) and the compaction-quality anchors (`anchors.piece_anchors` of the
pieces `anchor_texts.message_texts` yields). `TextScan` serves both from one walk of a message's
content and memos of the texts and lines it has read:

* `message(m)` walks the content once for both views (`anchor_texts.message_views`): the
  probe's parts (every text, tool-call name and raw arguments, tool-result content) and the
  anchors' pieces (the same texts but the tool calls' parsed argument values, no harness
  boilerplate, no checkpoint framing). The walk of the last message is remembered: the log's
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

Memory is bounded: at most `TEXTS` texts of up to `TEXT_CHARS` and `LINES` lines of up to
`LINE_CHARS` characters are remembered (a full memo is cleared).
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

    def __init__(self, *, probe: bool = True, anchors: bool = True,
                 stop: frozenset[str] = frozenset()) -> None:
        self.probe_parts = probe
        self.anchor_pieces = anchors
        self._stop = stop
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

    @property
    def stop(self) -> frozenset[str]:
        """Schema words that are never anchors."""
        return self._stop

    @stop.setter
    def stop(self, words: frozenset[str]) -> None:
        if words != self._stop:
            self._stop = words
            self._text_anchors.clear()
            self._line_anchors.clear()

    # -- messages ------------------------------------------------------------------------------

    def message(self, message: Any) -> tuple[list[str], Pieces]:
        """`(probe parts, anchor pieces)` of a model message (`probe.message_parts`,
        `anchor_texts.message_texts`; a view this scan does not serve is empty)."""
        if message is not self._walked:
            self._walked = message
            self._walk = message_views(message, parts=self.probe_parts,
                                       pieces=self.anchor_pieces)
        return self._walk

    def probe(self, message: Any) -> tuple[int, list[int]]:
        """`(len(probe.message_text(message)), ids of its distinct facts in order)`."""
        parts = (self._walk if message is self._walked else self.message(message))[0]
        chars = sum(map(len, parts)) + len(parts) - 1 if parts else 0
        return chars, self.fact_ids(parts)

    def anchors(self, message: Any) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of a model message in order (`anchors.anchor_keys` of its
        `message_texts`)."""
        return self.anchor_keys(
            (self._walk if message is self._walked else self.message(message))[1])

    # -- texts ---------------------------------------------------------------------------------

    def fact_ids(self, parts: Iterable[str]) -> list[int]:
        """Ids of the distinct facts of `"\\n".join(parts)`, in order of first appearance."""
        known = self._text_ids
        out: list[int] = []
        for part in parts:
            found = known.get(part)
            if found is None:
                found = self._scan_ids(part)
            if found:
                out += found
        return list(dict.fromkeys(out)) if len(out) > 1 else out

    def anchor_keys(self, pieces: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of `(how, text)` pieces, in order of first appearance."""
        known = self._text_anchors
        seen: dict[tuple[str, str], None] = {}
        found: tuple[tuple[str, str], ...] = ()
        for piece in pieces:
            found = known.get(piece)  # type: ignore[assignment]
            if found is None:
                found = self._scan_anchors(piece)
            if found:
                seen.update(dict.fromkeys(found))
        return found if len(pieces) == 1 else tuple(seen)

    def _scan_ids(self, text: str) -> tuple[int, ...]:
        index, facts = self._index, self.facts
        ids = self._lines(text, self._line_ids, lambda line: interned_facts(line, index, facts))
        result = tuple(dict.fromkeys(ids)) if len(ids) > 1 else tuple(ids)
        return self._text_ids.remember(text, result) if len(text) <= self.TEXT_CHARS else result

    def _scan_anchors(self, piece: tuple[str, str]) -> tuple[tuple[str, str], ...]:
        stop = self._stop
        how, text = piece
        scanned = self._lines(text, self._line_anchors, lambda line: line_anchors(line, stop))
        result = tuple(dict.fromkeys(piece_anchors(how, text, stop, scanned)))
        return self._text_anchors.remember(piece, result) if len(text) <= self.TEXT_CHARS \
            else result

    def _lines(self, text: str, known: Memo, scan: Callable[[str], Iterable[Any]]) -> list[Any]:
        """What `scan` finds in each line of `text`, concatenated; a line's finds are read from
        (and, up to `LINE_CHARS` characters, kept in) the measure's line memo `known`."""
        out: list[Any] = []
        for line in text.split("\n"):
            found = known.get(line)
            if found is None:
                found = tuple(scan(line))
                if len(line) <= self.LINE_CHARS:
                    known.remember(line, found)
            if found:
                out += found
        return out

"""The one reading of message text for the lost-fact probe and the quality anchors. Layer: core
(pure).

Two measures read what a model was shown: the lost-fact probe (`probe.text_facts` of the text
`probe.message_text` joins) and the compaction-quality anchors (`anchors.piece_anchors` of the
pieces `anchor_texts.message_texts` yields). `TextScan` serves both from one walk of a message's
content and one memo of texts and lines:

* `message(m)` walks the content once and yields both views of it: the probe's parts (every
  text, tool-call name and raw arguments, tool-result content) and the anchors' pieces (the
  same texts but the tool calls' parsed argument values, no harness boilerplate, no checkpoint
  framing). The walk of the last message is remembered: the one pass hands each message to
  both measures (`eventfacts.EventFacts`, `quality.facts.FactReader`).
* a distinct text is read once per measure (a text memo: logs repeat file reads, command
  output, argument boilerplate, the checkpoint preamble of every nested checkpoint), and, inside
  texts not seen yet, a distinct line is scanned once per measure (a line memo). No probe
  pattern or anchor rule matches across a line break (`probe.text_facts`,
  `anchors.text_anchors`), so a text's results are its lines' results in turn: exact.
* the probe's facts are interned: `facts[i]` is the `(category, value)` of id `i`, ids in order
  of first appearance; a message keeps a few ids, never its text.
* anchors depend on the schema words `stop` (never anchors): setting another `stop` forgets the
  anchors remembered (not the probe's facts).

Memory is bounded: at most `TEXTS` texts of up to `TEXT_CHARS` and `LINES` lines of up to
`LINE_CHARS` characters are remembered (a full memo is cleared).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from workbench.core.compaction.anchor_texts import message_views
from workbench.core.compaction.anchors import line_anchors, piece_anchors
from workbench.core.compaction.probe import text_facts

Pieces = list[tuple[str, str]]


class TextScan:
    """Probe facts and anchors of messages and texts, each distinct text and line read once per
    measure (module doc). `probe` / `anchors`: which measures the walk of `message` serves."""

    TEXTS = 1 << 16
    TEXT_CHARS = 8192
    LINES = 1 << 17
    LINE_CHARS = 2048

    def __init__(self, *, probe: bool = True, anchors: bool = True,
                 stop: frozenset[str] = frozenset()) -> None:
        self.probe_parts = probe
        self.anchor_pieces = anchors
        self._stop = stop
        self._texts: dict[str, list[Any]] = {}
        """Text -> [its distinct fact ids, or None; {how: its distinct anchors}, or None]."""
        self._lines: dict[str, list[Any]] = {}
        """Line -> [its fact ids in order, or None; its anchors in order, or None]."""
        self._index: dict[tuple[str, str], int] = {}
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
            for entry in self._texts.values():
                entry[1] = None
            for entry in self._lines.values():
                entry[1] = None

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
        parts = self.message(message)[0]
        chars = sum(map(len, parts)) + len(parts) - 1 if parts else 0
        return chars, self.fact_ids(parts)

    def anchors(self, message: Any) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of a model message in order (`anchors.anchor_keys` of its
        `message_texts`)."""
        return self.anchor_keys(self.message(message)[1])

    # -- texts ---------------------------------------------------------------------------------

    def fact_ids(self, parts: Iterable[str]) -> list[int]:
        """Ids of the distinct facts of `"\\n".join(parts)`, in order of first appearance."""
        texts = self._texts
        out: list[int] = []
        for part in parts:
            entry = texts.get(part)
            found = entry[0] if entry is not None else None
            if found is None:
                found = self._text_ids(part, entry)
            if found:
                out += found
        return list(dict.fromkeys(out)) if len(out) > 1 else out

    def anchor_keys(self, pieces: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of `(how, text)` pieces, in order of first appearance."""
        texts = self._texts
        seen: dict[tuple[str, str], None] = {}
        found: tuple[tuple[str, str], ...] = ()
        for how, text in pieces:
            entry = texts.get(text)
            by_how = entry[1] if entry is not None else None
            found = by_how.get(how) if by_how is not None else None  # type: ignore[assignment]
            if found is None:
                found = self._text_anchors(how, text, entry)
            if found:
                seen.update(dict.fromkeys(found))
        return found if len(pieces) == 1 else tuple(seen)

    def _entry(self, text: str, entry: list[Any] | None) -> list[Any] | None:
        if entry is not None or len(text) > self.TEXT_CHARS:
            return entry
        texts = self._texts
        if len(texts) >= self.TEXTS:
            texts.clear()
        entry = texts[text] = [None, None]
        return entry

    def _text_ids(self, text: str, entry: list[Any] | None) -> tuple[int, ...]:
        lines = self._lines
        ids: list[int] = []
        for line in text.split("\n"):
            known = lines.get(line)
            found = known[0] if known is not None else None
            if found is None:
                found = self._line_ids(line, known)
            if found:
                ids += found
        result = tuple(dict.fromkeys(ids)) if len(ids) > 1 else tuple(ids)
        entry = self._entry(text, entry)
        if entry is not None:
            entry[0] = result
        return result

    def _text_anchors(self, how: str, text: str, entry: list[Any] | None
                      ) -> tuple[tuple[str, str], ...]:
        lines, stop = self._lines, self._stop
        scanned: list[tuple[str, str]] = []
        for line in text.split("\n"):
            known = lines.get(line)
            found = known[1] if known is not None else None
            if found is None:
                found = tuple(line_anchors(line, stop))
                known = self._line_entry(line, known)
                if known is not None:
                    known[1] = found
            if found:
                scanned += found
        result = tuple(dict.fromkeys(piece_anchors(how, text, stop, scanned)))
        entry = self._entry(text, entry)
        if entry is not None:
            if entry[1] is None:
                entry[1] = {}
            entry[1][how] = result
        return result

    def _line_entry(self, line: str, known: list[Any] | None) -> list[Any] | None:
        if known is not None or len(line) > self.LINE_CHARS:
            return known
        lines = self._lines
        if len(lines) >= self.LINES:
            lines.clear()
        known = lines[line] = [None, None]
        return known

    def _line_ids(self, line: str, known: list[Any] | None) -> tuple[int, ...]:
        index, facts = self._index, self.facts
        ids = []
        for fact in text_facts(line):
            fid = index.get(fact)
            if fid is None:
                fid = index[fact] = len(facts)
                facts.append(fact)
            ids.append(fid)
        found = tuple(ids)
        known = self._line_entry(line, known)
        if known is not None:
            known[0] = found
        return found

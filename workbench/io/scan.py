"""The JSONL line scanner shared by both formats. Layer: io (stdlib + orjson only).

A session log body is a byte stream of ``\\n``-terminated records after the header record. This
module finds the records, parses each one once, and keeps the *committed prefix* exactly as the
reference ``SessionLogScanner`` does (v0 spec §1.7, v4 spec §1.7):

* a final fragment without ``\\n`` is a torn tail: never parsed, never committed;
* the first problem line (unparsable JSON, a malformed row, a seq gap, ...) is the *issue*: it ends
  the committed prefix; only the first one is kept;
* after the issue, later lines are parsed only to look for a ``turn/end``: one makes the issue fatal
  (damage inside committed history), otherwise everything from the issue on is a tolerated tail;
* after the issue only lines that could hold a ``turn/end`` (or a v4 admission-screened type) are
  parsed, within named limits (`workbench.io.tail`): time past the first defect is bounded;
* lines are numbered 1-based from the first line after the header (the reference's ``eventLine``);
  ``\\r`` before ``\\n`` is JSON whitespace; an empty line is unparsable; a BOM is not stripped.

The format-specific work is a `RowCodec`: it admits and decodes one parsed line into events and
reports problems as `RowIssue`. The scanner itself never keeps events: it hands each accepted
event, with the location of its bytes, to a sink (see `workbench.io.store`), so a million-line log
is parsed exactly once and never held in memory as parsed dicts unless the sink decides to.

Speed (sessions of 1.3M lines): a codec may offer ``take`` (screen + decode of a well-formed
row in one call: its event, or the list of a packed row's events; side-effect free when it
raises; None leaves the parsed row to the general path) and the caller a *batch* sink. Then the
lines of a chunk run through one tight loop and reach the batch sink `BATCH` at a time; only an
unusual line (possible integer ``-0``, nested too deep, unparsable, over `MAX_LINE`, refused or
left by ``take``) goes the general per-line way, so every outcome is the general path's. The
negative-zero candidates of a chunk are found by one regex pass over the chunk and its crowded
lines (`deepjson.crowded_lines`: the only ones that may be nested too deep) by one translate
pass, not one search per line.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import orjson

from workbench.errors import WorkbenchError
from workbench.io import jsjson
from workbench.io.deepjson import crowded_lines, too_deep
from workbench.io.jsjson import INT_NEG_ZERO
from workbench.io.tail import TailScan

IssueClass = Literal["corrupt", "unsupported"]


@dataclass(frozen=True, slots=True)
class ScanIssue:
    """One reference-level problem found while reading bytes, a header or rows.

    `kind` is the stable conformance kind, `message` the reference text, `name` the reference's
    error class name (``Error``, ``SessionFormatError``, ``SessionFormatUnsupportedError``,
    ``TypeError``) and `klass` whether the reference calls it corruption or a format refusal.
    `line` numbers records as the reference's messages do: 0 is the header, 1 the first record
    after it.
    """

    kind: str
    message: str
    name: str = "Error"
    klass: IssueClass = "corrupt"
    line: int | None = None
    seq: int | None = None
    frame: int | None = None
    byte_offset: int | None = None


class IssueError(WorkbenchError):
    """Raised inside io when reading cannot go on; carries the `ScanIssue`."""

    def __init__(self, issue: ScanIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


class RowIssue(WorkbenchError):
    """A row codec's verdict on one line.

    ``fatal=False``: the line stops the committed prefix (it becomes the scanner's issue unless one
    exists); ``fatal=True``: reading stops at once (retired syntax, a ``TypeError``).
    `turn_end` says whether the offending line itself holds a ``turn/end`` (then the issue is fatal).
    """

    def __init__(self, kind: str, message: str, *, fatal: bool = False, name: str = "Error",
                 klass: IssueClass = "corrupt", turn_end: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.fatal = fatal
        self.name = name
        self.klass = klass
        self.turn_end = turn_end


class RowCodec(Protocol):
    """Format-specific handling of one parsed line (v0: `workbench.io.legacy`, v4: `rows_v4`)."""

    def decode(self, value: Any, line: int, expected_seq: int) -> list[dict]:
        """The events the line adds at `expected_seq`, or raise `RowIssue`."""

    unparsable_kind: str
    """Kind of an unparsable line (v0 ``unparsable_committed_event``, v4 ``unparsable_committed``)."""

    def screen(self, value: Any, raw: bytes) -> None:
        """Checks that apply even after an issue (v4 row admission); raise a fatal `RowIssue`."""

    def holds_turn_end(self, value: Any) -> bool:
        """Whether a line after the issue contains a ``turn/end`` (which makes the issue fatal)."""


Sink = Callable[[list, int, int, int], None]
"""``sink(events, line, start, end)``: events accepted from the line whose bytes are
``[start, end)`` in the scanned plaintext (``end`` excludes the newline)."""

BatchSink = Callable[[list, int, list, list, int, list], None]
"""``batch(events, first_line, starts, ends, chunk_start, rows)``: consecutive lines, line
``first_line + k`` at bytes ``[starts[k], ends[k])`` of the chunk that begins at plaintext offset
``chunk_start``; each line holds one of `events`, in order, except the lines listed in `rows` as
``(k, first_event, count)`` (a v0 packed row: `count` events from ``events[first_event]``)."""

_NO_LINE = 1 << 62  # a line number past any log's: no more crowded lines in the chunk

BATCH = 256
"""Lines handed to a batch sink at once: few enough that their parsed values are still in the CPU
caches when the sink's checks run (batches of a whole 8 MiB chunk run a third slower), enough
that the sink's per-batch work (the fold's call, the stages' end state) is spread thin."""

MAX_LINE = 0x1FFFFFE8
"""Longest record parsed, in bytes: V8's longest string (``2**29 - 24`` code units), where the
reference's ``buffer.toString()`` fails, so a longer line is unparsable for it too (exact for ASCII;
a line of multi-byte characters is cut at the same byte count). A longer line is counted without
being held in memory (rule ``line_limit`` names it beside the reference's issue)."""


class LineScanner(TailScan):
    """Incremental scanner over the event records that follow a header record.

    Feed plaintext with `write` (any chunking; a record may span chunks), then call `finish`.
    `committed_bytes` counts from the start of the plaintext stream including the header record
    (``base`` at construction), exactly like the reference.
    """

    __slots__ = ("codec", "sink", "batch", "input_bytes", "committed_bytes", "line", "event_count",
                 "issue", "fatal", "limit", "long_line", "_fragments", "_fragment_start",
                 "_fragment_bytes", "_oversize", "_markers", "_after_lines", "_after_bytes", "_after_input")

    def __init__(self, codec: RowCodec, sink: Sink, *, base: int = 0, batch: BatchSink | None = None) -> None:
        self.codec = codec
        self.sink = sink
        self.batch = batch if getattr(codec, "take", None) is not None else None
        self.input_bytes = base
        self.committed_bytes = base
        self.line = 0
        self.event_count = 0
        self.issue: ScanIssue | None = None
        self.fatal: ScanIssue | None = None
        self.limit: ScanIssue | None = None
        """Set when reading stopped at a limit of `workbench.io.tail`."""
        self.long_line: int | None = None
        """Line number of the first line longer than `MAX_LINE` (counted, never parsed)."""
        self._markers = (b"\\", *sorted(t.encode() for t in getattr(codec, "after_issue_types",
                                                                     ("turn/end",))))
        self._after_lines = self._after_bytes = self._after_input = 0
        self._fragments: list[bytes] = []
        self._fragment_start = base
        self._fragment_bytes = 0
        self._oversize = False

    @property
    def stopped(self) -> bool:
        """True once a fatal problem or a limit ended reading (nothing more is consumed)."""
        return self.fatal is not None or self.limit is not None

    @property
    def pending_bytes(self) -> int:
        """Bytes of the incomplete final record seen so far (the torn fragment)."""
        return self._fragment_bytes

    @property
    def pending_start(self) -> int:
        """Plaintext offset where that record starts."""
        return self._fragment_start

    @property
    def held_bytes(self) -> int:
        """Bytes of that record actually held in memory (none once it passed `MAX_LINE`)."""
        return sum(len(f) for f in self._fragments)

    def write(self, chunk: bytes | memoryview) -> None:
        """Consume the next plaintext bytes; complete records are scanned at once."""
        if self.stopped:
            self.input_bytes += len(chunk)
            return
        counted = self.issue is not None  # else the lines after an issue found here count below
        if counted and not self._charge(len(chunk), self.input_bytes):
            self.input_bytes += len(chunk)
            return
        chunk_start = self.input_bytes
        self.input_bytes += len(chunk)
        data = bytes(chunk) if not isinstance(chunk, bytes) else chunk
        find = data.find
        pos = 0
        newline = find(b"\n")
        if newline != -1 and (self._fragments or self._oversize):
            if self._oversize or self._fragment_bytes + newline > MAX_LINE:
                self._unparsable(self._fragment_start)
            else:
                self._fragments.append(data[:newline])
                line_bytes = b"".join(self._fragments)
                self._consume(line_bytes, self._fragment_start, chunk_start + newline)
            self._fragments, self._fragment_bytes, self._oversize = [], 0, False
            pos = newline + 1
            newline = find(b"\n", pos)
        if newline != -1 and self.batch is not None and self.issue is None and self.fatal is None:
            pos = self._fast(data, pos, chunk_start)
            newline = find(b"\n", pos)
        consume = self._consume
        while newline != -1:
            if self.stopped:
                return
            if self.issue is not None:
                pos = self._after_issue(data, pos, chunk_start, counted)
                break
            if newline - pos > MAX_LINE:
                self._unparsable(chunk_start + pos)
            else:
                consume(data[pos:newline], chunk_start + pos, chunk_start + newline)
            pos = newline + 1
            newline = find(b"\n", pos)
        if pos < len(data) and not self.stopped:
            if not self._fragments and not self._oversize:
                self._fragment_start = chunk_start + pos
            self._fragment_bytes += len(data) - pos
            if self._oversize or self._fragment_bytes > MAX_LINE:
                self._fragments, self._oversize = [], True
            else:
                self._fragments.append(data[pos:])

    def _fast(self, data: bytes, pos: int, chunk_start: int) -> int:
        """The complete lines of `data` from `pos` while no issue exists; returns where it stopped.

        Well-formed lines go through ``codec.take`` and reach the batch sink; any other line is
        handed to `_consume` (after the batch so far), exactly as if it had come alone: one that
        may hold ``-0`` unparsed, a crowded one nested too deep once parsed (`deepjson.bounded`).
        """
        find = data.find
        take = self.codec.take  # type: ignore[attr-defined]
        loads = orjson.loads
        limit = MAX_LINE
        end_of_data = len(data)
        hits = INT_NEG_ZERO.finditer(data, pos)
        hit = next(hits, None)
        hit_at = end_of_data if hit is None else hit.start()
        skip = data.count(b"\n", 0, pos)    # the lines before `pos`; the next is self.line + 1
        base = self.line + 1 - skip
        crowded = (base + k for k in crowded_lines(data) if k >= skip)
        crowded_at = next(crowded, _NO_LINE)
        newline = find(b"\n", pos)
        value: Any = None
        while newline != -1:
            events: list = []
            starts: list[int] = []
            ends: list[int] = []
            rows: list[tuple[int, int, int]] = []
            add_event, add_start, add_end = events.append, starts.append, ends.append
            first = line = self.line + 1
            count = self.event_count
            stop = count + BATCH
            while newline != -1:
                if hit_at < newline or newline - pos > limit or count >= stop:
                    value = None
                    break
                raw = data[pos:newline]
                try:
                    value = loads(raw)
                    if line == crowded_at:
                        crowded_at = next(crowded, _NO_LINE)
                        if too_deep(value):
                            value = None
                            break
                    event = take(value, raw, line, count)
                except Exception:  # noqa: BLE001 - the general path decides what it is
                    value = None
                    break
                if type(event) is dict:
                    add_event(event)
                    count += 1
                elif event is None:
                    break
                else:
                    rows.append((line - first, len(events), len(event)))
                    events.extend(event)
                    count += len(event)
                add_start(pos)
                add_end(newline)
                line += 1
                pos = newline + 1
                newline = find(b"\n", pos)
            if starts:
                self.line = line - 1
                self.event_count = count
                self.committed_bytes = chunk_start + ends[-1] + 1
                self.batch(events, first, starts, ends, chunk_start, rows)  # type: ignore[misc]
            if newline == -1:
                break
            if count >= stop and hit_at >= newline and newline - pos <= limit:
                continue
            if newline - pos > limit:
                self._unparsable(chunk_start + pos)
            elif value is not None:  # a parsed line take leaves to the general path
                self.line += 1
                self._settle(value, data[pos:newline], chunk_start + pos, chunk_start + newline)
            else:
                self._consume(data[pos:newline], chunk_start + pos, chunk_start + newline)
            pos = newline + 1
            if self.issue is not None or self.fatal is not None:
                break
            while hit_at < pos:
                hit = next(hits, None)
                hit_at = end_of_data if hit is None else hit.start()
            while crowded_at <= self.line:
                crowded_at = next(crowded, _NO_LINE)
            newline = find(b"\n", pos)
        return pos

    def write_long(self, length: int) -> None:
        """A record of `length` bytes over `MAX_LINE` and its newline, bytes the caller never held
        (a follower, `workbench.io.follow`), after complete records: as `write` takes it."""
        start, self.input_bytes = self.input_bytes, self.input_bytes + length + 1
        if not self.stopped and (self.issue is None or self._charge(length + 1, start)):
            self._unparsable(start)

    def _unparsable(self, start: int) -> None:
        """A record longer than `MAX_LINE`: counted as unparsable without holding or parsing it."""
        self.line += 1
        if self.long_line is None:
            self.long_line = self.line
        if self.issue is None:
            self.issue = ScanIssue(self.codec.unparsable_kind,
                                   f"corrupt session log: unparsable committed event at line {self.line}",
                                   line=self.line, byte_offset=start)

    def _consume(self, line_bytes: bytes, start: int, end: int) -> None:
        if self.issue is not None and not self._candidate(line_bytes, start):
            if self.limit is None:
                self.line += 1
            return
        self.line += 1
        line = self.line
        try:
            value = jsjson.loads(line_bytes)
        except (ValueError, UnicodeDecodeError, RecursionError):
            if self.issue is None:
                self.issue = ScanIssue(self.codec.unparsable_kind,
                                       f"corrupt session log: unparsable committed event at line {line}",
                                       line=line, byte_offset=start)
            return
        self._settle(value, line_bytes, start, end)

    def _settle(self, value: Any, line_bytes: bytes, start: int, end: int) -> None:
        """The parsed value of line `self.line`: screen, decode and sink it (or record the issue)."""
        line = self.line
        codec = self.codec
        try:
            codec.screen(value, line_bytes)
            if self.issue is not None:
                if codec.holds_turn_end(value):
                    self.fatal = self.issue
                return
            events = codec.decode(value, line, self.event_count)
        except RowIssue as exc:
            found = ScanIssue(exc.kind, exc.message, exc.name, exc.klass, line=line,
                              seq=self.event_count, byte_offset=start)
            if exc.fatal:
                self.fatal = found
            elif self.issue is None:
                self.issue = found
                if exc.turn_end:
                    self.fatal = found
            return
        except Exception as exc:  # noqa: BLE001 - a codec bug must end reading cleanly, not crash
            self.fatal = ScanIssue("reader_error", f"the workbench reader failed on line {line}: "
                                   f"{type(exc).__name__}: {exc}", line=line, seq=self.event_count,
                                   byte_offset=start)
            return
        self.event_count += len(events)
        self.committed_bytes = end + 1
        self.sink(events, line, start, end)

    def finish(self) -> bool:
        """End of input: an unterminated final record is a torn tail. Returns whether one exists."""
        torn = bool(self._fragments) or self._oversize
        self._fragments, self._fragment_bytes, self._oversize = [], 0, False
        return torn


__all__ = ["BatchSink", "IssueError", "LineScanner", "MAX_LINE", "RowCodec", "RowIssue", "ScanIssue"]

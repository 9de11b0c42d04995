"""The event container behind `Log.events`: a read-only sequence of event dicts. Layer: io.

Sessions reach 1.3 million events; their parsed dicts would not fit in memory (peak RSS must stay
under 1 GiB), so the store keeps, per event, only where its line lives and parses on demand:

* a raw ``.jsonl`` file: byte offset and length, read back with ``os.pread`` from the file opened
  read-only (never a mapped or whole-file buffer);
* a zstd log: the run of frames and the offset inside its plaintext; the frame holding a line is
  decompressed on demand and a few are cached (the byte sources: `workbench.io.sources`);
* an event whose logical form is not what re-parsing its line gives (a v0 packed-row member, an
  implicit fixture seq, a normalized legacy shape, a record spanning two zstd frames) keeps its
  line reference plus, when needed, the decoded dict itself.

Every log is stored this way, whatever its size (the load's pass reads each event while it has
it parsed). Parsed dicts are cached in a small LRU (`CACHE_EVENTS`, `CACHE_EVENT_BYTES`); any
other read parses afresh, so an event's identity means nothing: compare seqs, never ``is``.
Events are shared, never copied: callers must not mutate them. The per-event type is kept as a
small code so filters by type never parse.
"""
from __future__ import annotations

import operator
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import Any, overload

from workbench.errors import LogChanged, SeqOutOfRange
from workbench.io import jsjson
from workbench.io.memo import Recent
from workbench.io.sources import BytesSource, FileSource, FrameSource, Source

_TYPE_OF = itemgetter("type")
_SUB = operator.sub

CACHE_EVENTS = 1024
"""Parsed dicts kept by the LRU."""

CACHE_EVENT_BYTES = 64 * 1024 * 1024
"""Bytes of their lines those dicts may stand for (`memo.Recent`: a line may hold 200 MB of
text); the event just read is kept whatever its size."""

WINDOW = 4 * 1024 * 1024
"""Bytes read at once when the store is iterated in order."""


class EventStore(Sequence):
    """Read-only ``Sequence[dict]`` of a log's events (index == seq); see the module docstring.

    Where the bytes live is kept per *line* (offset and length; the line number is its position
    + 1 unless lines went missing); the type code per *event*. A line holding several events (a
    v0 packed row) is a row ``(first event, count)``; the rows map an event to its line."""

    def __init__(self, source: Source, reparse: Callable[[dict], dict]) -> None:
        self._source = source
        self._reparse = reparse
        self._offset = array("q")  # per line
        self._length = array("l")  # per line
        self._lines: array | None = None  # per line, only once a line number is not position + 1
        self._type = array("H")  # per event
        self._types: list[Any] = []
        self._type_codes: dict[Any, int] = {}
        self._run_starts = array("q", [0])
        self._run_segments = array("q", [0])
        self._packed_first = array("q")  # first event index of each packed row, ascending
        self._packed_count = array("l")  # and its member count
        self._packed_extra = array("q")  # events before the row beyond one per line
        self._extra = 0
        self._inline: dict[int, dict] = {}
        self._spanning: set[int] = set()
        self._cache = Recent(CACHE_EVENTS, CACHE_EVENT_BYTES)
        self._segment_base = 0
        self._segment_end: int | None = None
        self._row_key: tuple[int, int] | None = None
        self._row: list = []

    # -- building (called by the reader while it scans) ---------------------------------------

    def begin_segment(self, segment: int, plain_start: int, plain_end: int | None) -> None:
        """Lines from plaintext offset `plain_start` on live in `segment` (a run of zstd frames)."""
        if self._run_starts[-1] == len(self._type):
            self._run_segments[-1] = segment
        else:
            self._run_starts.append(len(self._type))
            self._run_segments.append(segment)
        self._segment_base = plain_start
        self._segment_end = plain_end

    def _number_lines(self, first_line: int, count: int) -> None:
        """Line numbers of the next `count` lines, kept explicitly once one is not position + 1."""
        lines = self._lines
        if lines is None:
            known = len(self._offset)
            if first_line == known + 1:
                return
            lines = self._lines = array("l", range(1, known + 1))
        lines.extend(range(first_line, first_line + count))

    def _row_of(self, first: int, count: int) -> None:
        self._packed_first.append(first)
        self._packed_count.append(count)
        self._packed_extra.append(self._extra)
        self._extra += count - 1

    def add(self, events: list, line: int, start: int, end: int, inline: bool = False,
            packed: bool = False) -> None:
        """Record the events decoded from the line at plaintext ``[start, end)``."""
        count = len(events)
        if not count:
            return
        index = len(self._type)
        if start < self._segment_base or (self._segment_end is not None and end > self._segment_end):
            inline = True
            self._spanning.update(range(index, index + count))
        length = end - start
        self._number_lines(line, 1)
        self._offset.append(start - self._segment_base)
        self._length.append(length)
        codes = self._type_codes
        for event in events:
            kind = event.get("type") if type(event) is dict else None
            try:
                code = codes[kind]
            except (KeyError, TypeError):
                code = self._code(kind)
            self._type.append(code)
        if count > 1:
            self._row_of(index, count)
        if inline:
            for member, event in enumerate(events):
                self._inline[index + member] = event

    def extend(self, events: list, first_line: int, starts: list, ends: list, chunk_start: int,
               rows: list | None = None) -> None:
        """Record consecutive lines of one chunk (`workbench.io.scan.BatchSink`): the bulk form
        of `add` for lines that lie inside the current segment, each one event or a packed row."""
        shift = chunk_start - self._segment_base
        if shift < 0 or (self._segment_end is not None and chunk_start + ends[-1] > self._segment_end):
            self._extend_lines(events, first_line, starts, ends, chunk_start, rows or [])
            return
        index = len(self._type)
        codes = self._type_codes
        try:
            types = list(map(codes.__getitem__, map(_TYPE_OF, events)))
        except (KeyError, TypeError):
            code_of = self._code
            types = [code_of(event.get("type") if type(event) is dict else None) for event in events]
        lengths = list(map(_SUB, ends, starts))
        self._number_lines(first_line, len(starts))
        self._offset.extend(map(shift.__add__, starts) if shift else starts)
        self._length.extend(lengths)
        self._type.extend(types)
        for _, at, count in rows or ():
            self._row_of(index + at, count)

    def _extend_lines(self, events: list, first_line: int, starts: list, ends: list, chunk_start: int,
                      rows: list) -> None:
        """`extend` line by line through `add` (lines outside the current segment)."""
        next_row = iter(rows)
        row = next(next_row, None)
        at = 0
        for k in range(len(starts)):
            if row is not None and row[0] == k:
                _, at, count = row
                self.add(events[at:at + count], first_line + k, chunk_start + starts[k], chunk_start + ends[k],
                         packed=True)
                at += count
                row = next(next_row, None)
            else:
                self.add(events[at:at + 1], first_line + k, chunk_start + starts[k], chunk_start + ends[k])
                at += 1

    def _code(self, kind: Any) -> int:
        """The small code of a ``type`` value (a new one for a value not seen yet)."""
        codes = self._type_codes
        try:
            code = codes.get(kind)
        except TypeError:  # an unhashable "type" value: the code of None
            kind = None
            code = codes.get(None)
        if code is None:
            code = codes[kind] = len(self._types)
            self._types.append(kind)
        return code

    def _locate(self, index: int) -> tuple[int, int | None]:
        """The line (position) of an event, and its member number in a packed row (else None)."""
        firsts = self._packed_first
        if not firsts:
            return index, None
        row = bisect_right(firsts, index) - 1
        if row < 0:
            return index, None
        first, count = firsts[row], self._packed_count[row]
        if index - first < count:
            return first - self._packed_extra[row], index - first
        return index - self._packed_extra[row] - count + 1, None

    def _segment_of(self, index: int) -> int:
        return self._run_segments[bisect_right(self._run_starts, index) - 1]

    # -- reading --------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._type)

    @overload
    def __getitem__(self, index: int) -> dict: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self._type)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise SeqOutOfRange("event index out of range")
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        event = self._load(index)
        line = self._locate(index)[0] if self._packed_first else index
        return self._cache.keep(index, event, self._length[line])   # its line's bytes: its cost

    def _load(self, index: int) -> dict:
        inline = self._inline.get(index)
        if inline is not None:
            return inline
        line, member = self._locate(index)
        segment, offset = self._segment_of(index), self._offset[line]
        if member is not None and self._row_key == (segment, offset):
            return self._row[member]
        raw = self._source.read(segment, offset, self._length[line])
        if member is not None:
            self._row_key, self._row = (segment, offset), self._read_row(index, line, raw)
            return self._checked(index, line, self._row[member])
        return self._event(index, line, raw)

    # -- reading a line back: the bytes the load read, else the file changed (`LogChanged`) ----

    def _event(self, index: int, line: int, raw: bytes) -> dict:
        """Event `index` from its line's bytes `raw`, read back; `LogChanged` when they are not
        what the load read (short, not JSON, not that event: the file changed on disk since)."""
        try:
            if len(raw) != self._length[line]:
                raise LogChanged(f"{len(raw)} of its {self._length[line]} bytes are left")
            value = jsjson.loads(raw)
            if type(value) is not dict or value.get("seq", index) != index:
                raise LogChanged("it holds another event")
            return self._reparse(value)
        except Exception as exc:  # noqa: BLE001 - bytes validated at load: any failure is a change
            raise self._changed(index, line, exc) from exc

    def _read_row(self, index: int, line: int, raw: bytes) -> list:
        """The events of the v0 packed row on `line` (holding event `index`) from its bytes."""
        from workbench.io import rows_v0
        try:
            if len(raw) != self._length[line]:
                raise LogChanged(f"{len(raw)} of its {self._length[line]} bytes are left")
            return rows_v0.decode_storage_record(jsjson.loads(raw))
        except Exception as exc:  # noqa: BLE001 - as in `_event`
            raise self._changed(index, line, exc) from exc

    def _checked(self, index: int, line: int, event: Any) -> dict:
        if type(event) is not dict or event.get("seq", index) != index:
            raise self._changed(index, line, LogChanged("it holds another event"))
        return event

    def _changed(self, index: int, line: int, exc: Exception) -> LogChanged:
        number = line + 1 if self._lines is None else self._lines[line]
        why = str(exc) if isinstance(exc, LogChanged) else f"{type(exc).__name__}: {str(exc)[:200]}"
        return LogChanged(f"{self._source.name}: event {index} (line {number}) no longer reads back "
                          f"as loaded ({why}): the file changed on disk after it was loaded; load it again")

    def __iter__(self) -> Iterator[dict]:
        """Sequential reading in large windows (one ``pread`` per `WINDOW` bytes, not per event);
        the LRU is neither consulted nor filled, so a full pass does not evict random reads."""
        window = _Window(self._source.read)
        row: list = []
        inline = self._inline
        offsets, lengths = self._offset, self._length
        firsts, counts = self._packed_first, self._packed_count
        rows = len(firsts)
        packed_at = 0  # the first packed row that does not end before `index`
        line = -1
        for index in range(len(self._type)):
            while packed_at < rows and firsts[packed_at] + counts[packed_at] <= index:
                packed_at += 1
            member = index - firsts[packed_at] if packed_at < rows and firsts[packed_at] <= index else None
            if not member:  # a line of its own, or a row's first event
                line += 1
            cached = inline.get(index)
            if cached is not None:
                yield cached
                continue
            if member:  # a later member of the row decoded for its first event
                yield self._checked(index, line, row[member])
                continue
            raw = window.record(self._segment_of(index), offsets[line], lengths[line])
            if member is not None:
                row = self._read_row(index, line, raw)
                yield self._checked(index, line, row[0])
            else:
                yield self._event(index, line, raw)

    def iter_at(self, indexes: Sequence[int]) -> Iterator[tuple[int, dict]]:
        """`(index, event)` for ascending `indexes`, parsing only those: windowed sequential
        reads like `__iter__`, but the events between are neither parsed nor decoded (a
        packed v0 row member is read by index, through the row cache)."""
        window, inline = _Window(self._source.read), self._inline
        offsets, lengths = self._offset, self._length
        for index in indexes:
            cached = inline.get(index)
            if cached is not None:
                yield index, cached
                continue
            line, member = self._locate(index)
            if member is not None:
                yield index, self[index]
                continue
            yield index, self._event(index, line, window.record(self._segment_of(index), offsets[line],
                                                                lengths[line]))

    def type_of(self, index: int) -> Any:
        """The event's ``type`` without parsing it."""
        return self._types[self._type[index]]

    def line_of(self, index: int) -> int:
        """1-based body line (the header is line 0) of the record holding the event."""
        line = self._locate(index)[0]
        return line + 1 if self._lines is None else self._lines[line]

    def raw_line(self, index: int) -> bytes:
        """The stored bytes of the line holding the event (without its newline)."""
        if index in self._spanning:
            return jsjson.stringify(self._inline[index]).encode("utf-8", "surrogatepass")
        line = self._locate(index)[0]
        return self._source.read(self._segment_of(index), self._offset[line], self._length[line])

    def indexes_of_type(self, kind: str) -> list[int]:
        """Seqs of every event of one type, from the type codes (no parsing)."""
        code = self._type_codes.get(kind)
        if code is None:
            return []
        return [i for i, c in enumerate(self._type) if c == code]

    def close(self) -> None:
        """Release the file descriptor and frame cache (reading again reopens them)."""
        self._cache.clear()
        self._source.close()

    def __repr__(self) -> str:
        return f"EventStore({len(self)} events)"


class _Window:
    """The bytes of one in-order read: `record` slices a record out of the current window, or
    first reads `WINDOW` bytes (at least the record) of its segment from the record's offset."""

    __slots__ = ("_read", "_segment", "_start", "_bytes")

    def __init__(self, read: Any) -> None:
        self._read, self._segment, self._start, self._bytes = read, -1, 0, b""

    def record(self, segment: int, offset: int, length: int) -> bytes:
        start = self._start
        if segment != self._segment or offset < start or offset + length > start + len(self._bytes):
            self._segment = segment
            self._start = start = offset
            self._bytes = self._read(segment, offset, max(WINDOW, length))
        return self._bytes[offset - start:offset - start + length]


__all__ = ["BytesSource", "EventStore", "FileSource", "FrameSource", "Source"]


"""The event container behind `Log.events`: a read-only sequence of event dicts. Layer: io.

Sessions reach 1.3 million events; their parsed dicts would not fit in memory (peak RSS must stay
under 1 GiB), so the store keeps, per event, only where its line lives and parses on demand:

* a raw ``.jsonl`` file: byte offset and length, read back with ``os.pread`` from the file opened
  read-only (never a mapped or whole-file buffer);
* a zstd log: the frame and the offset inside its plaintext; frames are decompressed on demand
  and a few are cached;
* an event whose logical form is not what re-parsing its line gives (a v0 packed-row member, an
  implicit fixture seq, a normalized legacy shape, a record spanning two zstd frames) keeps its
  line reference plus, when needed, the decoded dict itself.

Small logs (below `KEEP_EVENTS` events and `KEEP_BYTES` bytes of lines) simply keep every parsed
dict: the fast path. Parsed dicts of large logs are cached in a small LRU. Events are shared,
never copied: callers must not mutate them. The per-event type is kept as a small code so
filters by type never parse.
"""
from __future__ import annotations

import operator
import os
import threading
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import Any, overload

from workbench.io.scan import parse_line

_TYPE_OF = itemgetter("type")
_SUB = operator.sub

KEEP_EVENTS = 200_000
"""Keep parsed dicts of logs up to this many events (fast path)."""

KEEP_BYTES = 64 * 1024 * 1024
"""... and up to this many bytes of event lines."""

CACHE_EVENTS = 4096
"""Parsed dicts kept by a large log's LRU."""

CACHE_FRAMES = 64
"""Decompressed zstd frames kept by a large log's LRU (a writer's frame holds a few KiB)."""

WINDOW = 4 * 1024 * 1024
"""Bytes read at once when a large log is iterated in order."""



class Source:
    """Random access to the plaintext bytes a log's events were scanned from."""

    def read(self, segment: int, offset: int, length: int) -> bytes:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        return None


class BytesSource(Source):
    """Plaintext held in memory (`read_bytes`): segment 0 is the buffer."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, segment: int, offset: int, length: int) -> bytes:
        return self.data[offset:offset + length]


class FileSource(Source):
    """A raw ``.jsonl`` file read with ``pread`` from one read-only descriptor, opened on first use
    and kept until `close` (reading again reopens it). A read from the page cache costs about a
    microsecond, less than parsing the line; a block cache measured slower for random reads."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._finalizer: Any = None

    def _open(self) -> int:
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                self._finalizer = weakref.finalize(self, os.close, self._fd)
            return self._fd

    def read(self, segment: int, offset: int, length: int) -> bytes:
        fd = self._fd
        return os.pread(self._open() if fd is None else fd, length, offset)

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
            self._fd = None


class FrameSource(Source):
    """A zstd log: segment k is the plaintext of a run of consecutive frames (the reader
    registers the runs with `add_segment`: the scan hands the scanner a run at once, since tens of
    frames of a few KiB each cost far less together). A read decompresses only the frames it
    covers, and keeps the last `CACHE_FRAMES` frames decompressed (LRU).

    Frame k (0-based) spans ``starts[k]..ends[k]`` of the compressed file; the segment after the
    registered ones (`torn_segment`) is the torn final frame ``torn_start..torn_end``, if any.
    """

    def __init__(self, compressed: Source, starts: array, ends: array, torn: tuple[int, int] | None,
                 decode: Callable[[bytes, int, bool], bytes]) -> None:
        self.compressed = compressed
        self.starts, self.ends, self.torn = starts, ends, torn
        self._decode = decode
        self._cache: OrderedDict[int, bytes] = OrderedDict()  # frame number (torn: -1) -> plaintext
        self._lock = threading.Lock()
        self._first = array("q")  # segment k holds frames _first[k] .. _stop[k] - 1
        self._stop = array("q")
        self._within = array("q")  # plaintext offset of frame k inside its segment (registered frames)
        self._size = array("q")  # plaintext size of segment k (-1: not registered)

    def add_segment(self, first: int, stop: int, sizes: Sequence[int] = ()) -> int:
        """Register frames ``first .. stop - 1`` (plaintext `sizes`) as the next segment; returns
        its number. Frames are registered in order."""
        within = self._within
        while len(within) < first:
            within.append(0)
        position = 0
        for size in sizes:
            within.append(position)
            position += size
        while len(within) < stop:
            within.append(position)
        self._first.append(first)
        self._stop.append(stop)
        self._size.append(position if len(sizes) == stop - first else -1)
        return len(self._first) - 1

    @property
    def torn_segment(self) -> int:
        """The segment number of the torn final frame (after every registered segment)."""
        return len(self._first)

    def _frame(self, frame: int, keep: bool = True) -> bytes:
        """Frame `frame` decompressed (-1: the torn one); `keep=False` reads through the LRU."""
        with self._lock:
            cached = self._cache.get(frame)
            if cached is not None:
                self._cache.move_to_end(frame)
                return cached
        if frame < 0:
            start, end = self.torn  # type: ignore[misc]
            data = self._decode(self.compressed.read(0, start, end - start), start, True)
        else:
            start = self.starts[frame]
            data = self._decode(self.compressed.read(0, start, self.ends[frame] - start), start, False)
        if keep:
            with self._lock:
                self._cache[frame] = data
                if len(self._cache) > CACHE_FRAMES:
                    self._cache.popitem(last=False)
        return data

    def plaintext(self, segment: int) -> bytes:
        """The whole plaintext of one segment."""
        if segment >= len(self._first):
            return self._frame(-1)
        return b"".join(self._frame(k) for k in range(self._first[segment], self._stop[segment]))

    def read(self, segment: int, offset: int, length: int) -> bytes:
        if segment >= len(self._first):
            return self._frame(-1)[offset:offset + length]
        first, stop = self._first[segment], self._stop[segment]
        within = self._within
        if self._size[segment] < 0:  # frame sizes not registered: the whole segment
            return self.plaintext(segment)[offset:offset + length]
        frame = bisect_right(within, offset, first, stop) - 1
        last = bisect_left(within, offset + length, first, stop) - 1  # the last frame the read touches
        start = offset - within[frame]
        if last <= frame:  # one frame: kept for the reads near it
            return self._frame(frame)[start:start + length]
        # several frames (an in-order window): decompressed for this read only
        data = b"".join([self._frame(k, keep=False) for k in range(frame, last + 1)])
        return data[start:start + length]

    def close(self) -> None:
        with self._lock:
            self._cache.clear()
        self.compressed.close()


class EventStore(Sequence):
    """Read-only ``Sequence[dict]`` of a log's events (index == seq); see the module docstring."""

    def __init__(self, source: Source, reparse: Callable[[dict], dict], *,
                 keep_events: int = KEEP_EVENTS, keep_bytes: int = KEEP_BYTES,
                 expected_bytes: int = 0) -> None:
        self._source = source
        self._reparse = reparse
        self._keep_events = keep_events
        self._keep_bytes = keep_bytes
        # a log known to be large is lazy from the first event: no dict list to grow and drop
        self._dicts: list[dict] | None = [] if expected_bytes <= keep_bytes else None
        self._bytes = 0
        self._offset = array("q")
        self._length = array("l")
        self._line = array("l")
        self._type = array("H")
        self._types: list[Any] = []
        self._type_codes: dict[Any, int] = {}
        self._run_starts = array("q", [0])
        self._run_segments = array("q", [0])
        self._packed_first = array("q")  # first event index of each packed row, ascending
        self._packed_count = array("l")  # and its member count
        self._inline: dict[int, dict] = {}
        self._spanning: set[int] = set()
        self._cache: OrderedDict[int, dict] = OrderedDict()
        self._segment_base = 0
        self._segment_end: int | None = None
        self._row_key: tuple[int, int] | None = None
        self._row: list = []

    # -- building (called by the reader while it scans) ---------------------------------------

    def begin_segment(self, segment: int, plain_start: int, plain_end: int | None) -> None:
        """Lines from plaintext offset `plain_start` on live in `segment` (a zstd frame)."""
        if self._run_starts[-1] == len(self._type):
            self._run_segments[-1] = segment
        else:
            self._run_starts.append(len(self._type))
            self._run_segments.append(segment)
        self._segment_base = plain_start
        self._segment_end = plain_end

    def add(self, events: list, line: int, start: int, end: int, inline: bool = False,
            packed: bool = False) -> None:
        """Record the events decoded from the line at plaintext ``[start, end)``."""
        index = len(self._type)
        if start < self._segment_base or (self._segment_end is not None and end > self._segment_end):
            inline = True
            self._spanning.update(range(index, index + len(events)))
        offset = start - self._segment_base
        length = end - start
        codes = self._type_codes
        if len(events) == 1 and not inline and not packed:
            event = events[0]
            kind = event.get("type") if type(event) is dict else None
            try:
                code = codes[kind]
            except (KeyError, TypeError):
                code = self._code(kind)
            self._type.append(code)
            self._offset.append(offset)
            self._length.append(length)
            self._line.append(line)
        else:
            count = len(events)
            code_list = []
            for event in events:
                kind = event.get("type") if type(event) is dict else None
                try:
                    code_list.append(codes[kind])
                except (KeyError, TypeError):
                    code_list.append(self._code(kind))
            self._type.extend(code_list)
            self._offset.extend([offset] * count)
            self._length.extend([length] * count)
            self._line.extend([line] * count)
            if packed and count:
                self._packed_first.append(index)
                self._packed_count.append(count)
            if inline:
                for member, event in enumerate(events):
                    self._inline[index + member] = event
        dicts = self._dicts
        if dicts is not None:
            dicts.extend(events)
            self._bytes += length
            if len(dicts) > self._keep_events or self._bytes > self._keep_bytes:
                self._dicts = None

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
        if rows:  # packed rows: their events share the row's line
            offsets: list = []
            spans: list = []
            lines: list = []
            done = 0
            for k, at, count in rows:
                offsets += starts[done:k]
                spans += lengths[done:k]
                lines += range(first_line + done, first_line + k)
                offsets += [starts[k]] * count
                spans += [lengths[k]] * count
                lines += [first_line + k] * count
                self._packed_first.append(index + at)
                self._packed_count.append(count)
                done = k + 1
            offsets += starts[done:]
            spans += lengths[done:]
            lines += range(first_line + done, first_line + len(starts))
            self._offset.extend(map(shift.__add__, offsets) if shift else offsets)
            self._length.extend(spans)
            self._line.extend(lines)
        else:
            self._offset.extend(map(shift.__add__, starts) if shift else starts)
            self._length.extend(lengths)
            self._line.extend(range(first_line, first_line + len(starts)))
        self._type.extend(types)
        dicts = self._dicts
        if dicts is not None:
            dicts.extend(events)
            self._bytes += sum(lengths)
            if len(dicts) > self._keep_events or self._bytes > self._keep_bytes:
                self._dicts = None

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

    def _member_of(self, index: int) -> int | None:
        """The member number of an event of a packed v0 row (None: the event has its own line)."""
        firsts = self._packed_first
        if not firsts:
            return None
        row = bisect_right(firsts, index) - 1
        if row < 0:
            return None
        member = index - firsts[row]
        return member if member < self._packed_count[row] else None

    def _segment_of(self, index: int) -> int:
        return self._run_segments[bisect_right(self._run_starts, index) - 1]

    @property
    def lazy(self) -> bool:
        """Whether events are parsed on demand (a large log) rather than kept."""
        return self._dicts is None

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
        if self._dicts is not None:
            return self._dicts[index]
        n = len(self._type)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("event index out of range")
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        event = self._load(index)
        self._cache[index] = event
        if len(self._cache) > CACHE_EVENTS:
            self._cache.popitem(last=False)
        return event

    def _load(self, index: int) -> dict:
        inline = self._inline.get(index)
        if inline is not None:
            return inline
        segment, offset = self._segment_of(index), self._offset[index]
        member = self._member_of(index)
        if member is not None and self._row_key == (segment, offset):
            return self._row[member]
        value = parse_line(self._source.read(segment, offset, self._length[index]))
        if member is not None:
            from workbench.io import rows_v0
            self._row_key, self._row = (segment, offset), rows_v0.decode_storage_record(value)
            return self._row[member]
        return self._reparse(value)

    def __iter__(self) -> Iterator[dict]:
        if self._dicts is not None:
            return iter(self._dicts)
        return self._iter_lazy()

    def _iter_lazy(self) -> Iterator[dict]:
        """Sequential reading in large windows (one ``pread`` per `WINDOW` bytes, not per event);
        the LRU is neither consulted nor filled, so a full pass does not evict random reads."""
        window_segment, window_start, window = -1, 0, b""
        row_key: tuple[int, int] | None = None
        row: list = []
        read = self._source.read
        firsts, counts = self._packed_first, self._packed_count
        rows = len(firsts)
        packed_at = 0  # the first packed row that does not end before `index`
        for index in range(len(self._type)):
            cached = self._inline.get(index)
            if cached is not None:
                yield cached
                continue
            segment = self._segment_of(index)
            offset, length = self._offset[index], self._length[index]
            if segment != window_segment or offset < window_start or offset + length > window_start + len(window):
                window_segment, window_start = segment, offset
                window = read(segment, offset, max(WINDOW, length))
            while packed_at < rows and firsts[packed_at] + counts[packed_at] <= index:
                packed_at += 1
            member = index - firsts[packed_at] if packed_at < rows and firsts[packed_at] <= index else None
            if member is not None and row_key == (segment, offset):
                yield row[member]
                continue
            value = parse_line(window[offset - window_start:offset - window_start + length])
            if member is not None:
                from workbench.io import rows_v0
                row_key, row = (segment, offset), rows_v0.decode_storage_record(value)
                yield row[member]
            else:
                yield self._reparse(value)

    def type_of(self, index: int) -> Any:
        """The event's ``type`` without parsing it."""
        return self._types[self._type[index]]

    def line_of(self, index: int) -> int:
        """1-based body line (the header is line 0) of the record holding the event."""
        return self._line[index]

    def raw_line(self, index: int) -> bytes:
        """The stored bytes of the line holding the event (without its newline)."""
        if index in self._spanning:
            from workbench.io.jsjson import stringify
            return stringify(self._inline[index]).encode("utf-8", "surrogatepass")
        return self._source.read(self._segment_of(index), self._offset[index], self._length[index])

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
        mode = "lazy" if self._dicts is None else "kept"
        return f"EventStore({len(self)} events, {mode})"


__all__ = ["BytesSource", "EventStore", "FileSource", "FrameSource", "Source"]

"""Random access to the plaintext bytes a log was scanned from. Layer: io (stdlib only).

The event store (`workbench.io.store`) keeps, per event, where its line lives; a source reads
those bytes back on demand:

* `BytesSource`: plaintext held in memory (a log read from bytes);
* `FileSource`: a raw ``.jsonl`` file, one read-only descriptor and ``os.pread`` (never a mapped
  or whole-file buffer, never a write);
* `FrameSource`: a zstd log, whose segments are runs of consecutive frames; a read decompresses
  only the frames it covers and the last few frames are kept (LRU).

Sources are shared by the store's readers: the caches take a lock (readers may run in threads).
"""
from __future__ import annotations

import os
import threading
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from workbench.errors import LogChanged, Unimplemented, WorkbenchError
from workbench.io.memo import Recent

CACHE_FRAMES = 64
"""Decompressed zstd frames kept by a large log's LRU (a writer's frame holds a few KiB)."""

CACHE_FRAME_BYTES = 64 * 1024 * 1024
"""Plaintext bytes those frames may hold (`memo.Recent`: a hostile log's frames hold up to
`zstd.MAX_FRAME_OUTPUT` each); the frame just read is kept whatever its size."""


class Source:
    """Random access to the plaintext bytes a log's events were scanned from; `name` names the
    file in errors."""

    name = "<bytes in memory>"

    def read(self, segment: int, offset: int, length: int) -> bytes:  # pragma: no cover - interface
        raise Unimplemented

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
    microsecond, less than parsing the line; a block cache measured slower for random reads.

    `identity` (device, inode) is the file the load read: opening the path finds another file,
    or none, only when the log was replaced, moved or deleted since (`LogChanged`), never read."""

    def __init__(self, path: str, identity: tuple[int, int] | None = None) -> None:
        self.path = self.name = path
        self.identity = identity
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._finalizer: Any = None

    def _open(self) -> int:
        with self._lock:
            if self._fd is None:
                try:
                    fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                except OSError as exc:
                    raise LogChanged(f"{self.path}: the log can no longer be opened "
                                     f"({exc.strerror or exc}): moved or deleted after it was "
                                     "loaded; load it again") from None
                st = os.fstat(fd)
                if self.identity is not None and (st.st_dev, st.st_ino) != self.identity:
                    os.close(fd)
                    raise LogChanged(f"{self.path}: another file is at this path now (the log "
                                     "was replaced after it was loaded); load it again")
                self.identity = (st.st_dev, st.st_ino)
                self._fd = fd
                self._finalizer = weakref.finalize(self, os.close, fd)
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
    covers, and keeps the last `CACHE_FRAMES` frames decompressed, at most `CACHE_FRAME_BYTES` (LRU).

    Frame k (0-based) spans ``starts[k]..ends[k]`` of the compressed file; the segment after the
    registered ones (`torn_segment`) is the torn final frame ``torn_start..torn_end``, if any.
    """

    def __init__(self, compressed: Source, starts: array, ends: array, torn: tuple[int, int] | None,
                 decode: Callable[[bytes, int, bool], bytes]) -> None:
        self.compressed, self.name = compressed, compressed.name
        self.starts, self.ends, self.torn = starts, ends, torn
        self._decode = decode
        self._cache = Recent(CACHE_FRAMES, CACHE_FRAME_BYTES)  # frame number (torn: -1) -> plaintext
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
        start, end = self.torn if frame < 0 else (self.starts[frame], self.ends[frame])  # type: ignore[misc]
        try:
            data = self._decode(self.compressed.read(0, start, end - start), start, frame < 0)
        except WorkbenchError as exc:  # decoded at load: a failure now is a change on disk
            if isinstance(exc, LogChanged):
                raise
            raise LogChanged(f"{self.name}: the zstd frame at byte {start:,} no longer decodes as "
                             f"loaded ({exc}): the file changed on disk after it was loaded; load "
                             "it again") from exc
        if keep:
            with self._lock:
                self._cache.keep(frame, data, len(data))
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


__all__ = ["BytesSource", "CACHE_FRAME_BYTES", "CACHE_FRAMES", "FileSource", "FrameSource", "Source"]

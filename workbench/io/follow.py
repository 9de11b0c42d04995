"""Follow a log file while DSH appends to it: hand out each complete record once. Layer: io.

A `LogTail` remembers how far it has read (`position`) and hands out, at each `poll`, only what
was appended since: complete lines of a raw ``.jsonl`` log, complete frames of a ``.jsonl.zstd``
log. An incomplete last line or frame (a write in flight) is *not yet written*: its bytes are kept
in memory (never read again from disk) and handed out once the rest arrives.

Invariants:

* every byte of the file is read from disk once (`bytes_read`); the only bytes read again are the
  small fingerprint windows that check the known prefix is unchanged (`check_bytes`, at most
  ``2 * WINDOW`` per poll that finds the file changed);
* the known prefix is trusted only while it is verifiably the same file: a replaced file (another
  inode), a shrunk one, or a changed header window or window just before the read position makes
  the poll return a `Growth` with a ``reset`` reason, and the tail stops (the caller reloads). A
  rewrite elsewhere in the middle of a file that kept its size, inode and both windows is not
  detected (reading it all again is what following avoids);
* zstd framing problems (a bad magic, a reserved bit) end following with ``error``: the caller
  reloads the file to report them exactly as a fresh load does.

The file is opened read-only and never written.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from workbench.io import zstd
from workbench.io.scan import IssueError, ScanIssue

WINDOW = 64
"""Bytes of the file's head and of the bytes just before the read position re-read to check that
the known prefix did not change."""

READ_LIMIT = 64 * 1024 * 1024
"""Most bytes read from disk by one poll (a huge append is handed out over several polls)."""


@dataclass(slots=True)
class Growth:
    """What one poll found: ``records`` (raw: the new complete lines as one bytes; zstd: one
    ``(start, end, compressed frame)`` per new complete frame, file offsets), ``reset`` (why the
    known prefix cannot be trusted: the file was replaced, truncated or rewritten) or ``error``
    (a framing problem, `issue`; offsets count from `LogTail.position`); `pending` bytes of an incomplete record wait in memory."""

    records: bytes | list[tuple[int, int, bytes]] = b""
    reset: str | None = None
    error: str | None = None
    pending: int = 0
    appended: int = 0
    issue: ScanIssue | None = None

    @property
    def empty(self) -> bool:
        return not self.records and self.reset is None and self.error is None


@dataclass(slots=True)
class LogTail:
    """The reading position in one growing log file (module doc). `encoding` is sniffed from the
    first bytes (the zstd magic), never from the name; ``None`` until the file has 4 bytes."""

    path: str
    encoding: str | None = None
    position: int = 0          # file offset of the first byte not handed out yet
    bytes_read: int = 0        # bytes read from disk for records (each byte once)
    check_bytes: int = 0       # bytes re-read to check the known prefix
    polls: int = 0
    stopped: str | None = None
    _pending: bytearray = field(default_factory=bytearray)
    _head: bytes = b""
    _last: bytes = b""
    _identity: tuple[int, int] | None = None
    _mtime: int = -1

    @property
    def pending(self) -> int:
        """Bytes of an incomplete final record held in memory."""
        return len(self._pending)

    @property
    def consumed(self) -> int:
        """File bytes read so far (handed out or pending)."""
        return self.position + len(self._pending)

    def _stop(self, reason: str) -> Growth:
        self.stopped = reason
        return Growth(reset=reason, pending=self.pending)

    def poll(self) -> Growth:
        """Read what was appended since the last poll (module doc); never raises for a missing or
        unreadable file (a ``reset`` says what happened)."""
        self.polls += 1
        if self.stopped is not None:
            return Growth(reset=self.stopped, pending=self.pending)
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            return self._stop(f"the log can no longer be read ({exc.strerror or exc})")
        try:
            st = os.fstat(fd)
            identity = (st.st_dev, st.st_ino)
            if self._identity is None:
                self._identity = identity
            elif identity != self._identity:
                return self._stop("the log file was replaced by another file")
            size, read_to = st.st_size, self.consumed
            if size < read_to:
                return self._stop(f"the log was truncated ({size:,} bytes, {read_to:,} already read)")
            if size == read_to and st.st_mtime_ns == self._mtime:
                return Growth(pending=self.pending)
            if read_to and not self._prefix_unchanged(fd):
                return self._stop("the log was rewritten (its known prefix changed)")
            self._mtime = st.st_mtime_ns
            want = min(size - read_to, READ_LIMIT)
            data = os.pread(fd, want, read_to) if want else b""
        finally:
            os.close(fd)
        self.bytes_read += len(data)
        if not read_to:
            self._head = data[:WINDOW]
        elif len(self._head) < WINDOW:
            self._head = (self._head + data)[:WINDOW]
        self._last = (self._last + data)[-WINDOW:]
        self._pending += data
        if self.encoding is None:
            if len(self._pending) < 4:
                return Growth(pending=self.pending)
            self.encoding = "zstd" if bytes(self._pending[:4]) == zstd.MAGIC_BYTES else "jsonl"
        return self._split_zstd() if self.encoding == "zstd" else self._split_raw()

    def _prefix_unchanged(self, fd: int) -> bool:
        head = os.pread(fd, len(self._head), 0)
        at = self.consumed - len(self._last)
        last = os.pread(fd, len(self._last), at)
        self.check_bytes += len(head) + len(last)
        return head == self._head and last == self._last

    def _split_raw(self) -> Growth:
        pending = self._pending
        cut = pending.rfind(b"\n") + 1
        if not cut:
            return Growth(pending=len(pending))
        records = bytes(pending[:cut])
        del pending[:cut]
        self.position += cut
        return Growth(records=records, pending=len(pending), appended=cut)

    def _split_zstd(self) -> Growth:
        pending = self._pending
        try:
            scan = zstd.scan_frames(memoryview(pending))
        except IssueError as exc:
            self.stopped = exc.issue.message
            return Growth(error=exc.issue.message, pending=len(pending), issue=exc.issue)
        if not len(scan):
            return Growth(pending=len(pending))
        base = self.position
        data = bytes(pending)
        frames = [(base + s, base + e, data[s:e]) for s, e in zip(scan.starts, scan.ends)]
        cut = scan.ends[-1]
        del pending[:cut]
        self.position += cut
        return Growth(records=frames, pending=len(pending), appended=cut)




def newer_generation(path: str) -> str | None:
    """A higher-generation session file next to `path` (DSH migrated the log: v4 spec §0.1),
    by canonical file name; None when there is none (or `path` has no canonical name)."""
    from workbench.io.layout import canonical_generation
    directory, name = os.path.split(os.path.abspath(path))
    mine = canonical_generation(name)
    if mine is None:
        return None
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    newer = [(g, n) for n in names if (g := canonical_generation(n)) is not None and g > mine]
    return os.path.join(directory, max(newer)[1]) if newer else None


__all__ = ["Growth", "LogTail", "READ_LIMIT", "WINDOW", "newer_generation"]

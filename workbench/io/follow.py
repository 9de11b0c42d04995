"""Follow a log file while DSH appends to it: hand out each complete record once. Layer: io.

A `LogTail` remembers how far it has read (`position`) and hands out, at each `poll`, only what
was appended since: complete lines of a raw ``.jsonl`` log, complete frames of a ``.jsonl.zstd``
log. An incomplete last line or frame (a write in flight) is *not yet written*: its bytes are kept
in memory (never read again from disk) and handed out once the rest arrives; a raw line past
`MAX_LINE` (the row scanner's rule) is only counted and comes as `Growth.long_line`, as a fresh
load counts it, and the frame scan resumes inside an incomplete frame (each byte scanned once).

Invariants:

* every byte of the file is read from disk once for its records (`bytes_read`); the only bytes
  read again are the checks that the known prefix is unchanged (`check_bytes`): the head and the
  bytes just before the read position (`WINDOW` each) at a poll that finds the file changed, and
  at most `VERIFY_BYTES` of whole `BLOCK`s per poll while a verification round is due;
* the known prefix is trusted only while it is verifiably the same file: a replaced file (another
  inode), a shrunk one, a changed head or last window, or a known block whose checksum changed
  (a same-size rewrite in the middle) makes the poll return a `Growth` with a ``reset`` reason,
  and the tail stops (the caller reloads). Each complete `BLOCK` of the known prefix keeps a CRC-32
  taken as it was read; a change of the file's size or times starts a round that re-checks every
  known block, `VERIFY_BYTES` per poll, so a rewrite anywhere in the prefix is found within
  ``known bytes / VERIFY_BYTES`` polls of it (a rewrite that keeps size, mtime and ctime is not
  seen: nothing says the file changed);
* zstd framing problems (a bad magic, a reserved bit) end following with ``error``: the caller
  reloads the file to report them exactly as a fresh load does.

The file is opened read-only and never written. `newer_generation` names a higher generation of
the followed session appearing beside it, by discovery's own session listing.
"""
from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field

from workbench.io import scan, zstd
from workbench.io.scan import ScanIssue

WINDOW = 64
"""Bytes of the file's head and of the bytes just before the read position re-read to check that
the known prefix did not change."""

READ_LIMIT = 64 * 1024 * 1024
"""Most bytes read from disk by one poll (a huge append is handed out over several polls)."""

BLOCK = 1024 * 1024
"""Bytes per checksummed block of the known prefix (file offsets ``k * BLOCK``)."""

VERIFY_BYTES = 2 * BLOCK
"""Most known bytes re-read per poll to verify their blocks' checksums."""


@dataclass(slots=True)
class Growth:
    """What one poll found: ``records`` (raw: the new complete lines as one bytes; zstd: one
    ``(start, end, compressed frame)`` per new complete frame, file offsets), ``reset`` (why the
    known prefix cannot be trusted: the file was replaced, truncated or rewritten) or ``error``
    (a framing problem, `issue`, which ends reading; the complete frames before it still come in
    `records`; offsets count from `LogTail.position`); `pending` bytes of an incomplete record
    wait in memory."""

    records: bytes | list[tuple[int, int, bytes]] = b""
    reset: str | None = None
    pending: int = 0
    appended: int = 0
    issue: ScanIssue | None = None
    long_line: tuple[int, int] | None = None
    """Raw: ``(file offset, length)`` of a record longer than `MAX_LINE` that comes before
    `records`, counted and never held (the row scanner's rule: `LineScanner.write_long`)."""

    @property
    def error(self) -> str | None:
        """The framing problem's message (None: none)."""
        return None if self.issue is None else self.issue.message

    @property
    def empty(self) -> bool:
        return not self.records and self.long_line is None and self.reset is None and self.error is None


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
    _dropped: int = 0          # raw: bytes of the incomplete record past MAX_LINE, counted not held
    _resume: tuple[int, bool] | None = None   # zstd: where the scan of the incomplete frame stopped
    _head: bytes = b""
    _last: bytes = b""
    _identity: tuple[int, int] | None = None
    _stat: tuple[int, int, int] | None = None   # size, mtime, ctime at the last poll
    _blocks: list[int] = field(default_factory=list)   # CRC-32 of each complete known block
    _crc: int = 0              # running CRC-32 of the current, incomplete block
    _verify: int = 0           # the next block index to verify
    _unverified: int = 0       # blocks still to verify in the current round

    @property
    def identity(self) -> tuple[int, int] | None:
        """(device, inode) of the file followed, from the first poll that opened it."""
        return self._identity

    @property
    def pending(self) -> int:
        """Bytes of an incomplete final record (held in memory, but for a raw record's bytes past
        `MAX_LINE`: counted only)."""
        return len(self._pending) + self._dropped

    @property
    def consumed(self) -> int:
        """File bytes read so far (handed out or pending)."""
        return self.position + self.pending

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
            stat = (size, st.st_mtime_ns, st.st_ctime_ns)
            changed = stat != self._stat
            if not changed and not self._unverified and size == read_to:
                return Growth(pending=self.pending)
            if changed and read_to:
                if not self._prefix_unchanged(fd):
                    return self._stop("the log was rewritten (its known prefix changed)")
                # a new round over every known block (and the incomplete last one)
                self._unverified = len(self._blocks) + (1 if self.bytes_read % BLOCK else 0)
            if self._unverified:
                bad = self._verify_blocks(fd)
                if bad is not None:
                    return self._stop(f"the log was rewritten (its known bytes {bad * BLOCK:,}.."
                                      f"{(bad + 1) * BLOCK - 1:,} changed)")
            self._stat = stat
            want = min(size - read_to, READ_LIMIT)
            data = os.pread(fd, want, read_to) if want else b""
        finally:
            os.close(fd)
        self.bytes_read += len(data)
        self._checksum(data)
        if not read_to:
            self._head = data[:WINDOW]
        elif len(self._head) < WINDOW:
            self._head = (self._head + data)[:WINDOW]
        self._last = (self._last + data)[-WINDOW:]
        if self.encoding is None:
            self._pending += data
            if len(self._pending) < 4:
                return Growth(pending=self.pending)
            self.encoding = "zstd" if bytes(self._pending[:4]) == zstd.MAGIC_BYTES else "jsonl"
            data = bytes(self._pending)
            self._pending.clear()
        if self.encoding == "zstd":
            self._pending += data
            return self._split_zstd()
        return self._split_raw(data)

    def _prefix_unchanged(self, fd: int) -> bool:
        head = os.pread(fd, len(self._head), 0)
        at = self.consumed - len(self._last)
        last = os.pread(fd, len(self._last), at)
        self.check_bytes += len(head) + len(last)
        return head == self._head and last == self._last

    def _checksum(self, data: bytes) -> None:
        """Extend the block checksums by the bytes just read (the file is read in order from
        offset 0, so `data` starts at file offset ``bytes_read - len(data)``)."""
        at = self.bytes_read - len(data)
        view = memoryview(data)
        done = 0
        while done < len(data):
            piece = view[done:done + BLOCK - (at + done) % BLOCK]
            self._crc = zlib.crc32(piece, self._crc)
            done += len(piece)
            if not (at + done) % BLOCK:
                self._blocks.append(self._crc)
                self._crc = 0

    def _verify_blocks(self, fd: int) -> int | None:
        """Re-read up to `VERIFY_BYTES` of the known prefix, block by block round robin (the last,
        incomplete block against its running CRC); the first block that changed, else None."""
        budget = VERIFY_BYTES
        units = len(self._blocks) + (1 if self.bytes_read % BLOCK else 0)
        while self._unverified and units:
            index = self._verify % units
            want = BLOCK if index < len(self._blocks) else self.bytes_read % BLOCK
            if want > budget:
                break
            block = os.pread(fd, want, index * BLOCK)
            self.check_bytes += len(block)
            if zlib.crc32(block) != (self._blocks[index] if index < len(self._blocks) else self._crc):
                return index
            self._verify = index + 1
            self._unverified -= 1
            budget -= len(block)
        return None

    def _split_raw(self, data: bytes) -> Growth:
        """The complete lines of the incomplete record so far plus `data` (searched alone, once).
        A record longer than `MAX_LINE` (the row scanner's rule, `workbench.io.scan`) is counted,
        never held: its bytes past the limit are dropped and it comes as `Growth.long_line`."""
        pending = self._pending
        newline = data.rfind(b"\n")
        if newline == -1:
            if self._dropped or len(pending) + len(data) > scan.MAX_LINE:
                self._dropped += len(pending) + len(data)
                pending.clear()
            else:
                pending += data
            return Growth(pending=self.pending)
        first = data.find(b"\n")
        start, length = self.position, self.pending + first
        long_line = None
        if length > scan.MAX_LINE:
            long_line, records = (start, length), data[first + 1:newline + 1]
        elif pending:
            records = bytes(pending) + data[:newline + 1]
        else:
            records = data[:newline + 1] if newline + 1 < len(data) else data
        cut = self.pending + newline + 1
        pending.clear()
        self._dropped = 0
        if len(data) - newline - 1 > scan.MAX_LINE:
            self._dropped = len(data) - newline - 1
        else:
            pending += data[newline + 1:]
        self.position += cut
        return Growth(records=records, pending=self.pending, appended=cut, long_line=long_line)

    def _split_zstd(self) -> Growth:
        """The complete frames of the pending bytes; the frame scan resumes inside the incomplete
        frame where the last poll's stopped (`zstd.scan_frames`), so each byte is scanned once."""
        pending = self._pending
        base = self.position
        with memoryview(pending) as view:
            found = zstd.scan_frames(view, resume=self._resume)
            frames = [(base + s, base + e, bytes(view[s:e])) for s, e in zip(found.starts, found.ends)]
        self._resume = found.resume
        issue = found.issue   # a framing error ends reading; the complete frames before it come too
        if issue is not None:
            self.stopped = issue.message
        if not frames:
            return Growth(pending=len(pending), issue=issue)
        cut = found.ends[-1]
        del pending[:cut]
        self.position += cut
        return Growth(records=frames, pending=len(pending), appended=cut, issue=issue)



def newer_generation(path: str, session_id: str | None = None) -> str | None:
    """The log of the followed session's directory when it is a higher generation than `path`
    (DSH migrated the log: v4 spec §0.1), by discovery's session listing
    (`workbench.io.discover.find_sessions`: the highest canonical generation is the session's
    log) and only once its header reads as a session header of a generation this build reads,
    naming the same session (`session_id`, when known); else None. A directory without a
    canonical name higher than `path`'s is only listed, no file is opened."""
    from workbench.io.discover import find_sessions
    from workbench.io.generations import READABLE
    from workbench.io.layout import canonical_generation
    directory, name = os.path.split(os.path.abspath(path))
    mine = canonical_generation(name)
    if mine is None:
        return None
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    if not any((g := canonical_generation(n)) is not None and g > mine for n in names):
        return None
    try:
        refs = find_sessions(directory)
    except Exception:  # noqa: BLE001 - a directory changing under the listing: asked again next poll
        return None
    if len(refs) != 1:
        return None
    ref = refs[0]
    if ref.generation is None or ref.generation <= mine or ref.header_error is not None \
            or ref.skipped is not None or ref.format_version not in READABLE:
        return None
    if session_id is not None and ref.session_id is not None and ref.session_id != session_id:
        return None
    return os.fspath(ref.path)


__all__ = ["BLOCK", "Growth", "LogTail", "READ_LIMIT", "VERIFY_BYTES", "WINDOW", "newer_generation"]

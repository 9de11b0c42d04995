"""Read a log's bytes into a `Log`: framing, header and rows (no relationships). Layer: io.

Pipeline (v0 spec §1.6-1.9, v4 spec §1.6-1.9), each step with the reference's texts:

1. encoding by content: the zstd magic ``28 B5 2F FD`` (never the file name); an empty file is
   zstd only when its name says so;
2. raw: the header record is everything up to the first ``\\n``; zstd: the frame scan, then frame 1
   must be exactly the header line (`workbench.io.zstd`);
3. the header record and the reader generation (`workbench.io.header`);
4. the rows, through the line scanner (`workbench.io.scan`) with the generation's row codec
   (`rows_v4.V4Codec`, `rows_v3.V3Codec` or `legacy.V0Codec`); zstd: every complete frame must decode and end at a
   record boundary, and a torn final frame yields what decodes;
5. v4: the inherited ``session/end-seed`` marker must agree with the header's ``isSeeded``.

Nothing here raises for a damaged log: every problem becomes a `ScanIssue` (and a `Defect` of the
returned `Log`), and `Log.events` holds the valid prefix. Only a path that cannot be read at all
raises `LogUnreadable`. Relationship, stored-event and fold checks are `workbench.core.load`'s;
they see each accepted event once through `observer`, while the scan runs, so a large log is
parsed a single time.
"""
from __future__ import annotations

import gc
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.errors import LogUnreadable
from workbench.io import zstd
from workbench.io.header import HEADER_MISSING, HeaderResult, parse_header_record
from workbench.io.generations import nested_streams
from workbench.io.legacy import V0Codec
from workbench.io.model import Defect, Log
from workbench.io.rows_v3 import V3Codec
from workbench.io.rows_v4 import V4Codec
from workbench.io.scan import MAX_LINE, IssueError, LineScanner, ScanIssue
from workbench.io.sources import BytesSource, FileSource, FrameSource
from workbench.io.store import EventStore

CHUNK = 8 * 1024 * 1024
"""Bytes read per step from a raw file (the file is never held whole in memory)."""

RUN_BYTES = 64 * 1024
"""Plaintext of consecutive zstd frames scanned at once (one event-store segment): a writer's
frames hold a few KiB each, and scanning them one by one costs more than decompressing them."""

class Observer(Protocol):
    """Sees the log while it is scanned: `start` once rows can be read (with the header and the
    event store being filled), then `accept` with the events each accepted line adds, in order."""

    def start(self, header: HeaderResult, events: EventStore) -> None: ...

    def accept(self, events: list) -> None: ...


@dataclass(slots=True)
class ReadResult:
    """A `Log` plus the reference-level outcome of reading it.

    `fatal` is the first problem that ends reading in the reference (header, framing, a committed
    issue made fatal by a later ``turn/end``, retired syntax, the inherited marker); `tolerated`
    the issue that ended the prefix without being fatal.
    """

    log: Log
    header: HeaderResult | None = None
    fatal: ScanIssue | None = None
    tolerated: ScanIssue | None = None
    codec: Any = None
    issues: list[ScanIssue] = field(default_factory=list)


def _severity(issue: ScanIssue) -> str:
    return "refused" if issue.klass == "unsupported" else "corrupt"


def _defect(issue: ScanIssue, path: str, severity: str | None = None) -> Defect:
    """A `Defect` of an issue; its line is the issue's, numbered as the reference's messages
    number lines (the header is line 0), so a message and its `line` field always agree."""
    return Defect(issue.kind, issue.message, path, severity or _severity(issue),  # type: ignore[arg-type]
                  line=issue.line, frame=issue.frame, seq=issue.seq, byte_offset=issue.byte_offset)


class _Reader:
    """One read of one log: shared state of the raw and zstd paths."""

    def __init__(self, name: str, generation: int | None, observer: Observer | None,
                 keep: dict[str, int] | None) -> None:
        self.name = name
        self.generation = generation
        self.observer = observer
        self.keep = keep or {}
        self.header: HeaderResult | None = None
        self.codec: Any = None
        self.scanner: LineScanner | None = None
        self.store: EventStore | None = None
        self.fatal: ScanIssue | None = None
        self.defects: list[Defect] = []
        self.issues: list[ScanIssue] = []
        self._accept: Callable[[list], None] | None = None
        self.expected_bytes = 0

    def fail(self, issue: ScanIssue) -> None:
        if self.fatal is None:
            self.fatal = issue
            self.issues.append(issue)
            self.defects.append(_defect(issue, self.name))

    def start(self, record: bytes, source: Any) -> bool:
        """Parse the header record and prepare the row scanner; False when rows cannot be read."""
        self.header = header = parse_header_record(record, generation=self.generation, name=self.name)
        if header.issue is not None:
            self.fail(header.issue)
            if not header.readable:
                return False
        raw = header.raw if type(header.raw) is dict else {}
        if nested_streams(header.generation):
            self.codec = V4Codec() if header.generation == 4 else V3Codec()
            reparse = V4Codec.reparse
        else:
            sid = raw.get("id")
            self.codec = V0Codec(sid if type(sid) is str else str(sid))
            reparse = self.codec.reparse
        self.store = EventStore(source, reparse, expected_bytes=self.expected_bytes, **self.keep)
        if self.observer is not None:
            self.observer.start(header, self.store)
            self._accept = self.observer.accept
        self.scanner = LineScanner(self.codec, self._sink, base=len(record), batch=self._batch_sink())
        return True

    def _batch_sink(self) -> Callable[[list, int, list, list, int, list], None]:
        extend = self.store.extend
        accept = self._accept
        if accept is None:
            return extend

        def batch(events: list, first_line: int, starts: list, ends: list, chunk_start: int, rows: list) -> None:
            extend(events, first_line, starts, ends, chunk_start, rows)
            accept(events)
        return batch

    def _sink(self, events: list, line: int, start: int, end: int) -> None:
        codec = self.codec
        self.store.add(events, line, start, end, codec.inline, codec.packed)
        if self._accept is not None:
            self._accept(events)

    def end_scan(self) -> bool:
        """After the committed bytes: record a fatal or tolerated scanner issue."""
        scanner = self.scanner
        if scanner.long_line is not None:
            self.defects.append(Defect(
                "line_limit", f"line {scanner.long_line} is longer than {MAX_LINE} bytes (MAX_LINE, "
                "the longest string the reference can decode): counted as unparsable, never held",
                self.name, "warning", line=scanner.long_line))
            scanner.long_line = None
        if scanner.fatal is not None:
            self.fail(scanner.fatal)
            return False
        if scanner.limit is not None:
            self.fail(scanner.limit)
            return False
        return True

    def build(self, path: str, encoding: str, byte_length: int) -> ReadResult:
        header = self.header
        scanner = self.scanner
        store = self.store if self.store is not None else EventStore(BytesSource(b""), dict)
        meta = header.meta if header is not None else None
        raw = header.raw if header is not None and type(header.raw) is dict else None
        version = raw.get("version") if raw is not None else None
        shown = int(version) if type(version) in (int, float) and float(version).is_integer() \
            and 0 <= version < 2**31 else (header.generation if header else None)
        log = Log(path=path, encoding=encoding, format_version=shown,  # type: ignore[arg-type]
                  header=raw, meta=meta, events=store, byte_length=byte_length)
        tolerated = None
        if scanner is not None:
            log.committed_bytes = scanner.committed_bytes
            if scanner.fatal is None and scanner.issue is not None:
                tolerated = scanner.issue
                log.tolerated_issue = tolerated.message
                self.issues.append(tolerated)
                self.defects.append(_defect(tolerated, self.name, "tolerated"))
        if isinstance(self.codec, V0Codec):
            if self.codec.implicit:
                log.implicit_seqs = True
                self.defects.append(Defect(
                    "implicit_seqs", "records carry no seq/time: a test-fixture snapshot, numbered by position "
                    "(seq = running logical count, time 0)", self.name, "warning"))
            seed = (meta or {}).get("seedLength")
            if type(seed) is int and seed >= 0:
                log.inherited_event_count = seed
        elif isinstance(self.codec, V4Codec) and self.codec.inherited is not None:
            log.inherited_event_count = self.codec.inherited
        log.defects = self.defects
        return ReadResult(log, header, self.fatal, tolerated, self.codec, self.issues)


def _finish_v4(reader: _Reader) -> None:
    """The decoder's end-of-log check: inherited marker vs ``isSeeded`` (v4 spec §1.3)."""
    if reader.fatal is None and isinstance(reader.codec, V4Codec) and reader.header.meta is not None:
        problem = reader.codec.finish(reader.header.meta.get("isSeeded"))
        if problem is not None:
            reader.fail(ScanIssue(problem.kind, problem.message, problem.name, problem.klass))


def _torn_defect(reader: _Reader, start: int, length: int) -> None:
    reader.defects.append(Defect(
        "torn_tail", f"incomplete final record of {length} bytes at byte {start} (no newline: never "
        "committed; a repairing load truncates the file)", reader.name, "tolerated", byte_offset=start))


def _scan_raw(reader: _Reader, chunks: Any, first: bytes, source: Any, path: str,
              byte_length: int) -> ReadResult:
    reader.expected_bytes = byte_length
    buffer = first
    newline = buffer.find(b"\n")
    while newline == -1:
        chunk = next(chunks, b"")
        if not chunk:
            break
        buffer += chunk
        newline = buffer.find(b"\n")
    if newline == -1:
        reader.fail(ScanIssue("header_missing", HEADER_MISSING, line=0))
        return reader.build(path, "jsonl", byte_length)
    if not reader.start(buffer[:newline + 1], source):
        return reader.build(path, "jsonl", byte_length)
    scanner = reader.scanner
    scanner.write(buffer[newline + 1:])
    del buffer
    for chunk in chunks:
        if scanner.stopped:
            break
        scanner.write(chunk)
    if reader.end_scan():
        start, pending = scanner.pending_start, scanner.pending_bytes
        if scanner.finish():
            _torn_defect(reader, start, pending)
        _finish_v4(reader)
    result = reader.build(path, "jsonl", byte_length)
    log = result.log
    if log.committed_bytes < byte_length:
        log.torn_tail = True
        log.truncate_to = log.committed_bytes
    return result


def _decode_segment(data: bytes, start: int, torn: bool) -> bytes:
    return zstd.decode_torn_prefix(data) if torn else zstd.decode_frame(data, start)


def _scan_zstd(reader: _Reader, data: bytes | memoryview, compressed: Any, path: str) -> ReadResult:
    byte_length = len(data)
    try:
        scan = zstd.scan_frames(data)
    except IssueError as exc:
        reader.fail(exc.issue)
        return reader.build(path, "zstd", byte_length)
    count = len(scan)
    if not count:
        reader.fail(ScanIssue("header_missing", "empty or header-less Zstandard session log", line=0))
        return reader.build(path, "zstd", byte_length)
    torn = None if scan.torn_start is None else (scan.torn_start, byte_length)
    source = FrameSource(compressed, scan.starts, scan.ends, torn, _decode_segment)
    starts, ends = scan.starts, scan.ends
    reader.expected_bytes = 4 * byte_length  # a zstd log holds at least this much plaintext, usually more
    try:
        first = zstd.decode_frame(data[starts[0]:ends[0]], starts[0])
        zstd.assert_header_frame(first)
    except IssueError as exc:
        reader.fail(exc.issue)
        return reader.build(path, "zstd", byte_length)
    if not reader.start(first, source):
        return reader.build(path, "zstd", byte_length)
    scanner = reader.scanner
    store = reader.store
    source.add_segment(0, 1, [len(first)])  # the header frame
    total = len(first)
    pending: list[bytes] = []  # decoded frames not yet scanned, from frame `run`
    pending_bytes = 0
    run = 1

    def scan_pending(stop: int) -> None:
        nonlocal pending_bytes, run
        if pending:
            segment = source.add_segment(run, stop, [len(p) for p in pending])
            store.begin_segment(segment, scanner.input_bytes, None)
            scanner.write(pending[0] if len(pending) == 1 else b"".join(pending))
            pending.clear()
        pending_bytes, run = 0, stop

    for index in range(1, count):
        start, end = starts[index], ends[index]
        problem = None
        try:
            plaintext = zstd.decode_frame(data[start:end], start)
            total += len(plaintext)
            if total > zstd.MAX_TOTAL_OUTPUT:
                problem = ScanIssue("zstd_output_limit", f"Zstandard log expands beyond {zstd.MAX_TOTAL_OUTPUT} bytes",
                                    frame=index + 1, byte_offset=start)
        except IssueError as exc:
            problem = ScanIssue(exc.issue.kind, exc.issue.message, frame=index + 1, byte_offset=start)
        if problem is not None:  # the frames before it are scanned first: they may end reading
            scan_pending(index)
            if scanner.stopped:
                break
            reader.fail(problem)
            return reader.build(path, "zstd", byte_length)
        pending.append(plaintext)
        pending_bytes += len(plaintext)
        if pending_bytes >= RUN_BYTES:
            scan_pending(index + 1)
            if scanner.stopped:
                break
    else:
        scan_pending(count)
    if not reader.end_scan():
        return reader.build(path, "zstd", byte_length)
    if scanner.pending_bytes:  # the complete frames end inside a record (after an issue too)
        reader.fail(ScanIssue("zstd_torn_record_in_complete_frame",
                              "corrupt Zstandard session log: complete frame contains a torn JSONL record",
                              byte_offset=starts[count - 1], frame=count))
        return reader.build(path, "zstd", byte_length)
    complete = scanner.event_count
    if scan.torn_start is not None:
        recovered = zstd.decode_torn_prefix(data[scan.torn_start:])
        store.begin_segment(source.torn_segment, scanner.input_bytes, None)
        scanner.write(recovered)
        reader.defects.append(Defect(
            "zstd_torn_frame", f"incomplete final frame at byte {scan.torn_start} "
            f"({byte_length - scan.torn_start} bytes; {len(recovered)} plaintext bytes recovered)",
            reader.name, "tolerated", frame=count + 1, byte_offset=scan.torn_start))
        if not reader.end_scan():
            return reader.build(path, "zstd", byte_length)
    scanner.finish()
    _finish_v4(reader)
    result = reader.build(path, "zstd", byte_length)
    log = result.log
    log.committed_bytes = byte_length if scan.torn_start is None else scan.torn_start
    if scan.torn_start is not None:
        log.torn_tail = True
        log.truncate_to = scan.torn_start
        log.recovered_tail_seqs = list(range(complete, len(log.events)))
    return result


def _paused_gc(run: Callable[[], ReadResult]) -> ReadResult:
    """Run a scan with the cyclic GC paused: parsed JSON holds no cycles, and a GC pass per
    700 allocations would otherwise rescan every kept dict again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return run()
    finally:
        if enabled:
            gc.enable()


def scan_bytes(data: bytes, *, name: str = "<bytes>", encoding: str | None = None,
               generation: int | None = None, observer: Observer | None = None,
               keep: dict[str, int] | None = None) -> ReadResult:
    """Read in-memory bytes; `encoding` ``"jsonl"``/``"zstd"`` overrides sniffing."""
    data = bytes(data)
    if encoding is None:
        zstd_like = data[:4] == zstd.MAGIC_BYTES or (not data and name.endswith(".zstd"))
        encoding = "zstd" if zstd_like else "jsonl"
    reader = _Reader(name, generation, observer, keep)
    if encoding == "zstd":
        source = BytesSource(data)
        return _paused_gc(lambda: _scan_zstd(reader, data, source, name))
    source = BytesSource(data)
    return _paused_gc(lambda: _scan_raw(reader, iter(()), data, source, name, len(data)))


def log_path(path: str | os.PathLike, *, verb: str = "load") -> str:
    """The log file `path` names: a session directory stands for its log (the highest
    generation, v4 spec §0.1); a directory holding no session, or several, is `LogUnreadable`."""
    path = os.fspath(path)
    if os.path.isdir(path):
        from workbench.io.discover import find_sessions
        refs = find_sessions(path)
        if len(refs) != 1:
            raise LogUnreadable(f"{path}: a directory holding {len(refs)} session logs; {verb} one of them")
        path = os.fspath(refs[0].path)
    return path


def scan_path(path: str | os.PathLike, *, generation: int | None = None,
              observer: Observer | None = None, keep: dict[str, int] | None = None) -> ReadResult:
    """Read a log file (opened read-only, never written).

    A session directory stands for its log (the highest generation, v4 spec §0.1); a directory
    holding no session, or several, is `LogUnreadable`.
    """
    path = log_path(path)
    from workbench.io.discover import special_file
    kind = special_file(path)
    if kind is not None:  # a FIFO or device could block or never end: never opened
        raise LogUnreadable(f"{path}: {kind}, not a regular file")
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in the finally below
    except IsADirectoryError as exc:
        raise LogUnreadable(f"{path}: is a directory, not a session log") from exc
    except FileNotFoundError as exc:
        raise LogUnreadable(f"{path}: no such file") from exc
    except PermissionError as exc:
        raise LogUnreadable(f"{path}: permission denied") from exc
    except OSError as exc:
        raise LogUnreadable(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        size = os.fstat(handle.fileno()).st_size
        first = handle.read(CHUNK)
        reader = _Reader(path, generation, observer, keep)
        if first[:4] == zstd.MAGIC_BYTES or (not first and path.endswith(".zstd")):
            handle.seek(0)
            data = handle.read()  # one buffer: the frame scan needs random access
            del first
            return _paused_gc(lambda: _scan_zstd(reader, data, FileSource(path), path))
        chunks = iter(lambda: handle.read(CHUNK), b"")
        return _paused_gc(lambda: _scan_raw(reader, chunks, first, FileSource(path), path, size))
    finally:
        handle.close()


def read_log(path: str | os.PathLike, *, generation: int | None = None) -> Log:
    """The log at `path`: header, events (the valid prefix) and byte-level defects."""
    return scan_path(path, generation=generation).log


def read_bytes(data: bytes, *, name: str, encoding: str | None = None,
               generation: int | None = None) -> Log:
    """Like `read_log` for bytes in memory; `name` stands for the file (generation hint)."""
    return scan_bytes(data, name=name, encoding=encoding, generation=generation).log


__all__ = ["Observer", "ReadResult", "read_bytes", "read_log", "scan_bytes", "scan_path"]

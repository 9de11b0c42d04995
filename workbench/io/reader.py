"""One read of one log: the state the raw and the zstd scans share. Layer: io.

`Reader` holds what a scan has found so far (header, row codec, event store, defects, the first
fatal issue) and builds the `ReadResult` (a `Log` plus the reference-level outcome) when the scan
ends; an `Observer` (the loader's pipeline) sees the header and every accepted line's events
while the scan runs. Invariants: the first fatal issue is kept and later ones are ignored (after
a zstd structure problem they are named too, `Reader.fail`); every
issue becomes a `Defect` numbered as the reference's messages number lines (the header is line
0); nothing here raises for a damaged log. Scans run with the cyclic GC paused (`paused_gc`).
"""
from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.io.generations import nested_streams
from workbench.io.header import HEADER_NOT_JSON, HeaderResult, parse_header_record
from workbench.io.legacy import V0Codec
from workbench.io.model import Defect, Log
from workbench.io.rows_v3 import V3Codec
from workbench.io.rows_v4 import V4Codec
from workbench.io import scan
from workbench.io.scan import LineScanner, ScanIssue
from workbench.io.sources import BytesSource
from workbench.io.store import EventStore


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


def defect(issue: ScanIssue, path: str, severity: str | None = None) -> Defect:
    """A `Defect` of an issue; its line is the issue's, numbered as the reference's messages
    number lines (the header is line 0), so a message and its `line` field always agree."""
    return Defect(issue.kind, issue.message, path, severity or _severity(issue),  # type: ignore[arg-type]
                  line=issue.line, frame=issue.frame, seq=issue.seq, byte_offset=issue.byte_offset)


class Reader:
    """One read of one log: shared state of the raw and zstd paths."""

    def __init__(self, name: str, generation: int | None, observer: Observer | None) -> None:
        self.name = name
        self.generation = generation
        self.observer = observer
        self.header: HeaderResult | None = None
        self.codec: Any = None
        self.scanner: LineScanner | None = None
        self.store: EventStore | None = None
        self.fatal: ScanIssue | None = None
        self.defects: list[Defect] = []
        self.issues: list[ScanIssue] = []
        self._accept: Callable[[list], None] | None = None

    def fail(self, issue: ScanIssue) -> None:
        """Record `issue` as the first fatal one; a later one is ignored, unless the first is a
        zstd structure problem: the reference scans the frames before it decodes them, so that
        one is the failure, and what ends the readable prefix before it is named after it."""
        if self.fatal is None:
            self.fatal = issue
            self.issues.append(issue)
            self.defects.append(defect(issue, self.name))
        elif self.fatal.kind == "zstd_structure" and issue is not self.fatal:
            self.defects.append(defect(issue, self.name))

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
        self.store = EventStore(source, reparse)
        if self.observer is not None:
            self.observer.start(header, self.store)
            self._accept = self.observer.accept
        self.scanner = LineScanner(self.codec, self._sink, base=len(record), batch=self._batch_sink())
        return True

    def long_header(self) -> None:
        """The header record is longer than `MAX_LINE`: unparsable, as a row that long is
        (`LineScanner`), so the header is not JSON; rows cannot be read (its bytes never held)."""
        self.fail(ScanIssue("header_not_json", HEADER_NOT_JSON, line=0))
        self.defects.append(line_limit(0, self.name))

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
            self.defects.append(line_limit(scanner.long_line, self.name))
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
                self.defects.append(defect(tolerated, self.name, "tolerated"))
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


def line_limit(line: int, path: str) -> Defect:
    """Rule ``line_limit``: record `line` (0: the header) is longer than `MAX_LINE` (the scanner's
    rule), counted as unparsable without being held."""
    return Defect("line_limit", f"line {line} is longer than {scan.MAX_LINE} bytes (MAX_LINE, the longest "
                  "string the reference can decode): counted as unparsable, never held", path, "warning",
                  line=line)


def finish_v4(reader: Reader) -> None:
    """The decoder's end-of-log check: inherited marker vs ``isSeeded`` (v4 spec §1.3)."""
    if reader.fatal is None and isinstance(reader.codec, V4Codec) and reader.header.meta is not None:
        problem = reader.codec.finish(reader.header.meta.get("isSeeded"))
        if problem is not None:
            reader.fail(ScanIssue(problem.kind, problem.message, problem.name, problem.klass))


def torn_defect(reader: Reader, start: int, length: int) -> None:
    reader.defects.append(Defect(
        "torn_tail", f"incomplete final record of {length} bytes at byte {start} (no newline: never "
        "committed; a repairing load truncates the file)", reader.name, "tolerated", byte_offset=start))


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic GC paused while a large acyclic structure is built (a scan's parsed JSON, the
    audit's facts and surfaces): a collection every 700 allocations would otherwise rescan
    every kept container again and again. Nests; restores the state it found."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


__all__ = ["Observer", "ReadResult", "Reader", "defect", "finish_v4", "line_limit", "paused_gc", "torn_defect"]

"""A log loaded while it grows: the loader's one pass, kept open between polls. Layer: core
(imports io).

`LiveLog` runs the same reader and the same staged checks as `workbench.core.load.load_log`
(framing, header, rows, relationships, stored events, closers, restore), but never ends the pass:
each `poll` feeds only what `workbench.io.follow.LogTail` found appended (complete lines, complete
zstd frames) to the scanner, the event store and every check, which all continue from their state.
`feeders` ride on the pass as in `load_log` (`workbench.core.load.Feeder`): they see each
appended event once, as it is read. `log()` is the `Log` a fresh load of the committed bytes gives (the end-of-log checks run on a copy
of the state, so the pass goes on afterwards).

Invariants: every committed record is decoded and checked once; an incomplete last record is not
yet written (it is neither an event nor a torn-tail defect while following); once the tail reports
the known prefix changed, the live log stops (`reset` says why) and the caller loads the file again.
"""
from __future__ import annotations

import copy
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.load import Feeder, LoadReport, _evaluate, _Pipeline
from workbench.io import zstd
from workbench.io.follow import LogTail
from workbench.io.header import HEADER_MISSING, HeaderResult
from workbench.io.model import Log
from workbench.io.read_zstd import RUN_BYTES, decode_segment
from workbench.io.reader import Reader, finish_v4, paused_gc
from workbench.io.scan import IssueError, ScanIssue
from workbench.io.sources import FileSource, FrameSource
from workbench.io.store import EventStore


@dataclass(slots=True)
class Poll:
    """What one poll added: the events of seqs ``first..first + len(events) - 1`` (collected only
    when asked), `reset` when the file must be loaded again, `pending` bytes not yet complete."""

    first: int
    count: int = 0
    events: list = field(default_factory=list)
    reset: str | None = None
    pending: int = 0


class _Observer:
    """The loader's stage pipeline, plus the events of the current poll when collecting."""

    def __init__(self, pipeline: _Pipeline) -> None:
        self.pipeline = pipeline
        self.collect: list | None = None

    def start(self, header: HeaderResult, events: EventStore) -> None:
        self.pipeline.start(header, events)

    def accept(self, batch: list) -> None:
        self.pipeline.accept(batch)
        if self.collect is not None:
            self.collect.extend(batch)


class LiveLog:
    """One followed log file (module doc). `poll()` reads what was appended; `log()` is the
    current `Log`; `tail` counts the bytes read."""

    def __init__(self, path: str | os.PathLike, *, generation: int | None = None,
                 feeders: Sequence[Feeder] = ()) -> None:
        self.path = os.fspath(path)
        self.tail = LogTail(self.path)
        self._pipeline = _Pipeline(self.path, self.path, feeders)
        self._observer = _Observer(self._pipeline)
        self._reader = Reader(self.path, generation, self._observer)
        self._starts, self._ends = array("q"), array("q")
        self._source: FrameSource | None = None
        self._plaintext = 0
        self.ended = False   # reading ended for good (a fatal problem): later appends are not read
        self.reset: str | None = None

    @property
    def events(self) -> EventStore | None:
        return self._reader.store

    @property
    def count(self) -> int:
        store = self._reader.store
        return len(store) if store is not None else 0

    def poll(self, *, collect: bool = True) -> Poll:
        """Read and check what was appended since the last poll (module doc)."""
        result = Poll(self.count)
        if self.reset is not None:
            result.reset = self.reset
            return result
        if self.ended and self.tail.stopped is not None:   # a framing error ended reading for good
            return result
        growth = self.tail.poll()
        result.pending = growth.pending
        if growth.issue is not None and self._reader.header is None:
            self._reader.fail(growth.issue)   # nothing read yet: the framing error is the log's,
            self.ended = True                 # the complete frames before it its prefix
        elif growth.reset is not None or growth.error is not None:
            self.reset = result.reset = growth.reset or growth.error
            return result
        elif self.ended:
            return result
        if not growth.records and growth.long_line is None:
            return result
        self._observer.collect = [] if collect else None
        try:
            with paused_gc():
                if self.tail.encoding == "zstd":
                    self._frames(growth.records)
                else:
                    self._lines(growth.records, growth.long_line)
        finally:
            result.events = self._observer.collect or []
            self._observer.collect = None
        result.count = self.count - result.first
        return result

    # -- feeding ------------------------------------------------------------------------------

    def _lines(self, data: bytes, long_line: tuple[int, int] | None = None) -> Any:
        """Complete lines (the tail hands out no other), after `long_line`: a record over
        `MAX_LINE` whose bytes were never held (`LogTail`), taken as a fresh load takes it."""
        reader = self._reader
        if reader.scanner is None:
            if long_line is not None:
                reader.long_header()
                self.ended = True
                return None
            newline = data.find(b"\n") + 1
            record, data = data[:newline], data[newline:]
            if not reader.start(record, FileSource(self.path, self.tail.identity)):
                self.ended = True
                return None
        elif long_line is not None:
            reader.scanner.write_long(long_line[1])
        reader.scanner.write(data)
        self.ended = reader.scanner.stopped
        return None

    def _frames(self, frames: list[tuple[int, int, bytes]]) -> Any:
        reader = self._reader
        at = 0
        if reader.scanner is None:
            start, end, frame = frames[0]
            at = 1
            self._starts.append(start)
            self._ends.append(end)
            try:
                first = zstd.decode_frame(frame, start)
                zstd.assert_header_frame(first)
            except IssueError as exc:
                reader.fail(exc.issue)
                self.ended = True
                return None
            self._source = FrameSource(FileSource(self.path, self.tail.identity), self._starts, self._ends,
                                       None, decode_segment)
            if not reader.start(first, self._source):
                self.ended = True
                return None
            self._source.add_segment(0, 1, [len(first)])
            self._plaintext = len(first)
        pending: list[bytes] = []
        size = 0
        for start, end, frame in frames[at:]:
            problem = None
            try:
                plaintext = zstd.decode_within(frame, start, end, self._plaintext)
                self._plaintext += len(plaintext)
            except IssueError as exc:
                problem = ScanIssue(exc.issue.kind, exc.issue.message, frame=len(self._starts) + 1,
                                    byte_offset=start)
            if problem is not None:
                if not self._run(pending) or reader.scanner.stopped:
                    self.ended = True
                    return None
                reader.fail(problem)
                self.ended = True
                return None
            self._starts.append(start)
            self._ends.append(end)
            pending.append(plaintext)
            size += len(plaintext)
            if size >= RUN_BYTES:
                if not self._run(pending):
                    return None
                size = 0
        self._run(pending)
        return None

    def _run(self, pending: list[bytes]) -> bool:
        """Scan the decoded frames ending at the last registered one as one store segment. A
        record may continue into the next frame (v4 §1.6): one the frames so far end inside
        waits in the scanner for the next poll, as an incomplete raw line waits in the tail (the
        module's invariant; a fresh load of these bytes alone calls it a torn record)."""
        if not pending:
            return True
        reader = self._reader
        scanner = reader.scanner
        stop = len(self._starts)
        segment = self._source.add_segment(stop - len(pending), stop, [len(p) for p in pending])
        reader.store.begin_segment(segment, scanner.input_bytes, None)
        scanner.write(pending[0] if len(pending) == 1 else b"".join(pending))
        pending.clear()
        if scanner.stopped:
            self.ended = True
            return False
        return True

    # -- the current log ------------------------------------------------------------------------

    def report(self) -> LoadReport:
        """The staged outcome of loading the committed bytes now (the pass is not ended)."""
        reader, pipeline = self._reader, self._pipeline
        saved = reader.defects, reader.issues, reader.fatal
        reader.defects, reader.issues = list(saved[0]), list(saved[1])
        long_line = None if reader.scanner is None else reader.scanner.long_line   # end_scan clears it
        restore = pipeline.restore
        try:
            encoding = self.tail.encoding or ("zstd" if self.path.endswith(".zstd") else "jsonl")
            if reader.scanner is None:
                if reader.header is None and reader.fatal is None:
                    reader.fail(ScanIssue("header_missing", "empty or header-less Zstandard session log"
                                          if encoding == "zstd" else HEADER_MISSING, line=0))
            elif reader.end_scan():
                finish_v4(reader)
            read = reader.build(self.path, encoding, self.tail.position)
            if encoding == "zstd":
                read.log.committed_bytes = self.tail.position
            if restore is not None:
                pipeline.restore = _probe(restore)
            return _evaluate(read, pipeline)
        finally:
            reader.defects, reader.issues, reader.fatal = saved
            if reader.scanner is not None:
                reader.scanner.long_line = long_line
            pipeline.restore = restore

    def log(self) -> Log:
        return self.report().log


def _probe(restore: Any) -> Any:
    """A copy of the restore check that the end-of-log closers can be fed to."""
    probe = copy.copy(restore)
    probe.state = restore.state.copy()
    probe.inherited_markers = list(restore.inherited_markers)
    return probe


__all__ = ["LiveLog", "Poll"]

"""The zstd half of reading a log (v4 spec §1.7): frames to rows. Layer: io.

`scan_zstd` scans the frames of a ``.jsonl.zstd`` log (`workbench.io.zstd.scan_frames`): frame 1
must be exactly the header line; every later complete frame must decode and the complete frames
must end at a record boundary; a structure problem (a wrong magic, a reserved bit) is the log's
failure, and the complete frames before it are still read, as far as they go (the readable
prefix); runs of consecutive frames (`RUN_BYTES` of plaintext) become one
event-store segment, scanned at once; a torn final frame yields what decodes and is reported as
tolerated. The log's total plaintext is bounded (`zstd.decode_within`). Every problem
becomes a defect of the `Reader` (`workbench.io.reader`); nothing here raises for a damaged log.
"""
from __future__ import annotations

from typing import Any

from workbench.io import zstd
from workbench.io.model import Defect
from workbench.io.reader import Reader, ReadResult, finish_v4
from workbench.io.scan import IssueError, ScanIssue
from workbench.io.sources import FrameSource

RUN_BYTES = 64 * 1024
"""Plaintext of consecutive zstd frames scanned at once (one event-store segment): a writer's
frames hold a few KiB each, and scanning them one by one costs more than decompressing them."""


def decode_segment(data: bytes, start: int, torn: bool) -> bytes:
    return zstd.decode_torn_prefix(data) if torn else zstd.decode_frame(data, start)


def scan_zstd(reader: Reader, data: bytes | memoryview, compressed: Any, path: str) -> ReadResult:
    byte_length = len(data)
    scan = zstd.scan_frames(data)
    if scan.issue is not None:   # the reference's first error (its scan runs before any decoding);
        reader.fail(scan.issue)  # the complete frames before it are still read: the prefix
    count = len(scan)
    if not count:   # no frame at all: a structure problem at byte 0 says it
        if scan.issue is None:
            reader.fail(ScanIssue("header_missing", "empty or header-less Zstandard session log", line=0))
        return reader.build(path, "zstd", byte_length)
    torn = None if scan.torn_start is None else (scan.torn_start, byte_length)
    source = FrameSource(compressed, scan.starts, scan.ends, torn, decode_segment)
    starts, ends = scan.starts, scan.ends
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
            plaintext = zstd.decode_within(data[start:end], start, end, total)
            total += len(plaintext)
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
    finish_v4(reader)
    result = reader.build(path, "zstd", byte_length)
    log = result.log
    log.committed_bytes = byte_length if scan.torn_start is None else scan.torn_start
    if scan.torn_start is not None:
        log.torn_tail = True
        log.truncate_to = scan.torn_start
        log.recovered_tail_seqs = list(range(complete, len(log.events)))
    return result


__all__ = ["RUN_BYTES", "decode_segment", "scan_zstd"]

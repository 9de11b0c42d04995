"""Read a log's bytes into a `Log`: framing, header and rows (no relationships). Layer: io.

Pipeline (v0 spec §1.6-1.9, v4 spec §1.6-1.9), each step with the reference's texts:

1. encoding by content: the zstd magic ``28 B5 2F FD`` (never the file name); an empty file is
   zstd only when its name says so;
2. raw: the header record is everything up to the first ``\\n`` (none: ``header_missing``; a
   line longer than `MAX_LINE` is unparsable, as a row is: ``header_not_json`` plus ``line_limit``,
   never held); zstd: the frame scan, then frame 1 must be exactly the header line
   (`workbench.io.zstd`);
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

import os
from typing import Any

from workbench.errors import InvalidArgument, LogUnreadable
from workbench.io import scan, zstd
from workbench.io.header import HEADER_MISSING
from workbench.io.model import Log
from workbench.io.read_zstd import scan_zstd
from workbench.io.reader import (
    Observer,
    Reader,
    ReadResult,
    finish_v4,
    paused_gc,
    torn_defect,
)
from workbench.io.scan import ScanIssue
from workbench.io.sources import BytesSource, FileSource

CHUNK = 8 * 1024 * 1024
"""Bytes read per step from a raw file (the file is never held whole in memory)."""


def _header_record(chunks: Any, first: bytes) -> tuple[bytes | None, bool, bytes]:
    """The header record through its ``\\n`` (None: it has none, or is longer than `MAX_LINE`:
    the row scanner's rule, so its bytes past that are counted, never held), whether a ``\\n``
    ends it, and the bytes after it in the chunk that ends it. Each chunk is searched once."""
    parts: list[bytes] | None = [first]
    before, chunk = 0, first   # bytes of the header line before `chunk`
    newline = first.find(b"\n")
    while newline == -1:
        before += len(chunk)
        chunk = next(chunks, b"")
        if not chunk:
            return None, False, b""
        newline = chunk.find(b"\n")
        if parts is not None:
            if before + (len(chunk) if newline == -1 else newline) > scan.MAX_LINE:
                parts = None
            else:
                parts.append(chunk)
    rest = chunk[newline + 1:]
    if parts is None or before + newline > scan.MAX_LINE:
        return None, True, rest
    parts[-1] = chunk[:newline + 1]
    return b"".join(parts), True, rest


def _scan_raw(reader: Reader, chunks: Any, first: bytes, source: Any, path: str,
              byte_length: int) -> ReadResult:
    record, ended, rest = _header_record(chunks, first)
    if record is None:
        if ended:
            reader.long_header()
        else:
            reader.fail(ScanIssue("header_missing", HEADER_MISSING, line=0))
        return reader.build(path, "jsonl", byte_length)
    if not reader.start(record, source):
        return reader.build(path, "jsonl", byte_length)
    scanner = reader.scanner
    scanner.write(rest)
    del rest, record
    for chunk in chunks:
        if scanner.stopped:
            break
        scanner.write(chunk)
    if reader.end_scan():
        start, pending = scanner.pending_start, scanner.pending_bytes
        if scanner.finish():
            torn_defect(reader, start, pending)
        finish_v4(reader)
    result = reader.build(path, "jsonl", byte_length)
    log = result.log
    if log.committed_bytes < byte_length:
        log.torn_tail = True
        log.truncate_to = log.committed_bytes
    return result


def scan_bytes(data: bytes, *, name: str = "<bytes>", encoding: str | None = None,
               generation: int | None = None, observer: Observer | None = None) -> ReadResult:
    """Read in-memory bytes; `encoding` ``"jsonl"``/``"zstd"`` overrides sniffing."""
    data = bytes(data)
    if encoding is None:
        zstd_like = data[:4] == zstd.MAGIC_BYTES or (not data and name.endswith(".zstd"))
        encoding = "zstd" if zstd_like else "jsonl"
    reader = Reader(name, generation, observer)
    if encoding == "zstd":
        source = BytesSource(data)
        with paused_gc():
            return scan_zstd(reader, data, source, name)
    source = BytesSource(data)
    with paused_gc():
        return _scan_raw(reader, iter(()), data, source, name, len(data))


def path_arg(path: Any, what: str = "log path") -> str:
    """`path` (a str or an `os.PathLike`) as `os.fspath` gives it; anything else (None, a
    number, a session) is `InvalidArgument` naming it."""
    try:
        return os.fspath(path)
    except TypeError:
        msg = f"{what} {path!r} is not a path (a str or os.PathLike), it is a {type(path).__name__}"
        raise InvalidArgument(msg) from None


def log_path(path: str | os.PathLike, *, verb: str = "load") -> str:
    """The log file `path` names: a session directory stands for its log (the highest
    generation, v4 spec §0.1); a directory holding no session, or several, is `LogUnreadable`."""
    path = path_arg(path)
    if os.path.isdir(path):
        from workbench.io.discover import find_sessions
        refs = find_sessions(path)
        if len(refs) != 1:
            raise LogUnreadable(f"{path}: a directory holding {len(refs)} session logs; {verb} one of them")
        path = os.fspath(refs[0].path)
    return path


def scan_path(path: str | os.PathLike, *, generation: int | None = None,
              observer: Observer | None = None) -> ReadResult:
    """Read a log file (opened read-only, never written).

    A session directory stands for its log (the highest generation, v4 spec §0.1); a directory
    holding no session, or several, is `LogUnreadable`.
    """
    path = log_path(path)
    from workbench.io.output import special_file
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
        st = os.fstat(handle.fileno())
        size, source = st.st_size, FileSource(path, (st.st_dev, st.st_ino))
        first = handle.read(CHUNK)
        reader = Reader(path, generation, observer)
        if first[:4] == zstd.MAGIC_BYTES or (not first and path.endswith(".zstd")):
            handle.seek(0)
            data = handle.read()  # one buffer: the frame scan needs random access
            del first
            with paused_gc():
                return scan_zstd(reader, data, source, path)
        chunks = iter(lambda: handle.read(CHUNK), b"")
        with paused_gc():
            return _scan_raw(reader, chunks, first, source, path, size)
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

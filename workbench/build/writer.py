"""Serialising DSH logs to disk: raw JSONL or multi-frame Zstandard. Layer: build (io + core).

What a real writer produces, and so what this one produces (v0 spec §1.2, §1.6; v4 §1.2, §1.6):

* line 1 is the header, every further line one storage record, each terminated by ``\\n``;
  records are compact JSON (no spaces) in the writer's key order (the dicts' insertion order);
* ``compression="zstd"``: independent standard frames, content checksum on, no content-size
  field (descriptor byte ``0x04``), **frame 1 holds only the header line**, then one frame per
  write batch; a record never spans two frames;
* format v0 may pack runs of ``assistant/chunk`` deltas into storage rows; packing is applied per
  batch (`workbench.io.rows_v0.pack_chunk_runs`), so runs are cut at batch boundaries as in DSH.

`LogWriter` streams batches to disk so that a generator never holds a whole large log in memory.
Numbers are written by orjson (integral floats keep a ``.0``, which JavaScript reads as the same
integer); a record orjson refuses (a lone surrogate) falls back to `jsjson.stringify`.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import orjson
import zstandard

from workbench.errors import InvalidArgument
from workbench.io.jsjson import stringify
from workbench.io.rows_v0 import pack_chunk_runs

Compression = Literal["none", "zstd"]
ZSTD_LEVEL = 3
"""zstd's default level, as DSH uses."""


def encode_record(record: Any) -> bytes:
    """One record as one compact JSON line (without the newline)."""
    try:
        return orjson.dumps(record)
    except (TypeError, orjson.JSONEncodeError):
        return stringify(record).encode("utf-8", "surrogatepass")


def encode_batch(events: Sequence[Any], *, pack_rows: bool = False) -> bytes:
    """The plaintext of one write batch: its records joined by ``\\n`` plus a final ``\\n``."""
    records = pack_chunk_runs(events) if pack_rows else events
    if not records:
        return b""
    return b"\n".join(encode_record(r) for r in records) + b"\n"


def log_filename(version: int, compression: Compression) -> str:
    """The canonical file name of a generation (``session.jsonl``, ``session.v4.jsonl.zstd``)."""
    base = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    return base + (".zstd" if compression == "zstd" else "")


class LogWriter:
    """Writes one log file batch by batch:
    ``with LogWriter(path, header) as w: w.write_batch(events)``."""

    def __init__(self, path: str | os.PathLike, header: dict, *, compression: Compression = "none",
                 pack_rows: bool = False) -> None:
        if compression not in ("none", "zstd"):
            raise InvalidArgument(f"compression must be 'none' or 'zstd', not {compression!r}")
        self.path = Path(path)
        self.compression = compression
        self.pack_rows = pack_rows
        self.frames = 0
        self.events = 0
        self.plaintext_bytes = 0
        self._cctx = (zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True,
                                               write_content_size=False)
                      if compression == "zstd" else None)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "wb")  # noqa: SIM115 - closed by close()/__exit__
        self._put(encode_record(header) + b"\n")

    def _put(self, plaintext: bytes) -> None:
        if not plaintext:
            return
        self.plaintext_bytes += len(plaintext)
        if self._cctx is not None:
            self._fh.write(self._cctx.compress(plaintext))
            self.frames += 1
        else:
            self._fh.write(plaintext)

    def write_batch(self, events: Sequence[Any]) -> None:
        """Append one durable batch (one zstd frame); an empty batch writes nothing."""
        self.events += len(events)
        self._put(encode_batch(events, pack_rows=self.pack_rows))

    def write_bytes(self, plaintext: bytes) -> None:
        """Append raw plaintext as one batch (fault injection: torn lines, junk)."""
        self._put(plaintext)

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def write_log(path: str | os.PathLike, header: dict, batches: Iterable[Sequence[Any]], *,
              compression: Compression = "none", pack_rows: bool = False) -> Path:
    """Write a whole log: the header, then each batch (one zstd frame per batch)."""
    with LogWriter(path, header, compression=compression, pack_rows=pack_rows) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return writer.path

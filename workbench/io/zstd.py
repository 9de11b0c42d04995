"""The multi-frame Zstandard container of ``*.jsonl.zstd`` logs. Layer: io (stdlib + zstandard).

A zstd log is a plain concatenation of independent standard frames (v0 spec §1.6, v4 spec §1.6):
frame 1 holds only the header line, every later frame one durable append batch. Frames carry a
content checksum and usually no content size, so they are decoded one at a time with a streaming
decompressor (a one-shot ``decompress`` would stop after the first frame or need an output size).

Rules reproduced from the reference (``scanZstdFrames``, ``readZstdPrefix``):

* the frame-boundary scan walks frame headers and block headers without decompressing; a wrong
  magic (skippable frames included), a reserved descriptor bit or a reserved block type is
  corruption (``zstd_structure``: the scan ends there, reporting the complete frames before it,
  which a reader keeps as the log's readable prefix); running out of bytes inside a frame makes
  it the torn final frame, whose start is where a repair truncates;
* every complete frame must decode and pass its checksum (``zstd_frame_invalid``);
* from the torn final frame the reader keeps whatever the decoder yields (stored blocks decode
  partially, compressed blocks only when complete); a decoder error there yields nothing.

Untrusted input: a frame that expands beyond `MAX_FRAME_OUTPUT`, or a log beyond
`MAX_TOTAL_OUTPUT` or `MAX_RATIO` times its compressed bytes (`decode_within`), is refused as
``zstd_output_limit`` instead of exhausting memory and time.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass

import zstandard

from workbench.io.scan import IssueError, ScanIssue

MAGIC = 0xFD2FB528
MAGIC_BYTES = b"\x28\xb5\x2f\xfd"
"""First four bytes of every standard frame: how a zstd log is recognised (never by name)."""

MAX_FRAME_OUTPUT = 256 * 1024 * 1024
"""Largest plaintext accepted from one frame (the writer's frames are one append batch each)."""

MAX_TOTAL_OUTPUT = 64 * 1024 * 1024 * 1024
"""Largest plaintext accepted from one log; only a decompression bomb reaches it."""

MAX_RATIO = 1000
"""Largest plaintext per compressed byte accepted from a log past `RATIO_FLOOR` bytes of plaintext
(DSH's logs expand 4-20 times; a bomb expands thousands of times and would cost minutes of
decompression and scanning, and gigabytes of cached frames, before `MAX_TOTAL_OUTPUT`)."""

RATIO_FLOOR = MAX_FRAME_OUTPUT
"""Plaintext a log may reach whatever its ratio (a small log of long repeated texts is fine)."""

_FEED = 1024
"""Compressed bytes fed per decoder call: bounds the output of one call to ~32 MiB (RLE ratio)."""


@dataclass(frozen=True, slots=True)
class FrameScan:
    """Complete frames as ``[start, end)`` byte ranges (two arrays: a log may hold hundreds of
    thousands of frames), and the torn final frame's start, or the structure problem that ended
    the scan after them (``zstd_structure``; then no frame is torn)."""

    starts: array
    ends: array
    torn_start: int | None
    issue: ScanIssue | None = None
    resume: tuple[int, bool] | None = None
    """For the torn frame: ``(offset from its start, checksum flag)`` of its first block header not
    complete yet, for a later `scan_frames(..., resume=...)` of the bytes from its start."""

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def frames(self) -> tuple[tuple[int, int], ...]:
        """The complete frames as ``(start, end)`` pairs."""
        return tuple(zip(self.starts, self.ends))


def scan_frames(buf: bytes | memoryview, max_frames: int | None = None, *,
                resume: tuple[int, bool] | None = None) -> FrameScan:
    """Locate complete frames without decompressing (reference: scanZstdFrames, which throws
    at a structure problem: here it ends the scan, `FrameScan.issue`). `resume`: `buf` starts
    with a frame an earlier scan found torn (its `FrameScan.resume`): its header and blocks
    before that offset are not walked again."""
    starts, ends = array("q"), array("q")

    def _structure(message: str, at: int) -> FrameScan:
        return FrameScan(starts, ends, None, ScanIssue(
            "zstd_structure", f"corrupt Zstandard session log: {message} at byte {at}", byte_offset=at))

    size = len(buf)
    offset = 0
    while offset < size:
        start = offset
        if resume is not None:
            offset, checksum = start + resume[0], resume[1]
            resume = None
        else:
            if size - offset < 4:
                return FrameScan(starts, ends, start)
            if int.from_bytes(buf[offset:offset + 4], "little") != MAGIC:
                return _structure("invalid frame magic", offset)
            offset += 4
            if offset == size:
                return FrameScan(starts, ends, start)
            descriptor = buf[offset]
            offset += 1
            if descriptor & 0x18:
                return _structure("reserved frame-header bit", offset - 1)
            fcs_flag = descriptor >> 6
            single = bool(descriptor & 0x20)
            checksum = bool(descriptor & 0x04)
            dict_flag = descriptor & 0x03
            dict_bytes = 4 if dict_flag == 3 else dict_flag
            fcs_bytes = (1 if single else 0) if fcs_flag == 0 else 1 << fcs_flag
            header_rest = (0 if single else 1) + dict_bytes + fcs_bytes
            if size - offset < header_rest:
                return FrameScan(starts, ends, start)
            offset += header_rest
        while True:
            at = offset   # this block's header
            if size - offset < 3:
                return FrameScan(starts, ends, start, resume=(at - start, checksum))
            block = int.from_bytes(buf[offset:offset + 3], "little")
            offset += 3
            block_type = (block >> 1) & 3
            if block_type == 3:
                return _structure("reserved block type", offset - 3)
            payload = 1 if block_type == 1 else block >> 3
            if size - offset < payload:
                return FrameScan(starts, ends, start, resume=(at - start, checksum))
            offset += payload
            if block & 1:
                break
        if checksum:
            if size - offset < 4:
                return FrameScan(starts, ends, start, resume=(at - start, checksum))
            offset += 4
        starts.append(start)
        ends.append(offset)
        if max_frames is not None and len(starts) == max_frames:
            return FrameScan(starts, ends, None)
    return FrameScan(starts, ends, None)


_DCTX = zstandard.ZstdDecompressor()


def output_allowed(compressed: int) -> int:
    """Most plaintext a log may expand to from its first `compressed` bytes: `MAX_TOTAL_OUTPUT`,
    and past `RATIO_FLOOR` at most `MAX_RATIO` times `compressed`."""
    return min(MAX_TOTAL_OUTPUT, max(RATIO_FLOOR, MAX_RATIO * compressed))


def decode_within(frame: bytes | memoryview, start: int, end: int, total: int) -> bytes:
    """`decode_frame` of the frame at ``[start, end)`` of the file when the frames before it
    expanded to `total` bytes; decoding stops (``zstd_output_limit``) as soon as the log would pass
    `output_allowed(end)`: a workbench resource limit (the reference reads on), so a bomb costs
    at most that much decompression; the frames before it are the readable prefix."""
    allowed = output_allowed(end)
    room = allowed - total
    if room >= MAX_FRAME_OUTPUT:
        return decode_frame(frame, start)
    try:
        return decode_frame(frame, start, limit=max(room, 0))
    except IssueError as exc:
        if exc.issue.kind != "zstd_output_limit":
            raise
        raise IssueError(ScanIssue(
            "zstd_output_limit", f"Zstandard log expands beyond {allowed} bytes from its first {end} "
            f"bytes (MAX_TOTAL_OUTPUT, or MAX_RATIO = {MAX_RATIO} times past {RATIO_FLOOR} bytes): a "
            "workbench resource limit; reading stopped before this frame", byte_offset=start)) from None


def _limit(start: int, limit: int) -> IssueError:
    return IssueError(ScanIssue(
        "zstd_output_limit",
        f"Zstandard frame at byte {start} expands beyond {limit} bytes; refusing to decompress it",
        byte_offset=start))


def _decompress(data: bytes | memoryview, limit: int) -> tuple[bytes, bool] | None:
    """The plaintext of the frame at the start of `data`, fed in `_FEED`-byte pieces, and
    whether the frame ended; None once it passes `limit` bytes; `zstandard.ZstdError` when the
    bytes do not decode."""
    view = memoryview(data)
    dobj = _DCTX.decompressobj()
    parts: list[bytes] = []
    produced = 0
    for pos in range(0, len(view), _FEED):
        out = dobj.decompress(view[pos:pos + _FEED])
        if out:
            produced += len(out)
            if produced > limit:
                return None
            parts.append(out)
    return b"".join(parts), dobj.eof


def decode_frame(frame: bytes | memoryview, start: int, *, limit: int = MAX_FRAME_OUTPUT) -> bytes:
    """Plaintext of one complete frame, checksum verified (reference: the frame decoder).

    `start` is the frame's byte offset in the file, for the reference message.
    """
    try:
        decoded = _decompress(frame, limit)
    except zstandard.ZstdError:
        decoded = None, False
    if decoded is None:
        raise _limit(start, limit)
    plaintext, complete = decoded
    if not complete:
        raise IssueError(ScanIssue(
            "zstd_frame_invalid", f"corrupt Zstandard session log: frame at byte {start} failed validation",
            byte_offset=start))
    return plaintext


def decode_torn_prefix(data: bytes | memoryview, *, limit: int = MAX_FRAME_OUTPUT) -> bytes:
    """What a streaming decoder yields from an incomplete final frame; b"" when it fails.

    Reference: decompressZstdPrefix with flush semantics; any decoder error discards it all.
    """
    try:
        decoded = _decompress(data, limit)
    except zstandard.ZstdError:
        return b""
    return b"" if decoded is None else decoded[0]


def assert_header_frame(plaintext: bytes) -> None:
    """Frame 1 must be exactly one ``\\n``-terminated line (reference: assertZstdHeaderFrame)."""
    if not plaintext or plaintext.find(b"\n") != len(plaintext) - 1:
        raise IssueError(ScanIssue("zstd_header_frame",
                                   "corrupt Zstandard session log: first frame is not exactly one header line",
                                   frame=1))


def compress_frames(chunks: list[bytes], *, level: int = 3) -> bytes:
    """Concatenated independent frames with checksum and no content size, as the writer makes them.

    For tests and tools that need a zstd log; the reader never calls it.
    """
    cctx = zstandard.ZstdCompressor(level=level, write_checksum=True, write_content_size=False)
    out = []
    for chunk in chunks:
        obj = cctx.compressobj()
        out.append(obj.compress(chunk) + obj.flush())
    return b"".join(out)


__all__ = ["FrameScan", "MAGIC_BYTES", "MAX_FRAME_OUTPUT", "MAX_RATIO", "MAX_TOTAL_OUTPUT",
           "RATIO_FLOOR", "assert_header_frame", "compress_frames", "decode_frame", "decode_torn_prefix",
           "decode_within", "output_allowed", "scan_frames"]

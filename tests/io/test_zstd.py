"""The multi-frame Zstandard container (v0/v4 spec §1.6; reference scanZstdFrames, readZstdPrefix).

Frames are made here with python-zstandard the way the DSH writer makes them (checksum on, no
content size), one per batch, header alone in frame 1."""
from __future__ import annotations

import os

import pytest
import zstandard

from workbench.io import zstd
from workbench.io.read import scan_bytes
from workbench.io.scan import IssueError

HEADER = (b'{"type":"session","version":4,"id":"session-z","createdAt":1,"isSeeded":false,'
          b'"delegationDepth":0}\n')
EVENTS = [
    b'{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}\n',
    b'{"type":"step/start","seq":1,"time":11,"data":{"turn":1,"step":1}}\n',
    b'{"type":"step/end","seq":2,"time":12,"data":{"turn":1,"step":1}}\n',
    b'{"type":"turn/end","seq":3,"time":13,"data":{"turn":1,"reason":{"kind":"completed"}}}\n',
]


def frame(data: bytes, *, content_size: bool = False, checksum: bool = True, level: int = 3) -> bytes:
    cctx = zstandard.ZstdCompressor(level=level, write_checksum=checksum, write_content_size=content_size)
    return cctx.compress(data) if content_size else zstd.compress_frames([data], level=level)


def log(*batches: bytes) -> bytes:
    return zstd.compress_frames([HEADER, *batches])


def test_writer_style_frames_have_descriptor_0x04() -> None:
    """Frames as the writer makes them: no content size, not single-segment, checksum on."""
    data = frame(b"x" * 100)
    assert data[:4] == zstd.MAGIC_BYTES
    assert data[4] == 0x04


def test_scan_finds_every_frame_boundary() -> None:
    parts = [frame(HEADER), frame(EVENTS[0] + EVENTS[1]), frame(EVENTS[2] + EVENTS[3])]
    data = b"".join(parts)
    scan = zstd.scan_frames(data)
    ends = [sum(map(len, parts[:i + 1])) for i in range(3)]
    assert scan.frames == ((0, ends[0]), (ends[0], ends[1]), (ends[1], ends[2]))
    assert scan.torn_start is None


def test_every_truncation_is_a_torn_final_frame_never_an_error() -> None:
    """EOF anywhere inside the last frame: the frames before it are complete, it is torn."""
    first, last = frame(HEADER), frame(b"".join(EVENTS))
    data = first + last
    for cut in range(len(first) + 1, len(data)):
        scan = zstd.scan_frames(data[:cut])
        assert scan.frames == ((0, len(first)),)
        assert scan.torn_start == len(first)


@pytest.mark.parametrize(("tail", "message"), [
    pytest.param(b"JUNKJUNK", "corrupt Zstandard session log: invalid frame magic at byte {n}", id="bad-magic"),
    pytest.param(b"\x50\x2a\x4d\x18\x04\x00\x00\x00abcd",
                 "corrupt Zstandard session log: invalid frame magic at byte {n}", id="skippable-frame"),
    pytest.param(b"\x28\xb5\x2f\xfd\x0c\x00\x00\x00",
                 "corrupt Zstandard session log: reserved frame-header bit at byte {n4}", id="reserved-bit"),
    pytest.param(b"\x28\xb5\x2f\xfd\x04\x00\x07\x00\x00",
                 "corrupt Zstandard session log: reserved block type at byte {n6}", id="reserved-block"),
])
def test_structure_errors_name_the_byte(tail: bytes, message: str) -> None:
    """The scan ends at a structure problem, with the complete frames before it."""
    head = frame(HEADER)
    n = len(head)
    scan = zstd.scan_frames(head + tail)
    assert scan.issue.kind == "zstd_structure" and scan.torn_start is None
    assert scan.issue.message == message.format(n=n, n4=n + 4, n6=n + 6)
    assert scan.frames == ((0, n),)


def test_single_segment_frame_with_content_size_scans_and_decodes() -> None:
    data = frame(b"".join(EVENTS), content_size=True)
    assert data[4] & 0x20  # single segment
    scan = zstd.scan_frames(data)
    assert scan.frames == ((0, len(data)),)
    assert zstd.decode_frame(data, 0) == b"".join(EVENTS)


def test_checksum_mismatch_is_an_invalid_frame() -> None:
    head = frame(HEADER)
    body = bytearray(frame(b"".join(EVENTS)))
    body[-1] ^= 0xFF
    with pytest.raises(IssueError) as caught:
        zstd.decode_frame(bytes(body), len(head))
    assert caught.value.issue.kind == "zstd_frame_invalid"
    assert caught.value.issue.message == (
        f"corrupt Zstandard session log: frame at byte {len(head)} failed validation")


def test_torn_raw_block_decodes_partially_and_garbage_decodes_to_nothing() -> None:
    payload = os.urandom(50_000)  # incompressible: stored (raw) blocks
    data = frame(payload)
    assert zstd.decode_torn_prefix(data[:len(data) // 2]) == payload[:len(zstd.decode_torn_prefix(data[:len(data) // 2]))]
    assert len(zstd.decode_torn_prefix(data[:len(data) // 2])) > 20_000
    assert zstd.decode_torn_prefix(zstd.MAGIC_BYTES + b"\x04\x00\xff\xff\xff\xff") == b""


def test_a_frame_that_expands_beyond_the_limit_is_refused() -> None:
    bomb = frame(b"\0" * (8 * 1024 * 1024), level=19)
    assert len(bomb) < 4096
    with pytest.raises(IssueError) as caught:
        zstd.decode_frame(bomb, 0, limit=1024 * 1024)
    assert caught.value.issue.kind == "zstd_output_limit"


@pytest.mark.parametrize(("plaintext", "ok"), [
    pytest.param(HEADER, True, id="one-line"),
    pytest.param(b"", False, id="empty"),
    pytest.param(HEADER + EVENTS[0], False, id="two-lines"),
    pytest.param(HEADER[:-1], False, id="no-newline"),
])
def test_header_frame_is_exactly_one_line(plaintext: bytes, ok: bool) -> None:
    if ok:
        zstd.assert_header_frame(plaintext)
        return
    with pytest.raises(IssueError) as caught:
        zstd.assert_header_frame(plaintext)
    assert caught.value.issue.message == "corrupt Zstandard session log: first frame is not exactly one header line"


# -- through the reader ----------------------------------------------------------------------------

def test_multi_frame_log_reads_every_frame() -> None:
    result = scan_bytes(log(EVENTS[0] + EVENTS[1], EVENTS[2], EVENTS[3]), name="session.v4.jsonl.zstd")
    assert result.fatal is None
    assert [e["seq"] for e in result.log.events] == [0, 1, 2, 3]
    assert result.log.encoding == "zstd" and not result.log.torn_tail


def test_record_may_continue_in_the_next_complete_frame() -> None:
    whole = b"".join(EVENTS)
    result = scan_bytes(log(whole[:30], whole[30:]), name="session.v4.jsonl.zstd")
    assert result.fatal is None
    assert len(result.log.events) == 4


def test_complete_frames_ending_inside_a_record_are_corrupt() -> None:
    result = scan_bytes(log(EVENTS[0] + EVENTS[1][:20]), name="session.v4.jsonl.zstd")
    assert result.fatal.kind == "zstd_torn_record_in_complete_frame"
    assert result.fatal.message == "corrupt Zstandard session log: complete frame contains a torn JSONL record"
    assert [e["seq"] for e in result.log.events] == [0]


def raw_block_frame(payload: bytes) -> bytes:
    """A frame holding `payload` in one stored (raw) block, checksum flag on (checksum omitted:
    callers cut the frame before it)."""
    block = (len(payload) << 3 | 1).to_bytes(3, "little")  # last block, type raw
    return zstd.MAGIC_BYTES + b"\x04\x58" + block + payload


def test_torn_final_frame_keeps_what_decodes_and_truncates_at_its_start() -> None:
    """A stored block decodes partially: its complete lines are recovered, the rest dropped."""
    complete = log(EVENTS[0])
    torn = raw_block_frame(EVENTS[1] + EVENTS[2] + EVENTS[3])
    data = complete + torn[:len(torn) - len(EVENTS[3]) // 2]
    result = scan_bytes(data, name="session.v4.jsonl.zstd")
    assert result.fatal is None
    assert result.log.torn_tail and result.log.truncate_to == len(complete)
    assert [e["seq"] for e in result.log.events] == [0, 1, 2]
    assert result.log.recovered_tail_seqs == [1, 2]


def test_torn_compressed_final_frame_yields_nothing() -> None:
    complete = log(EVENTS[0])
    torn = frame(b"".join(EVENTS[1:]) * 20)
    result = scan_bytes(complete + torn[:-6], name="session.v4.jsonl.zstd")
    assert result.fatal is None
    assert [e["seq"] for e in result.log.events] == [0]
    assert result.log.truncate_to == len(complete) and result.log.recovered_tail_seqs == []


@pytest.mark.parametrize("tail", [b"garbage\n", b"\x50\x2a\x4d\x18\x04\x00\x00\x00abcd",
                                  b'{"type":"step/end","seq":4}\n'], ids=["bytes", "skippable", "raw-line"])
def test_a_structure_problem_is_the_failure_and_the_frames_before_it_load(tail: bytes) -> None:
    """Bytes after the last frame that are no frame: corrupt, as the reference says, named by the
    scan's message, and the events of every complete frame before them are the loaded prefix
    (reading it as no header, or as no events, lost the whole log)."""
    data = log(EVENTS[0] + EVENTS[1], EVENTS[2] + EVENTS[3])
    result = scan_bytes(data + tail, name="session.v4.jsonl.zstd")
    assert result.fatal.kind == "zstd_structure"
    assert result.fatal.message == f"corrupt Zstandard session log: invalid frame magic at byte {len(data)}"
    assert [d.rule for d in result.log.defects] == ["zstd_structure"]
    assert [e["seq"] for e in result.log.events] == [0, 1, 2, 3]
    assert result.log.header["id"] == "session-z" and not result.log.torn_tail


def test_after_a_structure_problem_a_frame_that_fails_ends_the_prefix_and_is_named() -> None:
    """The scan's problem stays the failure (the reference scans before it decodes); a complete
    frame before it that fails its checksum ends the prefix there and is named after it."""
    good, bad = log(EVENTS[0]), bytearray(frame(EVENTS[1] + EVENTS[2]))
    bad[-1] ^= 0xFF
    data = good + bytes(bad) + frame(EVENTS[3])
    result = scan_bytes(data + b"JUNK", name="session.v4.jsonl.zstd")
    assert result.fatal.kind == "zstd_structure"
    assert [d.rule for d in result.log.defects] == ["zstd_structure", "zstd_frame_invalid"]
    assert [e["seq"] for e in result.log.events] == [0]


def test_after_a_structure_problem_a_row_that_ends_the_prefix_is_named() -> None:
    """An unparsable row with a committed ``turn/end`` after it (fatal on its own) before the
    structure problem: the prefix ends before it, and both are defects, the scan's first."""
    broken = EVENTS[0] + b"{broken\n" + EVENTS[3].replace(b'"seq":3', b'"seq":1')
    data = log(broken)
    alone = scan_bytes(data, name="session.v4.jsonl.zstd")
    assert [d.rule for d in alone.log.defects] == ["unparsable_committed"]
    result = scan_bytes(data + b"JUNK", name="session.v4.jsonl.zstd")
    assert [d.rule for d in result.log.defects] == ["zstd_structure", "unparsable_committed"]
    assert [e["seq"] for e in result.log.events] == [0]


def test_a_structure_problem_in_the_first_frame_is_one_defect() -> None:
    """No complete frame at all: the structure problem says it (not also "no header")."""
    result = scan_bytes(zstd.MAGIC_BYTES + b"\x0c\x00\x00", name="session.v4.jsonl.zstd")
    assert [d.rule for d in result.log.defects] == ["zstd_structure"]
    assert result.log.header is None and len(result.log.events) == 0


def test_empty_zstd_file_has_no_header() -> None:
    result = scan_bytes(b"", name="session.v4.jsonl.zstd")
    assert result.fatal.kind == "header_missing"
    assert result.fatal.message == "empty or header-less Zstandard session log"

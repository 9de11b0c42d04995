"""Limits counted in bytes, not in items or delimiters: a header record that never ends (or is
longer than `MAX_LINE`), a record growing under a follower, a zstd frame still being written, a
zstd log expanding thousands of times, and caches of huge entries. Each is bounded in memory and
time, reports what a fresh load reports, and leaves normal logs as they were."""
from __future__ import annotations

import tempfile
import time
import tracemalloc

import workbench
from workbench.io import follow, jsjson, read, scan, sources, store, zstd
from workbench.io.follow import LogTail

HEADER = (b'{"type":"session","version":4,"id":"session-size","createdAt":1,"isSeeded":false,'
          b'"delegationDepth":0}\n')


def _event(seq: int, text: bytes = b"hi") -> bytes:
    return (b'{"type":"user/message","seq":%d,"time":%d,"surfaceOp":"append","data":{"id":"u%d",'
            b'"role":"user","source":{"kind":"user"},"content":[{"type":"text","text":"%s"}]}}\n'
            % (seq, 10 + seq, seq, text))


def _refresh_all(session, path) -> None:
    """Refresh until the follower has read the whole file (a poll reads at most READ_LIMIT)."""
    for _ in range(10_000):
        assert not session.refresh().reloaded
        if session.live.tail.consumed == path.stat().st_size:
            return
    raise AssertionError("the follower never reached the end of the file")


def _rules(session) -> list[tuple[str, int | None]]:
    return [(d.rule, d.line) for d in session.defects]


# -- D1: the header record is capped like any record -------------------------------------------


def test_a_header_that_never_ends_is_read_in_bounded_memory(tmp_path, monkeypatch):
    """`{"type":"session",...,"id":"` + megabytes without a newline: header_missing (the
    reference's text), the bytes past MAX_LINE counted, never held (the reader held the whole
    line: 2.1 GB and 142 s for a 1 GiB file)."""
    monkeypatch.setattr(scan, "MAX_LINE", 64 * 1024)
    monkeypatch.setattr(read, "CHUNK", 16 * 1024)
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(b'{"type":"session","version":4,"id":"' + b"a" * (4 << 20))
    tracemalloc.start()
    try:
        log = read.read_log(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(d.rule, d.message) for d in log.defects] == [("header_missing", "empty or header-less session log")]
    assert peak < 1 << 20, peak          # MAX_LINE + a chunk, never the 4 MiB line


def test_a_header_line_longer_than_max_line_is_unparsable_like_a_row(monkeypatch):
    """A header line past MAX_LINE is what a row that long is: unparsable (header_not_json) and
    named by line_limit (line 0); within MAX_LINE the same header reads."""
    header = HEADER.replace(b'"id":"session-size"', b'"id":"' + b"s" * 300 + b'"')
    data = header + _event(0)
    assert read.read_bytes(data, name="session.v4.jsonl").defects == []
    monkeypatch.setattr(scan, "MAX_LINE", 200)
    log = read.read_bytes(data, name="session.v4.jsonl")
    assert [(d.rule, d.line) for d in log.defects] == [("header_not_json", 0), ("line_limit", 0)]
    assert log.defects[0].message == "corrupt session log: header line is not valid JSON"
    assert len(log.events) == 0


# -- D3: a follower holds no more of a record than a fresh load ----------------------------------


def test_a_followed_record_past_max_line_is_counted_not_held(tmp_path, monkeypatch):
    """A record longer than MAX_LINE appended in pieces to a followed raw log: the tail keeps a
    count, not its bytes (it held them all: 2 GB for 2 GB appended), and the followed session
    then equals a fresh load (line_limit + the unparsable line, the events before it)."""
    monkeypatch.setattr(scan, "MAX_LINE", 1000)
    monkeypatch.setattr(follow, "READ_LIMIT", 256)
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(HEADER + _event(0) + _event(1))
    session = workbench.load(path, follow=True)
    assert len(session) == 2
    with open(path, "ab") as f:
        f.write(_event(2)[:60])
    for _ in range(40):
        with open(path, "ab") as f:
            f.write(b"x" * 100)
        result = session.refresh()
        assert not result.reloaded, result.notice
        tail = session.live.tail
        assert len(tail._pending) <= scan.MAX_LINE
    assert tail.pending == 60 + 4000 and tail.consumed == path.stat().st_size
    with open(path, "ab") as f:
        f.write(_event(2)[60:] + _event(3))
    _refresh_all(session, path)
    fresh = workbench.load(path)
    assert _rules(fresh) == [("line_limit", 3), ("unparsable_committed", 3)]
    assert _rules(session) == _rules(fresh) and len(session) == len(fresh) == 2
    assert session.verdict == fresh.verdict


def test_a_followed_header_past_max_line_equals_a_fresh_load(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "MAX_LINE", 1000)
    monkeypatch.setattr(follow, "READ_LIMIT", 300)
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(b"")
    session = workbench.load(path, follow=True)
    header = HEADER.replace(b'"id":"session-size"', b'"id":"' + b"s" * 2000 + b'"')
    with open(path, "ab") as f:
        f.write(header + _event(0))
    _refresh_all(session, path)
    assert len(session.live.tail._pending) <= scan.MAX_LINE
    fresh = workbench.load(path)
    assert _rules(fresh) == [("header_not_json", 0), ("line_limit", 0)]
    assert _rules(session) == _rules(fresh) and len(session) == 0


def _zstd_polls(blocks: int, pieces: int) -> float:
    """CPU seconds of the polls that see a frame of `blocks` stored blocks arrive in `pieces`."""
    block = (16 << 3).to_bytes(3, "little") + b"a" * 16       # a raw block, not the last
    frame = zstd.MAGIC_BYTES + bytes([0x00, 0x38]) + block * blocks
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/session.v4.jsonl.zstd"
        with open(path, "wb") as f:
            f.write(zstd.compress_frames([HEADER]))
        tail = LogTail(path)
        assert len(tail.poll().records) == 1
        step = len(frame) // pieces + 1
        spent = 0.0
        with open(path, "ab") as f:
            for at in range(0, len(frame), step):
                f.write(frame[at:at + step])
                f.flush()
                begin = time.process_time()
                growth = tail.poll()
                spent += time.process_time() - begin
                assert not growth.records and growth.reset is None
        assert tail.pending == len(frame)
        return spent


def test_a_zstd_frame_in_flight_is_scanned_once():
    """The frame scan of a followed zstd log resumes inside the incomplete frame: polls over a
    frame arriving in pieces cost its size, not pieces x its size (4x per doubling before)."""
    small = min(_zstd_polls(40_000, 16) for _ in range(3))
    large = min(_zstd_polls(160_000, 64) for _ in range(3))
    assert large < 9 * max(small, 0.005), (small, large)   # linear: 4-5x; quadratic: 15x


def test_a_zstd_frame_in_pieces_comes_whole_at_any_cut(tmp_path):
    lines = [HEADER] + [_event(i) for i in range(6)]
    data = zstd.compress_frames([lines[0], b"".join(lines[1:4]), b"".join(lines[4:])])
    for cut_a in range(1, len(data), 7):
        path = tmp_path / "session.v4.jsonl.zstd"
        path.write_bytes(data[:cut_a])
        tail = LogTail(str(path))
        got = list(tail.poll().records)
        path.write_bytes(data)
        got += tail.poll().records
        assert b"".join(frame for _, _, frame in got) == data and tail.pending == 0


# -- D2: expansion and caches bounded in bytes ---------------------------------------------------


def test_a_zstd_log_expanding_thousands_of_times_stops_at_the_ratio_limit(tmp_path, monkeypatch):
    """A small zstd log whose frames expand thousands of times is read up to `output_allowed`:
    the frames before are its prefix, then zstd_output_limit (a workbench limit, named); the
    decoder never produces more (it decompressed 64 GiB for 141 s before). A follower agrees."""
    monkeypatch.setattr(zstd, "RATIO_FLOOR", 64 * 1024, raising=False)
    monkeypatch.setattr(zstd, "MAX_RATIO", 50, raising=False)      # DSH's logs: 4-20; this one: hundreds
    text = b"a" * (48 * 1024)
    frames = [HEADER] + [_event(i, text) for i in range(8)]
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(zstd.compress_frames(frames))
    assert path.stat().st_size * zstd.MAX_RATIO < 8 * len(text)
    fresh = workbench.load(path)
    assert [d.rule for d in fresh.defects] == ["zstd_output_limit"]
    assert "MAX_RATIO" in fresh.defects[0].message and fresh.verdict == "corrupt"
    assert 0 < len(fresh) < 8
    followed = workbench.load(path, follow=True)
    assert _rules(followed) == _rules(fresh) and len(followed) == len(fresh)
    monkeypatch.setattr(zstd, "RATIO_FLOOR", 1 << 30, raising=False)
    assert workbench.load(path).defects == []     # within the floor: the whole log


def test_the_frame_cache_is_bounded_in_bytes(monkeypatch):
    """Decompressed frames are cached within CACHE_FRAME_BYTES (it kept 64 frames whatever
    their size: up to 64 x 256 MiB), the frame just read always."""
    monkeypatch.setattr(sources, "CACHE_FRAME_BYTES", 100_000, raising=False)
    text = bytes(range(97, 123)) * 1500                    # 39 KB per frame
    frames = [HEADER] + [_event(i, text) for i in range(12)]
    log = read.read_bytes(zstd.compress_frames(frames), name="session.v4.jsonl.zstd")
    assert len(log.events) == 12
    source = log.events._source
    for i in range(12):
        log.events._cache.clear()
        assert log.events[i]["seq"] == i
        held = sum(len(v) for v in source._cache.values())
        assert held <= 100_000 + len(frames[i + 1]), held


def test_the_event_cache_is_bounded_in_bytes(tmp_path, monkeypatch):
    """Parsed events are cached within CACHE_EVENT_BYTES of their lines (it kept 1024 whatever
    their size: 20 messages of 200 MB were 10 GB); small events as before."""
    monkeypatch.setattr(store, "CACHE_EVENT_BYTES", 250_000, raising=False)
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(HEADER + b"".join(_event(i, b"b" * 100_000) for i in range(10))
                     + b"".join(_event(i) for i in range(10, 400)))
    log = read.read_log(path)
    events = log.events
    for i in range(10):
        assert events[i]["seq"] == i
        assert len(events._cache) <= 3
    for i in range(10, 400):
        assert events[i]["seq"] == i
    assert len(events._cache) > 300        # a normal event's line is small: kept by count


def test_remembered_texts_are_bounded_in_bytes():
    """`stringify_recalled` keeps at most RECALL_BYTES of texts (32 entries of any size before)."""
    jsjson._RECALLED.clear()
    values = [{"k": str(i) * 10 + "x" * (1 << 20)} for i in range(20)]
    for value in values:
        assert jsjson.stringify_recalled(value) == jsjson.stringify(value)
        held = sum(len(k) + len(v) for k, v in jsjson._RECALLED.items())
        assert held <= getattr(jsjson, "RECALL_BYTES", 16 << 20)
    jsjson._RECALLED.clear()

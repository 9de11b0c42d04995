"""`LogTail` and `Session.refresh()` on the moments a follower must survive: a log rewritten,
truncated or replaced under it, a zstd framing error, a new generation file, an empty file."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import workbench
from workbench.io import follow, zstd
from workbench.io.follow import WINDOW, LogTail, newer_generation

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
REAL = SHARED / "corpus" / "dsh-real-v4" / "dev-subagent-spawn-child__session.v4.jsonl"
pytestmark = pytest.mark.skipif(not REAL.exists(), reason=f"{REAL} is absent (../shared)")


def _log_bytes() -> bytes:
    return REAL.read_bytes()


def test_tail_hands_out_complete_lines_once(tmp_path):
    data = _log_bytes()
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(b"")
    tail = LogTail(str(path))
    out = b""
    for cut in range(0, len(data), 37):
        with open(path, "ab") as f:
            f.write(data[cut:cut + 37])
        growth = tail.poll()
        assert growth.reset is None
        out += growth.records
        assert out == data[:len(out)] and (not out or out.endswith(b"\n"))
        assert tail.pending == tail.consumed - len(out)
    assert out == data and tail.bytes_read == len(data)


def test_tail_hands_out_complete_frames(tmp_path):
    lines = _log_bytes().splitlines(keepends=True)
    data = zstd.compress_frames(lines)
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data[:len(data) // 2])
    tail = LogTail(str(path))
    first = tail.poll()
    assert tail.encoding == "zstd" and first.pending > 0
    path.write_bytes(data)
    second = tail.poll()
    frames = [f for _, _, f in first.records + second.records]
    assert b"".join(frames) == data and second.pending == 0
    assert tail.bytes_read == len(data)


@pytest.mark.parametrize("change", ["truncated", "rewritten", "replaced", "head"])
def test_a_changed_prefix_reloads_with_a_notice(tmp_path, change):
    data = _log_bytes()
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(data)
    session = workbench.load(path, follow=True)
    before = len(session)
    session.events_df()
    if change == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif change == "rewritten":   # same length, the bytes just before the read position differ
        path.write_bytes(data[:-3] + b"X}\n")
    elif change == "head":
        with open(path, "r+b") as f:
            f.write(b"{ ")
            f.seek(0, 2)
            f.write(b"\n")
    else:
        other = tmp_path / "new"
        other.write_bytes(data)
        os.replace(other, path)
    result = session.refresh()
    assert result.reloaded and result.notice
    word = {"truncated": "truncated", "rewritten": "rewritten", "head": "rewritten", "replaced": "replaced"}[change]
    assert word in result.notice and session.reload_notices == [result.notice]
    fresh = workbench.load(path)
    assert len(session) == len(fresh) and session.events_df().equals(fresh.events_df())
    if change == "replaced":
        assert len(session) == before


def test_zstd_framing_error_reloads_and_reports_it(tmp_path):
    lines = _log_bytes().splitlines(keepends=True)
    data = zstd.compress_frames(lines)
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data)
    session = workbench.load(path, follow=True)
    with open(path, "ab") as f:
        f.write(b"garbage that is no frame")
    result = session.refresh()
    assert result.reloaded and "magic" in result.notice
    assert [d.rule for d in session.defects] == [d.rule for d in workbench.load(path).defects]


def test_a_new_generation_file_is_offered(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(_log_bytes())
    session = workbench.load(path, follow=True)
    assert session.refresh().newer is None
    (tmp_path / "session.v4.jsonl").write_bytes(_log_bytes())
    assert session.refresh().newer == str(tmp_path / "session.v4.jsonl")
    assert newer_generation(str(tmp_path / "session.v4.jsonl")) is None


def test_empty_file_and_a_header_in_pieces(tmp_path):
    data = _log_bytes()
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(b"")
    session = workbench.load(path, follow=True)
    assert len(session) == 0 and session.defects   # no header yet
    header_end = data.index(b"\n") + 1
    for cut in (5, header_end - 1, header_end, len(data)):
        path.write_bytes(data[:cut])
        session.refresh()
        session.events_df()
    assert session.defects == [] or session.verdict == workbench.load(path).verdict
    assert len(session) == len(workbench.load(path))


def test_a_log_unreadable_from_the_start_is_not_reloaded_again_and_again(tmp_path):
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(zstd.MAGIC_BYTES + b"\xff" * 40)
    session = workbench.load(path, follow=True)
    rules = [d.rule for d in session.defects]
    assert rules == [d.rule for d in workbench.load(path).defects]
    for _ in range(3):
        assert not session.refresh().reloaded


def _rewrite_middle(path: Path, data: bytes) -> int:
    """Change one letter in the middle of the file in place (same size, same inode); its offset."""
    at = len(data) // 2
    while not data[at:at + 1].isalpha():
        at += 1
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(b"Q" if data[at:at + 1] != b"Q" else b"R")
    return at


def test_a_same_size_rewrite_in_the_middle_reloads_with_a_notice(tmp_path):
    data = _log_bytes()
    assert len(data) < follow.BLOCK   # one incomplete block: verified at the first poll after the change
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(data)
    session = workbench.load(path, follow=True)
    session.events_df()
    at = _rewrite_middle(path, data)
    assert WINDOW < at < len(data) - WINDOW   # neither the head nor the last window sees it
    result = session.refresh()
    assert result.reloaded and "rewritten" in result.notice and session.reload_notices == [result.notice]
    fresh = workbench.load(path)
    assert len(session) == len(fresh) and session.events_df().equals(fresh.events_df())


def test_a_rewrite_anywhere_in_a_large_prefix_is_found_within_its_verification_round(tmp_path, monkeypatch):
    monkeypatch.setattr(follow, "BLOCK", 4096)
    monkeypatch.setattr(follow, "VERIFY_BYTES", 2 * 4096)
    data = _log_bytes()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(b"".join(lines[:-5]))
    tail = LogTail(str(path))
    tail.poll()
    for line in lines[-5:]:   # appends: each poll re-checks at most VERIFY_BYTES of the prefix
        with open(path, "ab") as f:
            f.write(line)
        before = tail.check_bytes
        assert tail.poll().reset is None
        assert tail.check_bytes - before <= 2 * WINDOW + follow.VERIFY_BYTES
    rounds = -(-len(data) // follow.VERIFY_BYTES)
    for _ in range(rounds + 1):   # a round after the appends finds the file unchanged
        assert tail.poll().reset is None
    quiet = tail.check_bytes
    assert tail.poll().reset is None and tail.check_bytes == quiet   # nothing changed: nothing re-read
    at = _rewrite_middle(path, data)
    polls = 0
    while (growth := tail.poll()).reset is None:
        polls += 1
        assert polls <= rounds
    assert "rewritten" in growth.reset and f"{at // 4096 * 4096:,}" in growth.reset
    assert tail.bytes_read == len(data)


def test_a_newer_generation_is_offered_only_once_discovery_lists_it_as_this_session(tmp_path):
    data = _log_bytes()
    header, rest = data.split(b"\n", 1)
    path = tmp_path / "session.v3.jsonl"
    path.write_bytes(data)
    session = workbench.load(path, follow=True)
    newer = tmp_path / "session.v4.jsonl"
    (tmp_path / "session.v4.jsonl.tmp").write_bytes(data)   # a migration in progress: not a session file
    assert session.refresh().newer is None
    newer.write_bytes(header[:len(header) // 2])             # its header is still being written
    assert session.refresh().newer is None
    other = header.replace(str(session.session_id).encode(), b"another-session", 1)
    assert other != header
    newer.write_bytes(other + b"\n" + rest)                  # another session's log
    assert session.refresh().newer is None
    newer.write_bytes(data)
    assert session.refresh().newer == str(newer)
    assert session.refresh().newer == str(newer)             # kept once found


def test_a_log_larger_than_one_poll_is_read_whole_at_start_and_on_refresh(tmp_path, monkeypatch):
    monkeypatch.setattr(follow, "READ_LIMIT", 4096)
    data = _log_bytes()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(b"".join(lines[:-3]))
    session = workbench.load(path, follow=True)
    assert len(session) == len(workbench.load(path))
    with open(path, "ab") as f:
        f.write(b"".join(lines[-3:]))
    while session.refresh():
        pass
    assert len(session) == len(workbench.load(path)) and session.live.tail.bytes_read == len(data)


def test_refresh_extends_the_brackets_instead_of_dropping_them(tmp_path):
    log = SHARED / "corpus" / "dsh-real-v4" / "dev-long-auto-compaction__session.v4.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if b'"compaction/start"' in line]
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(b"".join(lines[:starts[0] + 1]))   # a bracket open at the end
    session = workbench.load(path, follow=True)
    assert [r.status for r in session.compactions.records] == ["interrupted"]
    for cut in (starts[0] + 5, starts[1] + 2 if len(starts) > 1 else len(lines), len(lines)):
        with open(path, "ab") as f:
            f.write(b"".join(lines[len(session) + 1:cut]))   # line 0 is the header
        assert session.refresh()
        assert "compactions" in session.analysis.__dict__   # extended in the refresh, not dropped
        fresh = workbench.load(path)
        assert session.compactions.records == fresh.compactions.records
        assert session.compactions.prunes == fresh.compactions.prunes
        assert session.compactions_df().equals(fresh.compactions_df())


def test_zstd_bytes_after_the_frames_follow_as_they_load(tmp_path):
    """Bytes that are no frame after a zstd log's frames: following it from the start gives the
    fresh load's events (the frames before them) and its one structure defect, and reads no more."""
    lines = _log_bytes().splitlines(keepends=True)
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(zstd.compress_frames(lines) + b"garbage that is no frame")
    fresh, session = workbench.load(path), workbench.load(path, follow=True)
    assert len(fresh) == len(lines) - 1
    assert [d.rule for d in fresh.defects] == ["zstd_structure"]
    assert [d.rule for d in session.defects] == ["zstd_structure"]
    assert session.events_df().equals(fresh.events_df())
    with open(path, "ab") as f:
        f.write(zstd.compress_frames([lines[1]]))
    assert session.refresh().added == 0 and len(session) == len(fresh)


def test_zstd_record_continuing_in_the_next_frame_waits_for_it(tmp_path):
    """v4 §1.6: a record may continue from one complete frame into the next. Followed while the
    writer has appended only the first part, it waits (no event, no defect), as an incomplete raw
    line does; once the next frame comes the follower holds what a fresh load of the file holds
    (it called the log corrupt for good)."""
    lines = _log_bytes().splitlines(keepends=True)
    body = b"".join(lines[1:])
    cut = len(b"".join(lines[1:3])) + 10        # inside the third event's line
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(zstd.compress_frames([lines[0], body[:cut]]))
    session = workbench.load(path, follow=True)
    assert len(session) == 2 and session.defects == []
    with open(path, "ab") as f:
        f.write(zstd.compress_frames([body[cut:]]))
    assert session.refresh().added == len(lines) - 3
    fresh = workbench.load(path)
    assert fresh.defects == [] and session.events_df().equals(fresh.events_df())

"""A loaded log whose file changes on disk: events are read back lazily after the load, so a log
replaced, moved, deleted, truncated or rewritten in place is never read as if it were the one
loaded. Every read after the load raises `LogChanged` naming the file and the event (or the zstd
frame); appending (a live session) is no change; a follow refresh of a log that is gone keeps
what was loaded and says so."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tour_script import tour_script

import workbench
from workbench.errors import LogChanged


def _log(tmp_path: Path, compression: str = "none") -> Path:
    name = "session.v4.jsonl" + (".zstd" if compression == "zstd" else "")
    return tour_script(4).write(tmp_path / name, compression=compression)


def _reads(session) -> list:
    """Lazy reads of every kind: one event by seq, an in-order pass, frames built from payloads."""
    return [lambda: session.events[len(session) - 1], lambda: list(session.events),
            session.requests_df, session.compactions_df, session.turns_df]


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _same_size_numbers(path: Path) -> None:
    lines = path.read_bytes().split(b"\n")
    body = [b"7" + b" " * (len(line) - 1) if line else line for line in lines[1:]]
    path.write_bytes(b"\n".join([lines[0], *body]))


def _other_events(path: Path) -> None:
    """Same size, valid JSON objects, but each line holds the event of another seq."""
    lines = path.read_bytes().split(b"\n")
    body = [line.replace(b'"seq":', b'"seq":1', 1) if b'"seq":' in line else line for line in lines[1:]]
    path.write_bytes(b"\n".join([lines[0], *[b[:len(a)] if len(b) > len(a) else b
                                             for a, b in zip(lines[1:], body)]]))


def _replace(path: Path) -> None:
    other = path.with_name("other.jsonl")
    shutil.copy(path, other)
    os.replace(other, path)


@pytest.mark.parametrize("change", [_truncate, _same_size_numbers, _other_events, _replace, os.unlink],
                         ids=["truncated", "rewritten-same-size", "other-events", "replaced", "deleted"])
@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_a_read_after_a_change_is_right_or_raises_log_changed(tmp_path, change, compression):
    """Never another file's events, never another error: each read gives what it gave before
    the change (from the descriptor or caches the load kept) or raises `LogChanged`; with the
    descriptor and caches released (`events.close()`, as before any lazy read), the events do."""
    path = _log(tmp_path, compression)
    session = workbench.load(path)
    assert session.verdict == "clean"
    before = [repr(read()) for read in _reads(workbench.load(path))]
    session.log.events.close()
    if compression == "zstd" and change in (_same_size_numbers, _other_events):
        change = _truncate   # a zstd log has no lines to rewrite in place
    change(path)
    raised = 0
    for read, expected in zip(_reads(session), before):
        try:
            assert repr(read()) == expected
        except LogChanged as exc:
            raised += 1
            message = str(exc)
            assert str(path) in message and "load it again" in message
            if change in (_same_size_numbers, _other_events) or (change is _truncate and compression == "none"):
                assert "event " in message and "(line " in message
            if compression == "zstd" and change is _truncate:
                assert "zstd frame at byte" in message
    assert raised >= 2   # at least the two reads of every event


def test_appending_is_no_change(tmp_path):
    """A live session grows: the events loaded still read back exactly."""
    path = _log(tmp_path)
    session = workbench.load(path)
    with open(path, "ab") as fh:
        fh.write(b'{"type":"user/message","seq":999}\n')
    assert [e["seq"] for e in session.events] == list(range(len(session)))
    assert len(session.requests_df()) > 0


def test_a_followed_log_that_is_deleted_keeps_what_was_loaded(tmp_path):
    path = _log(tmp_path)
    session = workbench.load(path, follow=True)
    count = len(session)
    path.unlink()
    result = session.refresh()
    assert not result.reloaded and result.added == 0 and len(session) == count
    assert "cannot be loaded again" in result.notice and "retrying" in result.notice
    _log(tmp_path)   # the file comes back: the next refresh loads it again
    assert session.refresh().reloaded and len(session) == count

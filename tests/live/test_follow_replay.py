"""A writer process replays a real DSH log into a new file while a followed session refreshes:
at the end the followed session equals a fresh load in every frame and in the fold, every byte
was read once, and the torn moments (half a line, half a zstd frame) were seen and survived."""
from __future__ import annotations

import multiprocessing as mp
import os

import pandas as pd
import pytest
from replay import records, replay

import workbench
from workbench.frames.schema import FRAME_NAMES
from workbench.io.follow import VERIFY_BYTES, WINDOW

LOGS = ["dev-long-auto-compaction__session.v4.jsonl", "dev-killed-mid-compaction__session.v4.jsonl",
        "dev-zstd-auto-compaction__session.v4.jsonl.zstd"]


def assert_same_session(followed, fresh) -> None:
    assert len(followed) == len(fresh)
    assert followed.verdict == fresh.verdict
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(getattr(followed, f"{name}_df")(), getattr(fresh, f"{name}_df")(),
                                      check_exact=True, obj=name)
    assert followed.compactions.records == fresh.compactions.records
    assert followed.compactions.prunes == fresh.compactions.prunes
    a, b = followed.timeline, fresh.timeline
    assert a.final_nodes == b.final_nodes
    assert [r.seq for r in a.replacements] == [r.seq for r in b.replacements]
    for seq in range(len(fresh)):
        assert a.surface_at(seq) == b.surface_at(seq), seq


@pytest.mark.parametrize("name", LOGS)
def test_followed_session_equals_a_fresh_load(shared_dir, tmp_path, name):
    source = shared_dir / "corpus" / "dsh-real-v4" / name
    if not source.exists():
        pytest.skip(f"{source} is absent")
    target = tmp_path / name
    target.write_bytes(b"")
    ctx = mp.get_context("spawn")
    torn, seen, done = ctx.Event(), ctx.Event(), ctx.Event()
    writer = ctx.Process(target=replay, args=(str(source), str(target), 17, torn, seen, done))
    session = workbench.load(target, follow=True)
    writer.start()
    torn_seen = refreshes = grew = 0
    try:
        while True:
            finished = done.is_set()
            result = session.refresh()
            refreshes += 1
            assert not result.reloaded, result.notice
            grew += bool(result.added)
            if refreshes % 7 == 0:          # frames in the middle of the stream, built then extended
                session.events_df(), session.timeline_df(), session.compactions_df()
            if torn.is_set():
                result = session.refresh()
                assert result.pending > 0   # half a record waits in memory
                fresh = workbench.load(target)   # the reference view of the same moment
                if target.suffix == ".jsonl":
                    assert len(session) == len(fresh) and fresh.log.torn_tail
                else:   # a fresh load recovers lines from the torn frame; following waits for it
                    assert len(session) <= len(fresh)
                session.surface_df(), session.compactions_df(), session.requests_df()
                torn_seen += 1
                torn.clear()
                seen.set()
            if finished:
                break
    finally:
        writer.join(60)
    assert writer.exitcode == 0
    assert torn_seen >= 2 and grew >= 3
    assert target.read_bytes() == source.read_bytes()
    result = session.refresh()
    assert not result and result.pending == 0
    tail = session.live.tail
    assert tail.bytes_read == os.path.getsize(source)            # every byte read once
    assert tail.check_bytes <= (2 * WINDOW + VERIFY_BYTES) * tail.polls   # plus the prefix checks
    assert_same_session(session, workbench.load(target))


def test_replay_units_are_the_log(shared_dir):
    for name in LOGS:
        source = shared_dir / "corpus" / "dsh-real-v4" / name
        if source.exists():
            assert b"".join(records(source)) == source.read_bytes()

"""The one-pass surface timeline: surfaces at every seq, shadows, lineage, diffs, statuses,
projected messages over time, transcripts, windows, recorded fold errors and query speed."""
from __future__ import annotations

import random
import time

import pytest

from workbench.core.surface import fold_surface
from workbench.core.surface_diff import DiffHunk
from workbench.core.timeline import Shadowing, SurfaceTimeline


def user(seq, op="append", sources=None, text="u"):
    ev = {"type": "user/message", "seq": seq, "time": 0, "surfaceOp": op,
          "data": {"id": f"u-{seq}", "role": "user", "source": {"kind": "user"},
                   "content": [{"type": "text", "text": text}]}}
    if sources is not None:
        ev["sourceEventSeqs"] = sources
    return ev


def assistant(seq, content):
    return {"type": "assistant/message", "seq": seq, "time": 0, "surfaceOp": "append",
            "sourceEventSeqs": [],
            "data": {"turn": 1, "step": 1, "message": {
                "id": f"a-{seq}", "role": "assistant", "content": content,
                "source": {"kind": "model", "provider": "p", "model": "m"}}}}


def log_only(seq):
    return {"type": "todo/write", "seq": seq, "time": 0, "data": {"todos": []}}


def rep(start, end):
    return {"op": "replace", "start": start, "end": end}


def seed_log():
    """Seqs 0-7 a conversation, compaction 8-10 replacing [0, 5]; then nested compaction."""
    events = [user(0), assistant(1, [{"type": "text", "text": "a"}]), user(2), assistant(3, []),
              user(4), assistant(5, [{"type": "text", "text": "b"}]), user(6),
              assistant(7, [{"type": "text", "text": "c"}]),
              {"type": "compaction/start", "seq": 8, "time": 0, "data": {"compactionId": "k"}},
              {"type": "compaction/summary", "seq": 9, "time": 0, "data": {"compactionId": "k"}},
              user(10, rep(0, 5), [8, 9, 0, 1, 2, 3, 4, 5], "summary 1"),
              log_only(11), user(12),
              user(13, rep(10, 6), [10, 6], "summary 2")]
    return events


def test_surface_at_every_seq_matches_refold():
    events = seed_log()
    timeline = SurfaceTimeline(events, version=0)
    for seq in range(len(events)):
        assert timeline.surface_at(seq) == fold_surface(events, version=0, through=seq).nodes
    assert timeline.surface_at(10) == (10, 6, 7)
    assert timeline.surface_at(13) == (13, 7, 12)
    assert timeline.surface_at(-1) == ()
    assert timeline.surface_at(10_000) == timeline.final_nodes == (13, 7, 12)
    assert timeline.errors == ()


def test_shadow_map_status_and_representative():
    timeline = SurfaceTimeline(seed_log(), version=0)
    assert timeline.shadowed_by(2) == Shadowing(hidden_at=10, replacement=10)
    assert timeline.shadowed_by(10) == Shadowing(13, 13)
    assert timeline.shadowed_by(7) is None
    assert [timeline.status_at_end(s) for s in (2, 10, 7, 8, 13)] == [
        "shadowed", "shadowed", "current", "log-only", "current"]
    assert timeline.representative(2) == 13
    assert timeline.representative(2, at=11) == 10
    assert timeline.representative(2, at=9) == 2
    assert timeline.representative(12, at=11) is None
    assert timeline.on_surface(6, at=12) and not timeline.on_surface(6, at=13)
    with pytest.raises(IndexError):
        timeline.status_at_end(99)


def test_lineage_through_nested_compactions():
    timeline = SurfaceTimeline(seed_log(), version=0)
    assert timeline.lineage(10) == (0, 1, 2, 3, 4, 5)
    # surface order: the nested checkpoint starts with the earlier checkpoint (a larger seq)
    assert timeline.lineage(13) == (0, 1, 2, 3, 4, 5, 6)
    assert timeline.lineage(7) == (7,)
    assert timeline.lineage(8) == ()
    covered = [s for node in timeline.final_nodes for s in timeline.lineage(node)]
    assert covered == list(timeline.appended_through(13)) == [0, 1, 2, 3, 4, 5, 6, 7, 12]


def test_diff_between_seqs():
    timeline = SurfaceTimeline(seed_log(), version=0)
    d = timeline.diff(7, 13)
    assert d.removed == (0, 1, 2, 3, 4, 5, 6)
    assert d.added == (13, 12)
    assert d.replaced == (DiffHunk(None, (0, 1, 2, 3, 4, 5, 6), (13,)),)
    assert d.hunks == (DiffHunk(None, (0, 1, 2, 3, 4, 5, 6), (13,)), DiffHunk(7, (), (12,)))
    assert d.apply(timeline.surface_at(7)) == timeline.surface_at(13)
    back = timeline.diff(13, 7)
    assert back.apply(timeline.surface_at(13)) == timeline.surface_at(7)
    assert timeline.diff(5, 5).hunks == ()


def test_generations_and_replacements_over_time():
    timeline = SurfaceTimeline(seed_log(), version=0)
    assert [timeline.replace_generation_at(s) for s in (9, 10, 12, 13)] == [0, 1, 1, 2]
    assert [r.seq for r in timeline.replacements_through(12)] == [10]
    assert timeline.replacement_by_seq[13].shadowed == (10, 6)


def test_messages_and_transcript():
    timeline = SurfaceTimeline(seed_log(), version=0)
    # seq 3 is an empty assistant message: a node that derives no message
    assert [s for s, _ in timeline.messages_at(7)] == [0, 1, 2, 4, 5, 6, 7]
    assert timeline.message_at(3) is None
    assert timeline.message_at(10)["content"][0]["text"] == "summary 1"
    # the transcript keeps what a human saw, including the shadowed appends
    assert timeline.transcript_at(13) == (0, 1, 2, 3, 4, 5, 6, 7, 12)


def _image(n):
    return {"type": "image", "attachment": {"attachmentId": f"i{n}", "mediaType": "image/png",
                                            "bytes": 1, "width": 1, "height": 1}}


def test_image_offload_projection_history():
    events = [user(0), {"type": "user/message", "seq": 1, "time": 0, "surfaceOp": "append",
                        "data": {"id": "u-1", "role": "user", "source": {"kind": "user"},
                                 "content": [_image(0), _image(1)]}},
              {"type": "image/offload", "seq": 2, "time": 0,
               "data": {"targets": [{"seq": 1, "imageIndexes": [0]}]}},
              {"type": "image/offload", "seq": 3, "time": 0,
               "data": {"targets": [{"seq": 1, "imageIndexes": [1]}]}}]
    timeline = SurfaceTimeline(events, version=4)

    def flags(at):
        return [b.get("offloaded", False) for b in timeline.message_at(1, at)["content"]]

    assert flags(1) == [False, False]
    assert flags(2) == [True, False]
    assert flags(3) == [True, True]
    assert [timeline.content_generation_at(s) for s in (1, 2, 3)] == [0, 1, 2]


def test_window_with_absolute_seqs():
    events = [user(400_000), user(400_001), user(400_002, rep(400_000, 400_000), [400_000])]
    timeline = SurfaceTimeline(events, version=0, base_seq=400_000)
    assert timeline.surface_at(400_001) == (400_000, 400_001)
    assert timeline.surface_at(400_002) == (400_002, 400_001)
    assert timeline.lineage(400_002) == (400_000,)


def test_fold_errors_are_recorded_and_skipped():
    events = seed_log()
    events[12] = user(12, rep(99, 99), [1])          # start not on the surface
    timeline = SurfaceTimeline(events, version=0)
    assert [(e.seq, e.kind) for e in timeline.errors] == [(12, "replace_start_not_found")]
    assert timeline.status_at_end(12) == "rejected"
    assert timeline.surface_at(12) == (10, 6, 7)
    assert timeline.surface_at(13) == (13, 7)        # folding went on after the bad event


def test_empty_log():
    timeline = SurfaceTimeline([], version=4)
    assert timeline.final_nodes == () and timeline.surface_at(0) == () and timeline.end_seq == -1


def _big_log(n_steps, compact_over, keep):
    events, nodes = [], []

    def emit(ev):
        ev["seq"] = len(events)
        ev["time"] = 0
        events.append(ev)
        return ev["seq"]

    for _ in range(n_steps):
        for _ in range(6):
            emit({"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {}}})
        nodes.append(emit({"type": "user/message", "surfaceOp": "append", "data": {}}))
        nodes.append(emit({"type": "user/message", "surfaceOp": "append", "data": {}}))
        if len(nodes) > compact_over:
            shadowed = nodes[1:len(nodes) - keep]
            seq = emit({"type": "user/message", "data": {}, "sourceEventSeqs": list(shadowed),
                        "surfaceOp": {"op": "replace", "start": shadowed[0], "end": shadowed[-1]}})
            nodes[1:len(nodes) - keep] = [seq]
    return events


def test_surface_at_is_fast_without_refolding():
    events = _big_log(40_000, compact_over=3000, keep=300)   # 320k events, 29 compactions
    timeline = SurfaceTimeline(events, version=0)
    assert timeline.errors == () and len(timeline.replacements) == 29
    rng = random.Random(7)
    durations = []
    for _ in range(500):
        seq = rng.randrange(len(events))
        # CPU time of this thread: other processes on a busy machine must not count
        start = time.thread_time()
        timeline.surface_at(seq)
        durations.append(time.thread_time() - start)
    durations.sort()
    assert durations[int(len(durations) * 0.99)] < 0.005

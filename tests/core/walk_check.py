"""`assert_walk_matches`: the surface walk and the int64 surfaces (`core.surface_arrays`) against
`surface_at`, for the timeline property tests and every corpus log."""
from __future__ import annotations

import random

from workbench.core.surface_arrays import (
    SurfaceWalk,
    nodes_seen_at,
    position_of,
    surface_array,
)
from workbench.core.timeline import SurfaceTimeline


def assert_walk_matches(timeline: SurfaceTimeline, rng: random.Random) -> None:
    """`SurfaceWalk`, `nodes_seen_at`, `surface_array` and `position_of` agree with `surface_at`
    at every seq (and before and past the log), walked forward, then in a shuffled order
    (backward moves, repeats)."""
    end = timeline.end_seq
    seqs = list(range(timeline.base_seq - 1, end + 3))
    order = seqs + rng.sample(seqs, len(seqs)) + [seqs[len(seqs) // 2]] * 2
    walk, present = SurfaceWalk(timeline), set()
    for seq in order:
        joined, left = walk.move(seq)
        assert joined == sorted(joined) and left == sorted(left)
        assert not present & set(joined) and set(left) <= present, seq
        present = (present - set(left)) | set(joined)
        surface = timeline.surface_at(seq)
        assert present == set(surface), f"walk at {seq}"
        array = surface_array(timeline, seq)
        assert array.dtype == "int64" and array.tolist() == list(surface), f"array at {seq}"
        for value in (*surface[:2], *surface[-2:], seq, seq + 0.5, float(seq), True, False,
                      str(seq), None, 2**70, -1):
            want = surface.index(value) if value in surface else None
            assert position_of(array, value) == want, (seq, value)
    for k in (1, 2, 5):
        asked = rng.sample(seqs, min(k, len(seqs)))
        want = sorted(set().union(*(timeline.surface_at(s) for s in asked)))
        assert nodes_seen_at(timeline, asked).tolist() == want, asked
    assert nodes_seen_at(timeline, []).tolist() == []

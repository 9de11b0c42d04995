"""Per-seq surface facts of one analysed log as numpy arrays (index = seq). Layer: core
(stdlib + numpy).

`SurfaceArrays` turns the surface timeline's per-event codes (`workbench.core.timeline
.SurfaceTimeline.event_codes`) and its replacements into dense arrays the frames and views read
without folding again; events past the timeline's end read as log-only. From the same codes,
without building a surface, `nodes_seen_at` answers "which nodes were on the surface at any of
these seqs" and `SurfaceWalk` "which nodes joined and left it between two seqs": a node is on
the surface at `t` exactly when it joined at or before `t` and was not hidden by then
(`SurfaceTimeline.on_surface`), since a seq joins the surface only with its own event and
leaves it at most once.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.core.timeline import APPENDED, REJECTED, REPLACEMENT, SurfaceTimeline


class SurfaceArrays:
    """Per-seq surface facts from the timeline, as numpy arrays (index = seq).

    `node`: the event joined the surface (append or replacement); `shadowed_by`: the replacing
    seq (-1: never hidden); `replaced`: the event is an applied replacement; `rejected`: the
    fold refused the event; `size`: surface node count after the event; `generation`:
    replacements applied so far; `totals(prices)`: the surface total of any per-seq price array
    after every event (one vectorised pass)."""

    def __init__(self, timeline: SurfaceTimeline, n: int) -> None:
        codes, hider = _codes(timeline)
        status = np.zeros(n, dtype=np.uint8)   # LOG_ONLY past the events the fold saw
        status[:len(codes)] = codes[:n]
        if len(hider) >= n:   # `event_codes` copied it: read it as it is
            shadowed_by = hider[:n]
        else:
            shadowed_by = np.full(n, -1, dtype=np.int64)
            shadowed_by[:len(hider)] = hider
        node = _is_node(status)
        size_delta = node.astype(np.int64)
        self._hidden: list[tuple[int, np.ndarray]] = []
        for rep in timeline.replacements:
            hidden = np.asarray(rep.shadowed, dtype=np.int64)
            size_delta[rep.seq] = 1 - len(hidden)
            self._hidden.append((rep.seq, hidden))
        self.node = node
        self.shadowed_by = shadowed_by
        self.rejected = status == REJECTED
        self.size = np.cumsum(size_delta)
        self.replaced = status == REPLACEMENT
        self.generation = np.cumsum(self.replaced, dtype=np.int64)
        self.final_nodes = timeline.final_nodes

    def totals(self, prices: np.ndarray) -> np.ndarray:
        """Surface total after every event for per-seq node `prices` (>= 0)."""
        delta = np.where(self.node, prices, 0)
        for seq, hidden in self._hidden:
            delta[seq] = prices[seq] - int(prices[hidden].sum())
        return np.cumsum(delta)


def _codes(timeline: SurfaceTimeline) -> tuple[np.ndarray, np.ndarray]:
    """`timeline.event_codes()` as numpy: each seen event's status and the seq that hid it."""
    codes, shadow = timeline.event_codes()
    hider = np.frombuffer(shadow, dtype=np.int64) if len(shadow) else np.zeros(0, np.int64)
    return np.frombuffer(codes, dtype=np.uint8), hider


def _is_node(status: np.ndarray) -> np.ndarray:
    """Which events joined the surface (an append or a replacement)."""
    return (status == APPENDED) | (status == REPLACEMENT)


def _spans(timeline: SurfaceTimeline) -> tuple[np.ndarray, np.ndarray]:
    """Every node (ascending) and the seq that hid it (int64 max: never), so that a node `n`
    is on the surface at `t` exactly when ``n <= t < until``."""
    status, hider = _codes(timeline)
    index = np.flatnonzero(_is_node(status))
    until = np.where(hider[index] < 0, np.iinfo(np.int64).max, hider[index])
    return index + timeline.base_seq, until


def surface_array(timeline: SurfaceTimeline, seq: int) -> np.ndarray:
    """`timeline.surface_at(seq)` as an int64 array, built without an int object per node."""
    return np.frombuffer(timeline.surface_seqs(seq), dtype=np.int64)


def position_of(surface: np.ndarray, value: Any) -> int | None:
    """``list(surface).index(value)`` (None: absent) for any log value: only an int, a bool or
    an integral float equals a seq."""
    if type(value) is float:
        if not value.is_integer():
            return None
    elif type(value) is not int and type(value) is not bool:
        return None
    found = np.flatnonzero(surface == int(value))
    return int(found[0]) if len(found) else None


def nodes_seen_at(timeline: SurfaceTimeline, seqs: Sequence[int]) -> np.ndarray:
    """The nodes (ascending) on the surface at one or more of `seqs`: the union of
    `timeline.surface_at(t)` over them, in O(events · log len(seqs)) whatever their number."""
    nodes, until = _spans(timeline)
    at = np.unique(np.asarray(list(seqs), dtype=np.int64))
    if not len(at) or not len(nodes):
        return np.zeros(0, dtype=np.int64)
    first = np.searchsorted(at, nodes)          # the first asked seq at or after each node
    seen = first < len(at)
    seen[seen] = at[first[seen]] < until[seen]
    return nodes[seen]


class SurfaceWalk:
    """The surface as a walk from seq to seq, starting before the log (empty): `move(t)` gives
    the nodes that joined it and those that left it between the last seq and `t` (either
    direction; both ascending), so a reader keeps its own per-node state of the surface at `t`
    in time proportional to what changed, not to the surface (`citation.citations`)."""

    def __init__(self, timeline: SurfaceTimeline) -> None:
        self._nodes, self._until = _spans(timeline)
        order = np.argsort(self._until, kind="stable")
        self._by_until, self._until_sorted = self._nodes[order], self._until[order]
        self.at = timeline.base_seq - 1

    def move(self, t: int) -> tuple[list[int], list[int]]:
        """(joined, left) from the surface at `self.at` to the surface at `t`."""
        a, self.at = self.at, t
        lo, hi = min(a, t), max(a, t)
        nodes, until = self._nodes, self._until
        i, j = np.searchsorted(nodes, [lo, hi], side="right")
        up = nodes[i:j][until[i:j] > hi]            # on the surface at `hi`, not at `lo`
        p, q = np.searchsorted(self._until_sorted, [lo, hi], side="right")
        gone = self._by_until[p:q]
        down = np.sort(gone[gone <= lo])            # on the surface at `lo`, not at `hi`
        return (up.tolist(), down.tolist()) if t >= a else (down.tolist(), up.tolist())

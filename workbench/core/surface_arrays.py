"""Per-seq surface facts of one analysed log as numpy arrays (index = seq). Layer: core
(stdlib + numpy).

`SurfaceArrays` turns the surface timeline's per-event codes (`workbench.core.timeline
.SurfaceTimeline.event_codes`) and its replacements into dense arrays the frames and views read
without folding again; events past the timeline's end read as log-only.
"""
from __future__ import annotations

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
        codes, shadow = timeline.event_codes()
        status = np.zeros(n, dtype=np.uint8)   # LOG_ONLY past the events the fold saw
        status[:len(codes)] = np.frombuffer(codes, dtype=np.uint8)[:n]
        if len(shadow) >= n:   # `event_codes` copied it: read it as it is
            shadowed_by = np.frombuffer(shadow, dtype=np.int64)[:n] if n else np.zeros(0, np.int64)
        else:
            shadowed_by = np.full(n, -1, dtype=np.int64)
            if len(shadow):
                shadowed_by[:len(shadow)] = np.frombuffer(shadow, dtype=np.int64)
        node = (status == APPENDED) | (status == REPLACEMENT)
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

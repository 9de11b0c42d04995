"""How the surface at one seq becomes the surface at another: `SurfaceDiff` and its hunks.
Layer: core (pure). `SurfaceTimeline.diff(a, b)` computes them; invariant (property-tested):
``diff(a, b).apply(surface_at(a)) == surface_at(b)``."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DiffHunk:
    """Between the common node `after` (None: the surface head) and the next common node,
    `removed` (surface a) gave way to `added` (surface b)."""

    after: int | None
    removed: tuple[int, ...]
    added: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SurfaceDiff:
    """How the surface at seq `a` becomes the surface at seq `b`.

    `added`: nodes of b not in a; `removed`: nodes of a not in b; `replaced`: the hunks where
    nodes of a gave way to new nodes (a replacement, possibly nested); `hunks`: every change in
    surface order, enough to `apply` the diff to the surface at a."""

    a: int
    b: int
    added: tuple[int, ...]
    removed: tuple[int, ...]
    replaced: tuple[DiffHunk, ...]
    hunks: tuple[DiffHunk, ...]

    def apply(self, surface: Sequence[int]) -> tuple[int, ...]:
        gone = set(self.removed)
        inserts = {h.after: h.added for h in self.hunks if h.added}
        out = list(inserts.get(None, ()))
        for seq in surface:
            if seq in gone:
                continue
            out.append(seq)
            more = inserts.get(seq)
            if more:
                out.extend(more)
        return tuple(out)


__all__ = ["DiffHunk", "SurfaceDiff"]

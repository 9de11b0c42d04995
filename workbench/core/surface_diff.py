"""How the surface at one seq becomes the surface at another: `SurfaceDiff` and its hunks.
Layer: core (pure). `diff_surfaces` computes them (`SurfaceTimeline.diff(a, b)`); invariant (property-tested):
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


def diff_surfaces(a: int, b: int, sa: Sequence[int], sb: Sequence[int]) -> SurfaceDiff:
    """The diff from surface `sa` (at seq `a`) to surface `sb` (at seq `b`): surviving nodes keep
    their relative order (appends and splices never reorder), so one merge walk finds the hunks."""
    in_a, in_b = set(sa), set(sb)
    hunks: list[DiffHunk] = []
    i = j = 0
    anchor: int | None = None
    while i < len(sa) or j < len(sb):
        removed: list[int] = []
        added: list[int] = []
        while i < len(sa) and sa[i] not in in_b:
            removed.append(sa[i])
            i += 1
        while j < len(sb) and sb[j] not in in_a:
            added.append(sb[j])
            j += 1
        if removed or added:
            hunks.append(DiffHunk(anchor, tuple(removed), tuple(added)))
        if i < len(sa) and j < len(sb):
            anchor = sa[i]
            i += 1
            j += 1
    return SurfaceDiff(
        a, b,
        added=tuple(s for s in sb if s not in in_a),
        removed=tuple(s for s in sa if s not in in_b),
        replaced=tuple(h for h in hunks if h.removed and h.added),
        hunks=tuple(hunks))


__all__ = ["DiffHunk", "SurfaceDiff", "diff_surfaces"]

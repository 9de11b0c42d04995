"""Where the controls can jump: compactions, model requests, search matches. Layer: views
(numpy and pandas only, no widgets, so it is tested and benchmarked without a front end).

Targets are sorted seq arrays and a jump is one `searchsorted`. A search runs over whole
columns at once (the events frame's `type`, `preview` and `surface_status`, read on the first
search), never a Python loop per event: on a 1.3M-event log a search costs one vectorised pass, a step costs nothing.

Search semantics: the text is matched case-insensitively, as a plain substring, against each
event's one-line preview (the frames layer's preview of its message or main field, not the full
payload); the surface state is the event's classification at the end of the log (v0 spec §4.7:
on surface / shadowed / log-only). Criteria combine with AND; "next" wraps to the start of the
log once.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
import pandas as pd

SurfaceState = Literal["on surface", "shadowed", "log-only"]
SURFACE_STATES: dict[str, str] = {"on surface": "current", "shadowed": "shadowed",
                                  "log-only": "log-only"}
"""Search vocabulary → the events frame's `surface_status` categories."""


def next_after(targets: np.ndarray, seq: int) -> int | None:
    """The first target strictly after `seq` (None when there is none)."""
    i = int(np.searchsorted(targets, seq, side="right"))
    return int(targets[i]) if i < len(targets) else None


def previous_before(targets: np.ndarray, seq: int) -> int | None:
    """The last target strictly before `seq` (None when there is none)."""
    i = int(np.searchsorted(targets, seq, side="left"))
    return int(targets[i - 1]) if i > 0 else None


def seq_array(seqs: Iterable[int]) -> np.ndarray:
    """Sorted unique int64 seqs."""
    return np.unique(np.fromiter(seqs, dtype=np.int64))


@dataclass(frozen=True, slots=True)
class Match:
    """A search result: the seq found, and whether the search wrapped past the end."""

    seq: int
    wrapped: bool


class Navigator:
    """Jump targets and search over one log (see the module doc)."""

    def __init__(self, events: Callable[[], pd.DataFrame], *, n: int, types: Sequence[str],
                 compactions: np.ndarray, requests: np.ndarray) -> None:
        self.last_seq = n - 1
        self.compactions = np.asarray(compactions, dtype=np.int64)
        self.requests = np.asarray(requests, dtype=np.int64)
        self.types: tuple[str, ...] = tuple(sorted(types))
        self._events = events   # the events frame, read on the first search

    @cached_property
    def _columns(self) -> tuple[pd.Series, pd.Series, pd.Series]:
        events = self._events()   # the frames' typed columns, compared as they are
        return events["type"], events["preview"].fillna(""), events["surface_status"]

    def next_compaction(self, seq: int) -> int | None:
        return next_after(self.compactions, seq)

    def previous_compaction(self, seq: int) -> int | None:
        return previous_before(self.compactions, seq)

    def next_request(self, seq: int) -> int | None:
        return next_after(self.requests, seq)

    def previous_request(self, seq: int) -> int | None:
        return previous_before(self.requests, seq)

    def matches(self, *, text: str = "", event_type: str | None = None,
                state: SurfaceState | None = None) -> np.ndarray:
        """Seqs of every event meeting all given criteria (empty criteria: none)."""
        if not text and not event_type and not state:
            return np.zeros(0, dtype=np.int64)
        kind, preview, status = self._columns
        mask = pd.Series(True, index=preview.index)
        if text:
            mask &= preview.str.contains(text, case=False, regex=False)
        if event_type:
            mask &= kind == event_type
        if state:
            mask &= status == SURFACE_STATES[state]
        return np.flatnonzero(mask.fillna(False).to_numpy(dtype=bool)).astype(np.int64)

    def find_next(self, seq: int, **criteria: object) -> Match | None:
        """The first match after `seq`, wrapping to the start once; None without any match."""
        found = self.matches(**criteria)  # type: ignore[arg-type]
        if not len(found):
            return None
        after = next_after(found, seq)
        return Match(after, False) if after is not None else Match(int(found[0]), True)

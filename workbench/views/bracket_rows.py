"""What the views draw of a compaction attempt. Layer: views.

`bracket_frame` makes the `compactions_df`-named columns the bracket views read from core
`CompactionRecord`s (no audit: the views need none of it), and `Bracket` is one attempt as the
panes walk it: its seqs (-1: absent) and its display status. `ViewData` holds both per session.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd


def bracket_frame(records: Sequence[Any]) -> pd.DataFrame:
    """`compactions_df`-named columns for the views, from core `CompactionRecord`s."""
    def seq(value: Any) -> Any:
        return value if type(value) is int else None

    rows = {
        "compaction_id": [r.compaction_id if isinstance(r.compaction_id, str) else None
                          for r in records],
        "status": [r.status for r in records],
        "start_seq": [seq(r.start_seq) for r in records],
        "summary_seq": [seq(r.summary_seq) for r in records],
        "replacement_seq": [seq(r.replacement_seq) for r in records],
        "end_seq": [seq(r.end_seq) for r in records],
        "end_seed_seq": [seq(r.end_seed_seq) for r in records],
        "error": [r.error if isinstance(r.error, str) else None for r in records],
        "shadowed_tokens": [seq(r.fold_tokens if r.fold_tokens is not None
                                         else r.span_tokens) for r in records],
        "summary_tokens": [seq(r.replacement_tokens if r.replacement_tokens is not None
                               else r.framed_summary_tokens) for r in records],
    }
    dtypes = {"compaction_id": "string", "status": "string", "error": "string"}
    return pd.DataFrame({name: pd.array(values, dtype=dtypes.get(name, "Int64"))
                         for name, values in rows.items()})


@dataclass(frozen=True, slots=True)
class Bracket:
    """A compaction attempt as the views draw it: seqs (-1: absent) and its display status."""

    row: int
    start: int
    summary: int
    replacement: int
    end: int
    status: str
    end_seed: int = -1  # the session/end-seed that released a never-closed attempt

    @property
    def last(self) -> int:
        """Last seq the bracket covers (its end, else its last known event)."""
        return max(self.start, self.summary, self.replacement, self.end)

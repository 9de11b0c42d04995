"""What the views draw of a compaction attempt. Layer: views.

`bracket_frame` makes the `compactions_df`-named columns the bracket views read from core
`CompactionRecord`s (no audit: the views need none of it), and `Bracket` is one attempt as the
panes walk it: its seqs (-1: absent) and its display status. `ViewData` holds both per session.

Invariant: the frame is built only through the frames' typed builder
(`workbench.frames.columns.frame`), never a hand-made ``string`` array: log text may hold lone
surrogates (legal JSON ``\\ud800``), which that builder replaces (`safe_text`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.frames.columns import Column, Columns, frame


def _seq(value: Any) -> Any:
    return value if type(value) is int else None


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else None


def _col(name: str, dtype: str, get: Any) -> Column:
    return Column(name, dtype, lambda records: [get(r) for r in records])


BRACKET_COLUMNS: Columns = (
    _col("compaction_id", "string", lambda r: _text(r.compaction_id)),
    _col("status", "string", lambda r: _text(r.status)),
    _col("start_seq", "Int64", lambda r: _seq(r.start_seq)),
    _col("summary_seq", "Int64", lambda r: _seq(r.summary_seq)),
    _col("replacement_seq", "Int64", lambda r: _seq(r.replacement_seq)),
    _col("end_seq", "Int64", lambda r: _seq(r.end_seq)),
    _col("end_seed_seq", "Int64", lambda r: _seq(r.end_seed_seq)),
    _col("error", "string", lambda r: _text(r.error)),
    _col("shadowed_tokens", "Int64", lambda r: _seq(r.fold_tokens if r.fold_tokens is not None
                                                    else r.span_tokens)),
    _col("summary_tokens", "Int64", lambda r: _seq(r.replacement_tokens
                                                   if r.replacement_tokens is not None
                                                   else r.framed_summary_tokens)),
)
"""The `compactions_df` columns the bracket views read, typed by the frames' one builder
(`workbench.frames.columns.frame`: log text with lone surrogates replaced, numbers int64 can
hold)."""


def bracket_frame(records: Sequence[Any]) -> pd.DataFrame:
    """`compactions_df`-named columns for the views, from core `CompactionRecord`s."""
    return frame(BRACKET_COLUMNS, records, len(records))


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

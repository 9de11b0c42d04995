"""How much of a large log the widget and the static report show: the caps both share, and the
one way each cut is made. Layer: views (pandas only; no widgets, so the report reuses it).

Invariants: the widget (`Workbench`, `BracketChart`) and the report (`workbench.report`) read
these caps and these functions and no other, so both cut a long log the same way; every cut is
announced where it is made (a chart title or a note: `bracket_cut_note`, an "… and N more"
line: `more_html`). The report's own caps (step viewer, compaction panels) are in
`workbench.report.limits`.
"""
from __future__ import annotations

import pandas as pd

MAX_BRACKETS = 300
"""Rows of the bracket chart (beyond that, this many attempts, evenly spaced)."""
MAX_BRACKET_NOTES = 12
"""Compaction attempts that did not complete named one by one (summary header, report)."""
MAX_DEFECT_NOTES = 5
"""Loader defects named in the widget's summary header (the report's table: `MAX_DEFECT_ROWS`)."""
MAX_DEFECT_ROWS = 200
"""Loader defects listed in the report's defects table."""


def spaced_rows(n: int, limit: int) -> list[int]:
    """Positions of at most `limit` of `n` rows, evenly spaced, first and last included."""
    if n <= limit:
        return list(range(n))
    if limit <= 1:
        return [0][:limit]
    return sorted({round(i * (n - 1) / (limit - 1)) for i in range(limit)})


def shown_brackets(frame: pd.DataFrame, limit: int | None = None) -> pd.DataFrame:
    """The attempts the bracket chart draws: all of them, or `limit` (default `MAX_BRACKETS`)
    evenly spaced (the frame keeps each row's index, so a row keeps its attempt's number)."""
    limit = MAX_BRACKETS if limit is None else limit
    return frame if len(frame) <= limit else frame.iloc[spaced_rows(len(frame), limit)]


def bracket_cut_note(shown: int, total: int) -> str:
    """The sentence announcing a thinned bracket chart (empty when nothing was cut)."""
    if shown >= total:
        return ""
    return (f"The bracket chart shows {shown:,} of {total:,} compaction attempts, evenly "
            "spaced; the compaction audit lists them all.")


def more_html(more: int, noun: str) -> str:
    """The "… and N more" line after a capped list (empty when nothing was left out)."""
    if more <= 0:
        return ""
    return f'<div class="wb-more">… and {more:,} more {noun}</div>'


__all__ = ["MAX_BRACKETS", "MAX_BRACKET_NOTES", "MAX_DEFECT_NOTES", "MAX_DEFECT_ROWS",
           "bracket_cut_note", "more_html", "shown_brackets", "spaced_rows"]

"""`TokenTimeline`: surface tokens per meter and provider usage over seqs, live. Layer: views.

Wraps `token_timeline_figure` in a `go.FigureWidget`. The figure is built once; a step only
moves the cursor (one shape update inside `batch_update`), so the cost per step does not depend
on the log's length. Clicking a point of any trace moves the step to that point's seq.

Provider usage is drawn as the prompt the provider reported (uncached input + cache read + cache
write, `timeline_df` usage columns) on the rows where a model call settled, so it can be read
against the surface tokens the harness estimated.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go

from workbench.views.data import ViewData, view_data
from workbench.views.figures import CURSOR_SHAPE, move_cursor, token_timeline_figure
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session

PROMPT_COLUMN = "provider prompt"
"""Name of the derived usage series: input + cache read + cache write, as reported."""


def timeline_frame_with_prompt(frame: pd.DataFrame) -> pd.DataFrame:
    """`timeline_df` plus the provider-reported prompt size (NA where no usage was reported)."""
    parts = [frame[c] for c in ("usage_input", "usage_cache_read", "usage_cache_write")
             if c in frame]
    if not parts:
        return frame.assign(**{PROMPT_COLUMN: pd.array([None] * len(frame), dtype="Int64")})
    reported = pd.concat(parts, axis=1).notna().any(axis=1)
    total = sum(p.fillna(0) for p in parts)
    return frame.assign(**{PROMPT_COLUMN: total.where(reported, pd.NA).astype("Int64")})


class TokenTimeline(Panel):
    """The token timeline of a session with a cursor at `state.step`."""

    title = "token timeline"

    def __init__(self, session: Session, state: StepState | None = None, *,
                 meters: str | Sequence[str] = ("dsh",)) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        frame = self.data.timeline_frame if meters in (("dsh",), "dsh") \
            else session.timeline_df(meters=meters)
        figure = token_timeline_figure(
            timeline_frame_with_prompt(frame), usage=[PROMPT_COLUMN],
            context_window=self.data.context_window, brackets=self.data.compactions,
            cursor=state.step, title="Surface tokens and provider-reported prompt")
        self.figure = go.FigureWidget(figure)
        for trace in self.figure.data:
            trace.on_click(self._clicked)
        super().__init__(state, (self.figure,), own_state=own)
        self.add_class("wb-token-timeline")

    @property
    def cursor(self) -> float:
        """The seq the cursor is drawn at."""
        return self.figure.layout.shapes[CURSOR_SHAPE].x0

    def _clicked(self, _trace, points, _selector) -> None:
        if points.xs:
            self.state.move(int(round(points.xs[0])))

    def _render(self, change: dict | None = None) -> None:
        with self.figure.batch_update():
            move_cursor(self.figure, self.state.step)

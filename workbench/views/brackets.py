"""`BracketChart`: one row per compaction attempt, live. Layer: views.

Wraps `bracket_chart_figure` (start → summary → replacement → end, coloured by status, hidden
vs added tokens) in a `go.FigureWidget` with a cursor at the step. Clicking a point of an
attempt jumps to that point's seq (its start, summary, replacement or end).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from workbench.views.data import ViewData, view_data
from workbench.views.figures import CURSOR_SHAPE, bracket_chart_figure, move_cursor
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session


class BracketChart(Panel):
    """The compaction attempts of a session with a cursor at `state.step`."""

    title = "bracket chart"

    def __init__(self, session: Session, state: StepState | None = None) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        frame = self.data.compactions
        title = (f"Compaction attempts ({len(frame)})" if len(frame)
                 else "Compaction attempts: none in this log")
        self.figure = go.FigureWidget(bracket_chart_figure(frame, cursor=state.step,
                                                           title=title))
        self.figure.layout.xaxis.range = [-0.5, self.data.last_seq + 0.5]
        for trace in self.figure.data:
            trace.on_click(self._clicked)
        super().__init__(state, (self.figure,), own_state=own)
        self.add_class("wb-bracket-chart")

    @property
    def cursor(self) -> float:
        return self.figure.layout.shapes[CURSOR_SHAPE].x0

    def _clicked(self, _trace, points, _selector) -> None:
        if points.xs:
            self.state.move(int(round(points.xs[0])))

    def _render(self, change: dict | None = None) -> None:
        with self.figure.batch_update():
            move_cursor(self.figure, self.state.step)

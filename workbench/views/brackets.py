"""`BracketChart`: one row per compaction attempt, live. Layer: views.

Wraps `bracket_chart_figure` (start → summary → replacement → end, coloured by status, hidden
vs added tokens) in a `go.FigureWidget` with a cursor at the step. A log of more than
`views.limits.MAX_BRACKETS` attempts draws that many, evenly spaced, as the report does, and
the title says so. Clicking a point of an
attempt jumps to that point's seq (its start, summary, replacement or end).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.views.data import ViewData, view_data
from workbench.views.figure_panel import FigurePanel
from workbench.views.figures import bracket_chart_figure
from workbench.views.html import escape
from workbench.views.limits import bracket_cut_note, shown_brackets
from workbench.views.state import StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session


class BracketChart(FigurePanel):
    """The compaction attempts of a session with a cursor at `state.step`."""

    title = "bracket chart"

    def __init__(self, session: Session, state: StepState | None = None) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        frame = self.data.compactions
        shown = shown_brackets(frame)
        title = (f"Compaction attempts ({len(frame):,})" if len(frame)
                 else "Compaction attempts: none in this log")
        if len(shown) < len(frame):
            title = (f"Compaction attempts ({len(shown):,} of {len(frame):,} shown)<br>"
                     f"<sup>{escape(bracket_cut_note(len(shown), len(frame)))}</sup>")
        self.shown = shown
        figure = bracket_chart_figure(shown, cursor=state.step, title=title,
                                      x_range=self.data.x_range(), validate=False)
        super().__init__(state, figure, own_state=own, css_class="wb-bracket-chart",
                         times_ms=self.data.times_ms)

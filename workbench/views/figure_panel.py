"""`FigurePanel`: a `Panel` drawing one plotly figure with a cursor at the step. Layer: views.

Clicking a point moves the step to that point's seq; every step change only moves the cursor
(inside `batch_update`), it never rebuilds the figure."""
from __future__ import annotations

import plotly.graph_objects as go

from workbench.views.figures import CURSOR_SHAPE, move_cursor
from workbench.views.state import Panel, StepState


class FigurePanel(Panel):
    """Base of the live figure views (`TokenTimeline`, `BracketChart`)."""

    def __init__(self, state: StepState, figure: go.Figure, *, own_state: bool,
                 css_class: str) -> None:
        self.figure = go.FigureWidget(figure)
        for trace in self.figure.data:
            trace.on_click(self._clicked)
        super().__init__(state, (self.figure,), own_state=own_state)
        self.add_class(css_class)

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

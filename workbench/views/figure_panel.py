"""`FigurePanel`: a `Panel` drawing one plotly figure with a cursor at the step. Layer: views.

Clicking a point moves the step to that point's seq (found through the point's index, so it works
on either axis); every step change only moves the cursor (inside `batch_update`), it never
rebuilds the figure. The x axis shows seqs or wall-clock time (`set_axis`): the figure keeps its
seq coordinates and maps them to times through the log's per-seq times, so every figure of a
workbench switches together and stays aligned."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from workbench.errors import InvalidArgument
from workbench.views.figures import CURSOR_SHAPE, band_path, band_spans
from workbench.views.payload import utc_moment
from workbench.views.plotly_widget import figure_widget
from workbench.views.state import Panel, StepState


def _seq_coordinates(shape: dict) -> tuple | list | None:
    """A shape's x coordinates in seqs: (x0, x1), the flat spans of a `band_path`, or None
    (not on the x axis)."""
    if shape.get("xref") != "x":
        return None
    if shape.get("type") == "path":
        return [x for span in band_spans(shape.get("path", "")) for x in span]
    return (shape["x0"], shape["x1"])


def seq_times(seqs: np.ndarray, times_ms: np.ndarray) -> np.ndarray:
    """`np.interp(seqs, arange(n), times_ms)` (same arithmetic: between two seqs linear, outside
    the log the first or last time) without an n-sized array per call: only the two
    neighbours of each seq are read."""
    last = len(times_ms) - 1
    x = np.clip(np.asarray(seqs, dtype=np.float64), 0, last)
    lo = np.floor(x).astype(np.int64)
    hi = np.minimum(lo + 1, last)
    f0, f1 = times_ms[lo].astype(np.float64), times_ms[hi].astype(np.float64)
    return (f1 - f0) * (x - lo) + f0


class FigurePanel(Panel):
    """Base of the live figure views (`TokenTimeline`, `BracketChart`, `ContextFill`)."""

    def __init__(self, state: StepState, figure: go.Figure, *, own_state: bool,
                 css_class: str, times_ms: np.ndarray | None = None) -> None:
        self.figure = figure_widget(figure)
        self.times_ms = times_ms
        self.axis = "seq"
        self._seq_x = [None if t.x is None else np.asarray(t.x, dtype=np.float64)
                       for t in self.figure.data]
        self._shape_x = [_seq_coordinates(sh)
                         for sh in self.figure.layout.to_plotly_json().get("shapes", ())]
        self._seq_range = self.figure.layout.xaxis.range
        for trace in self.figure.data:
            trace.on_click(self._clicked)
        super().__init__(state, (self.figure,), own_state=own_state)
        self.add_class(css_class)

    @property
    def cursor(self) -> float:
        """The seq the cursor is drawn at."""
        x = self.figure.layout.shapes[CURSOR_SHAPE].x0
        return x if self.axis == "seq" else self._cursor_seq

    def x_of(self, seqs: np.ndarray | list) -> list:
        """Axis coordinates of seqs: themselves, or their UTC times (ISO strings); a gap
        between segments (None or NaN) stays None."""
        values = np.asarray(seqs, dtype=np.float64)
        gap = np.isnan(values)
        if self.axis == "seq" or self.times_ms is None or not len(self.times_ms):
            out = values.tolist()
        else:
            ms = seq_times(np.where(gap, 0, values), self.times_ms)
            moments = (utc_moment(t) for t in np.asarray(ms, dtype=np.float64).tolist())
            out = [None if m is None else m.replace(tzinfo=None).isoformat() for m in moments]
        for i in np.flatnonzero(gap):
            out[i] = None
        return out

    def set_axis(self, axis: str) -> None:
        """Show seqs ("seq") or wall-clock UTC times ("time") on the x axis."""
        if axis not in ("seq", "time"):
            msg = f"axis must be 'seq' or 'time', not {axis!r}"
            raise InvalidArgument(msg)
        self.axis = axis if self.times_ms is not None else "seq"
        with self.figure.batch_update():
            for trace, xs in zip(self.figure.data, self._seq_x):
                if xs is not None:
                    trace.x = self.x_of(xs)
            for shape, xs in zip(self.figure.layout.shapes, self._shape_x):
                if isinstance(xs, tuple):
                    shape.x0, shape.x1 = self.x_of(list(xs))
                elif xs is not None:       # band spans of a path: [x0, x1, x0, x1, ...]
                    at = [str(x).replace("T", "_") for x in self.x_of(xs)]
                    shape.path = band_path(zip(at[::2], at[1::2]))
            if self._seq_range is not None:
                self.figure.layout.xaxis.range = self.x_of(list(self._seq_range))
            self.figure.layout.xaxis.title.text = "seq" if self.axis == "seq" else "time (UTC)"
        self.refresh()

    def _clicked(self, trace, points, _selector) -> None:
        index = points.trace_index
        xs = self._seq_x[index] if 0 <= index < len(self._seq_x) else None
        if points.point_inds and xs is not None:
            self.state.move(int(round(xs[points.point_inds[0]])))

    def _render(self, change: dict | None = None) -> None:
        step = self.state.step
        self._cursor_seq = step
        x = self.x_of([step])[0]
        with self.figure.batch_update():
            shape = self.figure.layout.shapes[CURSOR_SHAPE]
            shape.x0 = shape.x1 = x
            shape.visible = True

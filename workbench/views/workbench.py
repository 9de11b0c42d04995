"""`Workbench`: the composite widget, and `show(path)`. Layer: views.

The composition root (design Example 3): it creates the one `StepState` and hands it to every
view; controls set the step, views observe it. Layout, top to bottom: a session summary, the
controls, the log pane (left) beside the surface pane (right), the token timeline, the bracket
chart, and a tab with the inspector and the diff mode. Each view is also usable on its own
(`workbench.views.LogPane(session)`, ...).

`Workbench(session, follow=True)` (or `follow(path)`) keeps reading a growing log: a live bar
on top and a poller that rebuilds the panels as events arrive (`workbench.views.live`).

Works in JupyterLab, Notebook 7 and Voilà: it is plain ipywidgets, plotly `FigureWidget`s and
one small `anywidget` (`ClickableHTML`) whose script ships inline, so nothing is fetched.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import ipywidgets as widgets

from workbench.views.brackets import BracketChart
from workbench.views.controls import StepControls
from workbench.views.data import freeze_if_large, view_data
from workbench.views.diff import DiffPane
from workbench.views.html import escape, style_html
from workbench.views.inspector import Inspector
from workbench.views.log_pane import LogPane
from workbench.views.state import StepState
from workbench.views.surface_pane import SurfacePane
from workbench.views.timeline import TokenTimeline

if TYPE_CHECKING:
    from workbench.session import Session


def summary_html(session: Session) -> str:
    """One line naming the session: path, id, format, size, verdict (escaped)."""
    defects = len(session.defects)
    return (f'{style_html()}<div class="wb-title wb-summary">{escape(os.path.basename(session.path))}'
            f" · {escape(session.session_id)} · v{session.version} · {len(session):,} events"
            f" · {escape(session.verdict)}"
            + (f" · {defects} defect{'s' if defects != 1 else ''}" if defects else "") + "</div>")


class Workbench(widgets.VBox):
    """Every view of one session around one shared step (see the module doc)."""

    def __init__(self, session: Session, *, step: int = 0,
                 meters: str | Sequence[str] = ("dsh",), follow: bool = False,
                 tail: bool = False) -> None:
        self.session = session
        self._meters = meters
        super().__init__([])
        self.add_class("wb-workbench")
        self.live = None
        if follow:   # the live bar and poller (workbench.views.live)
            from workbench.views.live import LiveFollow
            self.live = LiveFollow(self, tail=tail)
            if tail:   # following the tail starts at the last event
                step = len(session) - 1
        self.rebuild(step)
        if self.live is not None:
            self.live.start()

    def rebuild(self, step: int) -> None:
        """(Re)build every panel around a new shared step from the session as it is now (a
        followed session grows: `workbench.views.live`)."""
        session = self.session
        from workbench.views.data import _CACHE
        data = _CACHE.get(session)
        if data is not None and data.n != len(session):
            del _CACHE[session]
        data = view_data(session)
        self.state = StepState(last_seq=data.last_seq)
        self.state.step = min(max(step, 0), data.last_seq)
        self.controls = StepControls(self.state, data.navigator)
        self.log_pane = LogPane(session, self.state)
        self.surface_pane = SurfacePane(session, self.state)
        self.token_timeline = TokenTimeline(session, self.state, meters=self._meters)
        self.bracket_chart = BracketChart(session, self.state)
        self.inspector = Inspector(session, self.state)
        self.diff = DiffPane(session, self.state)
        for pane in (self.log_pane, self.surface_pane):
            pane.layout = widgets.Layout(width="50%")
        details = widgets.Tab([self.inspector, self.diff])
        details.set_title(0, "inspector")
        details.set_title(1, "diff")
        head = [self.live.bar] if self.live is not None else []
        self.children = [*head, widgets.HTML(summary_html(session)), self.controls,
                         widgets.HBox([self.log_pane, self.surface_pane]), self.token_timeline,
                         self.bracket_chart, details]
        freeze_if_large(data)

    @property
    def views(self) -> tuple:
        """Every panel, in layout order."""
        return (self.log_pane, self.surface_pane, self.token_timeline, self.bracket_chart,
                self.inspector, self.diff)

    def __repr__(self) -> str:
        return f"Workbench({self.session!r}, step={self.state.step})"


def follow(path: str | os.PathLike, **options: object) -> Workbench:
    """A `Workbench` following the log at `path` as DSH writes it (`workbench.views.live`):
    ``workbench.follow(path)`` as a cell's last line shows it."""
    from workbench.session import load
    return Workbench(load(path, follow=True), follow=True, **options)  # type: ignore[arg-type]


def show(source: Session | str | os.PathLike, **options: object) -> None:
    """Display a `Workbench` for a session or a log path (keep a handle with `Workbench(...)`)."""
    from IPython.display import display

    if isinstance(source, (str, os.PathLike)):
        from workbench.session import load
        source = load(source)
    display(Workbench(source, **options))  # type: ignore[arg-type]

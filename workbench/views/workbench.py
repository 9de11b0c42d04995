"""`Workbench`: the composite widget, and `show(path)`. Layer: views.

The composition root (design Example 3): it creates the one `StepState` and hands it to every
view; controls set the step, views observe it. Layout, top to bottom: a session summary, the
controls, the log pane (left) beside the surface pane (right), the token timeline, the bracket
chart, and a tab with the inspector and the diff mode. Each view is also usable on its own
(`workbench.views.LogPane(session)`, ...).

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
from workbench.views.data import ViewData, default_meters, freeze_if_large, view_data
from workbench.views.diff import DiffPane
from workbench.views.html import escape, legend_html, shorten, style_html
from workbench.views.inspector import Inspector
from workbench.views.log_pane import LogPane
from workbench.views.state import StepState
from workbench.views.surface_pane import SurfacePane
from workbench.views.timeline import TokenTimeline

if TYPE_CHECKING:
    from workbench.session import Session


def bracket_words(data: ViewData) -> tuple[str, list[str]]:
    """Compaction attempts counted by status, and one sentence per attempt that did not
    complete (its number, status in words, and where it starts)."""
    counts: dict[str, int] = {}
    for b in data.brackets:
        counts[b.status] = counts.get(b.status, 0) + 1
    total = ", ".join(f"{n} {status}" for status, n in counts.items())
    lines = []
    for b in data.unfinished():
        where = f"compaction/start at seq {b.start}"
        if b.status == "failed":
            error = data.compactions["error"].iloc[b.row]
            detail = f"{where}, closed with an error at seq {b.end}" + (
                f": {shorten(str(error), 90)}" if isinstance(error, str) else "")
        elif b.status == "interrupted":
            detail = f"{where} never closed (the log ends at seq {data.last_seq})"
        else:
            detail = f"{where} never closed; session/end-seed at seq {b.end_seed} released it"
        lines.append(f"compaction #{b.row + 1} {b.status}: {detail}")
    return total, lines


def summary_html(session: Session) -> str:
    """The session in words: path, id, format, size, verdict, compaction attempts by status
    with every one that did not complete named, and the colour legend (escaped)."""
    defects = len(session.defects)
    data = view_data(session)
    total, lines = bracket_words(data)
    head = (f'{style_html()}<div class="wb-root"><div class="wb-title wb-summary">'
            f"{escape(os.path.basename(session.path))}"
            f" · {escape(session.session_id)} · v{session.version} · {len(session):,} events"
            f" · log {escape(session.verdict)}"
            + (f" · {defects} defect{'s' if defects != 1 else ''}" if defects else "")
            + (f" · compactions: {escape(total)}" if total else " · no compaction") + "</div>")
    notes = "".join(f'<div class="wb-bracket-note"><span class="wb-status-note">'
                    f"{escape(line.split(':', 1)[0])}</span>{escape(line.split(':', 1)[1])}</div>"
                    for line in lines)
    return head + notes + (legend_html() if data.brackets else "") + "</div>"


class Workbench(widgets.VBox):
    """Every view of one session around one shared step (see the module doc)."""

    def __init__(self, session: Session, *, step: int = 0,
                 meters: str | Sequence[str] = ("dsh",)) -> None:
        self.session = session
        data = view_data(session)
        self.state = StepState(last_seq=data.last_seq)
        self.state.step = min(max(step, 0), data.last_seq)
        self.controls = StepControls(self.state, data.navigator)
        self.log_pane = LogPane(session, self.state)
        self.surface_pane = SurfacePane(session, self.state)
        self.token_timeline = TokenTimeline(session, self.state, meters=meters)
        self.bracket_chart = BracketChart(session, self.state)
        self.inspector = Inspector(session, self.state)
        self.diff = DiffPane(session, self.state)
        for pane in (self.log_pane, self.surface_pane):
            pane.layout = widgets.Layout(width="50%")
        details = widgets.Tab([self.inspector, self.diff])
        details.set_title(0, "inspector")
        details.set_title(1, "diff")
        super().__init__([widgets.HTML(summary_html(session)), self.controls,
                          widgets.HBox([self.log_pane, self.surface_pane]), self.token_timeline,
                          self.bracket_chart,
                          details])
        self.add_class("wb-workbench")
        freeze_if_large(data)

    @property
    def views(self) -> tuple:
        """Every panel, in layout order."""
        return (self.log_pane, self.surface_pane, self.token_timeline, self.bracket_chart,
                self.inspector, self.diff)

    def __repr__(self) -> str:
        return f"Workbench({self.session!r}, step={self.state.step})"


def show(source: Session | str | os.PathLike, **options: object) -> None:
    """Display a `Workbench` for a session or a log path (keep a handle with `Workbench(...)`)."""
    from IPython.display import display

    if isinstance(source, (str, os.PathLike)):
        from workbench.session import load
        source = load(source)
    display(Workbench(source, **options))  # type: ignore[arg-type]

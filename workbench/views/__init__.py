"""Jupyter views of a session: one composite `Workbench` and the small views it is built of.
Layer: views (ipywidgets, plotly, anywidget; reads frames and core, never the other way).

    from workbench.views import Workbench
    wb = Workbench(workbench.load("session.v4.jsonl"))   # or workbench.show(path)

Every view observes one shared `StepState.step`; each is usable alone (`TokenTimeline(session)`
brings its own slider). Figures (`token_timeline_figure`, `bracket_chart_figure`) and HTML
formatters (`views.html`) work without widgets.
"""
from workbench.views.brackets import BracketChart
from workbench.views.controls import StepControls
from workbench.views.diff import DiffPane
from workbench.views.figures import bracket_chart_figure, token_timeline_figure
from workbench.views.html import escape
from workbench.views.inspector import Inspector
from workbench.views.log_pane import LogPane
from workbench.views.state import StepState
from workbench.views.surface_pane import SurfacePane
from workbench.views.timeline import TokenTimeline
from workbench.views.workbench import Workbench, follow, show

__all__ = ["BracketChart", "DiffPane", "Inspector", "LogPane", "StepControls", "StepState",
           "SurfacePane", "TokenTimeline", "Workbench", "bracket_chart_figure", "escape",
           "follow", "show", "token_timeline_figure"]

"""`workbench.compare(real, counterfactual)`: both sessions side by side. Layer: views.

The frames come from `workbench.frames.compare` (per compaction and per session); this module
adds the plot — both surface-token timelines on one x axis (the real seq; a counterfactual event
sits at the real seq it follows), one line per side and meter, a marker where each compaction
fired — and a widget mode (the figure over the two tables). All log-derived text goes through
the one escaping helper (`views.html.escape`); pandas' own HTML escapes the tables.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go

from workbench.errors import InvalidArgument
from workbench.frames.compare import Comparison, comparison
from workbench.views.html import escape
from workbench.views.plotly_widget import figure_widget

if TYPE_CHECKING:
    from workbench.session import Session

_DASHES = ("solid", "dash", "dot", "dashdot")
"""One line style per meter; one colour per side."""


@dataclass
class Compared(Comparison):
    """A `Comparison` that also draws itself (`figure()`, `widget()`)."""

    def figure(self, meter: str | None = None) -> go.Figure:
        return comparison_figure(self, meter=meter)

    def widget(self) -> Any:
        import ipywidgets as widgets
        fig = figure_widget(self.figure())
        tables = widgets.HTML(self._repr_html_())
        return widgets.VBox([fig, tables], layout=widgets.Layout(width="100%"))


def comparison_figure(c: Comparison, *, meter: str | None = None) -> go.Figure:
    """Surface tokens of both sides over the real seq, compactions marked (module doc)."""
    meters = [meter] if meter else list(c.meters)
    fig = go.Figure()
    sides = list(dict.fromkeys(c.timeline["side"].tolist())) or ["real"]
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for i, side in enumerate(sides):
        rows = c.timeline[c.timeline["side"] == side]
        for m in meters:
            fig.add_trace(go.Scatter(
                x=rows["real_seq"].astype("float64"), y=rows[f"surface_tokens_{m}"].astype("float64"),
                mode="lines", line=dict(color=palette[i % len(palette)], shape="hv",
                                        dash=_DASHES[meters.index(m) % len(_DASHES)]),
                name=escape(f"{side} · {m}")))
        fired = c.compactions[c.compactions["side"] == side]
        if len(fired):
            tops = rows.set_index("seq")[f"surface_tokens_{meters[0]}"]
            ys = [float(tops.get(s, 0)) for s in fired["start_seq"].astype("int64")]
            fig.add_trace(go.Scatter(
                x=fired["real_seq"].astype("float64"), y=ys, mode="markers",
                marker=dict(symbol="triangle-down", size=10, color=palette[i % len(palette)]),
                name=escape(f"{side} · compactions ({len(fired)})"),
                text=[escape(f"{t} {s} · {n} nodes") for t, s, n in
                      zip(fired["trigger"], fired["status"], fired["shadowed_count"].fillna(0))],
                hoverinfo="text+x+y"))
    fig.update_layout(title=escape("surface tokens: real vs what-if"), xaxis_title="real seq",
                      yaxis_title="surface tokens", autosize=True, height=380,
                      legend=dict(orientation="h", y=-0.25), margin=dict(l=50, r=20, t=40, b=40))
    return fig


def compare(real: Session, counterfactual: Session, *, meters: Sequence[str] = ("dsh",),
            widget: bool = False) -> Any:
    """The comparison of `real` with `counterfactual` (`Compared`), or its widget; both are
    sessions (else `InvalidArgument` naming the one that is not)."""
    from workbench.session import Session
    for name, value in (("real", real), ("counterfactual", counterfactual)):
        if not isinstance(value, Session):
            msg = f"compare: {name} must be a Session, not a {type(value).__name__}: {value!r:.80}"
            raise InvalidArgument(msg)
    c = comparison(real, counterfactual, meters=meters)
    result = Compared(c.real, c.counterfactual, c.meters, c.timeline, c.compactions, c.sessions)
    return result.widget() if widget else result

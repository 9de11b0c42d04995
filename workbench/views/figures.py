"""Plotly figure builders: `*_figure(frame, ...) -> go.Figure`, no widgets. Layer: views.

Signatures follow plotly express: the frame first, then column names as keywords, so a notebook
can plot any frame with the same columns. The live views wrap these figures in
`go.FigureWidget` and only move the cursor afterwards (`CURSOR_SHAPE` is always shape 0).
A figure is made with its traces (dicts), so each is validated once by the figure, and not at
all with ``validate=False``: the live views' figures are only copied into a `go.FigureWidget`,
which validates everything (its later edits too), so validating them first too only doubled the
work (the bracket chart of a 1.3M-event log carries 7,120 points, each with its symbol and
customdata).

Log-derived text (compaction ids, errors) reaches plotly's pseudo-HTML labels only through
`workbench.views.html.escape`, so a ``<a href="javascript:...">`` in a log stays text.

Large logs: a 1.3M-event timeline is drawn from its change points (a surface total only moves at
surface events) and, beyond `MAX_POINTS`, from per-bucket minima and maxima, so peaks survive
the thinning; the figure never carries a million points to the browser. Compaction attempts are
drawn per status, not per attempt: the bracket chart is one trace per status (its rows' segments
separated by gaps) and the timeline's bands one path shape per status (`band_path`), so a log's
thousands of attempts make a few plotly objects.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from workbench.views.html import escape
from workbench.views.palette import METER_COLORS, STATUS_COLORS, status_name

__all__ = ["CURSOR_SHAPE", "MAX_POINTS", "PLOT_MARGIN", "band_path", "band_spans",
           "bracket_chart_figure", "context_fill_figure", "move_cursor", "token_timeline_figure"]

MAX_POINTS = 4000
"""Most points per line sent to the browser (bucketed min/max beyond that)."""
CURSOR_SHAPE = 0
"""Index of the step cursor in `layout.shapes` of every figure built here."""
_BAND_OPACITY = 0.18
PLOT_MARGIN = dict(l=190, r=30)
"""Left and right margins of every figure here: with the same x range, a seq sits at the same
pixel in each figure stacked in one column (the bracket chart's row labels need the left room)."""


def _x_axis(fig: go.Figure, x_range: Sequence[float] | None) -> None:
    """The shared x axis: the given range, the shared margins, the width of the container."""
    legend = any(getattr(t, "showlegend", None) is not False for t in fig.data)
    fig.update_layout(autosize=True, margin=dict(PLOT_MARGIN, t=40, b=40 + 30 * legend))
    if x_range is not None:
        fig.update_xaxes(range=list(x_range), autorange=False)


def _cursor(seq: int | None) -> dict:
    x = 0 if seq is None else int(seq)
    return dict(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1, name="cursor",
                line=dict(color="#111", width=2, dash="dot"), visible=seq is not None)


def move_cursor(fig: go.Figure, seq: int) -> None:
    """Put the step cursor (shape `CURSOR_SHAPE`) at `seq`."""
    shape = fig.layout.shapes[CURSOR_SHAPE]
    shape.x0 = shape.x1 = int(seq)
    shape.visible = True


def thin(x: np.ndarray, y: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """A step series reduced to its change points, then to per-bucket min/max if still long.

    Missing values (NaN) are dropped first. The first and last points are always kept."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    keep = ~np.isnan(y)
    x, y = x[keep], y[keep]
    if len(y) > 2:
        change = np.empty(len(y), dtype=bool)
        change[0] = change[-1] = True
        change[1:-1] = (y[1:-1] != y[:-2]) | (y[1:-1] != y[2:])
        x, y = x[change], y[change]
    if len(y) <= max_points:
        return x, y
    buckets = max_points // 2
    edges = np.linspace(0, len(y), buckets + 1).astype(np.int64)
    idx: list[int] = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi <= lo:
            continue
        part = y[lo:hi]
        a, b = lo + int(np.argmin(part)), lo + int(np.argmax(part))
        idx.extend(sorted({a, b}))
    idx = sorted(set(idx) | {0, len(y) - 1})
    return x[idx], y[idx]


def _numeric(frame: pd.DataFrame, column: str) -> np.ndarray:
    return frame[column].astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)


def band_path(spans: Iterable[tuple[object, object]]) -> str:
    """An SVG path of one rectangle per ``(x0, x1)`` span over the plot's height (a shape with
    ``yref="paper"``), so one shape draws many bands; x values are seqs, or date strings with
    plotly's path spelling (date and time joined by ``_``)."""
    return "".join(f"M{a},0L{b},0L{b},1L{a},1Z" for a, b in spans)


def band_spans(path: str) -> list[tuple[float, float]]:
    """The ``(x0, x1)`` seq spans of a `band_path` of seqs."""
    return [(float(a), float(b)) for a, b in _BAND.findall(path)]


_BAND = re.compile(r"M([^,]+),0L([^,]+),0L")


def _bands(brackets: pd.DataFrame | None, *, start: str, end: str, released: str | None,
           status: str, last_seq: float) -> list[dict]:
    """One path shape per status: a band from each attempt's start to its end (a never-closed
    one to the end-seed that released it, else to the end of the log), below the traces."""
    if brackets is None or brackets.empty:
        return []
    spans: dict[str, list[tuple[float, float]]] = {}
    starts = _numeric(brackets, start)
    missing = np.full(len(starts), np.nan)
    ends = _numeric(brackets, end) if end in brackets else missing
    seeds = _numeric(brackets, released) if released and released in brackets else missing
    for s, e, seed, st in zip(starts, ends, seeds, brackets[status].astype(object)):
        if np.isnan(s):
            continue
        x1 = e if not np.isnan(e) else seed if not np.isnan(seed) else last_seq
        spans.setdefault(status_name(st), []).append((s - 0.5, max(x1, s) + 0.5))
    return [dict(type="path", xref="x", yref="paper", path=band_path(bands), layer="below",
                 line=dict(width=0), name=f"bracket {name}",
                 fillcolor=STATUS_COLORS.get(name, "#888"), opacity=_BAND_OPACITY)
            for name, bands in spans.items()]


def token_timeline_figure(frame: pd.DataFrame, *, x: str = "seq",
                          meters: Sequence[str] | None = None,
                          usage: Sequence[str] = (),
                          context_window: float | str | None = None,
                          brackets: pd.DataFrame | None = None,
                          bracket_start: str = "start_seq", bracket_end: str = "end_seq",
                          bracket_released: str | None = "end_seed_seq",
                          bracket_status: str = "status", cursor: int | None = None,
                          title: str = "Surface tokens over the log",
                          max_points: int = MAX_POINTS,
                          x_range: Sequence[float] | None = None,
                          validate: bool = True) -> go.Figure:
    """Surface tokens per meter and provider-reported usage over seqs.

    `meters`: columns holding the surface total of each token meter at every row (default: every
    column whose name starts with ``surface_tokens``); `usage`: columns of provider-reported
    usage (plotted as markers where present); `context_window`: a number, or a column whose last
    non-missing value is the window, drawn as a dashed line; `brackets`: one row per compaction
    attempt, drawn as bands coloured by status (completed / failed / interrupted / stale) to
    its end, or to the session/end-seed that released it (`bracket_released`), else the log's end;
    `cursor`: the seq of the step line (shape 0, hidden when None)."""
    if meters is None:
        meters = [c for c in frame.columns if str(c).startswith("surface_tokens")]
    xs = _numeric(frame, x) if len(frame) else np.zeros(0)
    last_seq = float(np.nanmax(xs)) if len(xs) else 0.0
    traces = []
    for i, column in enumerate(meters):
        tx, ty = thin(xs, _numeric(frame, column), max_points)
        label = (f"{str(column).removeprefix('surface_tokens_')} surface"
                 if str(column).startswith("surface_tokens_") else str(column))
        traces.append(dict(type="scatter", x=tx, y=ty, mode="lines", name=escape(label),
                           line=dict(shape="hv", color=METER_COLORS[i % len(METER_COLORS)]),
                           hovertemplate="seq %{x}<br>%{y:,} tokens<extra>%{fullData.name}"
                                         "</extra>"))
    for column in usage:
        uy = _numeric(frame, column)
        keep = ~np.isnan(uy)
        ux, uy = xs[keep], uy[keep]
        if len(uy) > max_points:
            ux, uy = thin(ux, uy, max_points)
        traces.append(dict(type="scatter", x=ux, y=uy, mode="markers", name=escape(column),
                           marker=dict(size=5, symbol="diamond"),
                           hovertemplate="seq %{x}<br>%{y:,} reported<extra>"
                                         "%{fullData.name}</extra>"))
    fig = go.Figure(data=traces, _validate=validate)
    window = context_window
    if isinstance(context_window, str):
        values = _numeric(frame, context_window) if context_window in frame else np.zeros(0)
        values = values[~np.isnan(values)]
        window = float(values[-1]) if len(values) else None
    shapes = [_cursor(cursor)] + _bands(brackets, start=bracket_start, end=bracket_end,
                                        released=bracket_released, status=bracket_status,
                                        last_seq=last_seq)
    if window:
        shapes.append(dict(type="line", xref="paper", yref="y", x0=0, x1=1, y0=window,
                           y1=window, name="context window",
                           line=dict(color="#d62728", width=1.5, dash="dash")))
        fig.add_annotation(xref="paper", yref="y", x=1, y=window, xanchor="right",
                           yanchor="bottom", showarrow=False,
                           text=f"context window {window:,.0f}")
    fig.update_layout(title=title, shapes=shapes, height=320,
                      xaxis_title="seq", yaxis_title="tokens", hovermode="closest",
                      legend=dict(orientation="h", y=-0.3), clickmode="event")
    _x_axis(fig, x_range)
    return fig


def _column(frame: pd.DataFrame, name: str | None) -> list:
    """`frame[name]` as Python values with None for missing (all None when absent)."""
    if not name or name not in frame:
        return [None] * len(frame)
    return frame[name].astype(object).where(frame[name].notna(), None).tolist()


def bracket_chart_figure(frame: pd.DataFrame, *, start: str = "start_seq",
                         summary: str = "summary_seq", replacement: str = "replacement_seq",
                         end: str = "end_seq", status: str = "status",
                         label: str = "compaction_id", hidden: str | None = "shadowed_tokens",
                         added: str | None = "summary_tokens", error: str | None = "error",
                         cursor: int | None = None,
                         title: str = "Compaction attempts",
                         x_range: Sequence[float] | None = None,
                         validate: bool = True) -> go.Figure:
    """One row per compaction attempt: start → summary → replacement → end, coloured by status,
    with the tokens the attempt hid and added in the hover text and the row label.

    One trace per status (named after it), its rows' segments separated by gaps (None), so
    the figure's size does not grow with traces per attempt. Every drawn point carries its
    attempt's row number (the frame's integer index, so a frame thinned by
    `views.limits.shown_brackets` keeps each attempt's number) as `customdata[0]`, the stop's
    name as `customdata[1]` and the attempt's detail as `customdata[2]`, and the points are the
    attempt's seqs, so a click names both the attempt and a seq."""
    stops = [(start, "start", "circle"), (summary, "summary", "square"),
             (replacement, "replacement", "diamond"), (end, "end", "x")]
    seqs = [_column(frame, column) for column, _what, _symbol in stops]
    statuses = [status_name(s) for s in _column(frame, status)]
    idents, hides, adds = _column(frame, label), _column(frame, hidden), _column(frame, added)
    errors = _column(frame, error)
    names: list[str] = []
    traces: dict[str, tuple[list, list, list, list]] = {}   # status -> x, y, symbols, customdata
    numbers = ([int(i) for i in frame.index] if pd.api.types.is_integer_dtype(frame.index)
               else list(range(len(frame))))   # a thinned frame keeps each attempt's number
    for at, name in enumerate(statuses):
        row = numbers[at]
        ident = escape(idents[at]) if idents[at] is not None else str(row)
        tokens = []
        if hides[at] is not None:
            tokens.append(f"−{int(hides[at]):,}")
        if adds[at] is not None:
            tokens.append(f"+{int(adds[at]):,}")
        ylabel = f"#{row + 1} {name}" + (f" ({' / '.join(tokens)})" if tokens else "")
        names.append(ylabel)
        detail = f"compaction {ident}<br>status {escape(name)}"
        if tokens:
            detail += f"<br>tokens hidden / added: {' / '.join(tokens)}"
        if isinstance(errors[at], str):
            detail += f"<br>error: {escape(errors[at][:300])}"
        xs, ys, symbols, custom = traces.setdefault(name, ([], [], [], []))
        if xs:       # a gap between this attempt's row and the previous one of its status
            xs.append(None), ys.append(None), symbols.append("circle"), custom.append(None)
        for (_column_name, what, symbol), values in zip(stops, seqs):
            if values[at] is not None:
                xs.append(int(values[at]))
                ys.append(ylabel)
                symbols.append(symbol)
                custom.append([row, what, detail])
    data = []
    for name, (xs, ys, symbols, custom) in traces.items():
        color = STATUS_COLORS.get(name, "#888")
        data.append(dict(
            type="scatter", x=xs, y=ys, mode="lines+markers", name=escape(name), showlegend=False,
            line=dict(color=color, width=6), marker=dict(size=11, symbol=symbols, color=color,
                                                         line=dict(color="#222", width=1)),
            customdata=custom,
            hovertemplate="%{customdata[1]} at seq %{x}<br>%{customdata[2]}<extra></extra>"))
    fig = go.Figure(data=data, _validate=validate)
    n = len(frame)
    fig.update_layout(title=title, shapes=[_cursor(cursor)], height=max(160, 60 + 28 * n),
                      xaxis_title="seq",
                      yaxis=dict(autorange="reversed", categoryorder="array",
                                 categoryarray=names, type="category"),
                      hovermode="closest", clickmode="event")
    _x_axis(fig, x_range)
    return fig


def context_fill_figure(frame: pd.DataFrame, *, context_window: float | None,
                        threshold: float | None = None, x: str = "seq",
                        meters: Sequence[str] | None = None, cursor: int | None = None,
                        threshold_label: str = "compaction threshold",
                        title: str = "Context fill: the request as a share of the window",
                        names: Sequence[str] | None = None,
                        band: tuple[float | None, float, str] | None = None,
                        max_points: int = MAX_POINTS,
                        x_range: Sequence[float] | None = None,
                        validate: bool = True) -> go.Figure:
    """Token columns `meters` (default: every ``request_tokens_*``, else ``surface_tokens_*``
    column) as a percentage of `context_window`, with the compaction `threshold` (tokens) and
    the full window (100 %) as lines, so a reader sees how close each step came, by each meter;
    `names` labels the traces (default: the meter); `band` = (low, high, text) shades where
    the threshold must lie (low None: from 0). Without a window, the title says so."""
    if meters is None:
        meters = [c for c in frame.columns if str(c).startswith("request_tokens")] or [
            c for c in frame.columns if str(c).startswith("surface_tokens")]
    names = list(names) if names is not None else [
        str(c).removeprefix("request_tokens_").removeprefix("surface_tokens_") for c in meters]
    xs = _numeric(frame, x) if len(frame) else np.zeros(0)
    shapes, traces = [_cursor(cursor)], []
    if context_window:
        for i, (column, name) in enumerate(zip(meters, names, strict=True)):
            tx, ty = thin(xs, _numeric(frame, column), max_points)
            traces.append(dict(
                type="scatter", x=tx, y=ty / context_window * 100.0, mode="lines",
                name=escape(name), customdata=ty,
                line=dict(shape="hv", color=METER_COLORS[i % len(METER_COLORS)]),
                hovertemplate="seq %{x}<br>%{customdata:,.0f} tokens, %{y:.1f} % of the window"
                              "<extra>%{fullData.name}</extra>"))
    fig = go.Figure(data=traces, _validate=validate)
    if context_window:
        lines = [(100.0, "#d62728", f"context window {context_window:,.0f}")]
        if threshold:
            lines.append((threshold * 100.0 / context_window, "#ff7f0e",
                          f"{threshold_label} {threshold:,.0f} ({threshold * 100.0 / context_window:.0f} %)"))
        if band is not None:
            low, high, text = band
            shapes.append(dict(type="rect", xref="paper", yref="y", x0=0, x1=1,
                               y0=(low or 0) * 100.0 / context_window,
                               y1=high * 100.0 / context_window, name=text, layer="below",
                               fillcolor="rgba(255, 127, 14, 0.15)", line=dict(width=0)))
        for y, color, text in lines:
            shapes.append(dict(type="line", xref="paper", yref="y", x0=0, x1=1, y0=y, y1=y,
                               name=text, line=dict(color=color, width=1.5, dash="dash")))
            fig.add_annotation(xref="paper", yref="y", x=1, y=y, xanchor="right",
                               yanchor="bottom", showarrow=False, text=escape(text))
    else:
        title += " (no request/context.contextWindow in this log)"
    fig.update_layout(title=title, shapes=shapes, height=310, xaxis_title="seq",
                      yaxis=dict(title="% of context window", ticksuffix=" %", rangemode="tozero"),
                      hovermode="closest", legend=dict(orientation="h", y=-0.5, yanchor="top"),
                      clickmode="event")
    _x_axis(fig, x_range)
    if "<br>" in title:     # a second title line (the implied threshold) needs its room
        fig.update_layout(height=340, margin=dict(t=70))
    return fig

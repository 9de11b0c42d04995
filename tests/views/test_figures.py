"""Figure builders work without widgets, thin large series, and keep log text as text."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.views.figures import (
    CURSOR_SHAPE,
    band_spans,
    bracket_chart_figure,
    move_cursor,
    thin,
    token_timeline_figure,
)
from workbench.views.palette import STATUS_COLORS


def _timeline(n: int = 10) -> pd.DataFrame:
    return pd.DataFrame({
        "seq": pd.array(range(n), dtype="Int64"),
        "surface_tokens": pd.array([i * 10 for i in range(n)], dtype="Int64"),
        "usage_input": pd.array([None] * (n - 1) + [123], dtype="Int64"),
        "context_window": pd.array([None, 20000] + [None] * (n - 2), dtype="Int64"),
    })


def _brackets() -> pd.DataFrame:
    return pd.DataFrame({
        "compaction_id": pd.array(["c1", "<b>c2</b>", "c3", "c4"], dtype="string"),
        "start_seq": pd.array([1, 3, 5, 8], dtype="Int64"),
        "summary_seq": pd.array([2, None, None, None], dtype="Int64"),
        "replacement_seq": pd.array([3, None, None, None], dtype="Int64"),
        "end_seq": pd.array([4, 4, None, None], dtype="Int64"),
        "status": pd.array(["completed", "failed", "interrupted", "stale"], dtype="string"),
        "shadowed_tokens": pd.array([500, None, None, None], dtype="Int64"),
        "summary_tokens": pd.array([40, None, None, None], dtype="Int64"),
        "error": pd.array([None, '<a href="javascript:alert(1)">x</a>', None, None],
                          dtype="string"),
    })


def test_thin_keeps_change_points_and_ends():
    x = np.arange(10)
    y = np.array([0, 0, 0, 5, 5, 5, 5, 9, 9, 9])
    tx, ty = thin(x, y)
    assert list(tx) == [0, 2, 3, 6, 7, 9]
    assert list(ty) == [0, 0, 5, 5, 9, 9]


def test_thin_bounds_long_series_but_keeps_the_peak():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 1000, 200_000).astype(float)
    y[123_457] = 10**6
    tx, ty = thin(np.arange(len(y)), y, max_points=1000)
    assert len(ty) <= 1002
    assert 10**6 in ty and tx[0] == 0 and tx[-1] == len(y) - 1


def test_token_timeline_draws_meters_usage_window_bands_and_cursor():
    fig = token_timeline_figure(_timeline(), usage=["usage_input"],
                                context_window="context_window", brackets=_brackets(), cursor=4)
    names = [t.name for t in fig.data]
    assert names == ["surface_tokens", "usage_input"]
    assert list(fig.data[1].x) == [9] and list(fig.data[1].y) == [123]
    shapes = fig.layout.shapes
    assert shapes[CURSOR_SHAPE].name == "cursor" and shapes[CURSOR_SHAPE].x0 == 4
    bands = [s for s in shapes if s.type == "path"]       # one shape per status
    assert [b.fillcolor for b in bands] == [STATUS_COLORS[s] for s in
                                            ("completed", "failed", "interrupted", "stale")]
    assert [band_spans(b.path) for b in bands] == [[(0.5, 4.5)], [(2.5, 4.5)],
                                                    [(4.5, 9.5)], [(7.5, 9.5)]]  # open: to the end
    released = _brackets().assign(end_seed_seq=pd.array([None, None, None, 8], dtype="Int64"))
    stale = token_timeline_figure(_timeline(), brackets=released).layout.shapes[-1]
    assert stale.name == "bracket stale" and band_spans(stale.path) == [(7.5, 8.5)]  # end-seed
    many = token_timeline_figure(_timeline(), brackets=pd.concat([_brackets()] * 3))
    spans = [band_spans(s.path) for s in many.layout.shapes if s.type == "path"]
    assert len(spans) == 4 and spans[0] == [(0.5, 4.5)] * 3
    window = [s for s in shapes if s.name == "context window"]
    assert window[0].y0 == 20000
    move_cursor(fig, 7)
    assert fig.layout.shapes[CURSOR_SHAPE].x0 == fig.layout.shapes[CURSOR_SHAPE].x1 == 7


def test_token_timeline_of_an_empty_frame_still_builds():
    fig = token_timeline_figure(_timeline().iloc[:0])
    assert fig.layout.shapes[CURSOR_SHAPE].visible is False


def test_bracket_chart_draws_one_trace_per_status_and_a_row_per_attempt(bracket_rows):
    frame = pd.concat([_brackets(), _brackets().iloc[:2]], ignore_index=True)
    fig = bracket_chart_figure(frame, cursor=2)
    assert [t.name for t in fig.data] == ["completed", "failed", "interrupted", "stale"]
    assert [t.line.color for t in fig.data] == [STATUS_COLORS[t.name] for t in fig.data]
    rows = bracket_rows(fig)
    assert sorted(rows) == list(range(6))
    assert [x for x, *_ in rows[0]] == [1, 2, 3, 4] == [x for x, *_ in rows[4]]
    assert [what for _, what, *_ in rows[0]] == ["start", "summary", "replacement", "end"]
    assert {y for _, _, y, _ in rows[0]} == {"#1 completed (−500 / +40)"}
    assert [x for x, *_ in rows[1]] == [3, 4] and [x for x, *_ in rows[5]] == [3, 4]
    assert [[x for x, *_ in rows[r]] for r in (2, 3)] == [[5], [8]]
    assert {index for *_, index in rows[4]} == {0} and {index for *_, index in rows[5]} == {1}
    completed = fig.data[0]
    assert list(completed.x) == [1, 2, 3, 4, None, 1, 2, 3, 4]   # one gap, no line across it
    assert list(completed.marker.symbol) == ["circle", "square", "diamond", "x", "circle",
                                             "circle", "square", "diamond", "x"]
    assert list(fig.layout.yaxis.categoryarray) == [
        "#1 completed (−500 / +40)", "#2 failed", "#3 interrupted", "#4 stale",
        "#5 completed (−500 / +40)", "#6 failed"]


def test_bracket_chart_hover_names_the_stop_and_keeps_log_text_as_text():
    fig = bracket_chart_figure(_brackets())
    assert all(t.hovertemplate == "%{customdata[1]} at seq %{x}<br>%{customdata[2]}"
                                  "<extra></extra>" for t in fig.data)
    first = fig.data[0].customdata[0][2]
    assert first == ("compaction c1<br>status completed"
                     "<br>tokens hidden / added: −500 / +40")
    detail = fig.data[1].customdata[0][2]
    assert "&lt;b&gt;c2&lt;/b&gt;" in detail
    assert "&lt;a href=&quot;javascript:alert(1)&quot;&gt;x&lt;/a&gt;" in detail
    assert "<a" not in detail and "<b>c2" not in detail


def test_bracket_chart_of_many_attempts_stays_a_few_traces(bracket_rows):
    many = pd.concat([_brackets()] * 500, ignore_index=True)
    fig = bracket_chart_figure(many)
    assert len(fig.data) == 4 and len(bracket_rows(fig)) == 2000


@pytest.mark.parametrize(("status", "shown"), [
    pytest.param("ok", "completed", id="spec-ok"),
    pytest.param("open", "interrupted", id="spec-open"),
    pytest.param("open-stale", "stale", id="spec-open-stale"),
])
def test_spec_status_names_map_to_view_names(status, shown):
    frame = _brackets().iloc[:1].assign(status=pd.array([status], dtype="string"))
    assert bracket_chart_figure(frame).data[0].line.color == STATUS_COLORS[shown]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**7), min_size=1, max_size=60),
       st.lists(st.floats(-5, 70, allow_nan=False), min_size=1, max_size=40))
def test_seq_times_is_interp_over_every_seq(steps: list[int], seqs: list[float]) -> None:
    """The time axis maps a seq (band edges sit at half seqs, a cursor past the log's end) to
    the time `np.interp` over every seq gives, bit for bit, without an array per seq."""
    from workbench.views.figure_panel import seq_times
    times = np.cumsum(np.asarray(steps, dtype=np.int64)) + 1_700_000_000_000
    x = np.asarray(seqs, dtype=np.float64)
    expected = np.interp(x, np.arange(len(times)), times.astype(np.float64))
    assert np.array_equal(seq_times(x, times), expected)

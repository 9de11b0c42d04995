"""Figure builders work without widgets, thin large series, and keep log text as text."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.views.figures import (CURSOR_SHAPE, bracket_chart_figure, move_cursor, thin,
                                     token_timeline_figure)
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
    bands = [s for s in shapes if s.type == "rect"]
    assert [b.fillcolor for b in bands] == [STATUS_COLORS[s] for s in
                                            ("completed", "failed", "interrupted", "stale")]
    assert bands[2].x1 == 9.5  # an open bracket runs to the end of the log
    window = [s for s in shapes if s.name == "context window"]
    assert window[0].y0 == 20000
    move_cursor(fig, 7)
    assert fig.layout.shapes[CURSOR_SHAPE].x0 == fig.layout.shapes[CURSOR_SHAPE].x1 == 7


def test_token_timeline_of_an_empty_frame_still_builds():
    fig = token_timeline_figure(_timeline().iloc[:0])
    assert fig.layout.shapes[CURSOR_SHAPE].visible is False


def test_bracket_chart_has_one_row_per_attempt_with_escaped_text():
    fig = bracket_chart_figure(_brackets(), cursor=2)
    assert len(fig.data) == 4
    first = fig.data[0]
    assert list(first.x) == [1, 2, 3, 4]
    assert first.y[0] == "#1 completed (−500 / +40)"
    assert first.line.color == STATUS_COLORS["completed"]
    detail = fig.data[1].customdata[0][2]
    assert "&lt;b&gt;c2&lt;/b&gt;" in detail
    assert "&lt;a href=&quot;javascript:alert(1)&quot;&gt;x&lt;/a&gt;" in detail
    assert "<a" not in detail and "<b>c2" not in detail
    assert [list(t.x) for t in fig.data[2:]] == [[5], [8]]


@pytest.mark.parametrize(("status", "shown"), [
    pytest.param("ok", "completed", id="spec-ok"),
    pytest.param("open", "interrupted", id="spec-open"),
    pytest.param("open-stale", "stale", id="spec-open-stale"),
])
def test_spec_status_names_map_to_view_names(status, shown):
    frame = _brackets().iloc[:1].assign(status=pd.array([status], dtype="string"))
    assert bracket_chart_figure(frame).data[0].line.color == STATUS_COLORS[shown]

"""Each view, driven headless through its traits: a step change changes what the pane shows.

Seqs refer to `conftest.sample_script` (v4): checkpoint 22 replaces 3..13 at the compaction
19–23, the nested checkpoint 31 replaces 22..26 at 28–32, 34–36 fails, 44 never closes."""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from workbench.core.requests import rebuild_request
from workbench.views import (
    BracketChart,
    DiffPane,
    Inspector,
    LogPane,
    StepState,
    SurfacePane,
    TokenTimeline,
)
from workbench.views.figures import band_spans
from workbench.views.html import LogRow
from workbench.views.palette import STATUS_COLORS


def rows_by_seq(pane: LogPane, step: int) -> dict:
    return {r.seq: r for r in pane.rows(step) if isinstance(r, LogRow)}


def test_log_pane_window_follows_the_step_and_highlights_it(session):
    state = StepState(last_seq=len(session) - 1)
    pane = LogPane(session, state, before=3, after=2)
    state.step = 20
    assert [r.seq for r in pane.rows(20)] == [17, 18, 19, 20, 21, 22]
    assert 'class="wb-row wb-click wb-log-only wb-step wb-focus" data-seq="20"' in pane.pane.html
    assert "seq 17–22 of 47 events · step 20" in pane.pane.html
    state.step = 40
    assert 'data-seq="40"' in pane.pane.html and 'data-seq="20"' not in pane.pane.html


@pytest.mark.parametrize(("step", "seq", "surface", "hidden_by"), [
    pytest.param(21, 3, "on surface", None, id="before-the-checkpoint"),
    pytest.param(22, 3, "shadowed", 22, id="hidden-at-the-checkpoint"),
    pytest.param(17, 8, "on surface", None, id="before-the-prune"),
    pytest.param(18, 8, "shadowed", 18, id="hidden-by-the-pruned-copy"),
    pytest.param(30, 22, "on surface", None, id="checkpoint-before-nesting"),
    pytest.param(31, 22, "shadowed", 31, id="checkpoint-hidden-by-nested-one"),
    pytest.param(20, 21, "future", None, id="after-the-step"),
    pytest.param(20, 19, "log-only", None, id="log-only"),
])
def test_log_pane_marks_hidden_events_with_the_replacement(session, step, seq, surface,
                                                           hidden_by):
    pane = LogPane(session, before=30, after=30)
    row = rows_by_seq(pane, step)[seq]
    assert (row.surface, row.hidden_by) == (surface, hidden_by)


def test_selecting_an_event_brings_it_into_the_log_window_with_marks_at_the_step(session):
    state = StepState(last_seq=len(session) - 1)
    pane = LogPane(session, state, before=2, after=2)
    state.step = 40
    state.selected = 6
    assert "seq 4–8 of 47 events · step 40 · showing #6" in pane.pane.html
    assert 'class="wb-row wb-click wb-shadowed wb-focus" data-seq="6"' in pane.pane.html
    rows = rows_by_seq(pane, 40)
    assert rows == {r.seq: r for r in pane.rows(40, 40)}  # rows() centres on the step
    marks = {r.seq: r.hidden_by for r in pane.rows(40, 6)}
    assert marks == {4: None, 5: None, 6: 22, 7: None, 8: 18}  # 8 went first, to the prune


def test_log_pane_draws_compaction_brackets_as_bars(session):
    pane = LogPane(session, before=30, after=30)
    rows = rows_by_seq(pane, 30)
    assert [rows[s].bracket for s in (18, 19, 21, 23, 24)] == [
        None, ("completed", "start"), ("completed", "inside"), ("completed", "end"), None]
    assert rows[35].bracket == ("failed", "inside")
    assert rows[46].bracket == ("stale", "inside")  # never closed: runs to its end-seed
    pane.state.step = 40
    assert f'style="background:{STATUS_COLORS["failed"]}"' in pane.pane.html


def test_clicking_a_log_row_moves_the_step(session):
    state = StepState(last_seq=len(session) - 1)
    pane = LogPane(session, state)
    pane.pane.click = {"seq": 12, "act": "step", "n": 1}
    assert state.step == 12
    pane.pane.click = {"seq": 12, "act": "step", "n": 2}
    pane.pane.click = {"seq": "<script>", "act": "step", "n": 3}  # ignored, never raises
    assert state.step == 12 and pane.last_error is None


def test_surface_pane_shows_the_surface_at_the_step(session):
    state = StepState(last_seq=len(session) - 1)
    pane = SurfacePane(session, state)
    state.step = 21
    rows, count = pane.surface_rows(21)
    assert [r.seq for r in rows] == list(session.timeline.surface_at(21)) and count == 6
    state.step = 22
    assert "surface at seq 22: 2 nodes" in pane.pane.html
    node = pane.surface_rows(22)[0][1]
    assert node.seq == 22 and node.replaces == (3, 13, 5)
    assert [i.seq for i in node.lineage] == [3, 6, 18, 10, 13]
    assert [c.seq for c in node.lineage[2].children] == [8]  # the pruned copy stands for 8
    assert "replaces #3…#13 (5 nodes)" in pane.pane.html


def test_surface_pane_marks_nodes_new_since_the_previous_step(session):
    state = StepState(last_seq=len(session) - 1)
    pane = SurfacePane(session, state)
    state.step = 21
    state.step = 22
    assert 'class="wb-row wb-node wb-changed wb-focus" data-seq="22"' in pane.pane.html
    assert 'class="wb-row wb-node" data-seq="2"' in pane.pane.html
    state.step = 23
    assert "wb-changed" not in pane.pane.html


def test_nested_lineage_reaches_the_original_events(session):
    pane = SurfacePane(session)
    node = pane.node_row(0, 31)
    assert node.replaces == (22, 26, 3)
    first = node.lineage[0]
    assert first.seq == 22 and [c.seq for c in first.children] == [3, 6, 18, 10, 13]


def test_transcript_toggle_shows_append_origin_messages(session):
    state = StepState(last_seq=len(session) - 1)
    pane = SurfacePane(session, state)
    state.step = 30
    pane.mode.value = "transcript"
    rows, count = pane.transcript_rows(30)
    assert [r.seq for r in rows] == [3, 6, 8, 10, 13, 25, 26]  # no checkpoint, no pruned copy
    assert rows[0].preview.startswith("[hidden by #22]")
    assert "transcript at seq 30: 7 appended messages" in pane.pane.html
    pane.mode.value = "surface"
    assert "surface at seq 30" in pane.pane.html


def test_clicking_a_surface_node_selects_it_for_the_inspector(session):
    state = StepState(last_seq=len(session) - 1)
    surface, inspector = SurfacePane(session, state), Inspector(session, state)
    state.step = 30
    surface.pane.click = {"seq": 3, "act": "select", "n": 1}
    assert (state.step, state.selected) == (30, 3)
    assert "event #3 · user/message" in inspector.pane.html


def test_inspector_shows_raw_json_and_the_rebuilt_request(session):
    state = StepState(last_seq=len(session) - 1)
    inspector = Inspector(session, state)
    state.step = 19
    assert "event #19 · compaction/start" in inspector.pane.html
    assert inspector.request.html == ""
    state.step = 6
    want = rebuild_request(session.events, session.timeline, 6, version=4,
                           session_id="session-test")
    assert inspector.rebuilt(6) == want
    assert f"{len(want['messages'])} messages" in inspector.request.html
    assert "envelope" in inspector.request.html and "tools" in inspector.request.html
    inspector.show_request.value = False
    assert "tick “rebuild request” to show it" in inspector.request.html


def test_diff_pane_lists_replaced_added_and_removed_nodes(session):
    diff = DiffPane(session)
    diff.a.value, diff.b.value = 21, 23
    html = diff.pane.html
    assert "surface at #21 → #23" in html
    assert "#22 replaced #3…#13 (5 nodes)" in html
    assert "added 1" in html and "removed 5" in html


def test_token_timeline_cursor_follows_the_step_and_clicks_move_it(session):
    state = StepState(last_seq=len(session) - 1)
    timeline = TokenTimeline(session, state)
    state.step = 22
    assert timeline.cursor == 22
    names = [t.name for t in timeline.figure.data]
    assert names == ["dsh surface", "provider prompt"]
    window = [s for s in timeline.figure.layout.shapes if s.name == "context window"]
    assert window[0].y0 == 20000
    bands = {s.name: band_spans(s.path) for s in timeline.figure.layout.shapes
             if s.type == "path"}                       # one shape per status
    assert bands == {"bracket completed": [(18.5, 23.5), (27.5, 32.5), (37.5, 42.5)],
                     "bracket failed": [(33.5, 36.5)], "bracket stale": [(43.5, 46.5)]}
    xs = list(timeline.figure.data[0].x)
    timeline._clicked(None, SimpleNamespace(trace_index=0, point_inds=[xs.index(31)]), None)
    assert state.step == 31 and timeline.cursor == 31


def test_bracket_chart_has_a_row_per_attempt_and_jumps_on_click(session, bracket_rows):
    state = StepState(last_seq=len(session) - 1)
    chart = BracketChart(session, state)
    rows = bracket_rows(chart.figure)
    assert len(rows) == 5 and len(chart.figure.data) <= 4    # one trace per status
    assert [x for x, *_ in rows[0]] == [19, 21, 22, 23]
    assert [x for x, *_ in rows[2]] == [34, 36]
    trace = chart.figure.data[rows[2][0][3]]
    at = [i for i, c in enumerate(trace.customdata) if c is not None and c[0] == 2][0]
    chart._clicked(None, SimpleNamespace(trace_index=rows[2][0][3], point_inds=[at]), None)
    assert state.step == 34 and chart.cursor == 34


def test_time_axis_maps_bands_and_bracket_rows_and_back(session, bracket_rows):
    state = StepState(last_seq=len(session) - 1)
    timeline, chart = TokenTimeline(session, state), BracketChart(session, state)
    seq_paths = [s.path for s in timeline.figure.layout.shapes if s.type == "path"]
    seq_x = [list(t.x) for t in chart.figure.data]
    for panel in (timeline, chart):
        panel.set_axis("time")
    start = pd.to_datetime(session.events[19]["time"], unit="ms").isoformat()
    paths = [s.path for s in timeline.figure.layout.shapes if s.type == "path"]
    assert len(paths) == 3 and "T" not in "".join(paths)     # plotly's path dates: date_time
    assert all(p.count("M") == q.count("M") for p, q in zip(paths, seq_paths))
    rows = bracket_rows(chart.figure)
    assert rows[0][0][0] == start and rows[0][0][1] == "start"
    assert all(x is None for t in chart.figure.data for x, c in zip(t.x, t.customdata)
               if c is None)                             # the gaps stay gaps
    for panel in (timeline, chart):
        panel.set_axis("seq")
    assert [s.path for s in timeline.figure.layout.shapes if s.type == "path"] == seq_paths
    assert [list(t.x) for t in chart.figure.data] == seq_x


def test_a_view_alone_brings_its_own_slider(session):
    timeline = TokenTimeline(session)
    slider = timeline.children[0]
    slider.value = 9
    assert timeline.state.step == 9 and timeline.cursor == 9


def test_view_brackets_agree_with_compactions_df(session):
    """The views read brackets from the core records (no audit); values match the frame's."""
    from workbench.views.data import view_data
    mine = view_data(session).compactions
    theirs = session.compactions_df()[list(mine.columns)]
    assert mine.astype(object).where(mine.notna(), None).values.tolist() == \
        theirs.astype(object).where(theirs.notna(), None).values.tolist()


def test_a_large_session_is_frozen_before_the_views_build_its_data(session, monkeypatch):
    """From `FREEZE_EVENTS` events on, the loaded log moves to the GC's permanent generation
    before the views' data is built (a full collection over it would land inside the build),
    and again after."""
    import gc

    import workbench.views.data as data
    calls: list[str] = []
    monkeypatch.setattr(data, "FREEZE_EVENTS", 10)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    built = type(session).timeline_df
    monkeypatch.setattr(type(session), "timeline_df",
                        lambda self, **kw: calls.append("timeline_df") or built(self, **kw))
    data._CACHE.pop(session, None)
    data.view_data(session)
    assert calls[0] == "freeze" and "timeline_df" in calls and calls[-1] == "freeze"

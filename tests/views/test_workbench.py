"""The composite widget: one state, every view follows it; errors are shown, log text escaped."""
from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser

import pytest

import workbench
from workbench.views import LogPane, Workbench
from workbench.views.data import view_data


def test_slider_drives_every_view(session):
    wb = Workbench(session)
    before = {v: getattr(v, "pane", None) and v.pane.html for v in wb.views}
    wb.controls.slider.value = 22
    assert wb.state.step == 22 == wb.state.selected
    assert 'wb-step wb-focus" data-seq="22"' in wb.log_pane.pane.html
    assert "surface at seq 22: 2 nodes" in wb.surface_pane.pane.html
    assert wb.token_timeline.cursor == 22 and wb.bracket_chart.cursor == 22
    assert "event #22 · user/message" in wb.inspector.pane.html
    changed = [type(v).__name__ for v in wb.views if getattr(v, "pane", None) is not None
               and v.pane.html != before[v]]
    assert changed == ["LogPane", "SurfacePane", "Inspector", "DiffPane"]  # the diff follows
    assert all(v.last_error is None for v in wb.views)


def test_next_compaction_shows_the_shadowed_range(session):
    wb = Workbench(session)
    wb.controls.next_compaction.click()
    assert wb.state.step == 19                       # the bracket's start
    wb.controls.next_compaction.click()
    assert wb.state.step == 22                       # its checkpoint: the whole hidden range
    hidden = session.timeline.replacement_by_seq[22].shadowed
    for seq in hidden:
        assert (f'class="wb-row wb-click wb-shadowed" data-seq="{seq}" data-act="step">'
                in wb.log_pane.pane.html)
    assert wb.log_pane.pane.html.count("hidden by #22") == len(hidden)
    assert "replaces #3…#13 (5 nodes)" in wb.surface_pane.pane.html


def test_a_failing_view_shows_its_error_and_recovers(session, monkeypatch):
    wb = Workbench(session)

    def broken(self, step, centre=None):
        raise RuntimeError(f"cannot draw <b>{step}</b>")

    monkeypatch.setattr(LogPane, "rows", broken)
    wb.state.step = 5
    pane = wb.log_pane
    assert isinstance(pane.last_error, RuntimeError)
    assert pane._error.layout.display is None
    assert "log pane at seq 5 failed" in pane._error.value
    assert "cannot draw &lt;b&gt;5&lt;/b&gt;" in pane._error.value
    assert wb.surface_pane.last_error is None and wb.token_timeline.cursor == 5
    monkeypatch.undo()
    wb.state.step = 6
    assert pane.last_error is None and pane._error.layout.display == "none"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)


def test_payloads_in_a_log_stay_text_in_every_pane(payload_session, payloads):
    wb = Workbench(payload_session)
    for step in range(len(payload_session)):
        wb.state.step = step
        for view in wb.views:
            if getattr(view, "pane", None) is None:
                continue
            seen = _Tags()
            seen.feed(view.pane.html)
            assert not seen.tags & {"script", "img", "a", "iframe", "svg"}, view
            assert not {a for a in seen.attrs if a.startswith("on") or a in ("href", "src")}
    wb.state.step = 3
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in wb.log_pane.pane.html
    summary = wb.children[0].value
    assert "&lt;b&gt;session&lt;/b&gt;" in summary and "<b>session" not in summary
    for payload in payloads:
        assert payload not in wb.surface_pane.pane.html


def test_workbench_of_an_empty_log_builds(tmp_path, load):
    from workbench.build import LogBuilder

    path = tmp_path / "empty.v4.jsonl"
    LogBuilder(version=4, session_id="empty").write(path)
    wb = Workbench(load(path))
    assert wb.state.last_seq == 0
    assert all(v.last_error is None for v in wb.views)


def test_views_share_one_view_data_per_session(session):
    wb = Workbench(session)
    assert wb.log_pane.data is wb.surface_pane.data is view_data(session)


def test_workbench_and_show_resolve_lazily_from_the_package():
    code = ("import sys, workbench; assert 'ipywidgets' not in sys.modules; "
            "from workbench.views import Workbench, show; "
            "assert workbench.Workbench is Workbench and workbench.show is show")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert callable(workbench.show)


@pytest.mark.parametrize("as_path", [pytest.param(True, id="path"),
                                     pytest.param(False, id="session")])
def test_show_displays_one_workbench(session, monkeypatch, as_path):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    source = session.path if as_path else session
    assert workbench.show(source) is None
    assert len(shown) == 1 and isinstance(shown[0], Workbench)


def _widget_count() -> int:
    from ipywidgets.widgets.widget import _instances
    return len(_instances)


@pytest.mark.parametrize("frozen", [False, True])
def test_close_releases_every_widget_and_the_session(tmp_path, monkeypatch, frozen):
    """ipywidgets keeps a widget until it is closed, the view-data cache is keyed by the
    session, anywidget ties each figure to its class and a large session is frozen: after
    `close()` nothing the workbench made is registered and the session is freed."""
    import gc
    import weakref

    from workbench.views import data as data_module
    if frozen:
        monkeypatch.setattr(data_module, "FREEZE_EVENTS", 1)

    from tour_script import tour_script
    path = tmp_path / "s.v4.jsonl"
    tour_script(4, user_text="close me", context_window=20000).write(path)
    before = _widget_count()
    session = workbench.load(path)
    wb = Workbench(session)
    wb.controls.slider.value = 22
    assert _widget_count() > before + 20
    alive = weakref.ref(session)
    wb.close()
    assert _widget_count() == before
    assert gc.get_freeze_count() == 0
    del wb, session
    gc.collect()
    assert alive() is None


def _meter_traces(wb) -> dict[str, list]:
    """The y values of every trace of the two token charts, by chart and trace name."""
    return {f"{panel.title}: {trace.name}": list(trace.y)
            for panel in (wb.token_timeline, wb.context_fill) for trace in panel.figure.data
            if trace.name}


def test_a_large_log_draws_the_heuristic_first_and_counts_real_tokenizers_when_asked(
        session, monkeypatch):
    """Above `EAGER_METER_EVENTS` the first picture is the DSH heuristic's and the real
    tokenizers are offered; asked, every panel shows them at the same step and axis, with the
    numbers a workbench counting them at once shows."""
    from workbench.core.tokens.meters import get_meter
    from workbench.errors import MeterError
    from workbench.views import data as view_module
    try:
        for name in ("o200k", "deepseek"):
            get_meter(name).count_text("x")
    except MeterError as exc:
        pytest.skip(f"a real tokenizer is unavailable: {exc}")
    eager = Workbench(session, step=22)
    assert eager.meters == ("dsh", "o200k", "deepseek") and eager.offer is None
    expected = _meter_traces(eager)
    eager.close()
    session.meter_counts.clear()
    monkeypatch.setattr(view_module, "EAGER_METER_EVENTS", 10)
    wb = Workbench(session, step=22)
    assert wb.meters == ("dsh",) and wb.offer.names == ("o200k", "deepseek")
    assert not session.meter_counts and len(_meter_traces(wb)) < len(expected)
    assert "count o200k, deepseek tokens" == wb.offer.button.description
    wb.axis.value = "time"
    wb.offer.button.click()
    assert wb.meters == ("dsh", "o200k", "deepseek") and wb.offer is None
    assert wb.state.step == 22 and wb.axis.value == "time"
    wb.axis.value = "seq"
    assert _meter_traces(wb) == expected
    assert "o200k" in wb.surface_pane.meters and "deepseek" in wb.inspector.meters
    assert wb.set_meters("dsh,o200k") == ("dsh", "o200k") == wb.surface_pane.meters
    assert [t.name for t in wb.context_fill.figure.data if "tools + surface" in (t.name or "")] \
        == ["o200k (tools + surface)"]
    wb.close()


def test_a_log_of_few_events_but_much_text_is_not_counted_before_the_first_picture(tmp_path):
    """The eager count is bounded by the text the tokenizers would read, not only by events:
    a log of a dozen events holding one long message draws the DSH heuristic first and offers
    the real tokenizers (counting it at once is what would keep the notebook waiting)."""
    from workbench.build import LogBuilder
    from workbench.views.data import EAGER_METER_TOKENS
    b = LogBuilder(version=4, session_id="session-long-message")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user("word " * (2 * EAGER_METER_TOKENS))
    path = b.write(tmp_path / "session.v4.jsonl")
    session = workbench.load(path)
    assert len(session) < 20 and view_data(session).dsh_tokens > EAGER_METER_TOKENS
    wb = Workbench(session)
    assert wb.meters == ("dsh",) and not session.meter_counts
    assert wb.offer is not None and wb.offer.names == ("o200k", "deepseek")
    wb.close()


def test_the_offer_names_a_tokenizer_that_does_not_load(session, monkeypatch):
    from workbench.views import data as view_module
    monkeypatch.setattr(view_module, "EAGER_METER_EVENTS", 10)
    monkeypatch.setattr(view_module, "loadable_meters",
                        lambda names: tuple(n for n in names if n != "deepseek"))
    monkeypatch.setattr("workbench.views.workbench.loadable_meters", view_module.loadable_meters)
    wb = Workbench(session)
    wb.offer.button.click()
    assert wb.meters == ("dsh", "o200k") and wb.offer is None
    note = wb.children[3].children[1]      # beside the x-axis choice
    assert note.value == '<span class="wb-meter-note">deepseek: not installed here</span>'
    wb.close()


def test_the_axis_toggle_shows_the_axis_set_and_rebuilds_keep_it(session):
    wb = Workbench(session, meters="dsh")
    assert wb.data.times_ms is not None
    wb.set_axis("time")
    assert wb.axis.value == "time" and [f.axis for f in wb.figures] == ["time"] * 3
    wb.set_meters("dsh,o200k")
    assert wb.axis.value == "time" and [f.axis for f in wb.figures] == ["time"] * 3
    wb.rebuild(wb.state.step)                 # a live redraw
    assert wb.axis.value == "time" and [f.axis for f in wb.figures] == ["time"] * 3
    wb.axis.value = "seq"                     # the user clicks the toggle
    assert [f.axis for f in wb.figures] == ["seq"] * 3
    wb.close()

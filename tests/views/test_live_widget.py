"""`Workbench(session, follow=True)` without a browser: the bar counts new events, the step is
kept unless "follow tail" is on, panels are rebuilt from the grown session, redraws are throttled,
open brackets show as running, a rewritten log reloads with a notice."""
from __future__ import annotations

from pathlib import Path

import pytest

import workbench
from workbench.views import live as live_module
from workbench.views.workbench import Workbench

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
LOG = SHARED / "corpus" / "dsh-real-v4" / "dev-long-auto-compaction__session.v4.jsonl"
pytestmark = pytest.mark.skipif(not LOG.exists(), reason=f"{LOG} is absent (../shared)")


def _prefix(tmp_path: Path, marker: bytes = b'"compaction/start"', after: int = 1) -> tuple[Path, list[bytes]]:
    lines = LOG.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if marker in line) + after
    target = tmp_path / LOG.name
    target.write_bytes(b"".join(lines[:cut]))
    return target, lines[cut:]


def test_follow_keeps_the_step_counts_new_events_and_rebuilds(tmp_path, monkeypatch):
    monkeypatch.setattr(live_module, "REDRAW_SECONDS", 0.0)
    monkeypatch.setattr(live_module, "COST_FACTOR", 0.0)
    target, rest = _prefix(tmp_path)
    wb = workbench.follow(target)
    assert wb.live is not None and "live" in wb.live.badge.value
    assert "compaction running" in wb.live.badge.value   # the bracket the prefix opened
    wb.state.step = 5
    before = len(wb.session)
    with open(target, "ab") as fh:
        fh.write(b"".join(rest[:40]))
    wb.live.poll()
    assert len(wb.session) == before + 40
    assert wb.state.step == 5 and wb.state.last_seq == before + 39
    assert wb.controls.slider.max == before + 39
    assert "+40 new" in wb.live.badge.value
    wb.live.tail.value = True
    with open(target, "ab") as fh:
        fh.write(b"".join(rest[40:]))
    wb.live.poll()
    assert wb.state.step == len(wb.session) - 1
    assert "new" not in wb.live.badge.value.split("events")[1]
    assert "compaction running" not in wb.live.badge.value
    fresh = Workbench(workbench.load(target), step=wb.state.step)
    assert wb.surface_pane.children[-1].html == fresh.surface_pane.children[-1].html
    assert wb.log_pane.children[-1].html == fresh.log_pane.children[-1].html
    for panel in wb.views:
        assert panel.last_error is None


def test_redraws_are_throttled(tmp_path, monkeypatch):
    monkeypatch.setattr(live_module, "REDRAW_SECONDS", 3600.0)
    target, rest = _prefix(tmp_path)
    wb = Workbench(workbench.load(target, follow=True), follow=True)
    for k in range(10):
        with open(target, "ab") as fh:
            fh.write(rest[k])
        wb.live.poll()
    assert wb.live.redraws <= 1 and len(wb.session) == len(workbench.load(target))
    assert "+" in wb.live.badge.value   # the bar is current even between redraws
    wb.live.poll(force=True)
    assert wb.state.last_seq == len(wb.session) - 1


def test_rewritten_log_reloads_with_a_notice_and_stop(tmp_path, monkeypatch):
    monkeypatch.setattr(live_module, "REDRAW_SECONDS", 0.0)
    monkeypatch.setattr(live_module, "COST_FACTOR", 0.0)
    target, _ = _prefix(tmp_path)
    wb = workbench.follow(target)
    target.write_bytes(target.read_bytes()[:len(target.read_bytes()) // 3].rsplit(b"\n", 1)[0] + b"\n")
    wb.live.poll()
    assert "truncated" in wb.live.badge.value
    assert wb.state.last_seq == len(workbench.load(target)) - 1
    wb.live.stop()
    assert "stopped" in wb.live.badge.value and wb.live.tail.disabled


V3 = SHARED / "corpus" / "dsh-0.1.5-v3" / "dev-subagent-spawn-child__session.v3.jsonl"


@pytest.mark.skipif(not V3.exists(), reason=f"{V3} is absent (../shared)")
def test_a_log_replaced_with_as_many_events_is_shown_afresh(tmp_path, monkeypatch):
    """The views' data is read again on any reload, not only when the length changed."""
    monkeypatch.setattr(live_module, "REDRAW_SECONDS", 0.0)
    monkeypatch.setattr(live_module, "COST_FACTOR", 0.0)
    other = SHARED / "corpus" / "dsh-real-v4" / "dev-summary-errors__session.v4.jsonl"
    target = tmp_path / LOG.name
    n = 100
    target.write_bytes(b"".join(LOG.read_bytes().splitlines(keepends=True)[:n + 1]))
    wb = Workbench(workbench.load(target, follow=True), follow=True, meters="dsh", step=-1)
    assert len(wb.session) == n
    replacement = tmp_path / "replacement.jsonl"
    replacement.write_bytes(b"".join(other.read_bytes().splitlines(keepends=True)[:n + 1]))
    replacement.replace(target)
    assert wb.live.poll(force=True).reloaded and len(wb.session) == n
    fresh = Workbench(workbench.load(target), meters="dsh", step=-1)
    assert wb.data.timeline is wb.session.timeline
    assert wb.surface_pane.children[-1].html == fresh.surface_pane.children[-1].html
    assert wb.log_pane.children[-1].html == fresh.log_pane.children[-1].html
    wb.live.stop()


def test_a_newer_generation_is_offered_and_opened_on_request(tmp_path, monkeypatch):
    monkeypatch.setattr(live_module, "REDRAW_SECONDS", 0.0)
    target = tmp_path / "session.v3.jsonl"
    target.write_bytes(V3.read_bytes())
    wb = workbench.follow(target)
    wb.live.poll()
    assert wb.live.open_newer_button.layout.display == "none" and "newer" not in wb.live.badge.value
    newer = tmp_path / "session.v4.jsonl"
    migrated = workbench.load(target).migrated(4)
    migrated.write(newer)
    wb.live.poll()
    assert wb.live.open_newer_button.layout.display != "none"
    assert "newer generation" in wb.live.badge.value and "session.v4.jsonl" in wb.live.badge.value
    assert wb.session.path == str(target)   # offered, not opened by itself
    wb.live.open_newer_button.click()
    assert wb.session.path == str(newer) and wb.session.version == 4 and wb.session.live is not None
    assert len(wb.session) == len(migrated) and wb.state.last_seq == len(migrated) - 1
    assert wb.live.open_newer_button.layout.display == "none"
    assert "following the newer generation now" in wb.live.badge.value
    for panel in wb.views:
        assert panel.last_error is None


def test_a_rebuild_closes_the_panels_it_replaces(tmp_path, monkeypatch):
    from ipywidgets.widgets.widget import _instances
    monkeypatch.setattr(live_module, "REDRAW_SECONDS", 0.0)
    monkeypatch.setattr(live_module, "COST_FACTOR", 0.0)
    target, rest = _prefix(tmp_path)
    wb = workbench.follow(target)
    counts = []
    for k in range(3):
        with open(target, "ab") as fh:
            fh.write(b"".join(rest[10 * k:10 * k + 10]))
        wb.live.poll()
        counts.append(len(_instances))
    assert counts[0] == counts[1] == counts[2]   # each rebuild made as many widgets as it closed
    bar = wb.live.bar
    wb.close()
    assert bar.comm is None and not wb.live.running


def test_a_frozen_followed_session_frees_what_its_rebuilds_replace(tmp_path, monkeypatch):
    """A large session's heap is frozen; each rebuild must still let the replaced generation's
    view data and panels go (they are cycles the collector cannot see while frozen)."""
    import gc
    import weakref

    from workbench.views import data as data_module
    monkeypatch.setattr(data_module, "FREEZE_EVENTS", 1)
    monkeypatch.setattr(live_module, "REDRAW_SECONDS", 0.0)
    monkeypatch.setattr(live_module, "COST_FACTOR", 0.0)
    target, rest = _prefix(tmp_path)
    try:
        wb = workbench.follow(target)
        assert gc.get_freeze_count() > 0
        first, panel = weakref.ref(wb.data), weakref.ref(wb.log_pane)
        for k in range(3):
            with open(target, "ab") as fh:
                fh.write(b"".join(rest[10 * k:10 * k + 10]))
            wb.live.poll()
        assert first() is None and panel() is None
        wb.close()
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()

"""What the workbench shows in place, headless: the checkpoint's summary body with its prices,
the whole hidden range, brackets in words, failures in the row, request totals per part by
each meter (copy / save as JSON), the diff following the step, `goto`, the context fill. Seqs of
`session` refer to `conftest.sample_script`; real DSH logs come from ../shared/corpus."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.compaction.framing import (
    CHECKPOINT_PREAMBLE,
    checkpoint_body,
    frame_summary,
)
from workbench.core.compaction.threshold import PressureSettings
from workbench.core.requests import rebuild_request
from workbench.core.tokens.meters import get_meter
from workbench.errors import InvalidArgument, SeqOutOfRange
from workbench.views import Workbench
from workbench.views.html import LogGap, LogRow
from workbench.views.inspector import request_totals
from workbench.views.payload import seq_ranges, utc_text

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus" / "dsh-real-v4"
KILLED = CORPUS / "dev-killed-mid-compaction__session.v4.jsonl"
LARGE = CORPUS / "dev-large-multistep__session.v4.jsonl"


def _real(path: Path):
    if not path.exists():
        pytest.skip(f"real DSH log {path} is absent (../shared/corpus)")
    import workbench
    return workbench.load(path)


def test_checkpoint_body_undoes_the_framing():
    blocks = [{"type": "text", "text": "## Goal\n- ship"}, {"type": "text", "text": "more"}]
    assert checkpoint_body(frame_summary(blocks)) == "## Goal\n- ship\n\nmore"
    assert checkpoint_body([{"type": "text", "text": CHECKPOINT_PREAMBLE}]) is None
    assert checkpoint_body([{"type": "text", "text": "hello"}, {"type": "text", "text": "x"}]) \
        is None


def test_a_checkpoint_shows_its_summary_body_with_a_price_per_meter():
    session = _real(KILLED)
    wb = Workbench(session, step="compaction:1", meters=("dsh", "o200k"))
    assert wb.state.step == 148
    html = wb.surface_pane.pane.html
    body = html.split('class="wb-summary-body">', 1)[1].split("</div>", 1)[0]
    assert body.startswith("## Primary Request and Intent")
    assert "automatically generated" not in body
    event = session.events[148]
    prices = [get_meter(m, version=4).count_event(event) for m in ("dsh", "o200k")]
    assert f"{prices[0]:,} dsh · {prices[1]:,} o200k tokens" in html
    assert "full framed message as the model sees it" in html
    assert "This is an automatically generated checkpoint" in html   # one click away
    assert session.events_df().loc[148, "preview"].startswith("[checkpoint] ## Primary")


def test_the_log_pane_shows_the_whole_hidden_range_folded_and_linked():
    session = _real(KILLED)
    wb = Workbench(session, step=148, meters=("dsh",))
    hidden = session.timeline.replacement_by_seq[148].shadowed
    rows = wb.log_pane.rows(148)
    shown = [r.seq for r in rows if isinstance(r, LogRow) and r.hidden_by == 148]
    gaps = [r for r in rows if isinstance(r, LogGap) and r.what == "more hidden nodes"]
    assert len(shown) == wb.log_pane.range_rows and len(gaps) == 1
    assert len(shown) + gaps[0].count == len(hidden)           # every hidden node accounted
    assert shown[0] == hidden[0] and shown[-1] == hidden[-1]
    step = [r for r in rows if isinstance(r, LogRow) and r.is_step]
    assert step[0].replaces == (hidden[0], hidden[-1], len(hidden))
    html = wb.log_pane.pane.html
    assert html.count('data-seq="148" data-act="step" title="go to the replacement"') == len(shown)
    assert f'data-seq="{hidden[0]}" data-act="select" title="show the range it hid"' in html
    wb.log_pane.pane.click = {"seq": hidden[0], "act": "select", "n": 1}   # replacement → range
    assert wb.state.selected == hidden[0] and wb.state.step == 148


def _text(html: str) -> str:
    import re
    return " ".join(re.sub(r"<style>.*?</style>|<[^>]+>", " ", html, flags=re.S).split())


def test_unfinished_brackets_are_named_in_words(session):
    wb = Workbench(session, meters=("dsh",))
    header = _text(wb.header.value)
    assert "compaction #3 failed compaction/start at seq 34, closed with an error at seq 36" \
        in header
    assert "stale compaction/start at seq 44 never closed; session/end-seed at seq" in header
    for status in ("completed", "failed", "interrupted", "stale"):
        assert f"{status} :" in header                         # the legend
    wb.state.step = 46
    row = {r.seq: r for r in wb.log_pane.rows(46) if isinstance(r, LogRow)}[44]
    assert row.note.startswith("compaction stale: never closed")
    killed = Workbench(_real(KILLED), meters=("dsh",))
    assert "compaction #2 interrupted compaction/start at seq 255 never closed" in \
        _text(killed.header.value)


def test_a_failed_attempt_previews_its_error():
    session = _real(LARGE)
    frame = session.events_df()
    failed = frame[frame["type"] == "assistant/attempt"]["preview"].dropna().tolist()
    assert any(p.startswith("failed: CONTEXT_WINDOW_EXCEEDED: ") for p in failed)


def test_request_totals_per_part_by_each_meter_and_saved_as_json(tmp_path):
    session = _real(KILLED)
    wb = Workbench(session, step="request:150", meters=("dsh", "deepseek"))
    seq = wb.state.step
    request = wb.inspector.rebuilt(seq)
    rows = dict(request_totals(request, ("dsh", "deepseek"), version=4))
    messages = request["messages"]
    assert [k for k in rows if k.startswith("#")] == [f"#{i} {m['role']}"
                                                      for i, m in enumerate(messages)]
    for meter in ("dsh", "deepseek"):
        parts = sum(v[meter] for k, v in rows.items() if k != "total")
        assert rows["total"][meter] == parts > 0
    dsh = get_meter("dsh", version=4)
    assert rows["#0 system"]["dsh"] == dsh.count_message(messages[0])
    html = wb.inspector.request.html
    assert "context window 20,000" in html and 'data-copy="request"' in html
    assert f"{rows['total']['dsh']:,} ({100 * rows['total']['dsh'] / 20000:.0f} %)" in html
    out = wb.inspector.save_request(tmp_path / "request.json")
    assert json.loads(out.read_text()) == rebuild_request(
        session.events, session.timeline, wb.data.attempts[seq], version=4,
        session_id=session.session_id)
    with pytest.raises(ValueError, match="not a model call"):
        wb.inspector.save_request(tmp_path / "x.json", seq=0)
    with pytest.raises(ValueError, match="input log"):
        wb.inspector.save_request(session.path, seq)


def test_json_times_read_as_utc_and_seq_lists_fold():
    assert utc_text(1796014246748) == "2026-11-30 04:50:46.748 UTC"
    assert utc_text("x") is None and utc_text(-5) is None
    assert seq_ranges([145, 147, 8]) is None
    assert seq_ranges([8, 9, 15, 19, 20, 21]) == "8–9, 15, 19–21"
    session = _real(KILLED)
    wb = Workbench(session, step=148, meters=("dsh",))
    html = wb.inspector.pane.html
    assert "2026-11-30 04:50:46.748 UTC" in html


def test_the_diff_follows_the_step_until_pinned(session):
    wb = Workbench(session, meters=("dsh",))
    wb.state.step = 20
    wb.state.step = 25
    assert (wb.diff.a.value, wb.diff.b.value) == (20, 25)
    wb.diff.follow.value = "compaction"
    assert (wb.diff.a.value, wb.diff.b.value) == (21, 25)        # before checkpoint 22
    wb.diff.a.value = 3                                            # typing pins
    assert wb.diff.follow.value == "pinned"
    wb.state.step = 40
    assert (wb.diff.a.value, wb.diff.b.value) == (3, 25)
    assert "surface at #3 → #25" in wb.diff.pane.html


def test_goto_targets(session):
    wb = Workbench(session, step=-1, meters=("dsh",))
    assert wb.state.step == len(session) - 1
    assert wb.goto("compaction:1") == 22 and wb.goto("compaction:3") == 34   # failed: its start
    calls = sorted(a.seq for a in session.attempts)
    assert wb.goto(f"request:{calls[1]}") == calls[1]
    assert wb.goto(f"request:{calls[1] + 1}") == calls[2]
    assert wb.goto(7) == 7 and wb.state.step == 7
    for bad in ("compaction:99", "turn:3"):
        with pytest.raises(InvalidArgument):
            wb.goto(bad)
    for outside in (10_000, "request:100000"):   # a seq outside the log: the one seq rule's error
        with pytest.raises(SeqOutOfRange):
            wb.goto(outside)


def test_context_fill_draws_each_meter_against_the_threshold():
    session = _real(KILLED)
    wb = Workbench(session, meters=("dsh", "o200k"),
                   settings=PressureSettings(threshold_ratio=0.75, headroom_tokens=1024))
    assert wb.context_fill.threshold == 15_000     # floor(min(0.75·20000, 20000−2048−1024))
    names = [t.name for t in wb.context_fill.figure.data]
    assert names == ["dsh measure (what DSH compares with the threshold)", "o200k (tools + surface)"]
    peak = max(wb.context_fill.figure.data[0].y)
    assert 75 <= peak < 100        # the request crossed 15,000 tokens when DSH compacted
    lines = [s.name for s in wb.context_fill.figure.layout.shapes if s.type == "line"]
    assert any(n.startswith("threshold (assumed thresholdRatio 0.75") for n in lines)
    default = Workbench(session, meters=("dsh",))      # spec defaults: headroom 65,536 > window
    assert default.context_fill.threshold is None
    assert "thresholdRatio 0.8, headroomTokens 65,536 give no threshold" in \
        default.context_fill.figure.layout.title.text


def test_every_figure_shares_the_x_axis_and_switches_to_time(session):
    wb = Workbench(session, meters=("dsh",))
    ranges = {tuple(f.figure.layout.xaxis.range) for f in wb.figures}
    margins = {(f.figure.layout.margin.l, f.figure.layout.margin.r) for f in wb.figures}
    assert len(ranges) == 1 and len(margins) == 1
    assert all(f.figure.layout.autosize and f.figure.layout.width is None for f in wb.figures)
    wb.axis.value = "time"
    assert all(f.axis == "time" for f in wb.figures)
    assert all(str(f.figure.layout.shapes[0].x0).startswith("20") for f in wb.figures)
    wb.state.step = 22
    assert wb.bracket_chart.cursor == 22
    wb.axis.value = "seq"
    assert wb.token_timeline.cursor == 22

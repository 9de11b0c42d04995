"""The context-fill chart measures what DSH measures: `measure().totalTokens` (tools envelope +
the whole surface, usage-anchored), the number DSH compares with its compaction threshold.

Checked against the real corpus, whose README states the settings (window 20,000, maxTokens
2,048, thresholdRatio 0.75, headroomTokens 1,024: threshold 15,000): at every pre-step point
where DSH started a pressure compaction the charted request is at least 15,000, and at every
pre-step point where it went on to the step without compacting it is below. The surface alone
(without the tools) stays far below the threshold there, so a chart of it fails this test."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.core.tokens.meters import get_meter
from workbench.views.data import view_data
from workbench.views.timeline import request_tokens

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "dsh-real-v4"
THRESHOLD = 15_000
PRESSURE_LOGS = ("dev-long-auto-compaction__session.v4.jsonl",
                 "dev-zstd-auto-compaction__session.v4.jsonl.zstd",
                 "dev-tool-result-prune-then-compaction__session.v4.jsonl",
                 "dev-killed-mid-compaction__session.v4.jsonl",
                 "dev-web-manual-and-auto-compaction__session.v4.jsonl",
                 "dev-large-multistep__session.v4.jsonl")


def _load(name: str):
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"real DSH log {path} is absent (../shared/corpus)")
    import workbench
    return workbench.load(path)


def _pre_steps(events) -> tuple[list[int], list[int]]:
    """Seqs of pre-step points (after turn/start or step/end) followed by a pressure
    compaction/start, and those followed by step/start."""
    fired, quiet = [], []
    for i in range(len(events) - 1):
        if events[i]["type"] not in ("turn/start", "step/end"):
            continue
        nxt = events[i + 1]
        data = nxt.get("data") if isinstance(nxt.get("data"), dict) else {}
        if nxt["type"] == "compaction/start" and data.get("turn") is not None:
            fired.append(i)
        elif nxt["type"] == "step/start":
            quiet.append(i)
    return fired, quiet


@pytest.mark.parametrize("name", PRESSURE_LOGS)
def test_the_charted_request_crosses_the_threshold_where_dsh_compacted(name: str) -> None:
    session = _load(name)
    data = view_data(session)
    frame, labels = request_tokens(session, data.timeline_frame, ["dsh"])
    assert labels == ["dsh measure (what DSH compares with the threshold)"]
    request = frame["request_tokens_dsh"].to_numpy()
    surface = frame["surface_tokens_dsh"].to_numpy(dtype=np.float64)
    fired, quiet = _pre_steps(session.events)
    assert fired and quiet
    assert min(request[fired]) >= THRESHOLD > max(request[quiet])
    assert max(surface[fired]) < THRESHOLD      # what the chart showed before: ~50 % of the window


def test_a_real_tokenizer_counts_the_tools_envelope_plus_its_surface() -> None:
    session = _load("dev-long-auto-compaction__session.v4.jsonl")
    try:
        meter = get_meter("o200k", version=session.version)
    except Exception as exc:   # the tokenizer package is an optional extra
        pytest.skip(f"o200k unavailable: {exc}")
    frame, labels = request_tokens(session, session.timeline_df(meters=("dsh", "o200k")),
                                   ["dsh", "o200k"])
    assert labels[1] == "o200k (tools + surface)"
    header_seq = next(i for i, e in enumerate(session.events) if e["type"] == "request/header")
    envelope = meter.count_envelope(session.events[header_seq]["data"]["header"])
    assert envelope > 0
    row = frame.iloc[header_seq]
    assert row["request_tokens_o200k"] == row["surface_tokens_o200k"] + envelope
    assert (frame["request_tokens_o200k"].iloc[:header_seq]
            == frame["surface_tokens_o200k"].iloc[:header_seq].astype(float)).all()


def test_above_the_replay_limit_the_chart_says_it_shows_the_surface_only() -> None:
    session = _load("dev-long-auto-compaction__session.v4.jsonl")
    frame, labels = request_tokens(session, view_data(session).timeline_frame, ["dsh"],
                                   replay_limit=10)
    assert labels[0].startswith("dsh surface only (tools not counted")
    assert (frame["request_tokens_dsh"] == frame["surface_tokens_dsh"].astype(float)).all()


@pytest.mark.parametrize("name", PRESSURE_LOGS)
def test_the_logs_pressure_decisions_bound_the_threshold(name: str) -> None:
    """The corpus ran with threshold 15,000: the bounds the log implies hold it, and the chart
    says when the assumed settings (here the spec defaults, which never compact a 20,000
    window) contradict them."""
    from workbench.core.compaction.threshold import PressureSettings
    from workbench.views.timeline import ContextFill
    session = _load(name)
    default = ContextFill(session, meters=("dsh",))
    implied = default.implied
    assert implied is not None and implied.low is not None
    assert implied.low < THRESHOLD <= implied.high
    title = default.figure.layout.title.text
    assert implied.describe() in title and "give no threshold, not one in between" in title
    assert any(s.type == "rect" and s.name == implied.describe()
               for s in default.figure.layout.shapes)
    matching = ContextFill(session, meters=("dsh",),
                           settings=PressureSettings(threshold_ratio=0.75, headroom_tokens=1024))
    assert matching.threshold == THRESHOLD
    assert implied.admits(THRESHOLD) and not implied.admits(THRESHOLD + implied.high)
    assert "not one in between" not in matching.figure.layout.title.text


def test_no_pressure_compaction_implies_nothing() -> None:
    from workbench.core.compaction.threshold import implied_threshold
    session = _load("dev-subagent-parent__session.v4.jsonl")
    from workbench.views.timeline import ContextFill
    assert ContextFill(session, meters=("dsh",)).implied is None
    types = ["turn/start", "step/start", "step/end", "compaction/start"]
    assert implied_threshold(types, [10, 10, 30, 30], [3]).high == 30
    assert implied_threshold(types, [40, 40, 30, 30], [3]) is None     # quiet above fired


def _corpus_logs() -> list[Path]:
    root = CORPUS.parent
    repo_samples = Path(__file__).resolve().parents[2] / "sample_logs"
    return sorted(root.glob("*/*.jsonl*")) + sorted(repo_samples.glob("*.jsonl*"))


def test_the_series_equals_a_token_meter_measuring_after_every_event() -> None:
    """`measure_series` (state events only, surface from the one pass) gives, at every seq, what
    a `TokenMeter` replay of every event measures, and stops where the meter refuses a log."""
    import workbench
    from workbench.core.tokens.measure import TokenMeter
    from workbench.errors import MeterError
    from workbench.views.timeline import MEASURE_LABEL
    logs = [p for p in _corpus_logs() if p.stat().st_size > 0]
    if not any(CORPUS.parent in p.parents for p in logs):
        pytest.skip("the shared corpus is absent (../shared/corpus)")
    for path in logs:
        session = workbench.load(path)
        if not len(session):
            continue
        meter, reference = TokenMeter(version=session.version), []
        try:
            for event in session.events:
                meter.fold(event)
                reference.append(meter.measure().total_tokens)
        except MeterError:
            pass          # the series must stop where the meter did
        frame, labels = request_tokens(session, view_data(session).timeline_frame, ["dsh"])
        got = frame["request_tokens_dsh"].to_numpy()
        assert got[:len(reference)].tolist() == [float(x) for x in reference], path.name
        assert np.isnan(got[len(reference):]).all(), path.name
        assert (labels[0] == MEASURE_LABEL) == (len(reference) == len(session)), path.name
    assert len(logs) > 100

"""Passes over the store on the notebook path. The store is forced lazy (every event reparsed
from its line on each read) and its reparse is counted: the load's own scan parses each event
once without reparsing, so any full pass after it shows up as about `len(session)` reparses.

Holds today: the load → first widget → `events_df` → `surface_df(mid)` → `timeline_df` path
reads only the handful of payloads the first render shows (scan, timeline, usage and attempts
rode on the load) when the widget prices by the DSH heuristic alone, as it does on logs over
200k events. On smaller logs the widget's default `meters="auto"` adds the real tokenizers, whose
counts need every message's text: one more read of the candidate nodes' payloads (at once up to
`views.data.EAGER_METER_EVENTS` events, when the user asks above it), never of the others.
`compactions_df` runs the compaction audit on facts the same pass collected, and `workbench
audit` loads the same analysed log with the pass made for the audit (probe texts and the
quality's anchors instead of the index): neither makes a second pass."""
from __future__ import annotations

from pathlib import Path

import pytest

import workbench
from workbench.io.store import EventStore

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "multi-day__session.v4.jsonl.zstd"
REAL = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "dsh-real-v4"
LOGS = [SAMPLE] + (sorted(REAL.glob("*.jsonl*"))[:2] if REAL.is_dir() else [])
V0 = REAL.parent / "dsh-0.1.2-v0" / "dev-long-auto-compaction__session.jsonl"
AUDITED = LOGS + ([V0] if V0.is_file() else [])


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_the_widget_and_frames_make_no_second_pass(path: Path, counted: dict) -> None:
    pytest.importorskip("ipywidgets")
    from workbench.views import Workbench
    session = workbench.load(path)
    assert isinstance(session.events, EventStore) and len(session) > 100
    assert counted["n"] <= 1      # the load parsed each event once, during its scan
    Workbench(session, meters="dsh")
    session.events_df()
    session.surface_df(len(session) // 2)
    session.timeline_df()
    assert counted["n"] < len(session) // 4, (counted["n"], len(session))


def _payloads(session, *types: str) -> int:
    return sum(len(session.index.seq_of_type(t)) for t in types)


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_real_tokenizer_meters_read_only_the_message_payloads_once(path: Path, counted: dict) -> None:
    """With the real tokenizers on (a small log: "auto" counts them at once), the first widget
    and the frames read what the meters need and nothing else: each candidate node's payload
    once for every real meter together, DSH's measure its headers and model messages once, and
    the handful the first render shows; never a pass over the log."""
    pytest.importorskip("ipywidgets")
    from workbench.views import Workbench
    session = workbench.load(path)
    wb = Workbench(session)
    assert wb.meters[1:], wb.meters
    session.timeline_df(meters=("dsh", "o200k", "deepseek"))
    session.events_df()
    nodes = int((session.prices >= 0).sum())
    measured = _payloads(session, "request/header", "assistant/message")
    assert counted["n"] <= nodes + measured + len(session) // 10, (counted["n"], len(session))
    assert counted["n"] < len(session) - _payloads(session, "step/start", "step/end")


@pytest.mark.parametrize("path", LOGS[:1], ids=[p.name for p in LOGS[:1]])
def test_real_tokenizers_asked_for_read_only_the_message_payloads(
        path: Path, counted: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above `views.data.EAGER_METER_EVENTS` the first widget reads no more than with the DSH
    heuristic alone; counting the offered tokenizers then reads each candidate node once."""
    pytest.importorskip("ipywidgets")
    from workbench.views import Workbench
    from workbench.views import data as view_module
    monkeypatch.setattr(view_module, "EAGER_METER_EVENTS", 10)
    session = workbench.load(path)
    wb = Workbench(session)
    first = counted["n"]
    assert wb.offer is not None and first < len(session) // 4, (first, len(session))
    wb.offer.button.click()
    assert wb.meters == ("dsh", "o200k", "deepseek")
    nodes = int((session.prices >= 0).sum())
    assert counted["n"] - first <= nodes + len(session) // 10, (counted["n"] - first, nodes)


@pytest.mark.parametrize("path", AUDITED, ids=[p.name for p in AUDITED])
def test_compactions_df_makes_no_second_pass(path: Path, counted: dict) -> None:
    session = workbench.load(path)
    session.compactions_df()
    assert counted["n"] < len(session) // 4, (counted["n"], len(session))



@pytest.mark.parametrize("path", AUDITED, ids=[p.name for p in AUDITED])
def test_cli_audit_parses_the_log_once(path: Path, counted: dict,
                                       capsys: pytest.CaptureFixture) -> None:
    """`workbench audit` (checks, lost-fact probes, citations, re-fetches, ledger) reads what it
    needs during the load's own pass: a handful of reparses at most, never a second pass."""
    import json

    from workbench.cli.main import main
    code = main(["audit", "--json", str(path)])
    reads = counted["n"]
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and out["compactions"] and out["quality"]["compactions"]
    events = len(workbench.load(path))
    assert events > 100 and reads < events // 10, (reads, events)


@pytest.mark.parametrize("path", LOGS[:1], ids=[p.name for p in LOGS[:1]])
def test_the_first_widget_reads_the_session_arrays_not_the_events_frame(path: Path) -> None:
    """The views read the one pass's arrays (`views.data.ViewData`): the first widget builds no
    `events_df`; the first search builds it, once, and finds what a search of the frame finds."""
    pytest.importorskip("ipywidgets")
    from workbench.views import Workbench
    from workbench.views.data import view_data
    session = workbench.load(path)
    Workbench(session, meters="dsh")
    assert ("events",) not in session._frames
    data = view_data(session)
    frame = session.events_df()
    assert list(data.type) == frame["type"].astype(object).where(frame["type"].notna(), None).tolist()
    assert [data.preview[s] for s in range(len(session))] == frame["preview"].fillna("").tolist()
    assert list(data.status) == frame["surface_status"].astype(object).tolist()
    assert data.shadowed_by.tolist() == frame["shadowed_by"].fillna(-1).astype(int).tolist()
    assert [data.tokens[s] for s in range(len(session))] == frame["tokens"].fillna(0).astype(int).tolist()
    found = data.navigator.matches(event_type="tool/result")
    assert found.tolist() == frame.index[frame["type"] == "tool/result"].tolist()


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_the_log_is_folded_once(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The load's restore stage and the session's timeline are one fold: no event is planned
    twice (the closers a resume appends fold apart, on a copy), and the restored surface is the
    timeline's final surface."""
    from workbench.core import restore, timeline
    from workbench.core.load import evaluate_path
    planned: list[int] = []
    for module in (timeline, restore):
        original = module.plan_event

        def counting(state, event, seq, *args, _original=original, **kw):
            planned.append(seq)
            return _original(state, event, seq, *args, **kw)
        monkeypatch.setattr(module, "plan_event", counting)
    session = workbench.load(path)
    session.timeline_df()
    n = len(session)
    assert len([s for s in planned if s < n]) == len({s for s in planned if s < n}) < n
    report = evaluate_path(path)
    if not report.closers and hasattr(report.resume, "nodes"):
        assert report.resume.nodes == report.fold.finish().final_nodes == session.timeline.final_nodes

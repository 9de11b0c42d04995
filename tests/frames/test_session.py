"""The `Session` facade: `workbench.load`, lazy cached results, the notebook summary (escaped,
small), and `workbench export`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from frame_scripts import empty_session, script, session_of

import workbench
from workbench.build import LogBuilder
from workbench.cli.main import main
from workbench.frames.parquet import read_parquet
from workbench.frames.schema import FRAME_NAMES


def test_import_workbench_stays_light() -> None:
    code = ("import sys, workbench; heavy = [m for m in ('pandas', 'ipywidgets', 'plotly') "
            "if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {"load", "load_sessions", "Session", "__version__"} <= set(workbench.__all__)


def test_load_reads_a_file(tmp_path: Path) -> None:
    path = script(4).write(tmp_path / "session.v4.jsonl.zstd", compression="zstd")
    session = workbench.load(path)
    assert isinstance(session, workbench.Session)
    assert session.version == 4 and session.session_id == "session-frames"
    assert len(session.events_df()) == len(session)


def test_expensive_results_are_computed_once() -> None:
    session = session_of(script(4))
    assert session.timeline is session.timeline
    first = session.events_df()
    assert session._frames[("events",)] is not first   # callers get a copy
    session.timeline_df()
    session.surface_df()
    assert session.index is session.index


def test_repr_html_escapes_log_text() -> None:
    b = LogBuilder(version=4, session_id="<script>alert('id')</script>")
    with b.turn():
        with b.step():
            b.user("<img src=x onerror=alert(1)>")
            b.assistant("ok")
    b.compact(summary="</td><script>alert(2)</script>")
    html = session_of(b)._repr_html_()
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&#x27;id&#x27;)&lt;/script&gt;" in html
    assert len(html) < 2000
    assert "completed: 1" in html


def test_repr_html_of_an_empty_log() -> None:
    html = empty_session()._repr_html_()
    assert "<td style='text-align:left'>0</td>" in html and "none" in html


def test_summary_counts() -> None:
    info = session_of(script(4)).summary()
    assert info["turns"] == 2 and info["prunes"] == 1
    assert info["compactions"] == {"completed": 3, "failed": 1, "stale": 1}
    assert info["surface_nodes"] == len(session_of(script(4)).timeline.final_nodes)


def test_columns_doc() -> None:
    doc = workbench.Session.columns("tool_calls")
    assert "duration" in set(doc["column"])


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    return script(4).write(tmp_path / "in" / "session.v4.jsonl")


def test_export_writes_every_frame(log_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["export", str(log_file), "-o", str(out), "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.parquet" for n in FRAME_NAMES)
    assert len(read_parquet(out / "events.parquet")) == len(workbench.load(log_file))


def test_export_a_root_with_a_broken_log_reports_findings(tmp_path: Path) -> None:
    root = tmp_path / "root"
    script(4).write_to_root(root)
    bad = root / "--work-demo--" / "bad"
    bad.mkdir(parents=True)
    (bad / "session.v4.jsonl").write_text("not json\n")
    out = tmp_path / "out"
    code = main(["export", str(root), "-o", str(out), "--quiet", "--workers", "1"])
    assert code == 1                                  # a store of the root (frames.store)
    assert {"defects", "events", "sessions", "turns"} <= {p.name for p in out.iterdir()}
    assert len(read_parquet(out / "defects", "defects")) >= 1
    assert main(["export", str(root), "-o", str(out), "--quiet", "--frames", "events"]) == 2


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["missing.jsonl"], "no such file", id="missing"),
    pytest.param(["LOG", "--frames", "events,nope"], "unknown frame(s) nope", id="bad-frame"),
])
def test_export_unusable_input(args, message, log_file: Path, tmp_path: Path, capsys) -> None:
    args = [str(log_file) if a == "LOG" else str(tmp_path / a) if a.endswith(".jsonl") else a
            for a in args]
    assert main(["export", *args, "-o", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


def test_numpy_views_of_a_returned_frame_cannot_change_the_session() -> None:
    """Every Int64/boolean column (a NumPy data buffer behind it when it has no NA, often the
    session's own array: the index's seqs, the timeline's totals) hands out views that cannot
    be written: a caller's in-place edit never reaches later frames or the session."""
    session = session_of(script(4))
    names = (*FRAME_NAMES, "timeline")
    before = {name: getattr(session, f"{name}_df")().copy(deep=True) for name in names}
    seqs = session.index.seq.copy()
    touched = 0
    for name in names:
        df = getattr(session, f"{name}_df")()
        for column in df.columns:
            if str(df[column].dtype) not in ("Int64", "boolean") or df[column].isna().any():
                continue
            if not len(df):
                continue
            touched += 1
            view = df[column].to_numpy()
            with pytest.raises(ValueError, match="read-only"):
                view[:] = view[::-1] if view.dtype == bool else view + 1000
            with pytest.raises(ValueError, match="read-only"):
                df[column].array[0] = 0 if view.dtype != bool else not view[0]
    assert touched > 10
    for name in names:
        pd.testing.assert_frame_equal(getattr(session, f"{name}_df")(), before[name])
    assert (session.index.seq == seqs).all()
    df = session.events_df()
    df.loc[0, "seq"] = 99          # pandas writes into its own copy (copy-on-write)
    assert df["seq"].iloc[0] == 99 and session.events_df()["seq"].iloc[0] == 0


@pytest.mark.parametrize("call", [
    lambda s: workbench.load(None), lambda s: workbench.load(3),
    lambda s: workbench.load(None, follow=True),
    lambda s: s.surface_df(meters=None), lambda s: s.surface_df(meters=3),
    lambda s: s.surface_df(meters=""), lambda s: s.surface_df(meters=()),
    lambda s: s.surface_df(meters=["dsh", 3]), lambda s: s.timeline_df(meters=None),
    lambda s: s.timeline_df(meters=" , "), lambda s: s.frames(3), lambda s: s.to_parquet(None),
    lambda s: workbench.load_sessions(None), lambda s: workbench.load_sessions(3),
    lambda s: workbench.load_sessions([None]), lambda s: workbench.fleet(None),
    lambda s: s.lifeline(3),
], ids=["load-none", "load-int", "follow-none", "surface-none", "surface-int", "surface-empty",
        "surface-no-names", "surface-mixed", "timeline-none", "timeline-blank", "frames-int",
        "parquet-none", "sessions-none", "sessions-int", "sessions-item-none", "fleet-none",
        "lifeline-int"])
def test_wrong_arguments_are_refused_by_name(call) -> None:
    from workbench.errors import InvalidArgument
    with pytest.raises(InvalidArgument) as info:
        call(session_of(script(4)))
    assert str(info.value)


def test_one_frame_name_is_a_string(tmp_path: Path) -> None:
    session = session_of(script(4))
    assert list(session.frames("events")) == ["events"]
    written = session.to_parquet(tmp_path / "one", names="defects")
    assert [Path(p).name for p in written] == ["defects.parquet"]


def test_an_output_folder_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    from workbench.errors import OutputUnwritable
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OutputUnwritable, match=str(blocker)):
        session_of(script(4)).to_parquet(blocker / "out")


def test_frames_per_seq_are_kept_within_a_bound(monkeypatch) -> None:
    """A loop over every seq keeps at most `ARGUMENT_FRAMES` surface frames (the last made),
    and the frames without an argument stay cached; every frame is what a fresh call gives."""
    import workbench.session
    monkeypatch.setattr(workbench.session, "ARGUMENT_FRAMES", ARGUMENT_FRAMES := 8)
    session = session_of(script(4))
    events = session.events_df()
    surfaces = {seq: session.surface_df(seq) for seq in range(len(session))}
    surfaces.update({seq: session.surface_df(seq) for seq in range(len(session))})
    kept = [key for key in session._frames if key[0] == "surface"]
    assert len(session) > ARGUMENT_FRAMES and len(kept) == ARGUMENT_FRAMES
    assert [key[1] for key in kept] == list(range(len(session)))[-ARGUMENT_FRAMES:]
    assert ("events",) in session._frames
    pd.testing.assert_frame_equal(session.events_df(), events)
    for seq in (0, len(session) - 1):
        pd.testing.assert_frame_equal(session.surface_df(seq), surfaces[seq])

"""`load_sessions`: many sessions into one set of frames, keyed by session; broken logs are
reported in `defects` and `sessions`, never dropped; Parquet and Dask give the same frames."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from frame_scripts import script

from workbench.build import LogBuilder
from workbench.errors import LogUnreadable
from workbench.frames.many import load_sessions, session_frames, session_keys
from workbench.frames.parquet import read_parquet
from workbench.frames.schema import FRAME_NAMES
from workbench.session import load


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A DSH session root: a v4 parent, its fork child, a v0 session, and two broken logs."""
    root = tmp_path_factory.mktemp("sessions")
    parent = script(4)
    child = parent.fork("session-child")
    with child.turn():
        with child.step():
            child.user("forked work")
            child.assistant("done")
    parent.write_to_root(root)
    child.write_to_root(root, compression="none")
    old = LogBuilder(version=0, session_id="legacy-1")
    with old.turn():
        with old.step():
            old.user("hello")
            old.assistant("hi")
    old.write_to_root(root, compression="none")
    broken = root / "--work-demo--" / "broken-1"
    broken.mkdir(parents=True)
    (broken / "session.v4.jsonl").write_bytes(b"this is not a session log\n")
    torn = root / "--work-demo--" / "torn-1"
    torn.mkdir(parents=True)
    good = old.events[0]
    header = (b'{"type":"session","version":0,"id":"torn-1","createdAt":0,'
              b'"cwd":"/work/demo","delegationDepth":0}\n')
    import json
    line = json.dumps({**good, "seq": 0}).encode()
    (torn / "session.jsonl").write_bytes(header + line + b"\n" + b'{"type":"turn/st')
    return root


@pytest.fixture(scope="module")
def frames(root):
    return load_sessions(root, workers=1, progress=False)


def test_every_session_has_a_row(frames) -> None:
    sessions = frames.sessions
    assert sorted(sessions["session_id"].dropna()) == sorted(
        ["session-frames", "session-child", "legacy-1", "torn-1"])
    assert len(sessions) == 5
    assert sessions["session"].is_unique
    broken = sessions[sessions["path"].str.contains("broken-1")]
    assert broken["verdict"].astype(str).tolist() in (["corrupt"], ["unreadable"])
    child = sessions.set_index("session_id").loc["session-child"]
    assert child["parent_session"] == "session-frames"


def test_broken_logs_are_in_defects(frames) -> None:
    defects = frames.defects
    paths = set(defects["file"])
    assert any("broken-1" in p for p in paths)
    assert any("torn-1" in p for p in paths)
    torn = frames.sessions[frames.sessions["session_id"] == "torn-1"]
    assert torn["verdict"].astype(str).tolist() == ["repairable"]
    assert torn["events"].tolist() == [1]


def test_frames_are_the_per_session_frames_with_a_key(frames) -> None:
    sessions = frames.sessions.set_index("session_id")
    for sid in ("session-frames", "session-child", "legacy-1"):
        path = sessions.loc[sid, "path"]
        key = sessions.loc[sid, "session"]
        single = load(path)
        for name in FRAME_NAMES:
            if name == "defects":
                continue
            got = frames[name]
            got = got[got["session"] == key].drop(columns="session").reset_index(drop=True)
            want = getattr(single, f"{name}_df")()
            pd.testing.assert_frame_equal(got, want, check_categorical=False, obj=f"{sid}:{name}")


def test_every_frame_has_the_session_key_first(frames) -> None:
    for name in frames.keys():
        df = frames[name]
        assert df.columns[0] == "session", name
        assert isinstance(df["session"].dtype, pd.CategoricalDtype)
        assert list(df["session"].dtype.categories) == frames.sessions["session"].tolist()


def test_parallel_equals_serial(root, frames) -> None:
    parallel = load_sessions(root, workers=2, progress=False)
    for name in frames.keys():
        a, b = frames[name], parallel[name]
        if name == "sessions":
            a, b = a.drop(columns="seconds"), b.drop(columns="seconds")
        pd.testing.assert_frame_equal(a, b, obj=name)


def test_parquet_round_trip(frames, tmp_path: Path) -> None:
    written = frames.to_parquet(tmp_path)
    assert sorted(Path(p).name for p in written) == sorted(f"{n}.parquet" for n in frames.keys())
    for name in frames.keys():
        back = read_parquet(tmp_path / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, frames[name], obj=name)
        assert len(pd.read_parquet(tmp_path / f"{name}.parquet")) == len(frames[name])


def test_dask_distributed_gives_the_same_frames(root, frames, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        got = load_sessions(root, engine="dask", client=client, progress=False)
        pids = client.run(lambda: __import__("os").getpid())
    assert len(set(pids.values())) == 2 and __import__("os").getpid() not in pids.values()
    assert list(got.keys()) == list(frames.keys())
    for name in frames.keys():
        a, b = frames[name], got[name]
        if name == "sessions":
            a, b = a.drop(columns="seconds"), b.drop(columns="seconds")
        pd.testing.assert_frame_equal(b, a, obj=name)


def test_a_subset_of_frames(root) -> None:
    result = load_sessions(root, frames=["turns"], workers=1, progress=False)
    assert sorted(result.keys()) == ["defects", "sessions", "turns"]
    with pytest.raises(KeyError, match="unknown frame"):
        load_sessions(root, frames=["turn"], workers=1, progress=False)


def test_a_root_without_sessions_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(LogUnreadable, match="no DSH session logs found"):
        load_sessions(tmp_path, workers=1, progress=False)


@pytest.mark.parametrize(("ids", "paths", "keys"), [
    pytest.param(["a", "b"], ["x/1", "x/2"], ["a", "b"], id="unique"),
    pytest.param(["a", "a", None], ["x/1", "y/1", "z/s.jsonl"], ["a#1", "a#2", "s.jsonl"],
                 id="repeated-and-missing"),
    pytest.param(["X", "X", "X#1"], ["a", "b", "c"], ["X#2", "X#3", "X#1"], id="suffix-taken"),
    pytest.param(["a\ud800", "a\udc00", "a\ufffd"], ["a", "b", "c"],
                 ["a\ufffd#1", "a\ufffd#2", "a\ufffd#3"], id="same-text"),
])
def test_session_keys(ids, paths, keys) -> None:
    assert session_keys(ids, paths) == keys


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["X", "X#1", "X#2", "Y", "\ud800", "\ufffd", "", None]),
                max_size=8))
def test_session_keys_are_unique(ids: list) -> None:
    """Whatever the ids, the keys are unique (a repeat's ``#n`` never takes another key)."""
    keys = session_keys(ids, [f"p{i}" for i in range(len(ids))])
    assert len(set(keys)) == len(keys)


def test_keys_of_odd_ids_are_valid_text() -> None:
    assert session_keys(["a\ud800"], ["x"]) == ["a\ufffd"]


def test_format_version_is_the_logs_as_info_reports_it(tmp_path: Path, capsys) -> None:
    """The sessions frame's (and so the store manifest's) format_version is the log's header
    version, as `workbench info --json` reports it: a refused v2 log is 2 and an empty file
    named v3 has none (both were 0, the rule set's version)."""
    import json
    import shutil

    from workbench.cli.main import main
    b = LogBuilder(version=4, session_id="four")
    with b.turn():
        with b.step():
            b.user("hi")
            b.assistant("hello")
    four = b.write(tmp_path / "four.jsonl")
    lines = four.read_text().splitlines()
    header = {**json.loads(lines[0]), "version": 2}
    (tmp_path / "refused.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    (tmp_path / "empty__session.v3.jsonl").write_bytes(b"")
    v3 = Path("../shared/corpus/dsh-0.1.5-v3/dev-subagent-parent__session.v3.jsonl")
    if v3.exists():
        shutil.copy(v3, tmp_path / v3.name)
    want = {"four.jsonl": 4, "refused.jsonl": 2, "empty__session.v3.jsonl": None, v3.name: 3}
    for path in sorted(tmp_path.iterdir()):
        capsys.readouterr()
        main(["info", "--json", str(path)])
        reported = json.loads(capsys.readouterr().out.splitlines()[0])["format_version"]
        got = session_frames(path, ["events"]).summary["format_version"]
        assert got == reported == want[path.name], path.name
    sessions = load_sessions(tmp_path, workers=1, progress=False).sessions
    assert {Path(p).name: v for p, v in zip(sessions["path"], sessions["format_version"],
                                            strict=True)}["refused.jsonl"] == 2

"""The incremental session store: an export over a root that changed (appended, added,
deleted, corrupted logs) or an export interrupted midway and run again gives exactly the store
a fresh export gives; the store reads in pandas and equals `load_sessions`; its guards."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from store_helpers import (
    append_turns,
    contents,
    dying_writer,
    fresh_contents,
    make_root,
)

from workbench.errors import LogUnreadable, StoreUnusable
from workbench.frames import store as store_module
from workbench.frames.many import load_sessions
from workbench.frames.parquet import read_parquet
from workbench.frames.store import (
    BUCKETS,
    STORE_FRAMES,
    bucket_of,
    bucket_path,
    export_store,
    log_id,
    read_manifests,
)

WORKBENCH = str(Path(sys.executable).parent / "workbench")


def test_incremental_export_equals_a_fresh_one(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    paths = make_root(root, 8)
    first = export_store(root, store, workers=1, progress=False)
    assert (first.sessions, first.exported, first.unchanged) == (8, 8, 0)
    assert contents(store) == fresh_contents(root, tmp_path)

    again = export_store(root, store, workers=1, progress=False)
    assert (again.exported, again.unchanged, again.dropped) == (0, 8, 0)

    append_turns(paths[0], 0, 4, 2)                                   # grew
    make_root(tmp_path / "more", 9)                                   # one added
    extra = next((tmp_path / "more").rglob("*store-008*"), None)
    assert extra is not None
    target = root / extra.relative_to(tmp_path / "more")
    shutil.copytree(extra, target)
    shutil.rmtree(paths[2].parent)                                    # one deleted
    raw = paths[4].read_bytes()                                       # one corrupted
    cut = len(raw) // 2
    paths[4].write_bytes(raw[:cut] + b"\x00{not json\n" + raw[cut:])
    after = export_store(root, store, workers=1, progress=False)
    assert (after.exported, after.unchanged, after.dropped) == (3, 5, 1)
    assert after.sessions == 8
    assert contents(store) == fresh_contents(root, tmp_path)
    verdicts = {m["session"]: m["verdict"] for m in read_manifests(store).values()}
    assert verdicts[paths[4].relative_to(root).as_posix()] == "corrupt"
    assert paths[2].relative_to(root).as_posix() not in verdicts
    assert after.findings and after.defects > 0


@pytest.mark.parametrize("dies_at", [3, 40], ids=["staging", "commit"])
def test_an_interrupted_export_rerun_equals_a_fresh_one(tmp_path: Path, monkeypatch,
                                                        dies_at: int) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    paths = make_root(root, 6)
    export_store(root, store, workers=1, progress=False)
    append_turns(paths[0], 0, 4, 1)
    append_turns(paths[5], 5, 6, 1)
    real = pq.write_table
    calls = []
    monkeypatch.setattr(pq, "write_table", dying_writer(real, dies_at, calls))
    with pytest.raises(KeyboardInterrupt):
        export_store(root, store, workers=1, progress=False)
    monkeypatch.setattr(pq, "write_table", real)
    if dies_at == 40:      # the two changed logs were staged, some buckets already replaced
        assert any(c.startswith("bucket-") for c in calls[:-1])
    seen = contents(store)
    assert not any(Path(f).name.endswith(".tmp") and not Path(f).name.startswith(".")
                   for f in seen["files"])
    changed = {log_id(paths[i].relative_to(root).as_posix()) for i in (0, 5)}
    assert set(read_manifests(store)).isdisjoint(changed)   # the changed logs: no manifest
    assert len(read_manifests(store)) == 4
    export_store(root, store, workers=1, progress=False)
    assert contents(store) == fresh_contents(root, tmp_path)


def test_a_bucket_lost_or_left_over_is_repaired_by_the_next_run(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    paths = make_root(root, 6)
    export_store(root, store, workers=1, progress=False)
    assert 1 < len(list((store / "events").glob("bucket-*.parquet"))) <= BUCKETS
    kept = log_id(paths[0].relative_to(root).as_posix())
    bucket_path(store, "events", bucket_of(kept)).unlink()    # a kept log's rows are gone
    (store / "events" / "log=0123").mkdir()                   # a stray of another layout
    shutil.rmtree(paths[1].parent)                            # a log deleted ...
    ident = log_id(paths[1].relative_to(root).as_posix())
    (store / "_manifest" / f"{ident}.json").unlink()          # ... after a killed run
    again = export_store(root, store, workers=1, progress=False)
    assert again.exported >= 1 and again.sessions == 5
    assert contents(store) == fresh_contents(root, tmp_path)


def test_an_export_killed_midway_and_rerun_equals_a_fresh_one(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    make_root(root, 40, turns=6)
    cmd = [WORKBENCH, "export", str(root), "-o", str(store),
           "--workers", "1", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stage = store / ".tmp" / "stage"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if stage.is_dir() and len(list(stage.iterdir())) >= 5:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    proc.wait()
    done = len(list((store / "_manifest").glob("*.json")))
    assert proc.returncode == -signal.SIGKILL and done < 40, done
    assert not [p for p in store.rglob("*.parquet") if p.name.endswith(".tmp")]
    rerun = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert rerun.returncode == 0, rerun.stderr
    assert contents(store) == fresh_contents(root, tmp_path)


def test_commits_during_an_export_give_the_store_of_one_commit(tmp_path: Path,
                                                                monkeypatch) -> None:
    root = tmp_path / "root"
    make_root(root, 7)
    monkeypatch.setattr(store_module, "COMMIT_SECONDS", 0.0)     # a commit after every log
    monkeypatch.setattr(store_module, "COMMIT_SHARE", float("inf"))
    summary = export_store(root, tmp_path / "store", workers=1, progress=False)
    monkeypatch.undo()
    assert summary.commits == 7 + 1                              # and the final one
    assert contents(tmp_path / "store") == fresh_contents(root, tmp_path)


def test_the_store_reads_in_pandas_as_load_sessions(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    make_root(root, 5)
    export_store(root, store, workers=1, progress=False)
    want = load_sessions(root, workers=1, progress=False)
    key_of = dict(zip(want.sessions["path"], want.sessions["session"].astype(str), strict=True))
    order = {k: i for i, k in enumerate(want.sessions["session"].astype(str))}
    for name in STORE_FRAMES:
        expected = want[name].drop(columns=[c for c in ("seconds",) if c in want[name]])
        expected = expected.assign(session=expected["session"].astype(str))
        if not (store / name).is_dir():
            assert len(expected) == 0, name
            continue
        assert len(pd.read_parquet(store / name)) == len(expected)   # plain pandas
        got = read_parquet(store / name, name)      # with the declared dtypes
        assert (got.groupby("session")["log"].nunique() == 1).all()
        got = got.drop(columns="log").assign(
            session=[key_of[str(root / k)] for k in got["session"]])
        got = got.iloc[got["session"].map(order).argsort(kind="stable")].reset_index(drop=True)
        assert list(got.columns) == list(expected.columns), name
        pd.testing.assert_frame_equal(got, expected.reset_index(drop=True),
                                      check_categorical=False, obj=name)


def test_the_store_reads_in_polars_as_in_pandas(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    root, store = tmp_path / "root", tmp_path / "store"
    make_root(root, 5)
    export_store(root, store, workers=1, progress=False)
    for name in ("events", "compactions", "requests", "sessions", "defects"):
        if not (store / name).is_dir():
            continue
        want = read_parquet(store / name, name)
        got = pl.read_parquet(store / name / "*.parquet")
        assert got.columns == list(want.columns), name
        assert got.height == len(want), name
        assert got["session"].to_list() == want["session"].astype(str).tolist(), name
        if "seq" in want:
            assert got["seq"].to_list() == want["seq"].astype("Int64").tolist(), name


def test_the_store_refuses_foreign_directories_and_empty_roots(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_root(root, 1)
    busy = tmp_path / "notes"
    busy.mkdir()
    (busy / "thesis.txt").write_text("keep me")
    with pytest.raises(StoreUnusable, match="not a workbench store"):
        export_store(root, busy, workers=1, progress=False)
    assert (busy / "thesis.txt").read_text() == "keep me"
    (tmp_path / "empty").mkdir()
    with pytest.raises(LogUnreadable, match="no DSH session logs"):
        export_store(tmp_path / "empty", tmp_path / "store", workers=1, progress=False)


def test_partition_ids_are_stable_and_path_safe() -> None:
    assert log_id("--p--/a/session.v4.jsonl") == log_id("--p--/a/session.v4.jsonl")
    assert log_id("a") != log_id("b")
    assert all(c in "0123456789abcdef" for c in log_id("ü/\n/x"))


def test_cli_json_summary_and_exit_codes(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    make_root(root, 3)
    cmd = [WORKBENCH, "export", str(root), "-o", str(store),
           "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["sessions"], summary["exported"], summary["defects"]) == (3, 3, 0)
    broken = root / "--x--" / "broken"
    broken.mkdir(parents=True)
    (broken / "session.v4.jsonl").write_bytes(b'{"type":"session","version":4,"id":"b",'
                                              b'"createdAt":0}\n{oops\n')
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["exported"] == 1
    foreign = subprocess.run([*cmd[:-3], "-o", str(root), "--json"], capture_output=True,
                             text=True, check=False)
    # a usage error: the usage line, then one error line (workbench.cli.common)
    assert foreign.returncode == 2
    assert foreign.stderr.strip().splitlines()[-1].startswith("workbench export: error: ")
    assert "Traceback" not in foreign.stderr


def test_export_on_dask_distributed_equals_in_process(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster
    root = tmp_path / "root"
    paths = make_root(root, 5)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        summary = export_store(root, tmp_path / "dask", engine="dask", client=client,
                               progress=False)
        assert summary.exported == 5
        append_turns(paths[0], 0, 4, 1)
        again = export_store(root, tmp_path / "dask", engine="dask", client=client,
                             progress=False)
        assert (again.exported, again.unchanged) == (1, 4)
        workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2
    assert contents(tmp_path / "dask") == fresh_contents(root, tmp_path)

"""SQL over a store with the embedded DuckDB: one view per frame (also for frames without a
row), results equal to the frames, every ready query runs; DuckDB reads the Parquet in place."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from store_helpers import make_root

import workbench
from workbench.errors import StoreUnusable
from workbench.frames.fleet import READY
from workbench.frames.many import load_sessions
from workbench.frames.store import STORE_FRAMES, export_store


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fleet")
    root = tmp / "root"
    make_root(root, 6)
    export_store(root, tmp / "store", workers=1, progress=False)
    return root, tmp / "store", load_sessions(root, workers=1, progress=False)


def test_one_view_per_frame_with_the_rows_of_the_frames(stored) -> None:
    _, store, frames = stored
    with workbench.fleet(store) as fleet:
        assert fleet.frames == list(STORE_FRAMES)
        for name in STORE_FRAMES:
            n = fleet.sql(f'SELECT count(*) AS n FROM "{name}"')["n"][0]
            assert n == len(frames[name]), name
            cols = fleet.sql(f'SELECT * FROM "{name}" LIMIT 0').columns.tolist()
            assert cols[0] == "session" and cols[-1] == "log"
        assert len(fleet.sql("SELECT * FROM manifest")) == 6
        got = fleet.sql("SELECT status, count(*) AS n FROM compactions GROUP BY status")
        want = frames.compactions["status"].astype(str).value_counts()
        assert dict(zip(got["status"], got["n"], strict=True)) == want.to_dict()


def test_a_frame_without_rows_is_still_a_view(stored) -> None:
    _, store, frames = stored
    assert len(frames.prunes) == 0
    with workbench.fleet(store) as fleet:
        empty = fleet.sql("SELECT * FROM prunes")
        assert len(empty) == 0 and "saved_tokens" in empty.columns


def test_every_ready_query_runs_and_agrees_with_the_frames(stored) -> None:
    _, store, frames = stored
    with workbench.fleet(store) as fleet:
        for name in READY:
            if name == "anchor_recall_by_kind" and "anchors" not in fleet.frames:
                with pytest.raises(KeyError, match="no 'anchors' frame"):
                    fleet.ready(name)
                continue
            assert isinstance(fleet.ready(name), pd.DataFrame)
        by_size = fleet.sessions_by_size()
        assert by_size["events"].tolist() == sorted(frames.sessions["events"], reverse=True)
        triggers = fleet.compactions_by_trigger()
        assert triggers["compactions"].sum() == len(frames.compactions)
        savings = fleet.savings_by_meter()
        if "ledger" in fleet.frames:
            ledger = frames.ledger
            want = ledger.groupby("meter", observed=True)["net_tokens"].sum()
            assert dict(zip(savings["meter"], savings["net_tokens"], strict=True)) == {
                str(k): v for k, v in want.items()}
        else:
            savings = savings.set_index("what")
            done = frames.compactions[frames.compactions["status"] == "completed"]
            assert savings.loc["compaction", "shadowed_tokens"] == done[
                "shadowed_tokens"].sum()
        if "anchors" in fleet.frames:
            recall = fleet.anchor_recall_by_kind().set_index("kind")
            first = frames.anchors[frames.anchors["level"] == 1]
            kept = first[first["status"] == "kept"].groupby("kind", observed=True).size()
            assert {k: recall.loc[k, "kept"] for k in kept.index} == kept.to_dict()
        failures = fleet.failures()
        failing = frames.requests["failure_code"].notna().sum()
        assert (failures["what"] == "request").sum() == failing


def test_fleet_needs_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreUnusable, match="not a workbench store"):
        workbench.fleet(tmp_path)


@pytest.mark.parametrize("name", ["store?", "st[o]re", "s*", "b\\ack", "x]y"])
def test_a_store_path_with_glob_characters_reads_its_own_files_only(tmp_path: Path,
                                                                    name: str) -> None:
    """DuckDB reads a path as a glob: a store named ``store?`` beside ``store1`` (or ``s*``
    beside ``sX``) read the neighbour's rows too; ``st[o]re`` or a backslash found no files."""
    make_root(tmp_path / "many", 3)
    make_root(tmp_path / "one", 1)
    export_store(tmp_path / "many", tmp_path / "store1", workers=1, progress=False)
    export_store(tmp_path / "many", tmp_path / "sX", workers=1, progress=False)
    parent = tmp_path / name / "in"         # a glob character in a parent folder too
    for store in (tmp_path / name, parent):
        export_store(tmp_path / "one", store, workers=1, progress=False)
        with workbench.fleet(store) as fleet:
            for view in fleet.frames:
                got = fleet.sql(f'SELECT count(DISTINCT log) AS n FROM "{view}"')["n"][0]
                assert got <= 1, (store, view)
            assert fleet.sql("SELECT count(*) AS n FROM sessions")["n"][0] == 1
            assert len(fleet.manifest()) == 1


def test_a_store_path_duckdb_cannot_name_is_refused(tmp_path: Path) -> None:
    make_root(tmp_path / "one", 1)
    store = tmp_path / "a\\b?"
    export_store(tmp_path / "one", store, workers=1, progress=False)
    with pytest.raises(StoreUnusable, match="backslash and a glob character"):
        workbench.fleet(store)


def test_ready_queries_count_logs_by_their_key_not_their_path_text(tmp_path: Path) -> None:
    """``session`` is path text (not one-to-one): a log named with the byte 0xFF and one named
    with the four characters ``\\xff`` share it, and were counted as one session (and their
    compactions as one) by the ready queries; the same two logs under plain names are two."""
    from store_helpers import session
    log = session(1, 6)
    odd, plain = tmp_path / "odd", tmp_path / "plain"
    for folder, names in ((odd, [os.fsdecode(b"a\xff.jsonl"), "a\\xff.jsonl"]),
                          (plain, ["a.jsonl", "b.jsonl"])):
        folder.mkdir()
        for name in names:
            log.write(folder / name)
        export_store(folder, tmp_path / f"{folder.name}-store", workers=1, progress=False)
    with workbench.fleet(tmp_path / "odd-store") as a, workbench.fleet(
            tmp_path / "plain-store") as b:
        assert a.sql("SELECT count(DISTINCT session) AS n FROM sessions")["n"][0] == 1
        for name in ("compactions_by_trigger", "savings_by_meter"):
            pd.testing.assert_frame_equal(a.ready(name), b.ready(name))
        assert b.compactions_by_trigger()["sessions"].max() == 2

"""SQL over a store with the embedded DuckDB: one view per frame (also for frames without a
row), results equal to the frames, every ready query runs; DuckDB reads the Parquet in place."""
from __future__ import annotations

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

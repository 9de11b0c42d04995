"""A store whose own files were damaged (a manifest of the wrong shape, row counts that
disagree with the buckets, a garbage marker or schema file) repairs itself on the next export:
the result equals a fresh export, and a reader (`workbench.fleet`) never fails meanwhile."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import contents, fresh_contents, make_root

import workbench
from workbench.errors import StoreUnusable
from workbench.frames.manifests import manifest_problem, read_manifests
from workbench.frames.store import STORE_FRAMES, export_store, log_id

WORKBENCH = str(Path(sys.executable).parent / "workbench")


def _whole(value):
    return lambda m: value


def _field(key, value):
    return lambda m: {**m, key: value}


DAMAGE = {
    "list": _whole([1]), "string": _whole("x"), "null": _whole(None),
    "rows-a-list": _whole({"rows": [1]}), "events-text": _field("events", "x"),
    "size-bool": _field("size", True), "extra-key": _field("extra", 1),
    "rows-zero": lambda m: {**m, "rows": dict.fromkeys(m["rows"], 0)},
    "rows-text": lambda m: {**m, "rows": {k: str(v) for k, v in m["rows"].items()}},
    "rows-missing-frame": lambda m: {**m, "rows": {"events": m["rows"]["events"]}},
    "other-log": _field("log", "0" * 16),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_manifest_of_the_wrong_shape_is_exported_again(tmp_path: Path, damage: str) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    paths = make_root(root, 3)
    export_store(root, store, workers=1, progress=False)
    manifest = store / "_manifest" / f"{log_id(paths[0].relative_to(root).as_posix())}.json"
    value = DAMAGE[damage](json.loads(manifest.read_text()))
    manifest.write_text(json.dumps(value))
    shaped = manifest_problem(value, manifest.stem) is None   # rows-zero: a manifest, but wrong
    assert shaped == (damage == "rows-zero")
    with workbench.fleet(store) as fleet:                     # one of another shape is skipped
        assert len(fleet.manifest()) == 2 + shaped
    run = subprocess.run([WORKBENCH, "export", str(root), "-o", str(store), "--json"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["exported"] == 1
    assert contents(store) == fresh_contents(root, tmp_path)


def test_an_unreadable_manifest_of_a_deleted_log_is_removed(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    paths = make_root(root, 3)
    export_store(root, store, workers=1, progress=False)
    manifest = store / "_manifest" / f"{log_id(paths[0].relative_to(root).as_posix())}.json"
    manifest.write_text("[1]")
    shutil.rmtree(paths[0].parent)
    (store / "_manifest" / "stray.json").mkdir()
    export_store(root, store, workers=1, progress=False)
    assert contents(store) == fresh_contents(root, tmp_path)


@pytest.mark.parametrize("target", ["_workbench_store.json", "_schema/events.parquet",
                                    "_schema/prunes.parquet"])
def test_a_damaged_marker_or_schema_file_is_written_again(tmp_path: Path, target: str) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    make_root(root, 3)
    export_store(root, store, workers=1, progress=False)
    (store / target).write_text("garbage")
    if target.endswith("prunes.parquet"):                     # a frame without rows: the view
        with pytest.raises(StoreUnusable, match=r"'prunes' is unreadable.*prunes\.parquet"):
            workbench.fleet(store)
    run = subprocess.run([WORKBENCH, "export", str(root), "-o", str(store), "--quiet"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert contents(store) == fresh_contents(root, tmp_path)
    workbench.fleet(store).close()


def test_what_an_export_writes_is_a_manifest(tmp_path: Path) -> None:
    make_root(tmp_path / "root", 4)
    export_store(tmp_path / "root", tmp_path / "store", workers=1, progress=False)
    files = sorted((tmp_path / "store" / "_manifest").glob("*.json"))
    assert len(read_manifests(tmp_path / "store")) == len(files) == 4
    for path in files:
        value = json.loads(path.read_text())
        assert manifest_problem(value, path.stem) is None
        assert set(value["rows"]) == set(STORE_FRAMES)

"""Roots of logs written with `workbench.build`, and a whole-store comparison, for the store,
fleet and pool tests (also imported by spawned workers and script subprocesses)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from workbench.build import LogBuilder


def session(i: int, turns: int, *, version: int = 4) -> LogBuilder:
    """Session `i` with `turns` turns of tool work and a compaction every third turn; the
    same `i` with more turns writes the same bytes plus an appended tail."""
    b = LogBuilder(version=version, session_id=f"store-{i:03d}", seed=i,
                   created_at=1_790_000_000_000 + i * 1000)
    for t in range(turns):
        with b.turn():
            with b.step():
                if t == 0:
                    b.system("You are a coding agent.")
                b.user(f"Session {i}, turn {t}: read file {t}.")
                a = b.assistant(f"Reading {t}.", tool_calls=[("read", {"path": f"f{t}.py"})])
                b.tool_result(a.call_ids[0], text=f"contents of f{t}.py\n" * (20 + 3 * t),
                              is_error=(i + t) % 7 == 0)
            with b.step():
                b.assistant(f"Done {t}.")
        if t % 3 == 2 and len(b.surface) > 8:
            nodes = b.surface
            b.compact(nodes[1 if version >= 4 else 0], nodes[4],
                      summary=f"Turns up to {t} of session {i}.")
    return b


def make_root(root: Path, n: int, *, turns: int = 4) -> dict[int, Path]:
    """`n` sessions (every fourth v0, every third zstd) under a DSH root; returns paths."""
    paths = {}
    for i in range(n):
        b = session(i, turns + i % 3, version=0 if i % 4 == 3 else 4)
        paths[i] = b.write_to_root(root, compression="zstd" if i % 3 == 1 else "none")
    return paths


def append_turns(path: Path, i: int, turns: int, more: int, *, version: int = 4) -> None:
    """Append the events of `more` further turns to the raw log of session `i` (in place)."""
    longer = session(i, turns + more, version=version).write(path.with_suffix(".longer"))
    data, old = longer.read_bytes(), path.read_bytes()
    longer.unlink()
    assert data.startswith(old)
    with open(path, "ab") as fh:
        fh.write(data[len(old):])


def fresh_contents(root: Path, tmp: Path) -> dict:
    """`contents` of a fresh export of `root` (into ``tmp/fresh``, emptied first)."""
    from workbench.frames.store import export_store
    store = tmp / "fresh"
    shutil.rmtree(store, ignore_errors=True)
    export_store(root, store, workers=1, progress=False)
    return contents(store)


def contents(store: Path) -> dict:
    """Everything a reader sees in a store: every visible file's rows by frame and log, the
    manifests (without the wall time), and the names of all files (no stray temporaries)."""
    out: dict = {"files": sorted(str(p.relative_to(store)) for p in store.rglob("*")
                                 if p.is_file() and p.name != ".lock")}
    for frame_dir in sorted(p for p in store.iterdir() if p.is_dir()
                            and not p.name.startswith(("_", "."))):
        for part in sorted(frame_dir.glob("*.parquet")):
            out[f"{frame_dir.name}/{part.name}"] = pq.read_table(part).to_pydict()
    for m in sorted((store / "_manifest").glob("*.json")):
        value = json.loads(m.read_text())
        value.pop("seconds")
        out[f"manifest/{m.name}"] = value
    return out


def dying_writer(real, n: int, calls: list | None = None):
    """`real` (pyarrow.parquet.write_table), except that the n-th call writes its file and
    then dies, before the export can rename it into place (a simulated kill); the target of
    every call's file name is appended to `calls`."""
    calls = [] if calls is None else calls

    def write(table, where, *args, **kwargs):
        calls.append(os.path.basename(str(where)))
        real(table, where, *args, **kwargs)
        if len(calls) == n:
            raise KeyboardInterrupt
    return write


def die_in_child(path: str, *rest):
    """A per-session function whose worker process dies (the pool breaks)."""
    import multiprocessing
    if multiprocessing.parent_process() is not None:
        os._exit(3)
    from workbench.frames.many import session_frames
    return session_frames(path, *rest)

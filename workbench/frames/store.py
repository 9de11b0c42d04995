"""An incremental Parquet store of many sessions' frames. Layer: frames (pandas, pyarrow).

`export_store(root, store)` writes every frame of every session under `root` (the frames of
`workbench.frames.schema.FRAME_NAMES`, ``defects`` and ``sessions``: a frame registered there is
exported with nothing to change here), one Hive-style partition per session and frame::

    STORE/_workbench_store.json           marks the directory as a store (format, frames)
    STORE/_manifest/<log>.json            one per source log: what was read, and the verdict
    STORE/_schema/<frame>.parquet         an empty file with the frame's Arrow schema
    STORE/<frame>/log=<log>/part-0.parquet

``<log>`` is a hash of the log's path relative to the root; each row starts with ``session``,
that relative path (stable across runs, unlike session ids, which v0 fixtures repeat). A frame
with no rows for a session has no file. Every file of a frame has the same Arrow schema
(`store_schema`), so pandas (``pd.read_parquet(STORE/"events")``), Polars, Spark and DuckDB
(`workbench.frames.fleet`) read a frame directory as one table, with ``log`` as the partition
column. The ``sessions`` frame is `load_sessions`' without its wall-time column (which is in
the manifest), so the store depends only on the logs.

Incremental: a log whose size, mtime, store format and frame schemas match its manifest is
skipped; any other log is exported again; a log gone from the root is dropped (manifest first,
then its partitions). The manifest's size, mtime and hash are taken before the log is read, so a
log that grows while it is being read is exported again by the next run. Crash safety: every file is written under ``STORE/.tmp/`` and renamed into
place, so no reader ever sees half a file; a log's old manifest is removed before its
partitions change and the new one is written last, so a log interrupted midway has no manifest
and the next run exports it again. Leftover temporary files and orphan partitions are removed
at the start of a run. One export at a time per store (an advisory lock).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import LogUnreadable, StoreUnusable
from workbench.frames.columns import frame
from workbench.frames.parquet import as_table, frame_schema
from workbench.frames.schema import FRAME_NAMES, SCHEMAS, SessionColumns

STORE_FORMAT = 1
"""Layout version of the store; a manifest of another version is exported again."""
MARKER, MANIFESTS, SCHEMA_DIR, TMP = "_workbench_store.json", "_manifest", "_schema", ".tmp"
PART = "part-0.parquet"
PARTITION = "log"
STORE_FRAMES: tuple[str, ...] = (*FRAME_NAMES, "sessions")
"""Frames of a store: every registered frame (``defects`` included) and ``sessions``."""
_SESSION_COLUMNS = tuple(c for c in SessionColumns if c.name != "seconds")


def _columns(name: str) -> Sequence[Any]:
    return _SESSION_COLUMNS if name == "sessions" else SCHEMAS[name]


def store_schema(name: str) -> pa.Schema:
    """The Arrow schema of every file of frame `name`: ``session`` then the frame's declared
    columns (`workbench.frames.parquet.frame_schema`)."""
    return frame_schema(_columns(name), session=True)


def schema_fingerprint(names: Sequence[str] = STORE_FRAMES) -> str:
    """One hash of the frames' names and schemas: a change re-exports every log."""
    text = "\n".join(f"{n}: {store_schema(n).remove_metadata()}" for n in names)
    return hashlib.blake2b(f"{STORE_FORMAT}\n{text}".encode(), digest_size=16).hexdigest()


def log_id(key: str) -> str:
    """The partition id of the log whose store key (relative path) is `key`."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _atomic_write(base: Path, path: Path, write) -> None:
    """`write(tmp)` a file under ``base/.tmp/``, then rename it to `path` (same filesystem)."""
    tmp = base / TMP / f"{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    tmp.parent.mkdir(exist_ok=True)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _write_json(base: Path, path: Path, value: dict) -> None:
    _atomic_write(base, path,
                  lambda tmp: tmp.write_text(json.dumps(value, sort_keys=True, indent=1)))


def _table(df: pd.DataFrame, key: str, schema: pa.Schema) -> pa.Table:
    out = df.copy(deep=False)
    out.insert(0, "session", pd.array([key] * len(df), dtype="string"))
    return as_table(out, schema)


def _file_facts(path: str) -> tuple[int, int, str]:
    """(size, mtime_ns, blake2b of those bytes) of the log, read in bounded chunks."""
    st = os.stat(path)
    digest = hashlib.blake2b(digest_size=16)
    left = st.st_size
    with open(path, "rb") as fh:
        while left > 0:
            chunk = fh.read(min(left, 1 << 22))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
    return st.st_size, st.st_mtime_ns, digest.hexdigest()


def export_log(path: str, store: str, key: str, fingerprint: str) -> dict[str, Any]:
    """Export one log into `store` (runs in a worker; module doc for the write order) and
    return its manifest."""
    from workbench.frames.many import DEFAULT_FRAMES, session_frames
    base, ident = Path(store), log_id(key)
    (base / MANIFESTS / f"{ident}.json").unlink(missing_ok=True)
    size, mtime_ns, digest = _file_facts(path)
    result = session_frames(path, DEFAULT_FRAMES)
    summary = result.summary
    frames = {**result.frames, "defects": result.defects,
              "sessions": frame(_SESSION_COLUMNS, {c.name: [summary.get(c.name)]
                                                   for c in _SESSION_COLUMNS}, 1)}
    rows: dict[str, int] = {}
    for name in STORE_FRAMES:
        df = frames.get(name)
        target = base / name / f"{PARTITION}={ident}" / PART
        rows[name] = 0 if df is None else len(df)
        if rows[name]:
            target.parent.mkdir(parents=True, exist_ok=True)
            table = _table(df, key, store_schema(name))
            _atomic_write(base, target, lambda tmp, t=table: pq.write_table(t, tmp))
        else:
            target.unlink(missing_ok=True)
    manifest = {
        "store_format": STORE_FORMAT, "schemas": fingerprint, "log": ident, "session": key,
        "path": path, "size": size, "mtime_ns": mtime_ns, "blake2b": digest,
        "format_version": summary.get("format_version"), "verdict": summary.get("verdict"),
        "session_id": summary.get("session_id"), "events": summary.get("events"),
        "defects": rows["defects"], "error": summary.get("error"), "rows": rows,
        "seconds": summary.get("seconds"),
    }
    _write_json(base, base / MANIFESTS / f"{ident}.json", manifest)
    return manifest


@dataclass
class ExportSummary:
    """What one `export_store` run did, and the state of the whole store after it."""

    store: str
    sessions: int = 0
    exported: int = 0
    unchanged: int = 0
    dropped: int = 0
    defects: int = 0
    events: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def findings(self) -> bool:
        """Some log in the store has defects, or could not be read or framed."""
        return bool(self.defects or self.unreadable)

    def as_dict(self) -> dict[str, Any]:
        return {"store": self.store, "sessions": self.sessions, "exported": self.exported,
                "unchanged": self.unchanged, "dropped": self.dropped, "events": self.events,
                "defects": self.defects, "verdicts": self.verdicts,
                "unreadable": self.unreadable, "seconds": round(self.seconds, 3)}


@contextmanager
def _locked(base: Path) -> Iterator[None]:
    with open(base / ".lock", "a+b") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            msg = f"{base}: another export is writing this store"
            raise StoreUnusable(msg) from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def open_store(store: str | os.PathLike, *, create: bool = False) -> Path:
    """The store directory, checked (and made, with `create`); raises `StoreUnusable` for a
    directory holding something else, so an export never deletes files it did not write."""
    base = Path(store)
    if (base / MARKER).is_file():
        return base
    if not create:
        msg = f"{base}: not a workbench store (no {MARKER})"
        raise StoreUnusable(msg)
    if base.exists() and (not base.is_dir() or any(base.iterdir())):
        msg = f"{base}: exists and is not a workbench store (no {MARKER}); choose a new directory"
        raise StoreUnusable(msg)
    base.mkdir(parents=True, exist_ok=True)
    _write_json(base, base / MARKER, {"store_format": STORE_FORMAT, "frames": list(STORE_FRAMES)})
    return base


def read_manifests(store: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Every manifest of the store, by log id (unreadable manifest files are skipped: their
    logs are exported again)."""
    out = {}
    for entry in os.scandir(Path(store) / MANIFESTS):
        if entry.name.endswith(".json") and not entry.name.startswith("."):
            try:
                with open(entry.path, encoding="utf-8") as fh:
                    value = json.load(fh)
            except (OSError, ValueError):
                continue
            out[entry.name.removesuffix(".json")] = value
    return out


def _sweep(base: Path, keep: set[str]) -> None:
    """Remove what an interrupted run left (temporary files) and partitions of logs that are
    not in `keep` (deleted logs, or logs whose first export never finished)."""
    shutil.rmtree(base / TMP, ignore_errors=True)
    for name in STORE_FRAMES:
        top = base / name
        if not top.is_dir():
            continue
        for entry in os.scandir(top):
            if (entry.name.startswith(f"{PARTITION}=") and entry.is_dir()
                    and entry.name.removeprefix(f"{PARTITION}=") not in keep):
                shutil.rmtree(entry.path)


def _refs(root: Path) -> list[tuple[str, str]]:
    """(path, store key) of every session log under `root`."""
    from workbench.io.discover import find_sessions
    base = root if root.is_dir() else root.parent
    out = []
    for ref in find_sessions(root):
        path = Path(ref.path)
        try:
            key = path.relative_to(base).as_posix()
        except ValueError:
            key = path.as_posix()
        out.append((str(path), key))
    return out


def _unchanged(manifest: dict | None, path: str, fingerprint: str) -> bool:
    if not manifest or manifest.get("store_format") != STORE_FORMAT:
        return False
    if manifest.get("schemas") != fingerprint or manifest.get("path") != path:
        return False
    try:
        st = os.stat(path)
    except OSError:
        return False
    return manifest.get("size") == st.st_size and manifest.get("mtime_ns") == st.st_mtime_ns


def export_store(root: str | os.PathLike, store: str | os.PathLike, *, engine: str = "pandas",
                 workers: int | None = None, client: Any = None,
                 progress: bool = True) -> ExportSummary:
    """Bring `store` up to date with the session logs under `root` (module doc).

    Raises `LogUnreadable` when `root` holds no session, `StoreUnusable` for a directory that is
    not a store or is being written. `engine`, `workers`, `client`: as `load_sessions`."""
    from workbench.frames.pool import map_sessions
    started = time.perf_counter()
    refs = _refs(Path(os.path.abspath(root)))
    if not refs:
        msg = f"{root}: no DSH session logs found"
        raise LogUnreadable(msg)
    base = open_store(store, create=True)
    fingerprint = schema_fingerprint()
    summary = ExportSummary(str(base))
    with _locked(base):
        (base / MANIFESTS).mkdir(exist_ok=True)
        _write_schemas(base)
        manifests = read_manifests(base)
        current = {log_id(key): (path, key) for path, key in refs}
        for ident in sorted(set(manifests) - set(current)):
            (base / MANIFESTS / f"{ident}.json").unlink(missing_ok=True)
            del manifests[ident]
            summary.dropped += 1
        _sweep(base, set(current))
        todo = [(path, key) for ident, (path, key) in current.items()
                if not _unchanged(manifests.get(ident), path, fingerprint)]
        summary.unchanged = len(current) - len(todo)
        tasks = [(path, str(base), key, fingerprint) for path, key in todo]
        for _, manifest in map_sessions(export_log, tasks, engine=engine, workers=workers,
                                        client=client, progress=progress, desc="export"):
            manifests[manifest["log"]] = manifest
            summary.exported += 1
    for manifest in manifests.values():
        summary.sessions += 1
        summary.events += manifest.get("events") or 0
        summary.defects += manifest.get("defects") or 0
        verdict = str(manifest.get("verdict"))
        summary.verdicts[verdict] = summary.verdicts.get(verdict, 0) + 1
        if manifest.get("error"):
            summary.unreadable.append(manifest["session"])
    summary.unreadable.sort()
    summary.seconds = time.perf_counter() - started
    return summary


def _write_schemas(base: Path) -> None:
    (base / SCHEMA_DIR).mkdir(exist_ok=True)
    for name in STORE_FRAMES:
        target = base / SCHEMA_DIR / f"{name}.parquet"
        schema = store_schema(name).append(pa.field(PARTITION, pa.large_string()))
        if target.exists() and pq.read_schema(target).remove_metadata().equals(
                schema.remove_metadata()):
            continue
        _atomic_write(base, target, lambda tmp, s=schema: pq.write_table(s.empty_table(), tmp))

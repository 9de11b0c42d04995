"""An incremental Parquet store of many sessions' frames. Layer: frames (pandas, pyarrow).

`export_store(root, store)` writes every frame of every session under `root` (the frames of
`workbench.frames.schema.FRAME_NAMES`, ``defects`` and ``sessions``: a frame registered there is
exported with nothing to change here)::

    STORE/_workbench_store.json           marks the directory as a store (format, frames, buckets)
    STORE/_manifest/<log>.json            one per source log: what was read, and the verdict
    STORE/_schema/<frame>.parquet         an empty file with the frame's Arrow schema
    STORE/<frame>/bucket-<kk>.parquet     the rows of every log whose id falls in bucket kk

``<log>`` is a hash of the log's path relative to the root; each row starts with ``session``, that
relative path (stable across runs, unlike session ids, which v0 fixtures repeat; a name that is not
UTF-8 shows its bytes as ``\\xNN``, `path_text`), and ends with ``log``. A log belongs to one of
`BUCKETS` buckets (`bucket_of`), so a frame is at most `BUCKETS` files whatever the number of
sessions (SQL over the store opens few files), rows sorted by ``session``; a bucket file with no
rows does not exist. Every file of a frame has the same Arrow schema (`store_schema`), so pandas
(``pd.read_parquet(STORE/"events")``), Polars, Spark and DuckDB (`workbench.frames.fleet`) read a
frame directory as one table. The ``sessions`` frame is `load_sessions`' without its wall-time
column (which is in the manifest), so the store depends only on the logs.

Incremental: a log whose size, mtime, store format and frame schemas match its manifest is
kept (size and mtime are the change check, as rsync's: a same-size rewrite that keeps the mtime
is not noticed); any other log is exported again; a log gone from the root is dropped. The
manifest's size, mtime and hash are taken before the log is read, so a log that grows while it
is being read is exported again by the next run. Workers write each exported log's frames to a
staging directory (``STORE/.tmp/``); a commit (`workbench.frames.buckets`) then rewrites every
bucket file holding a changed, dropped or new log (old rows of kept logs, plus the staged rows)
and writes the new logs' manifests last. Commits run at the end, and during a long export
(`COMMIT_SECONDS`, `COMMIT_SHARE`).

Crash safety: every file is written under ``STORE/.tmp/`` and renamed into place, so no reader
ever sees half a file. The manifests of logs to export again or drop are removed before any
bucket changes, and a log's manifest is written only after every bucket holding its rows, so a
log without a manifest is exported again. Each bucket file lists its logs in its metadata; at the
start of a run a bucket holding a log without a manifest is rewritten, and a kept log missing
from a bucket it should be in is exported again, so a run interrupted anywhere is completed
exactly by the next. A manifest file that is not exactly what an export writes
(`workbench.frames.manifests`) is removed and its log exported again, as is a log that a bucket
holds against its manifest's row counts; a damaged marker or schema file is written again. One
export at a time per store (an advisory lock). A reader during an export may see some frames of
a commit before others; the manifest is the record of what is complete.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import stat
import time
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
from workbench.frames.manifests import MANIFESTS, read_json, read_manifests
from workbench.frames.parquet import as_table, frame_schema
from workbench.frames.schema import FRAME_NAMES, SCHEMAS, SessionColumns
from workbench.io.output import path_text
from workbench.io.read import path_arg

STORE_FORMAT = 2
"""Layout version of the store; a manifest of another version is exported again."""
MARKER, SCHEMA_DIR, TMP, STAGE = ("_workbench_store.json", "_schema", ".tmp", "stage")
LOG = "log"
"""The last column of every frame: the id of the log the row comes from (`log_id`)."""
BUCKETS = 16
"""Files per frame: a log's rows are in bucket ``bucket_of(log)``."""
COMMIT_SECONDS = 300.0
"""How often a long export commits what its workers have staged (bounds the work an
interrupted export loses; each commit rewrites the buckets it touches)."""
COMMIT_SHARE = 0.2
"""A commit also waits until the work since the last one is 1/`COMMIT_SHARE` times as long as
that commit took: a commit rewrites the whole store so far, so fixed intervals would make
commits most of a long export on a slow machine."""
STORE_FRAMES: tuple[str, ...] = (*FRAME_NAMES, "sessions")
"""Frames of a store: every registered frame (``defects`` included) and ``sessions``."""
_SESSION_COLUMNS = tuple(c for c in SessionColumns if c.name != "seconds")


def _columns(name: str) -> Sequence[Any]:
    return _SESSION_COLUMNS if name == "sessions" else SCHEMAS[name]


@functools.cache
def store_schema(name: str) -> pa.Schema:
    """The Arrow schema of every file of frame `name`: ``session``, the frame's declared
    columns (`workbench.frames.parquet.frame_schema`), then ``log``."""
    return frame_schema(_columns(name), session=True).append(pa.field(LOG, pa.string()))


def schema_fingerprint(names: Sequence[str] = STORE_FRAMES) -> str:
    """One hash of the frames' names and schemas: a change re-exports every log."""
    text = "\n".join(f"{n}: {store_schema(n).remove_metadata()}" for n in names)
    return hashlib.blake2b(f"{STORE_FORMAT} {BUCKETS}\n{text}".encode(),
                           digest_size=16).hexdigest()


def log_id(key: str) -> str:
    """The id of the log whose store key (relative path) is `key`."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def bucket_of(ident: str) -> int:
    """The bucket of log `ident` (a `log_id`)."""
    return int(ident[:8], 16) % BUCKETS


def bucket_path(base: Path, name: str, bucket: int) -> Path:
    return base / name / f"bucket-{bucket:02d}.parquet"


def atomic_write(base: Path, path: Path, write) -> None:
    """`write(tmp)` a file under ``base/.tmp/``, then rename it to `path` (same filesystem)."""
    tmp = base / TMP / f"{path.name}.{os.getpid()}.{os.urandom(8).hex()}.tmp"
    tmp.parent.mkdir(exist_ok=True)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_json(base: Path, path: Path, value: dict) -> None:
    atomic_write(base, path,
                 lambda tmp: tmp.write_text(json.dumps(value, sort_keys=True, indent=1)))


def _table(df: pd.DataFrame, key: str, ident: str, schema: pa.Schema) -> pa.Table:
    out = df.copy(deep=False)
    out.insert(0, "session", pd.array([path_text(key)] * len(df), dtype="string"))
    out[LOG] = pd.array([ident] * len(df), dtype="string")
    return as_table(out, schema)


def _file_facts(path: str) -> tuple[int, int, str]:
    """(size, mtime_ns, blake2b of those bytes) of the log, read in bounded chunks; a path that
    cannot be statted or is not a regular file (a link loop, a FIFO) is never opened: no digest."""
    try:
        st = os.stat(path)
    except OSError:
        return 0, 0, ""
    if not stat.S_ISREG(st.st_mode):
        return st.st_size, st.st_mtime_ns, ""
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
    """Build every frame of one log and stage it under ``store/.tmp/stage/<log>/`` (runs in a
    worker); returns its manifest, which the commit writes (module doc)."""
    from workbench.frames.many import DEFAULT_FRAMES, session_frames
    ident = log_id(key)
    size, mtime_ns, digest = _file_facts(path)
    result = session_frames(path, DEFAULT_FRAMES)
    summary = result.summary
    frames = {**result.frames, "defects": result.defects,
              "sessions": frame(_SESSION_COLUMNS, {c.name: [summary.get(c.name)]
                                                   for c in _SESSION_COLUMNS}, 1)}
    stage = Path(store) / TMP / STAGE / ident
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    rows: dict[str, int] = {}
    for name in STORE_FRAMES:
        df = frames.get(name)
        rows[name] = 0 if df is None else len(df)
        if rows[name]:
            pq.write_table(_table(df, key, ident, store_schema(name)),
                           stage / f"{name}.parquet", compression="none")
    return {
        "store_format": STORE_FORMAT, "schemas": fingerprint, "log": ident, "session": path_text(key),
        "path": path, "size": size, "mtime_ns": mtime_ns, "blake2b": digest,
        "format_version": summary.get("format_version"), "verdict": summary.get("verdict"),
        "session_id": summary.get("session_id"), "events": summary.get("events"),
        "defects": rows["defects"], "error": summary.get("error"), "rows": rows,
        "seconds": summary.get("seconds"),
    }


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
    commits: int = 0
    commit_seconds: float = 0.0
    """Of `seconds`, the time spent rewriting buckets and writing manifests."""

    @property
    def findings(self) -> bool:
        """Some log in the store is damaged (a verdict other than clean: a warning is no finding,
        as in every subcommand), or could not be read or framed."""
        return bool(self.unreadable) or any(v != "clean" for v in self.verdicts)

    def as_dict(self) -> dict[str, Any]:
        return {"store": self.store, "sessions": self.sessions, "exported": self.exported,
                "unchanged": self.unchanged, "dropped": self.dropped, "events": self.events,
                "defects": self.defects, "verdicts": self.verdicts,
                "unreadable": self.unreadable, "seconds": round(self.seconds, 3),
                "commits": self.commits, "commit_seconds": round(self.commit_seconds, 3)}


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


def _marker() -> dict[str, Any]:
    return {"store_format": STORE_FORMAT, "frames": list(STORE_FRAMES), "buckets": BUCKETS}


def open_store(store: str | os.PathLike, *, create: bool = False) -> Path:
    """The store directory, checked (and made, with `create`); raises `StoreUnusable` for a
    directory holding something else, so an export never deletes files it did not write;
    `InvalidArgument` for a `store` that is no path."""
    base = Path(path_arg(store, "store path"))
    if (base / MARKER).is_file():
        return base
    if not create:
        msg = f"{base}: not a workbench store (no {MARKER})"
        raise StoreUnusable(msg)
    if base.exists() and (not base.is_dir() or any(base.iterdir())):
        msg = f"{base}: exists and is not a workbench store (no {MARKER}); choose a new directory"
        raise StoreUnusable(msg)
    base.mkdir(parents=True, exist_ok=True)
    write_json(base, base / MARKER, _marker())
    return base


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
    from workbench.frames.buckets import Buckets
    from workbench.frames.pool import check_workers, map_sessions
    check_workers(workers)
    started = time.perf_counter()
    refs = _refs(Path(os.path.abspath(root)))
    if not refs:
        msg = f"{root}: no DSH session logs found"
        raise LogUnreadable(msg)
    base = open_store(store, create=True)
    fingerprint = schema_fingerprint()
    summary = ExportSummary(str(base))
    with _locked(base):
        shutil.rmtree(base / TMP, ignore_errors=True)      # what an interrupted run staged
        (base / MANIFESTS).mkdir(exist_ok=True)
        if read_json(base / MARKER) != _marker():       # another layout, or damaged
            write_json(base, base / MARKER, _marker())
        _write_schemas(base)
        unreadable: list[Path] = []
        manifests = read_manifests(base, unreadable)
        for path in unreadable:                            # its log is exported again
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        current = {log_id(key): (path, key) for path, key in refs}
        kept = {ident: m for ident, m in manifests.items()
                if ident in current and _unchanged(m, current[ident][0], fingerprint)}
        buckets = Buckets(base)
        for ident in sorted(set(manifests) - set(kept) | buckets.incomplete(kept)):
            (base / MANIFESTS / f"{ident}.json").unlink(missing_ok=True)
            kept.pop(ident, None)
            summary.dropped += ident not in current
        tasks = [(path, str(base), key, fingerprint) for ident, (path, key) in current.items()
                 if ident not in kept]
        summary.unchanged = len(kept)
        staged: dict[str, dict[str, Any]] = {}
        last, took = time.monotonic(), 0.0
        for _, manifest in map_sessions(export_log, tasks, engine=engine, workers=workers,
                                        client=client, progress=progress, desc="export"):
            staged[manifest["log"]] = manifest
            summary.exported += 1
            if time.monotonic() - last > max(COMMIT_SECONDS, took / COMMIT_SHARE):
                before = summary.commit_seconds
                kept.update(_commit(buckets, kept, staged, summary))
                staged, last, took = {}, time.monotonic(), summary.commit_seconds - before
        kept.update(_commit(buckets, kept, staged, summary))
    for manifest in kept.values():
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


def _commit(buckets: Any, kept: dict, staged: dict, summary: ExportSummary) -> dict:
    started = time.perf_counter()
    try:
        return buckets.commit(kept, staged)
    finally:
        summary.commits += 1
        summary.commit_seconds += time.perf_counter() - started


def _schema_matches(path: Path, schema: pa.Schema) -> bool:
    try:
        return pq.read_schema(path).remove_metadata().equals(schema.remove_metadata())
    except (OSError, pa.ArrowException):
        return False                                        # missing or damaged: written again


def _write_schemas(base: Path) -> None:
    (base / SCHEMA_DIR).mkdir(exist_ok=True)
    for name in STORE_FRAMES:
        target = base / SCHEMA_DIR / f"{name}.parquet"
        schema = store_schema(name)
        if _schema_matches(target, schema):
            continue
        atomic_write(base, target, lambda tmp, s=schema: pq.write_table(s.empty_table(), tmp))

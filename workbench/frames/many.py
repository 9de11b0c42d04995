"""Many sessions into one set of frames: `load_sessions`, Parquet export, Dask. Layer: frames.

`load_sessions(root_or_paths)` finds every session (`workbench.io.discover.find_sessions`: a DSH
session root, a project or session directory, a log file, or a list of these), runs the same
per-session function on each — load, build the requested frames, summarize — and concatenates
the results. Every frame gets a leading ``session`` column (category; its categories are the
session keys in discovery order, parents before children), so rows of all sessions can be
grouped and joined on (``session``, ``seq``).

The session key is the header's session id; when ids are missing or repeat (v0 fixtures use
placeholders such as ``{{sessionId}}``) the key is the id (or file name) plus ``#<n>`` in
discovery order. The ``sessions`` frame maps keys to ids and paths.

Broken logs never stop the run and are never dropped: the loader's defects of every session are
in the ``defects`` frame, and a session that cannot be read or whose frames fail to build (a
bug, a pathological input) gets a ``defects`` row with rule ``load-error`` / ``frame-error`` and
a ``sessions`` row whose ``error`` column says why.

Engines (`workbench.frames.pool`): ``pandas`` (default) reads sessions in spawned worker
processes on this machine, as many as the work, the cores and the memory allow (a small root is
read in this process; a script without an ``if __name__ == "__main__":`` guard is read in this
process, with a warning); ``dask`` runs the same per-session function on ``dask.distributed``:
the `Client` passed as ``client`` (any cluster), or a temporary `LocalCluster` of worker
processes. Both return the same pandas frames; for more sessions than fit in memory, export a
store (`workbench.frames.store`) and query it (`workbench.fleet`).
"""
from __future__ import annotations

import functools
import os
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from workbench.errors import MissingAttribute, UnknownName
from workbench.frames.columns import frame, safe_text
from workbench.frames.parquet import as_table, frame_schema, to_frame, write_parquet
from workbench.frames.schema import FRAME_NAMES, SCHEMAS, SessionColumns
from workbench.frames.turns import DefectColumns
from workbench.io.output import path_text

Engine = Literal["pandas", "dask"]

DEFAULT_FRAMES: tuple[str, ...] = tuple(n for n in FRAME_NAMES if n != "defects")
"""Frames `load_sessions` builds unless told otherwise (``defects`` and ``sessions`` always)."""

@dataclass(slots=True)
class SessionResult:
    """What the per-session function returns: a summary row, frames, and defect rows."""

    summary: dict[str, Any]
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    defects: pd.DataFrame | None = None


def _summary(path: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(c.name for c in SessionColumns)
    row["path"] = path_text(path)
    row["session_label"] = session_label(path)
    row.update(values)
    return row


def _error_defect(path: str, rule: str, exc: BaseException) -> pd.DataFrame:
    message = f"{type(exc).__name__}: {exc}"
    rows = {"rule": [rule], "severity": ["corrupt"], "message": [message], "file": [path_text(path)],
            "line": [None], "frame": [None], "seq": [None], "byte_offset": [None]}
    return frame(DefectColumns, rows, 1)


def session_frames(path: str | os.PathLike, names: Sequence[str] = DEFAULT_FRAMES
                   ) -> SessionResult:
    """The per-session function: load one log, build `names`, summarize. Never raises for a
    broken log (see the module doc); the same function runs in workers and on Dask."""
    from workbench.errors import WorkbenchError
    from workbench.session import load
    path = os.fspath(path)
    started = time.perf_counter()
    try:
        session = load(path)
    except (WorkbenchError, OSError) as exc:
        return SessionResult(
            _summary(path, verdict="unreadable", error=f"{type(exc).__name__}: {exc}",
                     seconds=time.perf_counter() - started),
            {}, _error_defect(path, "load-error", exc))
    info: dict[str, Any] = {}
    result = SessionResult(info, {}, None)
    try:
        result.frames = session.frames(names)
        summary = session.summary()
        statuses = summary["compactions"]
        times = session.index.time if len(session) else None
        info.update(_summary(
            path, session_id=session.session_id,
            parent_session=_parent(session.log), format_version=session.format_version,
            verdict=session.verdict, events=summary["events"], turns=summary["turns"],
            compactions=sum(statuses.values()),
            compactions_completed=statuses.get("completed", 0),
            compactions_failed=statuses.get("failed", 0),
            compactions_open=statuses.get("interrupted", 0) + statuses.get("stale", 0),
            prunes=summary["prunes"], surface_nodes=summary["surface_nodes"],
            surface_tokens=summary["surface_tokens"], defects=len(session.defects),
            first_time=times[0] if times is not None else None,
            last_time=times[len(session) - 1] if times is not None else None))
    except Exception as exc:  # noqa: BLE001 - one pathological log must not stop a corpus run
        detail = "".join(traceback.format_exception_only(exc)).strip()
        info.update(_summary(path, session_id=session.session_id, verdict=session.verdict,
                             events=len(session), defects=len(session.defects),
                             error=f"frames failed: {detail}"))
        result.frames = {}
        result.defects = _error_defect(path, "frame-error", exc)
    loader = session.defects_df()
    result.defects = loader if result.defects is None else pd.concat(
        [loader, result.defects], ignore_index=True)
    info["seconds"] = time.perf_counter() - started
    return result


def _parent(log: Any) -> str | None:
    for source in (log.header, log.meta):
        if isinstance(source, dict) and isinstance(source.get("parentSession"), str):
            return source["parentSession"]
    return None


# -- keys and concatenation ------------------------------------------------------------------------

def session_keys(ids: Sequence[str | None], paths: Sequence[str]) -> list[str]:
    """Unique keys: the session id, or the file name when missing; repeats get ``#<n>``, the
    first n no other key is (ids ``X``, ``X``, ``X#1`` give ``X#2``, ``X#3``, ``X#1``)."""
    base = [safe_text(i) if isinstance(i, str) and i else safe_text(Path(p).name)
            for i, p in zip(ids, paths, strict=True)]
    counts: dict[str, int] = {}
    for b in base:
        counts[b] = counts.get(b, 0) + 1
    taken = {b for b in base if counts[b] == 1}
    seen: dict[str, int] = {}
    keys = []
    for b in base:
        key = b
        if counts[b] > 1:
            n = seen.get(b, 0) + 1
            while f"{b}#{n}" in taken:
                n += 1
            seen[b], key = n, f"{b}#{n}"
            taken.add(key)
        keys.append(key)
    return keys


def session_label(path: str) -> str:
    """A readable name for a session: its file name without the log suffixes
    (``dev-killed__session.v4.jsonl`` → ``dev-killed__session``), or the folder holding it when
    the file has DSH's generic name (``<id>/session.v4.jsonl`` → ``<id>``)."""
    name = Path(path).name
    for suffix in (".zstd", ".jsonl", ".v4", ".v3", ".v2", ".v1"):
        name = name.removesuffix(suffix)
    if name == "session" and Path(path).parent.name:
        name = Path(path).parent.name
    return safe_text(name)


# -- the result ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SessionFrames:
    """Frames of many sessions: ``sessions``, ``defects`` and every requested frame, each with
    a leading ``session`` key column. Access as ``result["events"]`` or ``result.events``."""

    frames: Mapping[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.frames[name]

    def __getattr__(self, name: str) -> Any:
        frames = object.__getattribute__(self, "frames")
        if name in frames:
            return frames[name]
        msg = f"no frame {name!r}; frames: {', '.join(frames)}"
        raise MissingAttribute(msg)

    def __iter__(self):
        return iter(self.frames)

    def keys(self) -> Iterable[str]:
        return self.frames.keys()

    def to_parquet(self, directory: str | os.PathLike) -> list[str]:
        """Write every frame as ``<directory>/<name>.parquet``."""
        return write_parquet(self.frames, directory)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{k}={len(v):,}" for k, v in self.frames.items())
        return f"SessionFrames({sizes})"


# -- load_sessions ---------------------------------------------------------------------------------

def _refs(root_or_paths: Any) -> list[Any]:
    """The sessions of a root (a path) or of an iterable of paths; anything else, or an item
    that is no path, is `InvalidArgument` (`workbench.io.read.path_arg`)."""
    from workbench.io.discover import find_sessions
    from workbench.io.read import path_arg
    if isinstance(root_or_paths, (str, os.PathLike)):
        return find_sessions(root_or_paths)
    if not isinstance(root_or_paths, Iterable):
        path_arg(root_or_paths, "sessions root")   # neither a path nor paths: raises
    return find_sessions([path_arg(p) for p in root_or_paths])


def _check_names(frames: Sequence[str] | None) -> tuple[str, ...]:
    names = DEFAULT_FRAMES if frames is None else tuple(frames)
    unknown = [n for n in names if n not in SCHEMAS]
    if unknown:
        msg = f"unknown frame(s) {', '.join(map(repr, unknown))}; known: {', '.join(FRAME_NAMES)}"
        raise UnknownName(msg)
    return tuple(n for n in names if n != "defects")


def load_sessions(root_or_paths: str | os.PathLike | Iterable[str | os.PathLike], *,
                  frames: Sequence[str] | None = None, engine: Engine = "pandas",
                  workers: int | None = None, client: Any = None,
                  progress: bool = True) -> SessionFrames:
    """Read many sessions into one set of frames keyed by session (module doc).

    `frames`: names from `workbench.frames.schema.FRAME_NAMES` (default: all); ``sessions`` and
    ``defects`` are always included. `workers`: worker processes (default: chosen from the
    work, cores and memory; 1 reads in this process). `engine="dask"`: run on
    ``dask.distributed`` (`client`, or a temporary `LocalCluster` of `workers` processes).
    Raises `LogUnreadable` when the root holds no session."""
    from workbench.frames.pool import map_sessions
    names = _check_names(frames)
    refs = _refs(root_or_paths)
    paths = [str(r.path) for r in refs]
    keys = session_keys([r.session_id for r in refs], paths)
    results: list[tuple[dict, dict] | None] = [None] * len(paths)
    for i, result in map_sessions(session_tables, [(p, names) for p in paths], engine=engine,
                                  workers=workers, client=client, progress=progress):
        results[i] = result
    return _combine(results, keys, names)


def session_tables(path: str, names: Sequence[str]) -> tuple[dict[str, Any],
                                                              dict[str, pa.Table]]:
    """`session_frames` as (summary, Arrow table per frame and ``defects``): what a worker
    sends back (compact buffers, one schema per frame, nothing to unify per session)."""
    result = session_frames(path, names)
    frames = {**result.frames, "defects": result.defects}
    tables = {name: as_table(df, table_schema(name))
              for name, df in frames.items() if df is not None and len(df)}
    return result.summary, tables


@functools.cache
def table_schema(name: str) -> pa.Schema:
    """The Arrow schema of registered frame `name` (`frame_schema`, built once per process:
    it costs milliseconds, and a worker converts every frame of every session)."""
    return frame_schema(SCHEMAS[name])


def _combine(results: Sequence[tuple[dict, dict]], keys: Sequence[str],
             names: tuple[str, ...]) -> SessionFrames:
    """One frame per name: every session's table with its ``session`` key, concatenated in
    discovery order and converted to pandas once (`workbench.frames.parquet.to_frame`)."""
    key_dtype = pd.CategoricalDtype(keys)
    key_values = pa.array(list(keys), pa.string())
    out: dict[str, pd.DataFrame] = {}
    summaries = {c.name: [r[0].get(c.name) for r in results] for c in SessionColumns}
    sessions = frame(SessionColumns, summaries, len(results))
    sessions.insert(0, "session", pd.Categorical(list(keys), dtype=key_dtype))
    out["sessions"] = sessions
    for name in (*names, "defects"):
        schema = table_schema(name)
        chunks = []
        for i, (_, tables) in enumerate(results):
            table = tables.pop(name, None)   # each table is released once it is in a chunk
            if table is not None:
                codes = pa.array(np.full(table.num_rows, i, dtype=np.int32))
                chunks.append(table.add_column(
                    0, "session", pa.DictionaryArray.from_arrays(codes, key_values)))
        if chunks:
            table = pa.concat_tables(chunks)
        else:
            table = schema.empty_table().add_column(
                0, "session", pa.DictionaryArray.from_arrays(pa.array([], pa.int32()),
                                                             key_values))
        del chunks
        df = to_frame(table, name)
        df["session"] = df["session"].astype(key_dtype)
        out[name] = df
    return SessionFrames(out)

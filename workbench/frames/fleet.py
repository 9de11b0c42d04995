"""SQL over a session store with an embedded DuckDB: `workbench.fleet(STORE)`. Layer: frames.

`Fleet(store)` opens an in-memory DuckDB connection (nothing to start, nothing written) with
one view per frame of the store (`workbench.frames.store`): ``events``, ``compactions``, …,
``sessions`` and ``manifest`` (one row per source log: path, size, mtime, hash, verdict). A
view reads the frame's bucket files in place (at most `workbench.frames.store.BUCKETS` per
frame, whatever the number of sessions), named one by one as they are when the fleet is opened
(never a glob: a folder named ``store?`` is not ``store1``; open the fleet again after an
export); a frame with no rows anywhere is a view over its empty schema file, so every view
exists and has its columns. `Fleet.sql(query)` returns a pandas
DataFrame; `Fleet.con` is the DuckDB connection.

Ready queries (`READY`; `Fleet.ready(name)`, or one method each) are where a researcher starts:
compactions by trigger and status, savings by meter, anchor recall by kind (needs the
compaction-quality ``anchors`` frame), failures, sessions by size. Each is plain SQL over the
views, printed by `Fleet.query_text(name)` to copy and change. They count and join logs by
``log`` (the store's key of a log), never by ``session``: that is readable path text, not
one-to-one (a name with the byte 0xFF and one spelling ``\\xff`` show alike).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import StoreUnusable, UnknownName
from workbench.frames.columns import safe_text
from workbench.frames.manifests import read_manifests
from workbench.frames.store import SCHEMA_DIR, STORE_FRAMES, open_store
from workbench.io.output import path_text

_SAVINGS_LEDGER = """
SELECT meter, count(DISTINCT (log, compaction_id)) AS compactions,
       sum(shadowed_tokens) AS shadowed_tokens, sum(summary_tokens) AS summary_tokens,
       sum(resent_tokens) AS resent_tokens, sum(refetch_tokens) AS refetch_tokens,
       sum(net_tokens) AS net_tokens, sum(cost) AS cost
FROM ledger GROUP BY meter ORDER BY meter"""
_SAVINGS_DSH = """
SELECT 'dsh' AS meter, 'compaction' AS what, count(*) AS count,
       sum(shadowed_tokens) AS shadowed_tokens, sum(summary_tokens) AS added_tokens,
       sum(shadowed_tokens) - sum(summary_tokens) AS saved_tokens
FROM compactions WHERE status = 'completed'
UNION ALL
SELECT 'dsh', 'prune', count(*), sum(shadowed_tokens), sum(replacement_tokens), sum(saved_tokens)
FROM prunes"""

READY: dict[str, str] = {
    "compactions_by_trigger": """
SELECT trigger, status, count(*) AS compactions, count(DISTINCT log) AS sessions,
       median(compression_ratio) AS median_ratio, sum(CASE WHEN audit_ok THEN 0 ELSE 1 END)
       AS audit_failed
FROM compactions GROUP BY trigger, status ORDER BY compactions DESC, trigger, status""",
    "savings_by_meter": _SAVINGS_DSH,
    "anchor_recall_by_kind": """
SELECT kind, count(*) FILTER (WHERE status = 'kept') AS kept,
       count(*) FILTER (WHERE status = 'lost') AS lost,
       count(*) FILTER (WHERE status = 'invented') AS invented,
       count(*) FILTER (WHERE status = 'kept') / nullif(count(*) FILTER (WHERE status IN
       ('kept', 'lost')), 0) AS recall
FROM anchors WHERE level = 1 GROUP BY kind ORDER BY kind""",
    "failures": """
SELECT 'session' AS what, s.session, s.verdict AS detail, s.error AS message
FROM sessions s WHERE s.error IS NOT NULL OR s.verdict NOT IN ('clean')
UNION ALL
SELECT 'compaction', c.session, coalesce(c.error_kind, c.status), c.error
FROM compactions c WHERE c.status IN ('failed', 'interrupted', 'stale')
UNION ALL
SELECT 'request', r.session, r.failure_code, r.failure_message
FROM requests r WHERE r.failure_code IS NOT NULL
ORDER BY what, session""",
    "sessions_by_size": """
SELECT session, session_id, format_version, verdict, events, turns, compactions,
       surface_tokens, last_time - first_time AS span
FROM sessions ORDER BY events DESC NULLS LAST, session""",
}
"""Name → SQL of the ready queries (``savings_by_meter`` uses the ``ledger`` frame when the
store has it: shadowed, summary and net tokens by every meter; else the DSH heuristic)."""


_GLOB = re.compile(r"([*?\[\]])")


def _sql_files(files: list[Path]) -> str:
    """A DuckDB list literal naming exactly `files`: DuckDB reads every path it is given as a
    glob pattern (``*``, ``?``, ``[``; a store folder named ``store?`` would also read
    ``store1``), so each glob character is escaped as a one-character class. DuckDB's globbing
    splits a pattern at backslashes too, so a path with both cannot be named: refused."""
    out = []
    for path in files:
        text = os.path.abspath(path)
        if _GLOB.search(text):
            if "\\" in text:
                msg = (f"{path}: DuckDB cannot read a path holding both a backslash and a glob "
                       "character (* ? [ ]); move the store to a plainer folder")
                raise StoreUnusable(msg)
            text = _GLOB.sub(r"[\1]", text)
        out.append("'" + text.replace("'", "''") + "'")
    return "[" + ", ".join(out) + "]"


def _text(column: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return path_text(value) if column == "path" else safe_text(value)


class Fleet:
    """An embedded DuckDB connection with one view per frame of a store (module doc)."""

    def __init__(self, store: str | os.PathLike, *, threads: int | None = None) -> None:
        import duckdb
        self.store = open_store(store)
        self.con = duckdb.connect(":memory:")
        self.con.execute("SET enable_progress_bar = false")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        self.frames: list[str] = []
        for name in STORE_FRAMES:
            schema_file = self.store / SCHEMA_DIR / f"{name}.parquet"
            if not schema_file.exists():
                continue
            top = self.store / name
            files = sorted(Path(e.path) for e in os.scandir(top) if e.name.endswith(".parquet")
                           and e.is_file()) if top.is_dir() else []
            source = f"read_parquet({_sql_files(files or [schema_file])})"
            try:
                self.con.execute(f'CREATE VIEW "{name}" AS SELECT * FROM {source}')
            except duckdb.Error as exc:
                self.con.close()
                msg = (f"{self.store}: frame {name!r} is unreadable "
                       f"({str(exc).splitlines()[0]}); export the store again to repair it")
                raise StoreUnusable(msg) from exc
            self.frames.append(name)
        manifest = self.manifest()
        self.con.register("manifest", manifest)

    def manifest(self) -> pd.DataFrame:
        """One row per source log (`workbench.frames.store` manifests), its text as frames hold
    text: the path as `path_text`, any other string (a header id, an error) by `safe_text`."""
        rows = list(read_manifests(self.store).values())
        cols = ["session", "log", "path", "size", "mtime_ns", "blake2b", "format_version",
                "verdict", "session_id", "events", "defects", "error", "seconds"]
        df = pd.DataFrame([{c: _text(c, r.get(c)) for c in cols} for r in rows], columns=cols)
        return df.sort_values("session", ignore_index=True)

    def sql(self, query: str, params: Any = None) -> pd.DataFrame:
        """Run `query` (DuckDB SQL over the views) and return the result as a DataFrame."""
        return self.con.execute(query, params).df()

    def query_text(self, name: str) -> str:
        """The SQL of ready query `name` (as it runs on this store)."""
        if name not in READY:
            msg = f"no ready query {name!r}; known: {', '.join(READY)}"
            raise UnknownName(msg)
        if name == "savings_by_meter" and "ledger" in self.frames:
            return _SAVINGS_LEDGER.strip()
        if name == "anchor_recall_by_kind" and "anchors" not in self.frames:
            msg = ("this store has no 'anchors' frame (the compaction-quality frames); export "
                   "the root again with a workbench that has them")
            raise UnknownName(msg)
        return READY[name].strip()

    def ready(self, name: str) -> pd.DataFrame:
        """Run ready query `name` (`READY`)."""
        return self.sql(self.query_text(name))

    def compactions_by_trigger(self) -> pd.DataFrame:
        return self.ready("compactions_by_trigger")

    def savings_by_meter(self) -> pd.DataFrame:
        return self.ready("savings_by_meter")

    def anchor_recall_by_kind(self) -> pd.DataFrame:
        return self.ready("anchor_recall_by_kind")

    def failures(self) -> pd.DataFrame:
        return self.ready("failures")

    def sessions_by_size(self) -> pd.DataFrame:
        return self.ready("sessions_by_size")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Fleet({str(self.store)!r}: {', '.join(self.frames)})"

    def _repr_html_(self) -> str:
        import html
        counts = self.sql("SELECT count(*) AS n, coalesce(sum(events), 0) AS e FROM sessions")
        return (f"<b>workbench fleet</b> {html.escape(str(self.store))}: "
                f"{int(counts.n[0]):,} sessions, {int(counts.e[0]):,} events; views: "
                f"{html.escape(', '.join([*self.frames, 'manifest']))}")


def fleet(store: str | os.PathLike, **options: Any) -> Fleet:
    """Open the store at `store` for SQL (`Fleet`)."""
    return Fleet(store, **options)


__all__ = ["READY", "Fleet", "fleet"]

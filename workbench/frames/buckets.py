"""The bucket files of a session store and the commit that rewrites them. Layer: frames
(pyarrow).

A frame of a store (`workbench.frames.store`, whose module doc has the layout and the write
order) is at most `BUCKETS` files, ``STORE/<frame>/bucket-<kk>.parquet``; bucket ``kk`` holds the
rows of every log with ``bucket_of(log) == kk`` and rows in that frame, sorted by ``session``
(rows of one log in their frame's order), and lists those logs in its metadata
(``workbench.logs``). `Buckets(base)` reads what each file holds (metadata only) and removes
anything else in a frame directory (a file of an older layout, a stray).

`Buckets.commit(kept, staged)` makes every bucket hold exactly the rows of the logs of `kept`
(manifests of logs whose rows are already right) and `staged` (manifests of logs just exported,
whose frames wait under ``STORE/.tmp/stage/<log>/``): a bucket whose logs would change, or that
holds a staged log, is rewritten from its kept rows and the staged ones, written under
``STORE/.tmp/`` and renamed into place; then the staged logs' manifests are written. Invariant
between runs: a log with a manifest has its rows, and only them, in every bucket of its frames.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workbench.frames.manifests import MANIFESTS
from workbench.frames.store import (
    BUCKETS,
    LOG,
    STAGE,
    STORE_FRAMES,
    TMP,
    atomic_write,
    bucket_of,
    bucket_path,
    store_schema,
    write_json,
)

LOGS_KEY = b"workbench.logs"
_NAME = re.compile(r"bucket-(\d\d)\.parquet")


def _rows(manifest: dict[str, Any], name: str) -> int:
    return manifest["rows"][name]        # a checked manifest (`workbench.frames.manifests`)


class Buckets:
    """What every bucket file of a store holds (module doc)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.logs: dict[tuple[str, int], set[str]] = {}
        for name in STORE_FRAMES:
            top = base / name
            if not top.is_dir():
                continue
            for entry in os.scandir(top):
                match = _NAME.fullmatch(entry.name)
                if match and int(match[1]) < BUCKETS and entry.is_file():
                    try:
                        meta = pq.read_schema(entry.path).metadata or {}
                        self.logs[(name, int(match[1]))] = set(json.loads(meta[LOGS_KEY]))
                        continue
                    except (OSError, ValueError, KeyError, pa.ArrowException):
                        pass     # unreadable: removed, its logs are exported again
                if entry.is_dir():
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)

    def incomplete(self, kept: dict[str, dict[str, Any]]) -> set[str]:
        """Logs of `kept` whose buckets disagree with their manifest: missing from a bucket that
        should hold their rows, or held by one of a frame the manifest says has none."""
        return {ident for ident, m in kept.items() for name in STORE_FRAMES
                if bool(_rows(m, name)) != (ident in self.logs.get((name, bucket_of(ident)), ()))}

    def commit(self, kept: dict[str, dict[str, Any]],
               staged: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Rewrite the buckets so they hold the logs of `kept` and `staged`, then write the
        staged manifests; returns `staged`."""
        stage = self.base / TMP / STAGE
        by_bucket: list[list[tuple[str, dict[str, Any]]]] = [[] for _ in range(BUCKETS)]
        for group in (kept, staged):
            for ident, manifest in group.items():
                by_bucket[bucket_of(ident)].append((ident, manifest))
        for name in STORE_FRAMES:
            for bucket in range(BUCKETS):
                want = {i for i, m in by_bucket[bucket] if _rows(m, name)}
                have = self.logs.get((name, bucket), set())
                new = sorted(i for i in want if i in staged)
                if want == have and not new:
                    continue
                self._rewrite(name, bucket, (want - set(new)) & have,
                              [stage / i / f"{name}.parquet" for i in new])
                self.logs[(name, bucket)] = want
        for ident, manifest in staged.items():
            write_json(self.base, self.base / MANIFESTS / f"{ident}.json", manifest)
            shutil.rmtree(stage / ident, ignore_errors=True)
        return staged

    def _rewrite(self, name: str, bucket: int, keep: set[str], parts: list[Path]) -> None:
        target = bucket_path(self.base, name, bucket)
        schema = store_schema(name)
        pieces = []
        if keep:
            old = pq.read_table(target)
            if set(pc.unique(old[LOG]).to_pylist()) != keep:
                old = old.filter(pc.is_in(old[LOG], pa.array(sorted(keep), pa.string())))
            pieces.append(old)
        pieces += [pq.read_table(p) for p in parts]
        logs = sorted(keep | {p.parent.name for p in parts})
        if not logs:
            target.unlink(missing_ok=True)
            return
        table = pa.concat_tables([p.cast(schema) for p in pieces]).unify_dictionaries()
        table = table.combine_chunks()
        table = table.take(pc.sort_indices(table, sort_keys=[("session", "ascending")]))
        meta = {**(schema.metadata or {}), LOGS_KEY: json.dumps(logs).encode()}
        table = table.replace_schema_metadata(meta)
        target.parent.mkdir(exist_ok=True)
        atomic_write(self.base, target, lambda tmp: pq.write_table(table, tmp))

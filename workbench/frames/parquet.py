"""Frames as Parquet files whose dtypes survive the round trip. Layer: frames (pandas,
pyarrow).

`write_parquet(frames, directory)` writes ``<directory>/<name>.parquet`` per frame and
`read_parquet(path)` reads one back with its declared dtypes. Two gaps between pandas and Arrow
are closed here: pandas records an Arrow list column's dtype as ``list<item: int64>[pyarrow]``,
a string it cannot parse when reading (the metadata says ``object`` instead, and `read_parquet`
maps Arrow lists back to ``pd.ArrowDtype``); and an empty categorical column loses its
categories (`read_parquet` restores the fixed categories of the frame's schema, and those of an
empty frame's other categorical columns, e.g. session keys, which `to_arrow` records in the
``workbench.categories`` schema metadata).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import OutputUnwritable
from workbench.frames.columns import empty
from workbench.frames.schema import SCHEMAS, SessionColumns
from workbench.io.read import path_arg


def to_arrow(df: pd.DataFrame) -> Any:
    """`df` as an Arrow table whose pandas metadata every pandas can read back.

    pandas records an Arrow list column's dtype as ``list<item: int64>[pyarrow]``, a string it
    cannot parse when reading (``pd.read_parquet`` fails); the metadata is rewritten to a plain
    ``object`` so any reader gets the lists, and `read_parquet` restores the declared dtype."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    raw = table.schema.metadata or {}
    meta = json.loads(raw.get(b"pandas", b"{}"))
    changed = False
    for column in meta.get("columns", ()):
        if str(column.get("numpy_type", "")).endswith("[pyarrow]"):
            column["numpy_type"] = "object"
            changed = True
    categories = {str(c): [str(v) for v in df[c].dtype.categories] for c in df.columns
                  if isinstance(df[c].dtype, pd.CategoricalDtype) and not len(df)}
    if changed or categories:
        extra = {b"workbench.categories": json.dumps(categories).encode()} if categories else {}
        table = table.replace_schema_metadata({**raw, b"pandas": json.dumps(meta).encode(),
                                               **extra})
    return table


def write_parquet(frames: Mapping[str, pd.DataFrame], directory: str | os.PathLike) -> list[str]:
    """Write each frame as ``<directory>/<name>.parquet`` (pyarrow; see `read_parquet`); a
    path that cannot be written is `OutputUnwritable` naming it."""
    target = Path(path_arg(directory, "output folder"))
    path = target
    written = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, df in frames.items():
            path = target / f"{name}.parquet"
            written.append(write_frame(df, path))
    except OSError as exc:
        msg = f"{path}: cannot write: {exc.strerror or exc}"
        raise OutputUnwritable(msg) from exc
    return written


def frame_schema(columns: Any, *, session: bool = False) -> pa.Schema:
    """The Arrow schema of a frame of `columns` as it reads back from Parquet (categoricals as
    dictionaries of int32 indices and strings), with the pandas metadata that restores the
    declared dtypes; `session` prepends the ``session`` key as a string column."""
    df = empty(columns)
    if session:
        df.insert(0, "session", pd.array([], dtype="string"))
    arrow = to_arrow(df).schema
    fields = [pa.field(f.name, pa.dictionary(pa.int32(), pa.string())
                       if pa.types.is_dictionary(f.type) else f.type) for f in arrow]
    return pa.schema(fields, metadata=arrow.metadata)


def as_table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """`df` as an Arrow table of exactly `schema` (`frame_schema`)."""
    return to_arrow(df.reset_index(drop=True)).select(schema.names).cast(schema)


def to_frame(table: pa.Table, name: str | None) -> pd.DataFrame:
    """An Arrow table of frame `name` as pandas with the declared dtypes: Arrow lists as
    ``pd.ArrowDtype``, and every declared categorical with its fixed categories first (even
    when the table has no rows)."""
    def mapper(arrow_type: Any) -> Any:
        return pd.ArrowDtype(arrow_type) if pa.types.is_list(arrow_type) else None

    df = table.to_pandas(types_mapper=mapper)
    columns = SCHEMAS.get(name) or (SessionColumns if name == "sessions" else ())
    fixes = {}
    saved = json.loads((table.schema.metadata or {}).get(b"workbench.categories", b"{}"))
    for column, cats in saved.items():     # an empty frame's categories (e.g. session keys)
        if column in df and not len(df):
            fixes[column] = pd.CategoricalDtype(cats)
    for column in columns:
        declared = column.dtype
        if isinstance(declared, pd.CategoricalDtype) and column.name in df:
            got = df[column.name].dtype
            have = list(got.categories) if isinstance(got, pd.CategoricalDtype) else []
            cats = list(declared.categories)
            cats += [c for c in have if c not in set(cats)]
            if have != cats or not isinstance(got, pd.CategoricalDtype):
                fixes[column.name] = pd.CategoricalDtype(cats, ordered=declared.ordered)
    return df.astype(fixes) if fixes else df


def read_parquet(path: str | os.PathLike, name: str | None = None) -> pd.DataFrame:
    """Read a frame written by `write_parquet` (a file, or a directory of parts such as a
    store's frame directory) back with its declared dtypes (`to_frame`; `name` defaults to the
    file name, e.g. ``events.parquet``)."""
    name = name or Path(path).name.removesuffix(".parquet")
    return to_frame(pq.read_table(path), name)


def write_frame(df: pd.DataFrame, path: str | os.PathLike) -> str:
    """Write one frame (or one Dask partition) to `path`; returns the path."""
    pq.write_table(to_arrow(df), path)
    return str(path)

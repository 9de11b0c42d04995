"""Column groups: the one place where every frame column is named, typed and explained.
Layer: frames (pandas, numpy, pyarrow; core for the event taxonomy).

A frame is a tuple of `Column`s. A column does not read rows one at a time: `get` receives the
frame's *source* (a small object holding the arrays one pass over the log produced) and returns
the whole column as an array-like. That keeps a 1.3M-event frame at a handful of vectorised
conversions per column instead of millions of Python calls (style Example 2, scaled).

Every column declares its dtype (pandas 3 would otherwise infer ``str`` with NaN, or float64 for
``[1, None]`` and for ``[]``), so an empty log yields exactly the columns and dtypes of a full
one. Conventions:

* integers that may be missing are ``Int64``; flags are ``boolean``; text is ``string``;
* any number JSON allows lands in a column without raising: an ``Int64`` cell (or a seq-list
  entry) holds a value when it fits int64 (a finite float is truncated toward zero, as the core's
  ``int()`` does); a value beyond ±2^63, Infinity or NaN is NA (`int64_or_none`, the one rule);
* event times are ``datetime64[ms, UTC]`` (epoch ms as written; NaT when the log has no times,
  e.g. v0 test fixtures whose seq/time are implicit, v0 spec §1.11);
* closed vocabularies are ``category`` with fixed categories (event types: every type of format
  v0 and v4, sorted; a log with unknown, e.g. ignorable plugin, types gets them appended after the
  fixed ones so nothing is lost);
* seq lists are Arrow ``list<int64>``.

One vocabulary for what a replacement removes, in every frame, the Parquet store and the fleet's
SQL (the spec's terms: a replace op *shadows* nodes, ``shadowedRange``, ``shadowedSeqs``,
``shadowedTokenCount``); prose may say "hidden", column names do not:

* ``shadowed_seqs`` / ``shadowed_seq`` — the nodes a replacement removed from the surface, as the
  fold computes them (a prune shadows one node); ``shadowed_count`` — how many;
* ``shadowed_tokens`` — the price of those nodes (the DSH heuristic, or the row's ``meter``);
* ``logged_<name>`` — the value the log itself states for the same thing (``logged_shadowed_seqs``
  = ``shadowedSeqs``, ``logged_shadowed_tokens`` = ``shadowedTokenCount``,
  ``logged_shadowed_start`` / ``logged_shadowed_end`` = ``shadowedRange``); the audit compares
  the two;
* ``shadowed_by`` — seq of the replacing event that shadowed a node; ``shadowed_at`` — its time;
  ``shadowed_by_kind`` — compaction, prune or other;
* ``replacement_seq`` / ``replacement_tokens`` — the node that took their place and its price;
  ``saved_tokens`` = ``shadowed_tokens`` - ``replacement_tokens``.

The core keeps its own attribute names (e.g. ``hidden_seqs``), which are also those of the CLI's
``--json``; the frame builders map them.

`describe(columns)` turns a group into a documentation frame; `frame(columns, source, n)` builds
one. Groups are plain tuples: compose them with ``+``.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workbench.core.events import KNOWN_TYPES_V0, KNOWN_TYPES_V4
from workbench.core.index_columns import Texts, safe_text
from workbench.errors import InvalidArgument

Dtype = str | pd.api.extensions.ExtensionDtype

TIME = pd.DatetimeTZDtype(unit="ms", tz="UTC")
"""Event times: epoch milliseconds as the harness wrote them (``Date.now()``), in UTC."""
DURATION = "timedelta64[ms]"
"""Differences of event times (millisecond resolution, like the times themselves)."""
SEQ_LIST = pd.ArrowDtype(pa.list_(pa.int64()))
"""A list of seqs (``sourceEventSeqs``, ``shadowedSeqs``); missing = NA, empty = ``[]``."""
EVENT_TYPE = pd.CategoricalDtype(sorted(KNOWN_TYPES_V0 | KNOWN_TYPES_V4))
"""Every event type of formats v0 and v4 (65), sorted; unknown types are appended per log."""
ROLE = pd.CategoricalDtype(["system", "developer", "user", "assistant", "tool"])
"""Message role of a surface event's projected message (v0 tool results have role ``user``)."""
SURFACE_OP = pd.CategoricalDtype(["append", "replace"])
"""How a surface event joined the surface (spec §4.2); NA on log-only events."""


@dataclass(frozen=True, slots=True)
class Column:
    """One typed column: `get(source)` returns all its values at once (len == rows)."""

    name: str
    dtype: Dtype
    get: Callable[[Any], Any]
    doc: str = ""


Columns = tuple[Column, ...]
"""A column group; groups compose with ``+`` and keep their order."""


def frame(columns: Sequence[Column], source: Any, n: int) -> pd.DataFrame:
    """Build a frame of `n` rows: each column from its getter, converted to its declared dtype
    and `sealed` (a column may share the session's own arrays)."""
    data = {}
    for c in columns:
        values = c.get(source) if n else ()
        data[c.name] = sealed(as_array(values, c.dtype, n, c.name))
    return pd.DataFrame(data, columns=[c.name for c in columns], index=pd.RangeIndex(n),
                        copy=False)


def _locked(values: np.ndarray) -> np.ndarray:
    view = values.view()
    view.flags.writeable = False
    return view


def sealed(array: Any) -> Any:
    """`array` over read-only views of its NumPy buffers (no copy). A column may share the
    arrays the session computed once (the log index's seqs, the timeline's totals, ...), and
    ``to_numpy()`` of an ``Int64``/``boolean`` column without NA hands out its data buffer: a
    caller writing into that view would change every later frame of the session. Through a
    read-only view it cannot; pandas itself copies before writing (copy-on-write)."""
    if isinstance(array, pd.api.extensions.ExtensionArray) and hasattr(array, "_mask"):
        return type(array)(_locked(array._data), _locked(array._mask))   # Int64, boolean
    if isinstance(array, (pd.arrays.DatetimeArray, pd.arrays.TimedeltaArray)):
        return type(array)._simple_new(_locked(array._ndarray), dtype=array.dtype)
    return array          # Arrow buffers are immutable; categorical codes are read-only views


def empty(columns: Sequence[Column]) -> pd.DataFrame:
    """The zero-row frame of a group: the schema every builder keeps."""
    return frame(columns, None, 0)


def describe(columns: Sequence[Column]) -> pd.DataFrame:
    """Names, dtypes and meanings of a group, for notebooks (``Session.columns(name)``)."""
    return pd.DataFrame({
        "column": pd.array([c.name for c in columns], dtype="string"),
        "dtype": pd.array([str(c.dtype) if not isinstance(c.dtype, pd.CategoricalDtype)
                           else "category" for c in columns], dtype="string"),
        "meaning": pd.array([c.doc for c in columns], dtype="string"),
    })


def as_array(values: Any, dtype: Dtype, n: int, name: str = "") -> Any:
    """`values` as a pandas array of exactly `dtype` (no Series: frames are built from these)."""
    if isinstance(values, pd.Series):
        values = values.array
    if len(values) != n:
        msg = f"column {name!r}: {len(values)} values for {n} rows"
        raise InvalidArgument(msg)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return time_array(values)
    if dtype == DURATION:
        return _duration_array(values)
    if isinstance(dtype, pd.CategoricalDtype):
        return category_array(values, dtype)
    if dtype is SEQ_LIST:
        arr = values if isinstance(values, pa.Array) else seq_list_array(values)
        return pd.arrays.ArrowExtensionArray(arr)
    if dtype == "Int64":
        return int_array(values)
    if dtype == "string":
        return text_array(values)
    return pd.array(values if not isinstance(values, tuple) else list(values), dtype=dtype)


def strings(texts: Texts) -> pd.arrays.ArrowStringArray:
    """A core `Texts` column (`workbench.core.index_columns`) as a ``string`` array, its
    buffers handed to Arrow without a copy (only the validity is packed into bits)."""
    arrays = [pa.LargeStringArray.from_buffers(
        len(c), pa.py_buffer(c.offsets), pa.py_buffer(c.data),
        pa.py_buffer(np.packbits(c.valid, bitorder="little").tobytes())) for c in texts.chunks]
    if not arrays:
        return pd.arrays.ArrowStringArray(pa.array([], type=pa.large_string()))
    return pd.arrays.ArrowStringArray(arrays[0] if len(arrays) == 1 else pa.chunked_array(arrays))


def text_array(values: Any) -> pd.arrays.ArrowStringArray:
    """A ``string`` array of str/None values (lone surrogates replaced, see `safe_text`)."""
    if isinstance(values, pd.arrays.ArrowStringArray):
        return values
    if isinstance(values, Texts):
        return strings(values)
    values = values if isinstance(values, list) else list(values)
    try:
        return pd.array(values, dtype="string")
    except UnicodeEncodeError:
        return pd.array([safe_text(v) if isinstance(v, str) else v for v in values],
                        dtype="string")


INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def int64_or_none(value: Any) -> int | None:
    """`value` as an int64 cell: ints and finite floats within int64 (floats truncated toward
    zero); None for anything else (a number beyond ±2^63, Infinity, NaN, a non-number)."""
    if type(value) is int:
        return value if INT64_MIN <= value <= INT64_MAX else None
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        value = int(value)
        return value if INT64_MIN <= value <= INT64_MAX else None
    if isinstance(value, (int, np.integer)) and type(value) is not bool:
        return int64_or_none(int(value))
    return None


def int64_cells(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(data, missing) of `int64_or_none` over `values` (missing cells hold 0), with no Python
    call per cell when every value is a plain int or None."""
    missing = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    if all(type(v) is int or v is None for v in values):
        try:
            return np.array([0 if v is None else v for v in values], dtype=np.int64), missing
        except OverflowError:
            pass
    cells = [int64_or_none(v) for v in values]
    missing = np.fromiter((v is None for v in cells), dtype=bool, count=len(cells))
    return np.array([0 if v is None else v for v in cells], dtype=np.int64), missing


def int_array(values: Any) -> pd.arrays.IntegerArray:
    """Nullable Int64 from ints with None (or an int numpy array, or a masked pair); values an
    int64 cannot hold are NA (`int64_or_none`)."""
    if hasattr(values, "mask") and hasattr(values, "values") and isinstance(values.values,
                                                                              np.ndarray):
        return pd.arrays.IntegerArray(values.values.astype(np.int64, copy=False),
                                      values.mask.astype(bool, copy=False))
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return pd.arrays.IntegerArray(values.astype(np.int64, copy=False),
                                      np.zeros(len(values), dtype=bool))
    if isinstance(values, pd.api.extensions.ExtensionArray):
        return pd.array(values, dtype="Int64")
    data, mask = int64_cells(values if isinstance(values, Sequence) else list(values))
    return pd.arrays.IntegerArray(data, mask)


def seq_list_array(values: Any) -> pa.Array:
    """Arrow ``list<int64>`` from lists of seqs (None = NA); an entry int64 cannot hold is null."""
    values = list(values) if not isinstance(values, list) else values
    try:
        return pa.array(values, type=pa.list_(pa.int64()))
    except (OverflowError, ValueError, TypeError, pa.ArrowException):
        return pa.array([None if v is None else [int64_or_none(x) for x in v] for v in values],
                        type=pa.list_(pa.int64()))


def time_array(values: Any) -> pd.arrays.DatetimeArray:
    """Epoch-ms ints (None = unknown) as ``datetime64[ms, UTC]``. A masked int64 pair whose
    missing cells already hold int64 min (NaT), such as the log index's time column, is read
    as it is (no copy)."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "M":
        ms = values.astype("datetime64[ms]")
    elif _nat_masked(values):
        ms = values.values.view("datetime64[ms]")
    else:
        ints = int_array(values)
        ms = ints.to_numpy(dtype=np.int64, na_value=INT64_MIN).view("datetime64[ms]")
    return pd.arrays.DatetimeArray._simple_new(ms, dtype=TIME)


def _nat_masked(values: Any) -> bool:
    """A (values, mask) pair of int64 whose masked cells are int64 min and no others are."""
    data, mask = getattr(values, "values", None), getattr(values, "mask", None)
    if not (isinstance(data, np.ndarray) and data.dtype == np.int64 and isinstance(mask, np.ndarray)):
        return False
    return bool(np.array_equal(data == INT64_MIN, mask))


def _duration_array(values: Any) -> Any:
    if isinstance(values, np.ndarray) and values.dtype.kind == "m":
        return pd.array(values.astype("timedelta64[ms]"))
    ints = int_array(values)
    raw = ints.to_numpy(dtype=np.int64, na_value=np.iinfo(np.int64).min)
    return pd.array(raw.view("timedelta64[ms]"))


def category_array(values: Any, dtype: pd.CategoricalDtype) -> pd.Categorical:
    """A categorical of `dtype`; values outside its categories are appended (never dropped)."""
    if isinstance(values, pd.Categorical) and values.dtype == dtype:
        return values
    values = values if isinstance(values, list) else list(values)
    known = set(dtype.categories)
    extra = {v for v in values if isinstance(v, str) and v not in known}
    if extra and any(safe_text(v) is not v for v in extra):
        values = [safe_text(v) if isinstance(v, str) else v for v in values]
        extra = {v for v in values if isinstance(v, str) and v not in known}
    if extra:
        dtype = pd.CategoricalDtype([*dtype.categories, *sorted(extra)], ordered=dtype.ordered)
    return pd.Categorical(values, dtype=dtype)


def coded(codes: np.ndarray, vocab: Sequence[str], dtype: pd.CategoricalDtype) -> pd.Categorical:
    """A categorical of `dtype` from codes into `vocab` (-1 = missing), without touching the
    strings row by row; vocab values outside the categories are appended (sorted)."""
    vocab = [safe_text(v) for v in vocab]
    dtype = extend_categories(dtype, vocab)
    position = {c: i for i, c in enumerate(dtype.categories)}
    table = np.array([position[v] for v in vocab] + [-1], dtype=np.int32)
    codes = np.asarray(codes)
    mapped = table[np.where(codes < 0, len(vocab), codes)] if len(codes) else codes.astype(
        np.int32)
    return pd.Categorical.from_codes(mapped, dtype=dtype)


def coded_strings(codes: np.ndarray, vocab: Sequence[str]) -> pd.arrays.ArrowStringArray:
    """A ``string`` array from codes into `vocab` (-1 = missing): the vocabulary's strings
    (lone surrogates replaced, `safe_text`) taken by code in Arrow, no Python string per row."""
    table = pa.array([safe_text(v) for v in vocab], type=pa.large_string())
    codes = np.asarray(codes)
    return pd.arrays.ArrowStringArray(table.take(pa.array(codes, mask=codes < 0)))


def take(values: Any, index: Any) -> Any:
    """`values` at positions `index` (a list, a numpy array, `MaskedInts`-like or `Texts`)."""
    if isinstance(values, Texts):
        values = strings(values)
    if hasattr(values, "take") and not isinstance(values, list):
        return values.take(np.asarray(index, dtype=np.int64))
    return [values[int(i)] for i in index]


def extend_categories(dtype: pd.CategoricalDtype, values: Iterable[str]) -> pd.CategoricalDtype:
    """`dtype` with the values it lacks appended (sorted), for per-log vocabularies."""
    known = set(dtype.categories)
    extra = sorted({v for v in values if v not in known})
    return pd.CategoricalDtype(list(dtype.categories) + extra) if extra else dtype

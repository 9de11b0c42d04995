"""Every frame's columns, in one place: what notebooks show with `Session.columns(name)`.
Layer: frames.

`SCHEMAS` maps a frame name to its column group (with the default meter, ``dsh``, for the frames
that add one column per meter). The groups themselves live next to their builders, each with a
docstring; this registry only collects them so documentation, exports and the dtype tests all
read the same list.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.errors import UnknownName
from workbench.frames.calls import RequestColumns, ToolCallColumns
from workbench.frames.columns import TIME, Column, Columns, describe, empty
from workbench.frames.compactions import COMPACTION_COLUMNS, PRUNE_COLUMNS
from workbench.frames.events import EVENT_COLUMNS
from workbench.frames.meters import DEFAULT_METERS
from workbench.frames.quality import SCHEMAS as QUALITY_SCHEMAS
from workbench.frames.surface import ReplacementColumns, ShadowColumns, surface_columns
from workbench.frames.timeline import timeline_columns
from workbench.frames.turns import DefectColumns, TurnColumns

SCHEMAS: dict[str, Columns] = {
    "events": EVENT_COLUMNS,
    "surface": surface_columns(DEFAULT_METERS),
    "timeline": timeline_columns(DEFAULT_METERS),
    "replacements": ReplacementColumns,
    "shadow": ShadowColumns,
    "compactions": COMPACTION_COLUMNS,
    "prunes": PRUNE_COLUMNS,
    "tool_calls": ToolCallColumns,
    "requests": RequestColumns,
    "turns": TurnColumns,
    "defects": DefectColumns,
    **QUALITY_SCHEMAS,
}
"""Frame name → columns (``Session.<name>_df()``; `surface` is the surface at the end)."""

FRAME_NAMES: tuple[str, ...] = tuple(SCHEMAS)

VERDICT = pd.CategoricalDtype(["clean", "repairable", "corrupt", "refused", "unreadable"])
"""Loader verdict of a session; ``unreadable`` when it could not be loaded at all."""


def _col(name: str, dtype: Any, doc: str) -> Column:
    return Column(name, dtype, lambda rows: rows[name], doc)


SessionColumns: Columns = (
    _col("session_label", "string", "a readable name beside the key: the log's file name without "
         "its suffixes, or the folder of a log with DSH's generic name (frames.many.session_label)"),
    _col("session_id", "string", "header session id"),
    _col("path", "string", "the log file"),
    _col("parent_session", "string", "header parentSession (forks, subagents)"),
    _col("format_version", "Int64", "the log's format version, its header's (0, 3, 4; a "
         "refused one as found); NA without a header (as `workbench info` reports)"),
    _col("verdict", VERDICT, "clean / repairable / corrupt / refused / unreadable"),
    _col("events", "Int64", "events read"),
    _col("turns", "Int64", "turn/start events"),
    _col("compactions", "Int64", "compaction attempts"),
    _col("compactions_completed", "Int64", "attempts with status completed"),
    _col("compactions_failed", "Int64", "attempts with status failed"),
    _col("compactions_open", "Int64", "attempts never closed (interrupted or stale)"),
    _col("prunes", "Int64", "tool-result prunes"),
    _col("surface_nodes", "Int64", "nodes of the final surface"),
    _col("surface_tokens", "Int64", "heuristic tokens of the final surface"),
    _col("defects", "Int64", "defects found by the loader"),
    _col("first_time", TIME, "time of the first event"),
    _col("last_time", TIME, "time of the last event"),
    _col("seconds", "Float64", "wall time to load and build this session's frames"),
    _col("error", "string", "why the session could not be loaded or framed (NA: fine)"),
)
"""One session (the ``sessions`` frame, beside the ``session`` key)."""
"""`load_sessions` only: the ``sessions`` frame (each frame there also starts with ``session``)."""


def columns_doc(name: str) -> pd.DataFrame:
    """Column, dtype and meaning of one frame (``sessions``: the `load_sessions` summary)."""
    if name == "sessions":
        return describe(SessionColumns)
    if name not in SCHEMAS:
        msg = f"unknown frame {name!r}; known: {', '.join(FRAME_NAMES)}, sessions"
        raise UnknownName(msg)
    return describe(SCHEMAS[name])


def empty_frame(name: str) -> pd.DataFrame:
    """The zero-row frame of `name` (the schema every log's frame keeps)."""
    return empty(SCHEMAS[name])

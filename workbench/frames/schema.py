"""Every frame's columns, in one place: what notebooks show with `Session.columns(name)`.
Layer: frames.

`SCHEMAS` maps a frame name to its column group (with the default meter, ``dsh``, for the frames
that add one column per meter). The groups themselves live next to their builders, each with a
docstring; this registry only collects them so documentation, exports and the dtype tests all
read the same list.
"""
from __future__ import annotations

import pandas as pd

from workbench.frames.calls import RequestColumns, ToolCallColumns
from workbench.frames.columns import Columns, describe, empty
from workbench.frames.compactions import COMPACTION_COLUMNS, PRUNE_COLUMNS
from workbench.frames.events import EVENT_COLUMNS
from workbench.frames.meters import DEFAULT_METERS
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
}
"""Frame name → columns (``Session.<name>_df()``; `surface` is the surface at the end)."""

FRAME_NAMES: tuple[str, ...] = tuple(SCHEMAS)


def columns_doc(name: str) -> pd.DataFrame:
    """Column, dtype and meaning of one frame."""
    if name not in SCHEMAS:
        msg = f"unknown frame {name!r}; known: {', '.join(FRAME_NAMES)}"
        raise KeyError(msg)
    return describe(SCHEMAS[name])


def empty_frame(name: str) -> pd.DataFrame:
    """The zero-row frame of `name` (the schema every log's frame keeps)."""
    return empty(SCHEMAS[name])

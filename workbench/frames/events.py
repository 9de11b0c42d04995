"""`events_df`: one row per logical event (seq == row). Layer: frames.

Selects and types what the log index (`workbench.core.index`), the core surface fold and the core
meter computed; never recomputes semantics. Row `i` is the event with seq `i`: v4 stream chunks
have no seq and are no rows (v4 spec §2.2); v0 `assistant/chunk` events are rows (v0 §2.2).

Surface status follows the fold classification (v0 spec §4.7): ``current`` (a node at the end),
``shadowed`` (removed by a replacement; `shadowed_by` is the replacing event), ``log-only``
(never a node), and ``rejected`` for an event that broke a fold rule: the core timeline skips its
surface change and folds on, so later events still have a status (the log is corrupt there; the
defects say why).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa

from workbench.core.index import LogIndex
from workbench.core.index_columns import MaskedInts
from workbench.frames.columns import (
    EVENT_TYPE,
    INT64_MIN,
    ROLE,
    SEQ_LIST,
    SURFACE_OP,
    TIME,
    Column,
    Columns,
    coded,
    coded_strings,
    frame,
)

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog
    from workbench.core.surface_arrays import SurfaceArrays

SURFACE_STATUS = pd.CategoricalDtype(["current", "shadowed", "log-only", "rejected"])
"""Fold classification of an event at the end of the log (v0 spec §4.7), plus ``rejected``."""


@dataclass(frozen=True, slots=True)
class EventsSource:
    """What the column getters read: the log index, status codes into `SURFACE_STATUS`, the
    replacing seq (-1: none), the final position (-1: not a node) and node prices (-1: none)."""

    index: LogIndex
    status: np.ndarray
    shadowed_by: np.ndarray
    position: np.ndarray
    tokens: np.ndarray


def surface_status_codes(surface: SurfaceArrays) -> np.ndarray:
    """int8 codes into `SURFACE_STATUS` per seq: a node of the final surface, a node a
    replacement shadowed, a log-only event, an event the fold rejected."""
    status = np.full(len(surface.node), 2, dtype=np.int8)
    status[surface.node] = 0
    status[surface.shadowed_by >= 0] = 1
    status[surface.rejected] = 3
    return status


def events_source(session: AnalysedLog) -> EventsSource:
    """Collect the per-event arrays of a session (index, timeline, prices)."""
    n = len(session)
    surface = session.surface
    status = surface_status_codes(surface)
    position = np.full(n, -1, dtype=np.int64)
    final = np.asarray(surface.final_nodes, dtype=np.int64)
    position[final] = np.arange(len(final), dtype=np.int64)
    return EventsSource(session.index, status, surface.shadowed_by, position, session.index.price)


def _masked(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Int64 of a per-seq array whose negative cells are missing (the array is shared, not
    copied: an Int64 cell under its mask holds no value)."""
    return pd.arrays.IntegerArray(values, values < 0)


def _source_lists(index: LogIndex) -> pa.Array:
    """``sourceEventSeqs`` of every event as an Arrow list<int64> array (NA where absent)."""
    offsets = pa.array(index.source_offsets, type=pa.int64())
    values = pa.array(index.source_values, type=pa.int64())
    mask = pa.array(~index.source_present)
    return pa.LargeListArray.from_arrays(offsets, values, mask=mask).cast(pa.list_(pa.int64()))


def _shadowed_at(src: EventsSource) -> MaskedInts:
    by = src.shadowed_by
    hidden = by >= 0
    time = src.index.time
    at = np.where(hidden, by, 0)
    values, mask = time.values[at], time.mask[at] | ~hidden
    values[mask] = INT64_MIN   # NaT: `time_array` reads it without another copy
    return MaskedInts(values, mask)


EventIdentity: Columns = (
    Column("seq", "Int64", lambda s: s.index.seq, "position in the logical log (0-based, v0 §1.8)"),
    Column("time", TIME, lambda s: s.index.time,
           "when the event was appended (epoch ms, UTC); NaT when the log has no times "
           "(v0 fixtures, §1.11)"),
    Column("type", EVENT_TYPE,
           lambda s: coded(s.index.type_codes, s.index.types.values, EVENT_TYPE),
           "event type (§3.2)"),
    Column("turn", "Int64", lambda s: s.index.turn,
           "turn open at this event (turn/start .. turn/end inclusive); NA between turns"),
    Column("step", "Int64", lambda s: s.index.step,
           "step open at this event (step/start .. step/end inclusive); NA outside steps"),
)
"""Identity, time and structural position of each event."""

EventMessage: Columns = (
    Column("role", ROLE, lambda s: coded(s.index.role_codes, s.index.roles.values, ROLE),
           "role of the carried message (surface events)"),
    Column("message_id", "string", lambda s: s.index.message_id, "id of the carried message"),
    Column("source_kind", "string",
           lambda s: coded_strings(s.index.source_kind_codes, s.index.source_kinds.values),
           "message `source.kind` (user, model, tool, compact-checkpoint, plugin, ...)"),
    Column("preview", "string", lambda s: s.index.preview,
           "one-line text preview (message text, tool name, end reason, ...)"),
)
"""The message a surface event carries, and a preview of every event."""

EventSurface: Columns = (
    Column("surface_op", SURFACE_OP,
           lambda s: pd.Categorical.from_codes(s.index.surface_op, dtype=SURFACE_OP),
           "how the event joined the surface: append or replace (§4.2); NA for log-only events"),
    Column("replace_start", "Int64", lambda s: s.index.replace_start,
           "first replaced node (replace start / startSeq)"),
    Column("replace_end", "Int64", lambda s: s.index.replace_end,
           "last replaced node (replace end / endSeq)"),
    Column("source_seqs", SEQ_LIST, lambda s: _source_lists(s.index),
           "sourceEventSeqs as logical seqs (v4 range pairs expanded); NA when absent"),
    Column("surface_status", SURFACE_STATUS,
           lambda s: pd.Categorical.from_codes(s.status, dtype=SURFACE_STATUS),
           "current / shadowed / log-only at the end of the log; rejected: the fold refused it"),
    Column("on_surface", "boolean", lambda s: s.status == 0,
           "a node of the final surface (what the next request would contain)"),
    Column("surface_position", "Int64", lambda s: _masked(s.position),
           "position on the final surface (0-based); NA when not a node"),
    Column("shadowed_by", "Int64", lambda s: _masked(s.shadowed_by),
           "seq of the replacement that removed this node from the surface"),
    Column("shadowed_at", TIME, _shadowed_at, "time of that replacement"),
)
"""Where the event stands on the surface (v0 spec §4)."""

EventTokens: Columns = (
    Column("tokens", "Int64", lambda s: _masked(s.tokens),
           "node price by the default meter (DSH heuristic, §6.4); NA for log-only events"),
)
"""Cost of the event as a surface node."""

EVENT_COLUMNS: Columns = EventIdentity + EventMessage + EventSurface + EventTokens
"""Every column of `events_df`, in order."""


def events_frame(session: AnalysedLog, columns: Sequence[Column] = EVENT_COLUMNS) -> pd.DataFrame:
    """One row per event with the declared dtypes (an empty log keeps the schema)."""
    n = len(session)
    return frame(columns, events_source(session) if n else None, n)

"""`Session`: one analysed log and every DataFrame a notebook wants of it. Layer: frames
(imports io, core, pandas, numpy; never widgets or plots).

The session is the frames-layer face of `workbench.core.analysis.AnalysedLog` (`Session.analysis`):
that object plus a frame cache. It loads the log once (one loader call with the one pass riding
on it) and delegates every computed member to it (the log index, the surface timeline, surface
arrays, node prices, usage samples, model-call attempts, compactions, audit, quality), each
computed once on first use. Frames are functions of that object (each builder of
`workbench.frames.*` is handed `Session.analysis`) and are cached; callers get a shallow copy, so changing a
returned frame never changes the session's (pandas 3 copy-on-write), and the NumPy arrays behind
its columns are read-only views (`workbench.frames.columns.sealed`): a view a caller takes with
``to_numpy()`` cannot write into the session's arrays either.

Every frame has a declared schema (`workbench.frames.schema.SCHEMAS`; `Session.columns(name)`
shows it): an empty log, a v0 fixture without times and a 1.3M-event log give the same columns
and dtypes. A log with defects still builds every frame from its readable prefix; a fold
violation marks the rejected event ``rejected`` and the fold goes on (as the core timeline does).

`_repr_html_` summarizes the session in a small table; every log-derived string is escaped.
"""
from __future__ import annotations

import html
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.core.analysis import AnalysedLog, SurfaceArrays
from workbench.core.seqs import resolve_seq
from workbench.errors import InvalidArgument, UnknownName
from workbench.frames.quality import QualityFrames

if TYPE_CHECKING:
    from workbench.io.model import Log

__all__ = ["Session", "SurfaceArrays", "load"]


def load(path: str | os.PathLike, *, strict: bool = False, follow: bool = False) -> Session:
    """Read the log at `path` (raw or zstd, v0 or v4) into a `Session`.

    Data problems never raise: they are `Session.defects` (and `defects_df()`). `strict=True`
    raises `LogCorrupt` when the reference would reject the log. An unreadable path raises
    `LogUnreadable`; a refused format version loads as an empty session with a defect.
    `follow=True` keeps reading as the log grows: `Session.refresh()` (`workbench.frames.live`);
    a record still being written is not read yet."""
    if follow:
        from workbench.frames.live import open_live
        return Session(None, live=open_live(path))
    return Session(AnalysedLog.load(path, strict=strict))


PER_ARGUMENT = frozenset({"surface", "ledger"})
"""Frames cached per argument value (`Session.surface_df(seq)`, `ledger_df(prices=)`)."""
ARGUMENT_FRAMES = 64
"""At most this many of them are kept (a loop over every seq of a log would keep them all)."""


class _Delegated:
    """A member of the session's `AnalysedLog`, read through the session."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.__doc__ = getattr(getattr(AnalysedLog, name, None), "__doc__", None)

    def __get__(self, session: Any, owner: type | None = None) -> Any:
        if session is None:
            return self
        return getattr(session.analysis, self.name)


class Session(QualityFrames):
    """A loaded session log with lazily computed, cached DataFrames (module doc); the
    compaction-quality frames come from `workbench.frames.quality.QualityFrames`. Made from a
    `Log` (analysed on first use) or an `AnalysedLog`."""

    label = "real"              # a counterfactual: its summarizer (`frames.whatif`)
    branched_from: str | None = None
    fired: list | None = None
    origin: list | None = None
    notices: tuple = ()
    log_bytes: bytes | None = None

    def __init__(self, source: Log | AnalysedLog | None, *, live: Any = None) -> None:
        self._live = live
        self.reload_notices: list[str] = []
        """What `refresh()` had to load again, and why (a rewritten or truncated log)."""
        if live is not None:
            source = live.analysis()
        self.analysis = source if isinstance(source, AnalysedLog) else AnalysedLog(source)
        """The analysed log every member and frame comes from (`workbench.core.analysis`)."""
        self._frames: dict[tuple, pd.DataFrame] = {}

    log = _Delegated()
    path = _Delegated()
    session_id = _Delegated()
    version = _Delegated()
    format_version = _Delegated()
    events = _Delegated()
    defects = _Delegated()
    verdict = _Delegated()
    has_times = _Delegated()
    index = _Delegated()
    timeline = _Delegated()
    prices = _Delegated()
    surface = _Delegated()
    usage = _Delegated()
    attempts = _Delegated()
    compactions = _Delegated()
    audit = _Delegated()
    quality = _Delegated()
    meter_counts = _Delegated()

    def price(self, seq: int) -> int:
        """Heuristic price of the node at `seq` (0 for log-only events); `seq` is 0..LAST or
        negative from the end (`workbench.core.seqs.resolve_seq`)."""
        return self.analysis.price(resolve_seq(seq, len(self) - 1))

    def __len__(self) -> int:
        return len(self.analysis)

    def __repr__(self) -> str:
        return (f"Session({self.path!r}, id={self.session_id!r}, v{self.version}, "
                f"{len(self)} events, {self.verdict})")

    # -- following a growing log (workbench.frames.live) ---------------------------------------

    @property
    def live(self) -> Any:
        """The followed log (`workbench.frames.live.Live`; None: loaded once, not followed)."""
        return self._live

    def refresh(self) -> Any:
        """Read what the log appended since the last read and extend the session: the loader's
        checks, the log index, the timeline's fold, usage and attempts continue from their state;
        derived frames are rebuilt on first use. A rewritten or truncated log is loaded again,
        with a notice. Returns a `workbench.frames.live.Refresh`."""
        from workbench.frames.live import refresh
        return refresh(self)

    # -- what if ------------------------------------------------------------------------------

    @property
    def whatif(self) -> Any:
        """Counterfactual sessions branched from this one (`workbench.frames.whatif.WhatIf`)."""
        from workbench.frames.whatif import WhatIf
        return WhatIf(self)

    def migrated(self, to: int = 4) -> Session:
        """The session DSH 0.2.1 makes of this log when it opens it, read back with the v4 rules
        (`workbench.core.migration.migrated`: exact for v3, the log itself for v4). Raises
        `MigrationRefused` naming the reason when no exact view exists (a v0 log, a corrupt one)."""
        from workbench.core.load import load_bytes
        from workbench.core.migration import migrated
        from workbench.frames.whatif import log_bytes
        header, events = migrated(self.log, to)
        data = log_bytes(header, events)
        session = Session(load_bytes(data, name=f"migrated[v{to}]:{os.path.basename(self.path)}",
                                     encoding="jsonl", generation=to))
        session.label = f"migrated to v{to}"
        session.branched_from = self.path
        session.log_bytes = data
        return session

    def write(self, path: str | os.PathLike) -> str:
        """Write this session's log to `path` (never over the input; `frames.whatif`)."""
        from workbench.frames.whatif import write_session
        return write_session(self, path)

    # -- frames --------------------------------------------------------------------------------

    def _cached(self, key: tuple, build) -> pd.DataFrame:
        """The frame `key` names, built once; of the frames made per argument value (a seq, a
        price table: `PER_ARGUMENT`) the `ARGUMENT_FRAMES` made last are kept."""
        frames = self._frames
        df = frames.get(key)
        if df is None:
            df = build()
            if key[0] in PER_ARGUMENT:
                made = [k for k in frames if k[0] in PER_ARGUMENT]
                for old in made[:max(0, len(made) - ARGUMENT_FRAMES + 1)]:
                    del frames[old]
            frames[key] = df
        return df.copy(deep=False)

    def events_df(self) -> pd.DataFrame:
        """One row per event (columns: `Session.columns("events")`)."""
        from workbench.frames.events import events_frame
        return self._cached(("events",), lambda: events_frame(self.analysis))

    def surface_df(self, seq: int | None = None, *,
                   meters: str | Sequence[str] = ("dsh",)) -> pd.DataFrame:
        """The model-visible surface after `seq` (default: the end), one row per node in model
        order, with a ``tokens_<meter>`` column per meter. `seq` is 0..LAST or negative from the
        end (-1 = the last event), as everywhere (`workbench.core.seqs.resolve_seq`: else
        `SeqOutOfRange`, or `InvalidArgument` for a value that is not an integer)."""
        from workbench.frames.meters import check_meters
        from workbench.frames.surface import surface_frame
        at = len(self) - 1 if seq is None else resolve_seq(seq, len(self) - 1)
        names = check_meters(meters)
        return self._cached(("surface", at, names),
                            lambda: surface_frame(self.analysis, at, meters=names))

    def timeline_df(self, *, meters: str | Sequence[str] = ("dsh",),
                    progress: bool = False) -> pd.DataFrame:
        """One row per seq: surface size, ``surface_tokens_<meter>`` per meter, replace
        generation, provider usage where a call was settled."""
        from workbench.frames.meters import check_meters
        from workbench.frames.timeline import timeline_frame
        names = check_meters(meters)
        return self._cached(("timeline", names),
                            lambda: timeline_frame(self.analysis, meters=names, progress=progress))

    def replacements_df(self) -> pd.DataFrame:
        """One row per applied replacement (compaction checkpoint, pruned copy, other)."""
        from workbench.frames.surface import replacements_frame
        return self._cached(("replacements",), lambda: replacements_frame(self.analysis))

    def shadow_df(self) -> pd.DataFrame:
        """One row per hidden node: hidden at, hidden by, lineage root."""
        from workbench.frames.surface import shadow_frame
        return self._cached(("shadow",), lambda: shadow_frame(self.analysis))

    def compactions_df(self) -> pd.DataFrame:
        """One row per compaction attempt: bracket, status, trigger, audit checks."""
        from workbench.frames.compactions import compactions_frame
        return self._cached(("compactions",), lambda: compactions_frame(self.analysis))

    def prunes_df(self) -> pd.DataFrame:
        """One row per tool-result prune, with its audit checks."""
        from workbench.frames.compactions import prunes_frame
        return self._cached(("prunes",), lambda: prunes_frame(self.analysis))

    def tool_calls_df(self) -> pd.DataFrame:
        """One row per tool call: call and result paired, duration, error flag."""
        from workbench.frames.calls import tool_calls_frame
        return self._cached(("tool_calls",), lambda: tool_calls_frame(self.analysis))

    def requests_df(self) -> pd.DataFrame:
        """One row per model call: envelope, surface it saw, finish, provider usage."""
        from workbench.frames.calls import requests_frame
        return self._cached(("requests",), lambda: requests_frame(self.analysis))

    def turns_df(self) -> pd.DataFrame:
        """One row per turn: span, end reason, counts, usage, surface at its end."""
        from workbench.frames.turns import turns_frame
        return self._cached(("turns",), lambda: turns_frame(self.analysis))

    def defects_df(self) -> pd.DataFrame:
        """One row per defect the loader found (never silently dropped)."""
        from workbench.frames.turns import defects_frame
        return self._cached(("defects",), lambda: defects_frame(self.defects))

    def frames(self, names: str | Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
        """Several frames by name (default: all of `workbench.frames.schema.FRAME_NAMES`; one
        name is a string; ``surface`` is the surface at the end)."""
        from workbench.frames.schema import FRAME_NAMES
        if names is None:
            wanted: tuple = FRAME_NAMES
        elif isinstance(names, str):
            wanted = (names,)
        elif isinstance(names, Sequence) or hasattr(names, "__iter__"):
            wanted = tuple(names)
        else:
            msg = f"frame names {names!r}: give a name or a sequence of names; known: {', '.join(FRAME_NAMES)}"
            raise InvalidArgument(msg)
        unknown = [n for n in wanted if n not in FRAME_NAMES]
        if unknown:
            msg = f"unknown frame(s) {', '.join(map(repr, unknown))}; known: {', '.join(FRAME_NAMES)}"
            raise UnknownName(msg)
        return {name: getattr(self, f"{name}_df")() for name in wanted}

    def to_parquet(self, directory: str | os.PathLike, names: Sequence[str] | None = None
                   ) -> list[str]:
        """Write frames as ``<directory>/<name>.parquet``; returns the paths written."""
        from workbench.frames.parquet import write_parquet
        return write_parquet(self.frames(names), directory)

    @staticmethod
    def columns(name: str) -> pd.DataFrame:
        """Column names, dtypes and meanings of the frame `name` (e.g. ``"events"``)."""
        from workbench.frames.schema import columns_doc
        return columns_doc(name)

    # -- notebook display ----------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """Headline numbers: events, turns, compactions by status, surface size and tokens."""
        n = len(self)
        statuses: dict[str, int] = {}
        if n:
            for record in self.compactions.records:
                statuses[record.status] = statuses.get(record.status, 0) + 1
        surface = self.surface if n else None
        return {
            "path": self.path, "session_id": self.session_id, "format_version": self.format_version,
            "verdict": self.verdict, "events": n,
            "turns": len(self.index.seq_of_type("turn/start")) if n else 0,
            "compactions": statuses, "prunes": len(self.compactions.prunes) if n else 0,
            "surface_nodes": len(surface.final_nodes) if surface else 0,
            "surface_tokens": int(np.maximum(self.prices, 0)[list(surface.final_nodes)].sum())
            if surface else 0,
            "defects": len(self.defects),
        }

    def _repr_html_(self) -> str:
        from workbench.frames.columns import safe_text
        info = self.summary()

        def esc(text: str) -> str:
            return html.escape(safe_text(text))

        statuses = ", ".join(f"{esc(k)}: {v}" for k, v in sorted(info["compactions"].items()))
        rows = [
            ("session", esc(str(info["session_id"]))),
            ("file", esc(os.path.basename(str(info["path"])))),
            ("format", f"v{'?' if info['format_version'] is None else info['format_version']} · "
                       f"{esc(str(info['verdict']))}"),
            ("events", f"{info['events']:,}"),
            ("turns", f"{info['turns']:,}"),
            ("compactions", statuses or "none"),
            ("prunes", f"{info['prunes']:,}"),
            ("surface", f"{info['surface_nodes']:,} nodes · {info['surface_tokens']:,} tokens (dsh)"),
            ("defects", f"{info['defects']:,}"),
        ]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>"
                       f"{v}</td></tr>" for k, v in rows)
        return f"<table class='workbench-session'><tbody>{body}</tbody></table>"

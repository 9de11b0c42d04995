"""`ViewData`: what the views read at every step, extracted once per session. Layer: views.

A step must cost a few milliseconds on a 1.3M-event log (issue: under 100 ms of kernel time),
so the per-step work never touches a DataFrame row by row. The per-seq arrays are the session's
own (its one pass's log index: type, role, preview, node price; its surface arrays: node, shadowed
by), read as they are, never rebuilt from `events_df`; the timeline frame, the core bracket
records and the model-call attempts are read once. A render then reads a window of them. One
`ViewData` is shared by every view of a session (`view_data`); the events frame is built only
when a search needs it.

An event is a *node* when its final status is ``current`` or ``shadowed`` (the events frame's
`surface_status`), and `shadowed_by` names the replacement that hid it. A node is hidden at
step `s` exactly when ``0 <= shadowed_by <= s``: a node leaves the surface once.
"""
from __future__ import annotations

import gc
import math
import weakref
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.core.compaction.framing import checkpoint_body
from workbench.errors import InternalError
from workbench.frames.columns import safe_text
from workbench.frames.events import surface_status_codes
from workbench.views.bracket_rows import Bracket, bracket_frame
from workbench.views.html import Checkpoint
from workbench.views.navigation import Navigator, seq_array
from workbench.views.palette import status_name
from workbench.views.seq_columns import AttemptLookup, Coded, NodePrices, Previews

if TYPE_CHECKING:
    from workbench.session import Session

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

FREEZE_EVENTS = 100_000
"""From this many events on, `view_data` calls `gc.freeze()` before and after it builds the
session's data.

A loaded log of a million events keeps millions of long-lived containers; every full pass of
Python's cyclic collector walks all of them (1–2 s measured on a 1.3M-event log) and lands on
whatever step happens to allocate at the time. Freezing moves everything alive into the
permanent generation, so later passes only see what the views allocate. Frozen objects are
still freed by reference counting; cycles among them are collected only after `thaw`, which
`Workbench.close` and each live rebuild call."""


REAL_METERS: tuple[str, ...] = ("o200k", "deepseek")
"""Real tokenizers the views add beside the DSH heuristic by default (`default_meters`)."""
AUTO_METER_EVENTS = 200_000
"""Up to this many events the views replay DSH's measure and offer the real tokenizers
(`offered_meters`); above it only the DSH heuristic, unless the user passes `meters=`."""
EAGER_METER_EVENTS = 20_000
EAGER_METER_TOKENS = 200_000
"""Up to this many events whose nodes the DSH heuristic prices at this many tokens in all (the
text the real tokenizers read: up to about 2 s of counting here), `meters="auto"` counts the
real tokenizers before the first render; above either, the first picture is the DSH
heuristic's and the real tokenizers are counted when the user asks (`Workbench.set_meters`,
with a progress bar)."""


def loadable_meters(names: Sequence[str]) -> tuple[str, ...]:
    """The meters of `names` that work here (a real tokenizer's package may be missing)."""
    from workbench.core.tokens.meters import get_meter
    from workbench.errors import MeterError
    found = []
    for name in names:
        try:
            get_meter(name).count_text("x")
        except MeterError:
            continue
        found.append(name)
    return tuple(found)


def eager_meters(n_events: int, dsh_tokens: int) -> bool:
    """Whether ``meters="auto"`` counts the real tokenizers before the first render: a log of
    at most `EAGER_METER_EVENTS` events and `EAGER_METER_TOKENS` DSH node tokens."""
    return n_events <= EAGER_METER_EVENTS and dsh_tokens <= EAGER_METER_TOKENS


def default_meters(n_events: int, dsh_tokens: int) -> tuple[str, ...]:
    """What ``meters="auto"`` shows at first: ``dsh``, plus the real tokenizers that load here
    when they are counted at once (`eager_meters`)."""
    if not eager_meters(n_events, dsh_tokens):
        return ("dsh",)
    return loadable_meters(("dsh", *REAL_METERS))


def offered_meters(n_events: int, dsh_tokens: int, shown: Sequence[str]) -> tuple[str, ...]:
    """The real tokenizers ``meters="auto"`` offers to count on request (not yet `shown`, on
    logs they were not counted at once for, where they were not tried, up to
    `AUTO_METER_EVENTS` events); whether each loads is found when asked."""
    if eager_meters(n_events, dsh_tokens) or n_events > AUTO_METER_EVENTS:
        return ()
    return tuple(m for m in REAL_METERS if m not in shown)


def block_text(content: Any) -> str:
    """The text of content blocks as the model reads them, one block per paragraph."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and type(block.get("text")) is str:
            parts.append(block["text"])
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type')}]")
    return "\n\n".join(parts)


def view_data(session: Session) -> ViewData:
    """The shared `ViewData` of `session` (built on first use, kept while the session lives
    and reads the same log: built again once a followed session grew or loaded its log again,
    `ViewData.reads`)."""
    data = _CACHE.get(session)
    if data is None or not data.reads(session):
        freeze_if_large(len(session))   # the loaded log: building the views' data never rescans it
        data = _CACHE[session] = ViewData(session)
        if data.n >= FREEZE_EVENTS:
            data.timeline_frame, data.compactions, data.attempts  # noqa: B018 - build now
            freeze_if_large(data.n)
    return data


def freeze_if_large(n: int) -> None:
    """`gc.freeze()` when a session of `n` events is large (see `FREEZE_EVENTS`): `view_data`
    calls it before and after building, views again once their widgets exist, since building
    plotly figures creates many long-lived objects too (a full collection over them: 0.3 s)."""
    if n >= FREEZE_EVENTS:
        gc.freeze()


def thaw() -> None:
    """Undo `freeze_if_large` and collect: a closed workbench's objects form cycles that the
    collector never sees while they are frozen (one full collection, only when something is
    frozen)."""
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()


_STATUS = ("current", "shadowed", "log-only", "rejected")
"""`surface_status` names by code (the events frame's categories, in order)."""


def _ints(series: pd.Series, missing: int = -1) -> np.ndarray:
    return series.astype("Int64").to_numpy(dtype=np.int64, na_value=missing)


def _token_count(value: Any) -> int | None:
    """A logged window or maxTokens as a count of tokens: a positive finite JSON number (not a
    boolean; Infinity, as JavaScript reads ``1e400``, is none)."""
    return int(value) if type(value) in (int, float) and 0 < value < math.inf else None


class ViewData:
    """Per-seq arrays, brackets, attempts and navigation targets of one session."""

    def __init__(self, session: Session) -> None:
        self._session = weakref.ref(session)   # the cache's value must not keep its key alive
        self._analysis = session.analysis
        self.timeline = session.timeline
        scan, surface = session.index, session.surface
        self.n = n = len(session)
        self.last_seq = max(n - 1, 0)
        self.type = Coded(scan.type_codes, [*(safe_text(v) for v in scan.types.values), None])
        self.role = Coded(scan.role_codes, [*(safe_text(v) for v in scan.roles.values), None])
        self.preview = Previews(scan.preview)
        status = surface_status_codes(surface)     # codes into _STATUS (events_df's order)
        self.status = Coded(status, _STATUS)
        self.node = status <= 1
        self.shadowed_by = surface.shadowed_by
        self.tokens = NodePrices(scan.price)
        self.dsh_tokens = int(np.maximum(scan.price, 0).sum(dtype=np.int64))
        """The DSH heuristic's tokens of every node of the log (`eager_meters`)."""
        keep = [code for name, code in scan.types.codes.items()
                if name in ("user/message", "assistant/message", "tool/result")]
        self.transcript = np.flatnonzero(
            (scan.surface_op == 0) & np.isin(scan.type_codes, keep)).astype(np.int64)
        self.types = tuple(sorted({safe_text(t) for t in scan.types.values}))
        self._prices: dict[tuple[int, str], int] = {}
        self.measured: tuple[np.ndarray, str | None] | None = None
        """DSH's measure after every event and its refusal, once replayed (`views.timeline`)."""

    def reads(self, session: Session) -> bool:
        """Whether this data is still `session`'s: a followed session that loaded its log again
        (rewritten or replaced, even with as many events: `Refresh.reloaded`) has a new
        analysed log; one that grew, more events."""
        return session.analysis is self._analysis and len(session) == self.n

    @property
    def session(self) -> Session:
        """The session this data was read from (held weakly: `view_data`'s cache is keyed by it)."""
        session = self._session()
        if session is None:
            msg = "the session of this view data was released"
            raise InternalError(msg)
        return session

    @cached_property
    def events_frame(self) -> pd.DataFrame:
        """The session's events frame (built on first use: a search reads it)."""
        return self.session.events_df()

    @cached_property
    def timeline_frame(self) -> pd.DataFrame:
        """The session's per-seq timeline frame (DSH meter)."""
        return self.session.timeline_df()

    @cached_property
    def surface_tokens(self) -> np.ndarray:
        """Surface total by the DSH meter after each seq."""
        frame = self.timeline_frame
        column = "surface_tokens_dsh"
        return _ints(frame[column], 0) if column in frame else np.zeros(self.n, dtype=np.int64)

    # -- compactions --------------------------------------------------------------------------

    @cached_property
    def compactions(self) -> pd.DataFrame:
        """One row per compaction attempt, with the columns the bracket views draw.

        Read from the core bracket records (`Session.compactions`), not from `compactions_df`:
        that frame also runs the compaction audit, which costs minutes on a 1.3M-event log,
        and the views need none of it. Column names and meanings are those of
        `compactions_df` (`shadowed_tokens`: what the replacement hid, or the priced
        span when it never landed; `summary_tokens`: the checkpoint's price, or the framed
        summary's), so `bracket_chart_figure` draws either frame."""
        return bracket_frame(self.session.compactions.records)

    @cached_property
    def brackets(self) -> tuple[Bracket, ...]:
        frame = self.compactions
        if frame.empty:
            return ()
        cols = [_ints(frame[c]) if c in frame else np.full(len(frame), -1, dtype=np.int64)
                for c in ("start_seq", "summary_seq", "replacement_seq", "end_seq",
                          "end_seed_seq")]
        statuses = [status_name(s) for s in frame["status"].astype(object)]
        return tuple(Bracket(i, int(a), int(b), int(c), int(d), statuses[i], int(e))
                     for i, (a, b, c, d, e) in enumerate(zip(*cols)))

    @cached_property
    def _bracket_spans(self) -> tuple[np.ndarray, np.ndarray]:
        starts = np.array([b.start for b in self.brackets], dtype=np.int64)
        ends = np.array([self.bracket_end(b) for b in self.brackets], dtype=np.int64)
        return starts, ends

    def brackets_between(self, lo: int, hi: int) -> list[Bracket]:
        """Brackets overlapping seqs ``lo..hi`` (an open bracket runs to the end of the log)."""
        starts, ends = self._bracket_spans
        hit = np.flatnonzero((starts <= hi) & (ends >= lo))
        return [self.brackets[i] for i in hit]

    def bracket_end(self, bracket: Bracket) -> int:
        """Last seq a bracket covers: its end; for a never-closed one, the end-seed that
        released it (stale) or the end of the log (interrupted)."""
        if bracket.end >= 0:
            return bracket.end
        return bracket.end_seed if bracket.end_seed >= 0 else self.last_seq

    @cached_property
    def bracket_by_replacement(self) -> dict[int, Bracket]:
        """The bracket whose checkpoint is the replacement at a seq."""
        return {b.replacement: b for b in self.brackets if b.replacement >= 0}

    def unfinished(self) -> list[Bracket]:
        """Brackets that did not complete (failed, interrupted, stale), in log order."""
        return [b for b in self.brackets if b.status != "completed"]

    def status_note(self, bracket: Bracket) -> str:
        """A non-completed bracket in words, for its start row (completed: empty)."""
        if bracket.status == "completed":
            return ""
        if bracket.status == "interrupted":
            return "compaction interrupted: never closed"
        if bracket.status == "stale":
            return f"compaction stale: never closed, released at #{bracket.end_seed}"
        return f"compaction {bracket.status}"

    # -- prices and checkpoints ---------------------------------------------------------------

    def price(self, seq: int, meter: str) -> int:
        """Tokens of the node at `seq` by `meter` (cached; the dsh price is the frame's)."""
        if meter == "dsh":
            return int(self.tokens[seq])
        key = (seq, meter)
        if key not in self._prices:
            from workbench.core.tokens.meters import get_meter
            event = self.session.events[seq]
            self._prices[key] = int(get_meter(meter, version=self.session.version)
                                    .count_event(event))
        return self._prices[key]

    def checkpoint(self, seq: int, meters: Sequence[str]) -> Checkpoint | None:
        """The summary body, framed text and prices of a checkpoint node (else None)."""
        if self.type[seq] != "user/message":
            return None
        data = self.session.events[seq].get("data")
        content = data.get("content") if isinstance(data, dict) else None
        if isinstance(data, dict) and content is None and isinstance(data.get("message"), dict):
            content = data["message"].get("content")
        body = checkpoint_body(content)
        if body is None:
            return None
        return Checkpoint(body, block_text(content),
                          tuple((m, self.price(seq, m)) for m in meters))

    # -- model calls --------------------------------------------------------------------------

    @cached_property
    def attempts(self) -> AttemptLookup:
        """Model-call attempts by the seq that identifies them (and by their message seq)."""
        return AttemptLookup(self.session.attempts)

    @cached_property
    def navigator(self) -> Navigator:
        targets = [b.start for b in self.brackets]   # the stops: start, and replacement
        targets += [b.replacement if b.replacement >= 0 else b.last for b in self.brackets]
        requests = (a.seq for a in self.session.attempts)
        return Navigator(lambda: self.events_frame, n=self.n, types=self.types,
                         compactions=seq_array(targets), requests=seq_array(requests))

    @cached_property
    def context_window(self) -> int | None:
        """The latest `request/context.contextWindow` of the log, when any was logged."""
        for seq in self.session.index.seq_of_type("request/context")[::-1]:
            data = self.session.events[int(seq)].get("data")
            window = data.get("contextWindow") if isinstance(data, dict) else None
            if (count := _token_count(window)) is not None:
                return count
        return None

    @cached_property
    def max_tokens(self) -> int | None:
        """The latest logged `request/header.header.config.maxTokens` (None: none logged)."""
        for seq in self.session.index.seq_of_type("request/header")[::-1]:
            data = self.session.events[int(seq)].get("data")
            header = data.get("header") if isinstance(data, dict) else None
            config = header.get("config") if isinstance(header, dict) else None
            value = config.get("maxTokens") if isinstance(config, dict) else None
            if (count := _token_count(value)) is not None:
                return count
        return None

    @cached_property
    def times_ms(self) -> np.ndarray | None:
        """Epoch milliseconds per seq, gaps filled from the previous event (None: no times):
        the index's own time column when no time is missing (no copy)."""
        if not self.n:
            return None
        time = self.session.index.time
        missing = time.mask
        if not missing.any():
            return time.values
        if missing.all():
            return None
        ms = pd.Series(np.where(missing, np.nan, time.values.astype(np.float64))).ffill().bfill()
        return ms.to_numpy(dtype=np.float64)

    def x_range(self) -> tuple[float, float]:
        """The seq range every figure shows (so a seq sits at the same pixel in each)."""
        return (-0.5, self.last_seq + 0.5)

    # -- per step -----------------------------------------------------------------------------

    def hidden_at(self, seq: int, step: int) -> int | None:
        """The replacement that hid node `seq` at or before `step` (None: visible or not a node)."""
        by = int(self.shadowed_by[seq])
        return by if 0 <= by <= step else None

    def surface_state(self, seq: int, step: int) -> str:
        """"future", "shadowed", "on surface", "rejected" or "log-only" as of `step`."""
        if seq > step:
            return "future"
        if self.node[seq]:
            return "shadowed" if self.hidden_at(seq, step) is not None else "on surface"
        return "rejected" if self.status[seq] in ("rejected", "unfolded") else "log-only"

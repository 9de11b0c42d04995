"""The step viewer's data: the log and the surface at each model request. Layer: report.

A step is one model-call attempt (`workbench.core.requests`, v0/v4 spec §7.1); what is shown is
the state just before it was built (seq ``attempt.before - 1``): the log window around that seq
(`LogPane.rows`, the same rows the notebook's log pane draws, centred on and highlighting the
model call itself) and the surface the request contained (`SurfacePane.surface_rows`).
`compactions` maps each compaction id to its panel number, for ``#compaction=ID`` links. The report draws them in the browser, so the data is
kept compact: every event that appears anywhere is described once (`events`: type, role,
preview, tokens), replacements once (`replaces`, `lineage`), and each step holds only seqs and
small codes.

Large logs: at most `max_steps` requests are kept — the first request after every compaction
(what the model saw right after the surface was rewritten), the first and the last, and the
rest evenly spaced — and `StepData.sampled` says so.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.frames.columns import int64_or_none
from workbench.io.jsvalues import js_str
from workbench.report.limits import MAX_STEPS
from workbench.views.html import LogRow
from workbench.views.log_pane import LogPane
from workbench.views.palette import STATUS_COLORS
from workbench.views.surface_pane import SurfacePane
from workbench.views.timeline import request_tokens

if TYPE_CHECKING:
    from workbench.core.requests import Attempt
    from workbench.session import Session
    from workbench.views.html import LineageItem

STATE_CODES = {"on surface": 0, "shadowed": 1, "log-only": 2, "future": 3, "rejected": 4}
"""Log-row states, in the order of the script's `STATES` list."""


@dataclass(frozen=True, slots=True)
class StepData:
    """What the step viewer embeds (`payload`) and how much of the log it covers."""

    payload: dict[str, Any]
    total_requests: int
    shown_requests: int

    @property
    def sampled(self) -> bool:
        return self.shown_requests < self.total_requests


def choose_attempts(attempts: Sequence[Attempt], after_compactions: Sequence[int],
                    max_steps: int) -> list[Attempt]:
    """At most `max_steps` attempts in seq order (module doc: which ones are kept)."""
    ordered = sorted(attempts, key=lambda a: a.before)
    if len(ordered) <= max_steps:
        return ordered
    if max_steps <= 0:
        return []
    befores = np.array([a.before for a in ordered], dtype=np.int64)
    last = len(ordered) - 1
    keep: set[int] = {0, last} if max_steps > 1 else {0}
    after = sorted({int(i) for i in np.searchsorted(befores, list(after_compactions),
                                                      side="right") if i <= last} - keep)
    budget = max_steps // 2
    if len(after) > budget:
        after = [after[int(p)] for p in np.linspace(0, len(after) - 1, num=budget).round()]
    keep.update(after[:budget])
    rest = np.setdiff1d(np.arange(last + 1), np.fromiter(keep, dtype=np.int64))
    spare = min(max_steps - len(keep), len(rest))
    if spare > 0:   # evenly spaced over the others, distinct because spare <= len(rest)
        ends = 2 if spare + 2 <= len(rest) else 0
        spots = np.linspace(0, len(rest) - 1, num=spare + ends)
        keep.update(int(rest[int(i)]) for i in (spots[1:-1] if ends else spots).round())
    return [ordered[i] for i in sorted(keep)][:max_steps]


def _label(session: Session, attempt: Attempt) -> str:
    parts = [f"model call at seq {attempt.seq}"]
    if attempt.turn is not None:
        parts.append(f"turn {js_str(attempt.turn)} step {js_str(attempt.step)}")
    finish = attempt.finish
    if isinstance(finish, dict) and isinstance(finish.get("kind"), str):
        parts.append(f"finish {finish['kind']}")
    elif attempt.message_seq is None:
        parts.append("failed or cancelled")
    data = session.events[attempt.seq].get("data")
    usage = data.get("usage") if isinstance(data, dict) else None
    if isinstance(usage, dict):
        numbers = [usage.get(k) for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens")]
        reported = sum(v for v in numbers if type(v) is int)
        parts.append(f"provider reported {reported:,} prompt tokens")
    return " · ".join(parts)


def step_data(session: Session, *, max_steps: int = MAX_STEPS, log_before: int = 12,
              log_after: int = 8, surface_window: int = 60) -> StepData:
    """The step viewer's payload for `session` (module doc)."""
    attempts = list(session.attempts)
    ends = [r.end_seq if r.end_seq is not None else r.start_seq
            for r in session.compactions.records]
    chosen = choose_attempts(attempts, ends, max_steps)
    log_pane = LogPane(session, before=log_before, after=log_after)
    surface_pane = SurfacePane(session, before=surface_window // 3,
                               after=surface_window - surface_window // 3 - 1)
    data = log_pane.data
    measured = request_tokens(session, data.timeline_frame, ["dsh"])[0]["request_tokens_dsh"] \
        if data.n else None
    described: set[int] = set()
    replaces: dict[str, list[int]] = {}
    lineage: dict[str, list[Any]] = {}

    def add_lineage(seq: int, items: tuple[LineageItem, ...], more: int) -> None:
        if str(seq) in lineage:
            return
        lineage[str(seq)] = [[int(i.seq) for i in items], int(more)]
        for item in items:
            described.add(item.seq)
            if item.children or item.more:
                add_lineage(item.seq, item.children, item.more)

    steps = []
    previous: int | None = None
    for attempt in chosen:
        at = max(0, min(attempt.before - 1, data.last_seq))
        centre = max(0, min(int(attempt.seq), data.last_seq))   # the model call itself
        log_rows = [r for r in log_pane.rows(at, centre) if isinstance(r, LogRow)]
        surface_rows, count = surface_pane.surface_rows(at, previous)
        described.update(row.seq for row in log_rows)
        surface = []
        for row in surface_rows:
            described.add(row.seq)
            surface.append([int(row.position), int(row.seq), int(row.changed)])
            if row.replaces is not None:
                replaces[str(row.seq)] = [int(v) for v in row.replaces]
                add_lineage(row.seq, row.lineage, row.lineage_more)
        steps.append({
            "seq": at, "request": int(attempt.seq), "label": _label(session, attempt),
            "surface_count": int(count), "surface_tokens": int(data.surface_tokens[at]),
            "measured": None if measured is None else int64_or_none(measured.iloc[at]),
            "surface": surface,
            "log": [[int(r.seq), STATE_CODES.get(r.surface, 2),
                     -1 if r.hidden_by is None else int(r.hidden_by),
                     None if r.bracket is None else r.bracket[0],
                     None if r.bracket is None else r.bracket[1]] for r in log_rows],
        })
        previous = at
    events = {str(s): [data.type[s] or "", data.role[s], data.preview[s] or "",
                       int(data.tokens[s]) if data.node[s] else None] for s in sorted(described)}
    ids = {}
    for row, record in enumerate(session.compactions.records):
        if isinstance(record.compaction_id, str):
            ids.setdefault(record.compaction_id, row + 1)
    payload = {"event_count": data.n, "colors": dict(STATUS_COLORS), "steps": steps,
               "events": events, "replaces": replaces, "lineage": lineage,
               "compactions": ids}
    return StepData(payload, len(attempts), len(chosen))

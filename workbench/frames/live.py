"""`Session.refresh()`: extend a followed session by what its log appended. Layer: frames.

A followed session (`workbench.load(path, follow=True)`) keeps the loader's pass open
(`workbench.core.follow.LiveLog`) with the analysed log's one pass riding on it
(`workbench.core.log_pass.LogPass`: log index, surface timeline fold, usage, model-call
attempts; `workbench.core.analysis.AnalysedLog.grown` extends what it derived). A refresh polls the file
once; the loader reads and checks only the appended records, and every stage, the log index
(growing columns, `core.index_columns`) and the fold continue from their state with each appended event, parsed
once; nothing of the whole log is copied (the timeline, usage samples and attempts are views of
the growing collections). The compaction brackets (`core.compaction.brackets
.extend_compactions`), the real meters' counts and the timeline frame's usage columns are
extended by the appended events; the rest of what is derived (surface arrays, audit, quality,
the other cached frames) is dropped and rebuilt on first use from the extended state.

A rewritten, truncated or replaced log cannot be extended: the session loads it again and says so
(`Refresh.notice`). A higher generation file appearing next to the log (DSH migrated it) is
offered in `Refresh.newer`, never opened by itself.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from workbench.core.analysis import AnalysedLog
from workbench.core.follow import LiveLog
from workbench.core.log_pass import LogPass
from workbench.errors import WorkbenchError
from workbench.frames.meters import extend_log_prices
from workbench.io.follow import LogTail, newer_generation
from workbench.io.read import log_path


@dataclass(frozen=True, slots=True)
class Refresh:
    """What one `Session.refresh()` did: `added` events (seqs `first`.. `first + added - 1`),
    `reloaded` when the log had to be read again (`notice` says why), `pending` bytes of a
    record still being written, `newer` a higher generation file DSH wrote next to the log."""

    first: int
    added: int
    pending: int
    reloaded: bool = False
    notice: str | None = None
    newer: str | None = None

    def __bool__(self) -> bool:
        return bool(self.added or self.reloaded)


class Live:
    """A followed log and the one pass riding on it."""

    def __init__(self, log: LiveLog, feeding: LogPass) -> None:
        self.log = log
        self.feeding = feeding
        self.newer: str | None = None   # a higher generation found beside the log (kept once found)

    def find_newer(self, session_id: str | None) -> str | None:
        if self.newer is None:
            self.newer = newer_generation(self.path, session_id)
        return self.newer

    def analysis(self) -> AnalysedLog:
        """The analysed log of everything read so far (its pass stays open)."""
        return AnalysedLog(self.log.log(), self.feeding, follow=True)

    @property
    def tail(self) -> LogTail:
        return self.log.tail

    @property
    def path(self) -> str:
        return self.log.path


def open_live(path: str | os.PathLike) -> Live:
    """`path` followed, with everything written so far read (raises `LogUnreadable` like `load`
    for a path that is not a readable file)."""
    from workbench.errors import LogUnreadable
    name = log_path(path, verb="follow")
    try:
        with open(name, "rb"):
            pass
    except FileNotFoundError as exc:
        raise LogUnreadable(f"{name}: no such file") from exc
    except OSError as exc:
        raise LogUnreadable(f"{name}: cannot be read ({exc.strerror or exc})") from exc
    feeding = AnalysedLog.pass_for(follow=True)
    live = LiveLog(name, feeders=(feeding.start,))
    while True:   # a log larger than one poll's read limit takes several
        before = live.tail.consumed
        live.poll(collect=False)
        if live.tail.consumed == before or live.reset is not None:
            return Live(live, feeding)


def forget_derived(session: Any) -> None:
    """Drop what is rebuilt from the log index and timeline on first use."""
    session.analysis.forget()
    session._frames.clear()
    session.meter_counts.clear()


def _restart(session: Any, live: Live) -> None:
    session._live = live
    session.analysis = live.analysis()
    session._frames.clear()


def refresh(session: Any) -> Refresh:
    """One poll of a followed session's log (module doc)."""
    live: Live | None = session.live
    if live is None:   # a session loaded without follow: start following with one full read
        _restart(session, open_live(session.path))
        return Refresh(0, len(session), session.live.tail.pending, True,
                       "following starts: the log was read again once",
                       session.live.find_newer(session.session_id))
    newer = live.find_newer(session.session_id)
    before = live.tail.position
    poll = live.log.poll(collect=False)
    if poll.reset is not None:
        try:
            _restart(session, open_live(live.path))
        except WorkbenchError as exc:   # gone or unreadable now: keep what was loaded, retry
            return Refresh(len(session), 0, 0, notice=f"{poll.reset}; it cannot be loaded again "
                           f"({exc}): showing what was loaded, retrying at the next poll",
                           newer=newer)
        notice = f"{poll.reset}: loaded again from the start"
        session.reload_notices.append(notice)
        return Refresh(0, len(session), session.live.tail.pending, True, notice, newer)
    analysis = session.analysis
    if not poll.count:
        if live.tail.position != before:   # records without events (a header): the log changed
            analysis.log = live.log.log()
            forget_derived(session)
        return Refresh(poll.first, 0, poll.pending, newer=newer)
    counts = dict(session.meter_counts)
    session._frames.clear()
    analysis.grown(live.log.log(), poll.first)
    session.meter_counts.update(counts)
    extend_log_prices(session, poll.first)   # the real meters' counts: the appended events only
    return Refresh(poll.first, poll.count, poll.pending, newer=newer)


LIVE_CLOCK_MS = 10 * 60 * 1000
"""A log whose last event is this close to the wall clock is being written now: a running
bracket's elapsed time is then counted on the wall clock, else on the log's own clock."""


@dataclass(frozen=True, slots=True)
class Running:
    """A compaction bracket still open at the end of a followed log: `elapsed_ms` since its
    start (wall clock for a log written now, else until the log's last event)."""

    compaction_id: object
    start_seq: int
    trigger: str
    elapsed_ms: float | None


def running_brackets(session: Any, now_ms: float | None = None) -> list[Running]:
    """The compaction attempts a followed log has opened and not closed yet (in a log loaded once
    they are `interrupted`; while following, they are still running)."""
    import time
    n = len(session)
    if not n or session.live is None:
        return []
    last = session.events[n - 1].get("time")
    now = time.time() * 1000 if now_ms is None else now_ms
    clock = now if isinstance(last, (int, float)) and abs(now - last) < LIVE_CLOCK_MS else last
    out = []
    for record in session.compactions.records:
        if record.status != "interrupted" or record.end_seq is not None:
            continue
        start = record.start_time
        elapsed = clock - start if isinstance(clock, (int, float)) and isinstance(start, (int, float)) else None
        out.append(Running(record.compaction_id, record.start_seq, record.trigger.kind, elapsed))
    return out


__all__ = ["Live", "Refresh", "Running", "forget_derived", "open_live", "refresh", "running_brackets"]

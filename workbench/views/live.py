"""Following a growing log in the widget: the live bar and the poller. Layer: views.

`LiveFollow` attaches to a `Workbench` (``Workbench(session, follow=True)`` or
``workbench.follow(path)``). It is self-contained: a bar above the workbench (a "live" badge with
the count of new events, the running compaction brackets with their elapsed time, notices) with a
"follow tail" toggle and a stop button, and a poller.

Rules:

* polling never blocks the kernel: an asyncio task on the kernel's running loop calls
  `Session.refresh()` every `POLL_SECONDS` (a few times a second); without a running loop (a
  script, a test) nothing polls by itself and `poll()` does one step;
* the user's step is kept while new events arrive, unless "follow tail" is on (then the step
  moves to the last event at each redraw); "new events" counts what arrived since the user last
  stood at the end;
* the panels and charts are rebuilt from the grown session at most once every `REDRAW_SECONDS`
  however fast events arrive (and never more often than twice the last redraw took); the bar is
  updated at every poll (elapsed times tick);
* a log that was rewritten or truncated is loaded again by the session (`Session.refresh`) and
  the bar says so; a newer generation of the session (DSH migrated the log,
  `workbench.io.follow.newer_generation`) is named in the bar with an "open newer generation"
  button, never opened by itself.
"""
from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from workbench.views.html import escape

if TYPE_CHECKING:
    from workbench.views.workbench import Workbench

POLL_SECONDS = 0.25
REDRAW_SECONDS = 0.5
COST_FACTOR = 2.0
"""A redraw waits at least this many times as long as the last one took (large logs)."""


def _elapsed(ms: float | None) -> str:
    if ms is None:
        return ""
    seconds = max(ms, 0) / 1000
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


class LiveFollow:
    """The live bar and poller of one `Workbench` (module doc)."""

    def __init__(self, workbench: Workbench, *, tail: bool = False) -> None:
        self.workbench = workbench
        self.session = workbench.session
        self.seen_last = len(self.session) - 1   # the last seq the user stood at
        self.notices: list[str] = []
        self.newer: str | None = None
        self.pending = 0
        self.redraws = 0
        self.polls = 0
        self.errors = 0
        self._dirty = False
        self._last_redraw = 0.0
        self._redraw_cost = 0.0
        self._task: asyncio.Task | None = None
        self.badge = widgets.HTML()
        self.badge.add_class("wb-live-badge")
        self.tail = widgets.ToggleButton(value=tail, description="follow tail", icon="arrow-down",
                                         tooltip="move the step to the last event as events arrive")
        self.tail.add_class("wb-live-tail")
        self.stop_button = widgets.Button(description="stop", icon="stop",
                                          tooltip="stop following (the log is no longer read)")
        self.stop_button.add_class("wb-live-stop")
        self.stop_button.on_click(lambda _: self.stop())
        self.open_newer_button = widgets.Button(
            description="open newer generation", icon="level-up",
            tooltip="DSH migrated this session: follow its newer generation file instead",
            layout=widgets.Layout(display="none"))
        self.open_newer_button.add_class("wb-live-newer")
        self.open_newer_button.on_click(lambda _: self.open_newer())
        self.tail.observe(self._tail_changed, names="value")
        self.bar = widgets.HBox([self.badge, self.tail, self.open_newer_button, self.stop_button])
        self.bar.add_class("wb-live")
        self._badge()

    # -- polling --------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> bool:
        """Start polling on the running event loop (the kernel's); False when there is none."""
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            return False
        if not loop.is_running() or self.running:
            return self.running
        self._task = loop.create_task(self._run())
        return True

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.stop_button.disabled = True
        self.tail.disabled = True
        self._badge(stopped=True)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            self.poll()

    def poll(self, *, force: bool = False) -> Any:
        """One refresh of the session; redraws when due (or `force`). Never raises: a failure is
        counted and shown in the bar (the poller keeps going)."""
        self.polls += 1
        try:
            result = self.session.refresh()
        except Exception as exc:  # noqa: BLE001 - a kernel task must not die silently
            self.errors += 1
            self.notices = [f"reading the log failed: {type(exc).__name__}: {exc}"]
            self._badge()
            return None
        self.pending = result.pending
        if result.newer and result.newer != self.newer:
            self.newer = result.newer
            self.open_newer_button.layout.display = None
        if result.reloaded and result.notice:
            self.notices = [result.notice]
            self.seen_last = min(self.seen_last, len(self.session) - 1)
        if result:
            self._dirty = True
        now = time.monotonic()
        due = now - self._last_redraw >= max(REDRAW_SECONDS, COST_FACTOR * self._redraw_cost)
        if self._dirty and (due or force):
            try:
                self.redraw()
            except Exception as exc:  # noqa: BLE001 - as above (a log changed on disk: LogChanged)
                self.errors += 1
                self.notices = [f"redrawing failed: {type(exc).__name__}: {exc}"]
        self._badge()
        return result

    def redraw(self) -> None:
        """Rebuild the workbench's panels from the grown session, keeping the user's step (the
        last event when following the tail)."""
        started = time.monotonic()
        wb = self.workbench
        last = len(self.session) - 1
        step = last if self.tail.value else min(wb.state.step, max(last, 0))
        wb.rebuild(step)
        if self.tail.value or step >= last:
            self.seen_last = last
        self._dirty = False
        self.redraws += 1
        self._last_redraw = time.monotonic()
        self._redraw_cost = self._last_redraw - started

    def open_newer(self) -> None:
        """Follow the newer generation file the bar offers (DSH migrated the log) in this
        workbench instead of the old one, at its last event when following the tail."""
        if self.newer is None:
            return
        from workbench.session import load
        path, self.newer = self.newer, None
        try:
            session = load(path, follow=True)
        except Exception as exc:  # noqa: BLE001 - the bar says what went wrong, the old log stays
            self.notices = [f"the newer generation could not be opened: {type(exc).__name__}: {exc}"]
            self._badge()
            return
        self.open_newer_button.layout.display = "none"
        self.session = self.workbench.session = session
        self.notices = [f"following the newer generation now: {os.path.basename(path)}"]
        self.seen_last = len(session) - 1
        self.redraw()
        self._badge()

    def _tail_changed(self, change: dict) -> None:
        if change["new"]:
            self.poll(force=True)
            if not self._dirty and self.workbench.state.step != len(self.session) - 1:
                self.redraw()

    # -- the bar --------------------------------------------------------------------------------

    @property
    def new_events(self) -> int:
        """Events that arrived since the user last stood at the end of the log."""
        state = getattr(self.workbench, "state", None)   # None while the workbench is built
        if state is not None and state.step >= state.last_seq:
            self.seen_last = max(self.seen_last, state.last_seq)
        return max(len(self.session) - 1 - self.seen_last, 0)

    def _badge(self, *, stopped: bool = False) -> None:
        from workbench.frames.live import running_brackets
        session = self.session
        parts = [f"{len(session):,} events"]
        new = self.new_events
        if new:
            parts.append(f'<b class="wb-live-new">+{new:,} new</b>')
        try:
            running = running_brackets(session)
        except Exception:  # noqa: BLE001 - the bar must render whatever the log holds
            running = []
        for r in running:
            parts.append(f'<span class="wb-live-running">compaction running {escape(_elapsed(r.elapsed_ms))}'
                         f" (since #{r.start_seq}, {escape(r.trigger)})</span>")
        if self.pending:
            parts.append(f"{self.pending:,} bytes being written")
        if self.newer:
            parts.append(f'<span class="wb-live-newer-note">a newer generation of this session appeared: '
                         f"{escape(os.path.basename(self.newer))} (DSH migrated the log; "
                         f"“open newer generation” follows it)</span>")
        for notice in self.notices:
            parts.append(f'<span class="wb-live-notice">{escape(notice)}</span>')
        label = "stopped" if stopped or (self._task is None and self.stop_button.disabled) else "● live"
        css = "wb-live-off" if label == "stopped" else "wb-live-on"
        self.badge.value = (f'<span class="{css}" style="font-weight:bold;color:'
                            f'{"#888" if css == "wb-live-off" else "#c62828"}">{label}</span> · '
                            + " · ".join(parts))


__all__ = ["LiveFollow", "POLL_SECONDS", "REDRAW_SECONDS"]

"""`LogPane`: the events around the step, one row each. Layer: views.

A window of `before` + 1 + `after` events, never the whole log: one row per event (seq, type,
role, preview), the step highlighted, nodes hidden from the surface at the step marked with the
replacement that hid them, events after the step dimmed, compaction brackets drawn as a bar
spanning start → end in the gutter. Clicking a row moves the step there.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.views.clickable import ClickableHTML
from workbench.views.data import ViewData, view_data
from workbench.views.html import LogRow, log_table_html
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session


class LogPane(Panel):
    """The log window around `state.step` (see the module doc)."""

    title = "log pane"

    def __init__(self, session: Session, state: StepState | None = None, *,
                 before: int = 14, after: int = 10) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        self.before, self.after = before, after
        self.pane = ClickableHTML()
        self.pane.add_class("wb-log-pane")
        self.pane.on_click(lambda seq, _act: state.move(seq))
        super().__init__(state, (self.pane,), own_state=own)

    def rows(self, step: int) -> list[LogRow]:
        """The rows shown at `step` (pure: tests and the report use it without a front end)."""
        data = self.data
        if not data.n:
            return []
        lo, hi = max(0, step - self.before), min(data.last_seq, step + self.after)
        brackets = data.brackets_between(lo, hi)
        rows = []
        for seq in range(lo, hi + 1):
            bar = None
            for b in brackets:
                end = data.bracket_end(b)
                if b.start <= seq <= end:
                    closed = b.end >= 0
                    part = ("single" if b.start == end and closed else "start"
                            if seq == b.start else "end" if seq == end and closed
                            else "inside")
                    bar = (b.status, part)
                    break
            rows.append(LogRow(seq=seq, type=data.type[seq] or "", role=data.role[seq],
                               preview=data.preview[seq] or "",
                               surface=data.surface_state(seq, step),  # type: ignore[arg-type]
                               hidden_by=data.hidden_at(seq, step), bracket=bar,
                               is_step=seq == step))
        return rows

    def _render(self, change: dict | None = None) -> None:
        step = self.state.step
        rows = self.rows(step)
        first, last = (rows[0].seq, rows[-1].seq) if rows else (0, -1)
        caption = f"log: seq {first}–{last} of {self.data.n} events · step {step}"
        self.pane.html = log_table_html(rows, caption=caption)

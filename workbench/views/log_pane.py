"""`LogPane`: the events around the step, one row each. Layer: views.

A window of `before` + 1 + `after` events, never the whole log: one row per event (seq, type,
role, preview), the step highlighted, nodes hidden from the surface at the step marked with the
replacement that hid them, events after the step dimmed, compaction brackets drawn as a bar
spanning start → end in the gutter. Clicking a row moves the step there.

The window is centred on `state.selected`, which follows the step; selecting an event elsewhere
(a lineage entry of a checkpoint, a surface node) brings it into view while the marks still
describe the surface at the step: after a compaction, selecting the first event it hid shows the
hidden range with "hidden by #checkpoint" on every hidden row.
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
        self._shown: tuple[int, int] | None = None
        self.pane = ClickableHTML()
        self.pane.add_class("wb-log-pane")
        self.pane.on_click(lambda seq, _act: state.move(seq))
        super().__init__(state, (self.pane,), own_state=own)

    observes = ("step", "selected")

    def rows(self, step: int, centre: int | None = None) -> list[LogRow]:
        """The rows around `centre` (default: the step) with their state at `step` (pure:
        tests and the report use it without a front end)."""
        data = self.data
        if not data.n:
            return []
        centre = step if centre is None else centre
        lo, hi = max(0, centre - self.before), min(data.last_seq, centre + self.after)
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
                               is_step=seq == step, is_focus=seq == centre))
        return rows

    def _render(self, change: dict | None = None) -> None:
        step, centre = self.state.step, self.state.selected
        if change is not None and self._shown == (step, centre):
            return  # a step change also moves the selection: draw once
        rows = self.rows(step, centre)
        first, last = (rows[0].seq, rows[-1].seq) if rows else (0, -1)
        caption = f"log: seq {first}–{last} of {self.data.n} events · step {step}"
        if centre != step:
            caption += f" · showing #{centre}"
        self.pane.html = log_table_html(rows, caption=caption)
        self._shown = (step, centre)

"""`LogPane`: the events around the step, one row each. Layer: views.

A window of `before` + 1 + `after` events, never the whole log: one row per event (seq, type,
role, preview), the step highlighted, nodes hidden from the surface at the step marked with the
replacement that hid them (a link to it), events after the step dimmed, compaction brackets drawn
as a bar spanning start → end in the gutter, the start row of a bracket that did not complete
naming its status in words. Clicking a row moves the step there.

The window is centred on `state.selected`, which follows the step; selecting an event elsewhere
(a lineage entry of a checkpoint, a surface node) brings it into view while the marks still
describe the surface at the step.

When the centre is a replacement (a compaction checkpoint, a pruned copy), the window is its
*range view* instead: every node it hid (marked "hidden by #R"; past `range_rows` nodes the middle
ones fold into one row with their count), then the rows from its bracket's start to its end
around the replacement (which names the range it hid). Hidden rows and the replacement link to
each other.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.views.bracket_rows import Bracket
from workbench.views.clickable import ClickableHTML
from workbench.views.data import ViewData, view_data
from workbench.views.html import LogGap, LogRow, log_table_html
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session


class LogPane(Panel):
    """The log window around `state.step` (see the module doc)."""

    title = "log pane"

    def __init__(self, session: Session, state: StepState | None = None, *,
                 before: int = 14, after: int = 10, range_rows: int = 12) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        self.before, self.after, self.range_rows = before, after, range_rows
        self._shown: tuple[int, int] | None = None
        self.pane = ClickableHTML()
        self.pane.add_class("wb-log-pane")
        self.pane.on_click(self._clicked)
        super().__init__(state, (self.pane,), own_state=own)

    observes = ("step", "selected")

    def _clicked(self, seq: int, act: str) -> None:
        if act == "select":
            self.state.selected = seq
        else:
            self.state.move(seq)

    def row(self, seq: int, step: int, centre: int, brackets: list[Bracket]) -> LogRow:
        """One event's row as of `step` (pure)."""
        data = self.data
        bar, note = None, ""
        for b in brackets:
            end = data.bracket_end(b)
            if b.start <= seq <= end:
                closed = b.end >= 0
                part = ("single" if b.start == end and closed else "start"
                        if seq == b.start else "end" if seq == end and closed
                        else "inside")
                bar = (b.status, part)
                note = data.status_note(b) if seq == b.start else ""
                break
        rep = data.timeline.replacement_by_seq.get(seq)
        replaces = (rep.shadowed[0], rep.shadowed[-1], len(rep.shadowed)) \
            if rep is not None and rep.shadowed and seq <= step else None
        return LogRow(seq=seq, type=data.type[seq] or "", role=data.role[seq],
                      preview=data.preview[seq] or "",
                      surface=data.surface_state(seq, step),  # type: ignore[arg-type]
                      hidden_by=data.hidden_at(seq, step), bracket=bar,
                      is_step=seq == step, is_focus=seq == centre, note=note,
                      replaces=replaces)

    def rows(self, step: int, centre: int | None = None) -> list[LogRow | LogGap]:
        """The rows around `centre` (default: the step) with their state at `step`, or the
        range view when `centre` is a replacement at or before `step` (pure: tests and the
        report use it without a front end)."""
        data = self.data
        if not data.n:
            return []
        centre = step if centre is None else centre
        rep = data.timeline.replacement_by_seq.get(centre)
        if rep is not None and rep.shadowed and centre <= step:
            return self.range_rows_of(step, centre, tuple(rep.shadowed))
        lo, hi = max(0, centre - self.before), min(data.last_seq, centre + self.after)
        brackets = data.brackets_between(lo, hi)
        return [self.row(seq, step, centre, brackets) for seq in range(lo, hi + 1)]

    def range_rows_of(self, step: int, replacement: int,
                      hidden: tuple[int, ...]) -> list[LogRow | LogGap]:
        """The range view of `replacement` (module doc)."""
        data = self.data
        shown: list[int | LogGap] = list(hidden)
        if len(hidden) > self.range_rows:
            head = self.range_rows // 2
            tail = self.range_rows - head
            folded = hidden[head:len(hidden) - tail]
            shown = [*hidden[:head], LogGap(folded[0], folded[-1], len(folded), "more hidden nodes"),
                     *hidden[len(hidden) - tail:]]
        bracket = data.bracket_by_replacement.get(replacement)
        lo = bracket.start if bracket is not None else replacement - 1
        hi = data.bracket_end(bracket) if bracket is not None else replacement + 1
        lo, hi = max(lo, hidden[-1] + 1, 0), min(max(hi, replacement), data.last_seq)
        if lo > hidden[-1] + 1:
            shown.append(LogGap(hidden[-1] + 1, lo - 1, lo - 1 - hidden[-1]))
        shown.extend(range(lo, hi + 1))
        seqs = [s for s in shown if isinstance(s, int)]
        brackets = data.brackets_between(min(seqs), max(seqs))
        return [s if isinstance(s, LogGap) else self.row(s, step, replacement, brackets)
                for s in shown]

    def _render(self, change: dict | None = None) -> None:
        step, centre = self.state.step, self.state.selected
        if change is not None and self._shown == (step, centre):
            return  # a step change also moves the selection: draw once
        rows = self.rows(step, centre)
        seqs = [r.seq for r in rows if isinstance(r, LogRow)]
        rep = self.data.timeline.replacement_by_seq.get(centre)
        if rows and rep is not None and rep.shadowed and centre <= step:
            caption = (f"log: what #{centre} hid ({len(rep.shadowed):,} nodes "
                       f"#{rep.shadowed[0]}–#{rep.shadowed[-1]}) and its bracket · step {step}")
        elif not self.data.n:
            caption = "log: no readable event (an empty log, or one damaged from its start)"
        else:
            first, last = (seqs[0], seqs[-1]) if seqs else (step, step)
            caption = f"log: seq {first}–{last} of {self.data.n:,} events · step {step}"
            if centre != step:
                caption += f" · showing #{centre}"
        self.pane.html = log_table_html(rows, caption=caption)
        self._shown = (step, centre)

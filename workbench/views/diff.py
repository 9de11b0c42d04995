"""`DiffPane`: compare the surfaces at two steps. Layer: views.

Pick steps `a` and `b` (or copy the current step into either); the pane lists the nodes added
and removed and every replaced range with its token delta, from
`workbench.core.timeline.SurfaceTimeline.diff` (no refold). It re-renders only when `a` or `b`
changes, never on a step. Row lists are cut at `max_rows` (totals still count everything).
Clicking a row selects that event in the inspector.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as widgets

from workbench.views.clickable import ClickableHTML
from workbench.views.data import ViewData, view_data
from workbench.views.html import SurfaceRow, diff_html
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session


class DiffPane(Panel):
    """Nodes added, removed and replaced between two steps."""

    title = "diff"
    observes = ()

    def __init__(self, session: Session, state: StepState | None = None, *,
                 max_rows: int = 40) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        self.max_rows = max_rows
        last = self.data.last_seq
        self.a = widgets.BoundedIntText(value=max(state.step - 1, 0), min=0, max=last,
                                        description="from seq", layout=widgets.Layout(
                                            width="180px"))
        self.b = widgets.BoundedIntText(value=state.step, min=0, max=last, description="to seq",
                                        layout=widgets.Layout(width="180px"))
        take_a = widgets.Button(description="from ← step", layout=widgets.Layout(width="auto"))
        take_b = widgets.Button(description="to ← step", layout=widgets.Layout(width="auto"))
        take_a.on_click(lambda _b: setattr(self.a, "value", state.step))
        take_b.on_click(lambda _b: setattr(self.b, "value", state.step))
        self.pane = ClickableHTML()
        self.pane.add_class("wb-diff-pane")
        self.pane.on_click(lambda seq, _act: setattr(state, "selected", seq))
        for box in (self.a, self.b):
            box.observe(lambda _c: self.refresh(), names="value")
        super().__init__(state, (widgets.HBox([self.a, take_a, self.b, take_b]), self.pane),
                         own_state=own)

    def _row(self, position: int, seq: int) -> SurfaceRow:
        data = self.data
        rep = data.timeline.replacement_by_seq.get(seq)
        replaces = (rep.shadowed[0], rep.shadowed[-1], len(rep.shadowed)) if rep else None
        return SurfaceRow(position, seq, data.type[seq] or "", data.role[seq],
                          int(data.tokens[seq]), data.preview[seq] or "", replaces=replaces)

    def _render(self, change: dict | None = None) -> None:
        data = self.data
        if not data.n:
            self.pane.html = ""
            return
        a, b = int(self.a.value), int(self.b.value)
        diff = data.timeline.diff(a, b)
        tokens = data.tokens
        added = [self._row(i, s) for i, s in enumerate(diff.added[: self.max_rows])]
        removed = [self._row(i, s) for i, s in enumerate(diff.removed[: self.max_rows])]
        replaced = [(h.removed, h.added, int(tokens[list(h.removed)].sum()),
                     int(tokens[list(h.added)].sum())) for h in diff.replaced]
        self.pane.html = diff_html(
            a, b, added, removed, replaced=replaced,
            tokens_a=int(data.surface_tokens[a]), tokens_b=int(data.surface_tokens[b]),
            added_total=(len(diff.added), int(tokens[list(diff.added)].sum())),
            removed_total=(len(diff.removed), int(tokens[list(diff.removed)].sum())))

"""`DiffPane`: compare the surfaces at two steps. Layer: views.

The pane lists the nodes added and removed between steps `a` and `b` and every replaced range
with its token delta, from `workbench.core.timeline.SurfaceTimeline.diff` (no refold). By
default it follows the step: `a` is the previously shown step ("previous step") or the surface
just before the last replacement at or before the step ("last compaction"), `b` the step. Typing
a seq into either box (or copying the step into it) pins both until the user picks a follow mode
again. Row lists are cut at `max_rows` (totals still count everything). Clicking a row selects
that event in the inspector.
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
    observes = ("step",)
    MODES = (("previous step", "previous"), ("last compaction", "compaction"),
             ("pinned", "pinned"))

    def __init__(self, session: Session, state: StepState | None = None, *,
                 max_rows: int = 40, follow: str = "previous") -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        self.max_rows = max_rows
        last = self.data.last_seq
        self._setting = False
        self._previous = max(state.step - 1, 0)
        self.follow = widgets.ToggleButtons(
            options=self.MODES, value=follow, description="compare",
            tooltips=["the step before vs the step", "the surface before the last replacement "
                      "vs the step", "keep the two seqs typed below"],
            style={"button_width": "130px"})
        self.follow.add_class("wb-diff-follow")
        self.a = widgets.BoundedIntText(value=self._previous, min=0, max=last,
                                        description="from seq", tooltip="the older surface",
                                        layout=widgets.Layout(width="180px"))
        self.b = widgets.BoundedIntText(value=state.step, min=0, max=last, description="to seq",
                                        tooltip="the newer surface",
                                        layout=widgets.Layout(width="180px"))
        take_a = widgets.Button(description="from ← step", tooltip="pin the step as 'from'",
                                layout=widgets.Layout(width="auto"))
        take_b = widgets.Button(description="to ← step", tooltip="pin the step as 'to'",
                                layout=widgets.Layout(width="auto"))
        take_a.on_click(lambda _b: setattr(self.a, "value", state.step))
        take_b.on_click(lambda _b: setattr(self.b, "value", state.step))
        self.pane = ClickableHTML()
        self.pane.add_class("wb-diff-pane")
        self.pane.on_click(lambda seq, _act: setattr(state, "selected", seq))
        for box in (self.a, self.b):
            box.observe(self._typed, names="value")
        self.follow.observe(lambda _c: self.refresh(), names="value")
        super().__init__(state, (self.follow, widgets.HBox([self.a, take_a, self.b, take_b]),
                                 self.pane), own_state=own)

    def _typed(self, _change: dict) -> None:
        if not self._setting:
            self.follow.value = "pinned"
        self.refresh()

    def seqs(self, step: int) -> tuple[int, int]:
        """The pair the follow mode compares at `step` (pinned: the boxes)."""
        mode = self.follow.value
        if mode == "pinned":
            return int(self.a.value), int(self.b.value)
        if mode == "compaction":
            replaced = [s for s in self.data.timeline.replacement_by_seq if s <= step]
            return (max(max(replaced) - 1, 0) if replaced else 0), step
        return (self._previous if self._previous != step else max(step - 1, 0)), step

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
        if change is not None and change.get("name") == "step":
            self._previous = int(change["old"])
        a, b = self.seqs(self.state.step)
        if (a, b) != (self.a.value, self.b.value):
            self._setting = True
            try:
                self.a.value, self.b.value = a, b
            finally:
                self._setting = False
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

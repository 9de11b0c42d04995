"""`SurfacePane`: the model-visible messages at the step. Layer: views.

The surface at the step comes from the core `SurfaceTimeline` (a bisect plus a slice, never a
refold). Only a window of it is drawn: `before` + `after` nodes around the *focus*, which is the
step's own node when the step appended or replaced one, else the newest node (the place where
the surface last changed). Each row shows position, seq, role, tokens (DSH meter) and a preview.
A replacement node names the range it stands for and expands to its lineage: the nodes it
replaced and, through nested compactions, the original events (`lineage_depth` levels, at most
`lineage_width` entries per level, the rest counted). Nodes that joined the surface since the
previously shown step carry a marker and flash once. A compaction checkpoint shows its summary
body in place (DSH's framing left out, the framed message one click away) with its price by each
of `meters`.

The toggle shows the append-origin transcript instead (v0 spec §4.9): every appended
user/assistant/tool event up to the step, including those the surface no longer holds.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import ipywidgets as widgets
import numpy as np

from workbench.views.clickable import ClickableHTML
from workbench.views.data import ViewData, view_data
from workbench.views.html import LineageItem, SurfaceRow, surface_table_html
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session


class SurfacePane(Panel):
    """The surface (or the transcript) at `state.step` (see the module doc)."""

    title = "surface pane"

    def __init__(self, session: Session, state: StepState | None = None, *,
                 before: int = 8, after: int = 16, lineage_depth: int = 3,
                 lineage_width: int = 20, meters: Sequence[str] = ("dsh",)) -> None:
        self.data: ViewData = view_data(session)
        self.meters = tuple(meters)
        state, own = state_for(self.data.last_seq, state)
        self.before, self.after = before, after
        self.lineage_depth, self.lineage_width = lineage_depth, lineage_width
        self._shown_step: int | None = None
        self.mode = widgets.ToggleButtons(options=["surface", "transcript"], value="surface",
                                          style={"button_width": "90px"})
        self.mode.add_class("wb-surface-mode")
        self.pane = ClickableHTML()
        self.pane.add_class("wb-surface-pane")
        self.pane.on_click(lambda seq, _act: setattr(state, "selected", seq))
        self.mode.observe(lambda _c: self.refresh(), names="value")
        super().__init__(state, (self.mode, self.pane), own_state=own)

    # -- rows (pure) --------------------------------------------------------------------------

    def lineage(self, seq: int, depth: int) -> tuple[tuple[LineageItem, ...], int]:
        """What replacement `seq` stands for, `depth` levels deep: items and the count left out."""
        rep = self.data.timeline.replacement_by_seq.get(seq)
        if rep is None or depth <= 0:
            return (), 0
        items = []
        for child in rep.shadowed[: self.lineage_width]:
            kids, more = self.lineage(child, depth - 1)
            items.append(LineageItem(child, self.data.type[child] or "",
                                     self.data.preview[child] or "", kids, more))
        return tuple(items), max(0, len(rep.shadowed) - self.lineage_width)

    def node_row(self, position: int, seq: int, *, changed: bool = False,
                 focus: bool = False) -> SurfaceRow:
        data = self.data
        rep = data.timeline.replacement_by_seq.get(seq)
        replaces, lineage, more, checkpoint = None, (), 0, None
        if rep is not None and rep.shadowed:
            replaces = (rep.shadowed[0], rep.shadowed[-1], len(rep.shadowed))
            lineage, more = self.lineage(seq, self.lineage_depth)
            checkpoint = data.checkpoint(seq, self.meters)
        return SurfaceRow(position=position, seq=seq, type=data.type[seq] or "",
                          role=data.role[seq], tokens=int(data.tokens[seq]),
                          preview=data.preview[seq] or "", replaces=replaces,
                          lineage=lineage, changed=changed, lineage_more=more,
                          checkpoint=checkpoint, is_focus=focus)

    def focus(self, surface: tuple[int, ...], step: int) -> int:
        """Position of the node the window centres on (see the module doc)."""
        if not surface:
            return 0
        data = self.data
        target = step if data.node[step] and data.hidden_at(step, step) is None else max(surface)
        try:
            return surface.index(target)
        except ValueError:
            return len(surface) - 1

    def surface_rows(self, step: int, previous: int | None = None) -> tuple[list[SurfaceRow], int]:
        """The window of the surface at `step` and the surface's node count; nodes not on the
        surface at `previous` are marked changed."""
        timeline = self.data.timeline
        surface = timeline.surface_at(step)
        centre = self.focus(surface, step)
        lo = max(0, min(centre - self.before, len(surface) - self.before - self.after - 1))
        hi = min(len(surface), lo + self.before + self.after + 1)
        rows = []
        for position in range(lo, hi):
            seq = surface[position]
            changed = previous is not None and previous != step and not timeline.on_surface(
                seq, previous)
            rows.append(self.node_row(position, seq, changed=changed, focus=position == centre))
        return rows, len(surface)

    def transcript_rows(self, step: int) -> tuple[list[SurfaceRow], int]:
        """The last transcript entries up to `step` and the transcript's length there."""
        transcript = self.data.transcript
        end = int(np.searchsorted(transcript, step, side="right"))
        lo = max(0, end - self.before - self.after - 1)
        rows = []
        for index in range(lo, end):
            seq = int(transcript[index])
            row = self.node_row(index, seq)
            hidden = self.data.hidden_at(seq, step)
            if hidden is not None:
                row = SurfaceRow(row.position, row.seq, row.type, row.role, row.tokens,
                                 f"[hidden by #{hidden}] {row.preview}")
            rows.append(row)
        return rows, end

    # -- render -------------------------------------------------------------------------------

    def _render(self, change: dict | None = None) -> None:
        step = self.state.step
        if not self.data.n:
            self.pane.html = surface_table_html([], caption="empty log")
            return
        if self.mode.value == "transcript":
            rows, count = self.transcript_rows(step)
            caption = f"transcript at seq {step}: {count} appended messages"
        else:
            rows, count = self.surface_rows(step, self._shown_step)
            total = int(self.data.surface_tokens[step])
            caption = f"surface at seq {step}: {count} nodes, {total:,} tokens (dsh)"
        if rows:
            caption += f" · showing #{rows[0].position}–#{rows[-1].position}"
        self.pane.html = surface_table_html(rows, caption=caption)
        self._shown_step = step

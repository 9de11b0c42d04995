"""`StepState`: the one seq every view shows, and `Panel`, the base every view builds on.
Layer: views.

One `step` trait drives everything (design/style-examples.md, Example 3): controls set it,
panels observe it, and each panel has exactly one `_render()` that `__init__` also calls. The
only other shared trait is `selected`, the event the inspector shows; it follows `step` unless a
view selects another event (a lineage entry, a surface node).

Rendering errors never vanish into a log: JupyterLab shows callback output nowhere, so `Panel`
catches what `_render` raises and shows it in its own visible error box (cleared on the next
successful render). The exception is also kept in `Panel.last_error` for tests and scripts.
"""
from __future__ import annotations

import traceback

import ipywidgets as widgets
import traitlets

from workbench.errors import Unimplemented, WorkbenchError
from workbench.views.html import error_html


class StepOutOfRange(WorkbenchError, traitlets.TraitError):
    """A step or selected seq outside 0..last_seq (a `TraitError`, so traitlets reports it)."""


class StepState(traitlets.HasTraits):
    """The seq every view is showing. Panels observe it; only controls and clicks set it."""

    step = traitlets.Int(0, help="Seq of the last event folded into the views.")
    last_seq = traitlets.Int(0, help="Highest seq in the log; fixed at construction.")
    selected = traitlets.Int(0, help="Seq of the event the inspector shows.")

    @traitlets.validate("step", "selected")
    def _validate_seq(self, proposal: dict) -> int:
        value = proposal["value"]
        if not 0 <= value <= self.last_seq:
            msg = f"{proposal['trait'].name} {value} is outside 0..{self.last_seq}"
            raise StepOutOfRange(msg)
        return value

    @traitlets.observe("step")
    def _selection_follows_step(self, change: dict) -> None:
        self.selected = change["new"]

    def move(self, seq: int) -> None:
        """Set the step, clamped to the log (controls use this for relative moves)."""
        self.step = min(max(int(seq), 0), self.last_seq)


def state_for(last_seq: int, state: StepState | None) -> tuple[StepState, bool]:
    """`state`, or a new one over ``0..last_seq``; the flag says whether it was created here."""
    if state is not None:
        return state, False
    return StepState(last_seq=max(int(last_seq), 0)), True


class Panel(widgets.VBox):
    """A view that observes `state.step` and redraws through its one `_render()`.

    Subclasses build their widgets, call `super().__init__(state, children)` and implement
    `_render(change)`. A view built without a shared state gets its own plus a slider, so it is
    usable on its own (``TokenTimeline(session)``)."""

    title = "view"
    observes: tuple[str, ...] = ("step",)

    def __init__(self, state: StepState, children: tuple[widgets.Widget, ...], *,
                 own_state: bool = False) -> None:
        self.state = state
        self.last_error: BaseException | None = None
        self._error = widgets.HTML("", layout=widgets.Layout(display="none"))
        self._error.add_class("wb-error-area")
        head: tuple[widgets.Widget, ...] = ()
        if own_state:
            slider = widgets.IntSlider(min=0, max=state.last_seq, description="seq",
                                       continuous_update=False,
                                       layout=widgets.Layout(width="100%"))
            traitlets.link((slider, "value"), (state, "step"))
            head = (slider,)
        super().__init__(head + (self._error,) + tuple(children))
        self.add_class("wb-panel")
        if self.observes:
            state.observe(self.refresh, names=list(self.observes))
        self.refresh()

    def refresh(self, change: dict | None = None) -> None:
        """Run `_render`, showing any error in the panel instead of raising it."""
        try:
            self._render(change)
        except Exception as error:  # noqa: BLE001 - shown to the user, never swallowed
            self.last_error = error
            detail = "".join(traceback.format_exception_only(type(error), error)).strip()
            self._error.value = error_html(f"{self.title} at seq {self.state.step}", detail)
            self._error.layout.display = None
        else:
            if self.last_error is not None:
                self.last_error = None
                self._error.value = ""
                self._error.layout.display = "none"

    def _render(self, change: dict | None = None) -> None:
        raise Unimplemented

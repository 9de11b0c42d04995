"""`StepControls`: everything that moves the shared step. Layer: views.

Slider, play/pause with speed (pausing keeps the step: Play's stop button, which rewinds to seq
0, is not shown), one event back/forward, previous/next compaction stop (each attempt's start
and its replacement, or its end when no replacement landed), previous/next model request, jump
to a seq and a search (text, event type, surface state) that moves to the next match. Every
control carries a tooltip. Controls only *set* `state.step`; they never render panels (design
Example 3).

The Play widget drives the slider in the front end only (`jslink`), and the slider is linked to
the kernel state (`traitlets.link`), so playback costs one kernel render per tick and nothing
else. Buttons carry ``wb-*`` classes so tests and users' CSS can find them.
"""
from __future__ import annotations

import ipywidgets as widgets
import traitlets

from workbench.views.navigation import SURFACE_STATES, Navigator
from workbench.views.state import StepState

SPEEDS: tuple[tuple[str, int], ...] = (("0.5×", 800), ("1×", 400), ("2×", 200), ("5×", 80),
                                       ("max", 20))
"""Playback speeds: label → milliseconds between ticks."""


def _button(label: str, tip: str, css: str, width: str = "auto") -> widgets.Button:
    button = widgets.Button(description=label, tooltip=tip,
                            layout=widgets.Layout(width=width))
    button.add_class(css)
    return button


class StepControls(widgets.VBox):
    """The control bar of the workbench, bound to `state.step`."""

    def __init__(self, state: StepState, navigator: Navigator) -> None:
        self.state, self.nav = state, navigator
        last = state.last_seq
        self.slider = widgets.IntSlider(value=state.step, min=0, max=last, description="seq",
                                        continuous_update=False,
                                        tooltip="the step: every view shows the log up to here",
                                        layout=widgets.Layout(flex="1 1 auto"))
        self.slider.add_class("wb-slider")
        self.play = widgets.Play(value=state.step, min=0, max=last, interval=400, step=1,
                                 description="play", show_repeat=False,
                                 tooltip="play / pause (pausing keeps the step)")
        self.play.add_class("wb-play")
        self.speed = widgets.Dropdown(options=SPEEDS, value=400, description="speed",
                                      tooltip="playback speed",
                                      layout=widgets.Layout(width="150px"))
        self.stride = widgets.BoundedIntText(value=1, min=1, max=max(last, 1),
                                             description="by", tooltip="seqs per playback tick",
                                             layout=widgets.Layout(width="120px"))
        self._links = (widgets.jslink((self.play, "value"), (self.slider, "value")),
                       widgets.jslink((self.stride, "value"), (self.play, "step")))
        traitlets.dlink((self.speed, "value"), (self.play, "interval"))
        traitlets.link((self.slider, "value"), (state, "step"))

        self.back = _button("◀", "one event back", "wb-back", "36px")
        self.forward = _button("▶", "one event forward", "wb-forward", "36px")
        self.prev_compaction = _button("« compaction", "previous compaction stop (a start or "
                                       "a replacement)", "wb-prev-compaction")
        self.next_compaction = _button("compaction »", "next compaction stop (a start or a "
                                       "replacement)", "wb-next-compaction")
        self.prev_request = _button("« request", "previous model request", "wb-prev-request")
        self.next_request = _button("request »", "next model request", "wb-next-request")
        self.jump = widgets.BoundedIntText(value=state.step, min=0, max=last, description="seq",
                                           tooltip="a seq to jump to",
                                           layout=widgets.Layout(width="150px"))
        self.go = _button("go", "jump to this seq", "wb-go")
        self.query = widgets.Text(placeholder="search previews", tooltip="text to find in the "
                                  "event previews (case-insensitive)",
                                  layout=widgets.Layout(width="220px"))
        self.event_type = widgets.Dropdown(options=[("any type", "")] + [(t, t) for t in
                                                                         navigator.types],
                                           description="type", tooltip="only events of this type",
                                           style={"description_width": "34px"},
                                           layout=widgets.Layout(width="240px"))
        self.surface_state = widgets.Dropdown(
            options=[("any state", "")] + [(s, s) for s in SURFACE_STATES],
            description="state", style={"description_width": "34px"},
            tooltip="only events in this surface state (at the end of the log)",
            layout=widgets.Layout(width="170px"))
        self.find = _button("find next", "move to the next match", "wb-find")
        self.message = widgets.HTML("")
        self.message.add_class("wb-control-message")

        moves = {self.back: lambda s: s - 1, self.forward: lambda s: s + 1,
                 self.prev_compaction: navigator.previous_compaction,
                 self.next_compaction: navigator.next_compaction,
                 self.prev_request: navigator.previous_request,
                 self.next_request: navigator.next_request}
        for button, where in moves.items():
            button.on_click(lambda _b, where=where, name=button.tooltip.split(" (")[0]:
                            self._go(where, name))
        self.go.on_click(lambda _b: state.move(self.jump.value))
        self.find.on_click(lambda _b: self.search())
        state.observe(self._sync, names="step")
        self._controls = (self.play, self.speed, self.stride, self.slider, self.jump,
                          self.query, self.event_type, self.surface_state)
        super().__init__([
            widgets.HBox([self.play, self.speed, self.stride, self.back, self.slider,
                          self.forward]),
            widgets.HBox([self.prev_compaction, self.next_compaction, self.prev_request,
                          self.next_request, self.jump, self.go]),
            widgets.HBox([self.query, self.event_type, self.surface_state, self.find,
                          self.message]),
        ])
        self.add_class("wb-controls")

    @property
    def tips(self) -> dict[str, str]:
        """``wb-tip-N`` class → tooltip of every control that has one (the front end puts it on
        the control's own input, `views.fit.PageHelper`)."""
        out = {}
        for i, control in enumerate(self._controls):
            if getattr(control, "tooltip", None):
                cls = f"wb-tip-{i}"
                if cls not in control._dom_classes:
                    control.add_class(cls)
                out[cls] = control.tooltip
        return out

    def close(self) -> None:
        """Close the front-end links too (ipywidgets keeps a link until it is closed)."""
        for link in self._links:
            link.close()
        super().close()

    def _sync(self, change: dict) -> None:
        self.jump.value = change["new"]

    def _go(self, where, name: str) -> None:
        target = where(self.state.step)
        if target is None or not 0 <= target <= self.state.last_seq:
            self.message.value = f"no {name} from seq {self.state.step}"
            return
        self.message.value = ""
        self.state.move(target)

    def search(self) -> int | None:
        """Move to the next event matching the search fields; report what happened."""
        match = self.nav.find_next(self.state.step, text=self.query.value,
                                   event_type=self.event_type.value or None,
                                   state=self.surface_state.value or None)
        if match is None:
            self.message.value = "no match" if (self.query.value or self.event_type.value
                                                or self.surface_state.value) \
                else "type a text or pick a type or state"
            return None
        self.message.value = "wrapped to the start" if match.wrapped else ""
        self.state.move(match.seq)
        return match.seq

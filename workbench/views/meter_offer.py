"""`MeterOffer`: the real tokenizers, counted when the user asks. Layer: views.

On a log too large to count at once (`views.data.eager_meters`: more than
`EAGER_METER_EVENTS` events or `EAGER_METER_TOKENS` DSH tokens), ``Workbench(session)`` (meters
"auto") draws its first picture with the DSH heuristic alone (exact, and already priced by the
load's pass) and offers the real tokenizers beside the x-axis choice: one button. Asked, it counts
every message of the log by each offered tokenizer (one read of the log's node events for all
of them, `frames.meters.fill_log_prices`) with a progress bar in place of the button, then the
workbench redraws every panel with the new meters at the same step (`Workbench.set_meters`).
A tokenizer that does not load here is named instead of counted.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets

from workbench.views.html import escape


class _Bar:
    """One phase of the count on the offer's progress bar (`update(n)`, `close()`)."""

    def __init__(self, progress: widgets.FloatProgress, total: int) -> None:
        self.progress = progress
        progress.max, progress.value = max(total, 1), 0

    def update(self, n: int) -> None:
        self.progress.value = min(self.progress.max, self.progress.value + n)

    def close(self) -> None:
        self.progress.value = self.progress.max


class MeterOffer(widgets.HBox):
    """A button offering to count `names` over a log of `n_events` events; clicking it calls
    `ask()` (the workbench counts, calling `progress` for each phase's bar)."""

    def __init__(self, names: Sequence[str], n_events: int, ask: Callable[[], Any]) -> None:
        self.names = tuple(names)
        listed = ", ".join(self.names)
        self.button = widgets.Button(
            description=f"count {listed} tokens", icon="calculator",
            tooltip=(f"count every message of the {n_events:,} events with the real tokenizers "
                     f"({listed}); the charts show the DSH heuristic until then"),
            layout=widgets.Layout(width="auto"))
        self.bar = widgets.FloatProgress(min=0, max=1, value=0,
                                         layout=widgets.Layout(width="160px", display="none"))
        self.note = widgets.HTML("")
        self.button.on_click(lambda _button: ask())
        super().__init__([self.button, self.bar, self.note])
        self.add_class("wb-meter-offer")

    def progress(self, total: int, desc: str) -> _Bar:
        """A bar factory for `fill_log_prices`: the button gives way to the bar and `desc`."""
        self.button.disabled = True
        self.bar.layout.display = None
        self.note.value = f'<span>{escape(desc)}…</span>'
        return _Bar(self.bar, total)

    def unavailable(self, names: Sequence[str]) -> None:
        """Say that `names` do not load here, and offer nothing more."""
        self.button.disabled = True
        self.bar.layout.display = "none"
        self.note.value = unavailable_html(names)


def unavailable_html(names: Sequence[str]) -> str:
    """The note naming real tokenizers that do not load here (their packages are missing)."""
    return f'<span class="wb-meter-note">{escape(", ".join(names))}: not installed here</span>'

"""`TokenTimeline`: surface tokens per meter and provider usage over seqs, live. Layer: views.

Wraps `token_timeline_figure` in a `go.FigureWidget`. The figure is built once; a step only
moves the cursor (one shape update inside `batch_update`), so the cost per step does not depend
on the log's length. Clicking a point of any trace moves the step to that point's seq.

Provider usage is drawn as the prompt the provider reported (uncached input + cache read + cache
write, `timeline_df` usage columns) on the rows where a model call settled, so it can be read
against the surface tokens the harness estimated.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from workbench.core.compaction.threshold import PressureSettings
from workbench.views.data import ViewData, view_data
from workbench.views.figure_panel import FigurePanel
from workbench.views.figures import context_fill_figure, token_timeline_figure
from workbench.views.state import StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session

PROMPT_COLUMN = "provider prompt"
"""Name of the derived usage series: input + cache read + cache write, as reported."""


def timeline_frame_with_prompt(frame: pd.DataFrame) -> pd.DataFrame:
    """`timeline_df` plus the provider-reported prompt size (NA where no usage was reported)."""
    parts = [frame[c] for c in ("usage_input", "usage_cache_read", "usage_cache_write")
             if c in frame]
    if not parts:
        return frame.assign(**{PROMPT_COLUMN: pd.array([None] * len(frame), dtype="Int64")})
    reported = pd.concat(parts, axis=1).notna().any(axis=1)
    total = sum(p.fillna(0) for p in parts)
    return frame.assign(**{PROMPT_COLUMN: total.where(reported, pd.NA).astype("Int64")})


class TokenTimeline(FigurePanel):
    """The token timeline of a session with a cursor at `state.step`."""

    title = "token timeline"

    def __init__(self, session: Session, state: StepState | None = None, *,
                 meters: str | Sequence[str] = ("dsh",)) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        frame = self.data.timeline_frame if meters in (("dsh",), "dsh") \
            else session.timeline_df(meters=meters)
        figure = token_timeline_figure(
            timeline_frame_with_prompt(frame), usage=[PROMPT_COLUMN],
            context_window=self.data.context_window, brackets=self.data.compactions,
            cursor=state.step, title="Surface tokens and provider-reported prompt",
            x_range=self.data.x_range())
        super().__init__(state, figure, own_state=own, css_class="wb-token-timeline",
                         times_ms=self.data.times_ms)


class ContextFill(FigurePanel):
    """Surface tokens per meter as a share of the context window, with the compaction threshold
    computed from `settings` (assumed deployment values, named in the legend: the log does not
    record them) and the logged `maxTokens`."""

    title = "context fill"

    def __init__(self, session: Session, state: StepState | None = None, *,
                 meters: str | Sequence[str] = ("dsh",),
                 settings: PressureSettings | None = None) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        self.settings = settings or PressureSettings()
        frame = self.data.timeline_frame if meters in (("dsh",), "dsh") \
            else session.timeline_df(meters=meters)
        window = self.data.context_window
        self.threshold = self.settings.threshold(window, self.data.max_tokens)
        label = f"threshold ({self.settings.describe()})"
        title = "Context fill: surface tokens as a share of the context window"
        if window and self.threshold is None:
            title += f" · no pressure compaction with {self.settings.describe()}"
        figure = context_fill_figure(frame, context_window=window, threshold=self.threshold,
                                     threshold_label=label, cursor=state.step, title=title,
                                     x_range=self.data.x_range())
        super().__init__(state, figure, own_state=own, css_class="wb-context-fill",
                         times_ms=self.data.times_ms)

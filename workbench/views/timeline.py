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

import numpy as np
import pandas as pd

from workbench.core.compaction.threshold import (
    ImpliedThreshold,
    PressureSettings,
    implied_threshold,
)
from workbench.core.tokens.measure_series import measure_series
from workbench.core.tokens.meters import get_meter
from workbench.views.data import AUTO_METER_EVENTS, ViewData, view_data
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
            x_range=self.data.x_range(), validate=False)
        super().__init__(state, figure, own_state=own, css_class="wb-token-timeline",
                         times_ms=self.data.times_ms)


MEASURE_LABEL = "dsh measure (what DSH compares with the threshold)"
"""Legend of the dsh series when it is DSH's own `measure()` over the whole log."""


def _measure(session: Session, surface: np.ndarray) -> tuple[np.ndarray, str | None]:
    """DSH's measure after every event (`measure_series`), from the one pass's log index;
    replayed once per session (`ViewData.measured`: a redraw with other meters reuses it)."""
    data = view_data(session)
    if data.measured is None:
        data.measured = measure_series(session.events, session.index,
                                       np.nan_to_num(surface).astype(np.int64), session.prices,
                                       version=session.version)
    return data.measured


def request_tokens(session: Session, frame: pd.DataFrame, meters: Sequence[str], *,
                   replay_limit: int = AUTO_METER_EVENTS) -> tuple[pd.DataFrame, list[str]]:
    """The request's size after every event, by each meter, as ``request_tokens_<meter>``
    columns, and a label per column. ``dsh`` is DSH's own `measure().totalTokens` (tools
    envelope + the whole surface, anchored on the provider's usage: what the compaction
    threshold is compared with, v4 §5.8/§6.6); a real tokenizer counts the newest
    ``request/header``'s envelope plus its surface column. Above `replay_limit` events the dsh
    column is the surface alone (the replay is not run), and its label says so."""
    out, labels = {}, []
    n = len(frame)
    headers: list[int] | None = None     # the request/header seqs, found when a meter needs them
    for meter in meters:
        surface = frame[f"surface_tokens_{meter}"].astype("Float64").to_numpy(
            dtype=np.float64, na_value=np.nan)
        if meter == "dsh" and 0 < n <= replay_limit:
            values, error = _measure(session, surface)
            out["request_tokens_dsh"] = values
            stop = int(np.isnan(values).argmax()) if np.isnan(values).any() else n
            labels.append(MEASURE_LABEL if error is None else
                          f"dsh measure (stops at seq {stop}: {error})")
            continue
        if meter == "dsh":
            out["request_tokens_dsh"] = surface
            labels.append("dsh surface only (tools not counted: log too long to replay "
                          "DSH's measure)" if n > replay_limit else "dsh surface")
            continue
        counter = get_meter(meter, version=session.version)
        if headers is None:
            headers = [int(s) for s in np.flatnonzero(
                (frame["type"] == "request/header").to_numpy(dtype=bool))]
        envelope = np.zeros(n)
        for i, seq in enumerate(headers):
            data = session.events[seq].get("data")
            header = data.get("header") if isinstance(data, dict) else None
            end = headers[i + 1] if i + 1 < len(headers) else n
            envelope[seq:end] = counter.count_envelope(header if isinstance(header, dict)
                                                       else None)
        out[f"request_tokens_{meter}"] = surface + envelope
        labels.append(f"{meter} (tools + surface)")
    return frame.assign(**out), labels


class ContextFill(FigurePanel):
    """The request by each meter as a share of the context window (`request_tokens`), with the
    compaction threshold computed from `settings` (assumed deployment values, named in the
    legend: the log does not record them) and the logged `maxTokens`."""

    title = "context fill"

    def __init__(self, session: Session, state: StepState | None = None, *,
                 meters: str | Sequence[str] = ("dsh",),
                 settings: PressureSettings | None = None) -> None:
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        self.settings = settings or PressureSettings()
        names = [meters] if isinstance(meters, str) else list(meters)
        frame = self.data.timeline_frame if names == ["dsh"] \
            else session.timeline_df(meters=names)
        frame, labels = request_tokens(session, frame, names)
        window = self.data.context_window
        self.threshold = self.settings.threshold(window, self.data.max_tokens)
        self.implied = self._implied(session, frame, labels, names)
        label = f"threshold ({self.settings.describe()})"
        title = "Context fill: the request (tools + surface) as a share of the context window"
        implied = self.implied
        if implied is not None and not implied.admits(self.threshold):
            given = "no threshold" if self.threshold is None else f"{self.threshold:,}"
            title += (f"<br>{implied.describe()}; the {self.settings.describe()} give "
                      f"{given}, not one in between")
        elif window and self.threshold is None:
            title += f" · no pressure compaction with {self.settings.describe()}"
        figure = context_fill_figure(frame, context_window=window, threshold=self.threshold,
                                     meters=[f"request_tokens_{m}" for m in names],
                                     names=labels, threshold_label=label, cursor=state.step,
                                     title=title, x_range=self.data.x_range(), validate=False,
                                     band=None if implied is None else (
                                         implied.low, implied.high, implied.describe()))
        super().__init__(state, figure, own_state=own, css_class="wb-context-fill",
                         times_ms=self.data.times_ms)

    @staticmethod
    def _implied(session: Session, frame: pd.DataFrame, labels: list[str],
                 names: list[str]) -> ImpliedThreshold | None:
        """The threshold the log's pressure compactions imply, read from DSH's measure (None
        when the measure was not replayed in full)."""
        if "dsh" not in names or not labels[names.index("dsh")].startswith(MEASURE_LABEL):
            return None
        starts = [r.start_seq for r in session.compactions.records
                  if r.trigger.kind == "pressure"]
        types = frame["type"].astype(object).fillna("").tolist()
        totals = frame["request_tokens_dsh"].to_numpy(dtype=np.float64, na_value=np.nan)
        return implied_threshold(types, totals.tolist(), starts)

"""`Workbench`: the composite widget, and `show(path)`. Layer: views.

The composition root (design Example 3): it creates the one `StepState` and hands it to every
view; controls set the step, views observe it. Layout, top to bottom: a session summary (the
loader's defects and the attempts that did not complete, named up to the caps the report shares,
`views.limits`), the controls, the log pane (left) beside the surface pane (right), the x-axis choice (seq or UTC
time), the token timeline, the context fill and the bracket chart (one shared x axis: the same
range and margins, the full width of the cell, resizing with it), and a tab with the inspector
and the diff mode. On a log too large to count at once (`views.data.eager_meters`: its events,
and the DSH heuristic's tokens of its nodes) the first picture is the DSH heuristic's and the
real tokenizers are one click away, beside the x-axis choice (`views.meter_offer`). `Workbench(session, step=N)` opens at a seq and `wb.goto("compaction:2" |
"request:SEQ" | N)` moves there (a seq by the one rule, `workbench.core.seqs`: 0..LAST or
negative from the end). Each view is also usable on its own
(`workbench.views.LogPane(session)`, ...).

`Workbench(session, follow=True)` (or `follow(path)`) keeps reading a growing log: a live bar
on top and a poller that rebuilds the panels as events arrive (`workbench.views.live`).

Works in JupyterLab, Notebook 7 and Voilà: it is plain ipywidgets, plotly `FigureWidget`s and
one small `anywidget` (`ClickableHTML`) whose script ships inline, so nothing is fetched.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import ipywidgets as widgets
import numpy as np

from workbench.core.compaction.threshold import PressureSettings
from workbench.core.seqs import resolve_seq, seq_int
from workbench.core.tokens.meters import parse_meter_names
from workbench.errors import InvalidArgument
from workbench.views import limits
from workbench.views.brackets import BracketChart
from workbench.views.closing import close_tree
from workbench.views.controls import StepControls
from workbench.views.data import (
    ViewData,
    default_meters,
    freeze_if_large,
    loadable_meters,
    offered_meters,
    thaw,
    view_data,
)
from workbench.views.diff import DiffPane
from workbench.views.fit import PageHelper
from workbench.views.html import defects_html, escape, legend_html, shorten, style_html
from workbench.views.inspector import Inspector
from workbench.views.limits import more_html
from workbench.views.log_pane import LogPane
from workbench.views.meter_offer import MeterOffer, unavailable_html
from workbench.views.state import StepState
from workbench.views.surface_pane import SurfacePane
from workbench.views.timeline import ContextFill, TokenTimeline

if TYPE_CHECKING:
    from workbench.session import Session

_DIGITS = re.compile(r"-?[0-9]+")
"""A count or seq in a `goto` target (ASCII digits: ``int`` would also read ``"²"``, no)."""


def bracket_words(data: ViewData, limit: int | None = None) -> tuple[str, list[str], int]:
    """Compaction attempts counted by status, one sentence for each of the first `limit`
    (default `views.limits.MAX_BRACKET_NOTES`) attempts that did not complete (its number,
    status in words, and where it starts), and how many more did not complete (the widget's
    header and the report both cut here)."""
    limit = limits.MAX_BRACKET_NOTES if limit is None else limit
    counts: dict[str, int] = {}
    for b in data.brackets:
        counts[b.status] = counts.get(b.status, 0) + 1
    total = ", ".join(f"{n} {status}" for status, n in counts.items())
    unfinished = data.unfinished()
    lines = []
    for b in unfinished[:limit]:
        where = f"compaction/start at seq {b.start}"
        if b.status == "failed":
            error = data.compactions["error"].iloc[b.row]
            detail = f"{where}, closed with an error at seq {b.end}" + (
                f": {shorten(str(error), 90)}" if isinstance(error, str) else "")
        elif b.status == "interrupted":
            detail = f"{where} never closed (the log ends at seq {data.last_seq})"
        else:
            detail = f"{where} never closed; session/end-seed at seq {b.end_seed} released it"
        lines.append(f"compaction #{b.row + 1} {b.status}: {detail}")
    return total, lines, len(unfinished) - len(lines)


UNFINISHED_MORE = ("compaction attempts that did not complete "
                   "(the compaction audit lists them all)")
"""What the "… and N more" line after the named attempts counts."""


def summary_html(session: Session) -> str:
    """The session in words: path, id, format, size, verdict, the loader's defects (the first
    `views.limits.MAX_DEFECT_NOTES`: severity, rule, where, message), compaction attempts by
    status with the first `MAX_BRACKET_NOTES` that did not complete named, and the colour
    legend (all escaped)."""
    defects = len(session.defects)
    data = view_data(session)
    total, lines, more = bracket_words(data)
    head = (f'{style_html()}<div class="wb-root"><div class="wb-title wb-summary">'
            f"{escape(os.path.basename(session.path))}"
            f" · {escape(session.session_id)} · v{session.version} · {len(session):,} events"
            f" · log {escape(session.verdict)}"
            + (f" · {defects} defect{'s' if defects != 1 else ''}" if defects else "")
            + (f" · compactions: {escape(total)}" if total else " · no compaction") + "</div>")
    found = (defects_html(session.defects, limits.MAX_DEFECT_NOTES, max_chars=300)
             + '<div class="wb-more">the views show the readable prefix of the log; '
             "session.defects_df() lists every defect</div>") if defects else ""
    notes = "".join(f'<div class="wb-bracket-note"><span class="wb-status-note">'
                    f"{escape(line.split(':', 1)[0])}</span>{escape(line.split(':', 1)[1])}</div>"
                    for line in lines) + more_html(more, UNFINISHED_MORE)
    return head + found + notes + (legend_html() if data.brackets else "") + "</div>"


class Workbench(widgets.VBox):
    """Every view of one session around one shared step (see the module doc).

    `step`: the seq to open at (or any `goto` target); `meters`: the token meters of the charts
    and the checkpoint prices ("auto": the DSH heuristic, plus the real tokenizers installed,
    counted at once on a small log (`views.data.eager_meters`) and otherwise on request (a button,
    `set_meters`) up to `views.data.AUTO_METER_EVENTS`); `settings`: the assumed compaction
    settings that place the threshold line (`PressureSettings`; the log does not record them); `follow`,
    `tail`: the live mode (`workbench.views.live`)."""

    def __init__(self, session: Session, *, step: int | str = 0,
                 meters: str | Sequence[str] = "auto",
                 settings: PressureSettings | None = None, follow: bool = False,
                 tail: bool = False) -> None:
        from workbench.session import Session
        self.live, self._retired = None, []   # what `close` reads, should a check below refuse
        self._axis = "seq"       # the x axis shown (`set_axis`), kept across rebuilds
        if not isinstance(session, Session):
            msg = (f"Workbench shows a Session (workbench.load(path)), not a "
                   f"{type(session).__name__}: {shorten(repr(session), 80)}")
            raise InvalidArgument(msg)
        if settings is not None and not isinstance(settings, PressureSettings):
            msg = f"settings {settings!r}: a PressureSettings or None"
            raise InvalidArgument(msg)
        if meters != "auto":
            parse_meter_names(meters)       # a wrong or empty meter spec fails here, by name
        self.session = session
        self._meters, self._settings = meters, settings
        super().__init__([], layout=widgets.Layout(width="100%"))
        self.add_class("wb-workbench")
        self._unloadable: tuple[str, ...] = ()   # asked-for meters that do not load here
        if follow:   # the live bar and poller (workbench.views.live)
            from workbench.views.live import LiveFollow
            self.live = LiveFollow(self, tail=tail)
            if tail:   # following the tail starts at the last event
                step = len(session) - 1
        self.rebuild(step)
        if self.live is not None:
            self.live.start()

    def rebuild(self, step: int) -> None:
        """(Re)build every panel around a new shared step from the session as it is now (a
        followed session grows: `workbench.views.live`)."""
        session = self.session
        self._retire_panels()
        data = view_data(session)     # built again when the session grew or was reloaded
        self.data = data
        meters = self._meters
        self.meters = (default_meters(data.n, data.dsh_tokens) if meters == "auto"
                       else parse_meter_names(meters))
        offered = offered_meters(data.n, data.dsh_tokens, self.meters) if meters == "auto" else ()
        self.offer = MeterOffer(offered, data.n, lambda: self.set_meters(
            (*self.meters, *offered))) if offered else None
        self.state = StepState(last_seq=data.last_seq)
        self.state.step = self.resolve(step)
        self.controls = StepControls(self.state, data.navigator)
        self.log_pane = LogPane(session, self.state)
        self.surface_pane = SurfacePane(session, self.state, meters=self.meters)
        self.token_timeline = TokenTimeline(session, self.state, meters=self.meters)
        self.context_fill = ContextFill(session, self.state, meters=self.meters,
                                        settings=self._settings)
        self.bracket_chart = BracketChart(session, self.state)
        self.inspector = Inspector(session, self.state, meters=self.meters)
        self.diff = DiffPane(session, self.state)
        for pane in (self.log_pane, self.surface_pane):
            pane.layout.width = "50%"
        if data.times_ms is None:
            self._axis = "seq"
        self.axis = widgets.ToggleButtons(options=[("x: seq", "seq"), ("x: time (UTC)", "time")],
                                          value=self._axis, tooltips=["charts by seq",
                                                                 "charts by wall-clock time"],
                                          style={"button_width": "130px"},
                                          disabled=data.times_ms is None)
        self.axis.add_class("wb-axis")
        if self._axis != "seq":
            self.set_axis(self._axis)
        self.axis.observe(lambda c: self.set_axis(c["new"]), names="value")
        details = widgets.Tab([self.inspector, self.diff])
        details.set_title(0, "inspector")
        details.set_title(1, "diff")
        self.header = widgets.HTML(summary_html(session))
        self.header.add_class("wb-header")
        head = [self.live.bar] if self.live is not None else []
        self.children = [*head, self.header, self.controls,
                         widgets.HBox([self.log_pane, self.surface_pane]),
                         self._axis_row(),
                         self.token_timeline, self.context_fill, self.bracket_chart, details,
                         PageHelper(tips=self.controls.tips)]
        freeze_if_large(data.n)

    def _axis_row(self) -> widgets.Widget:
        """The x-axis choice, with the real tokenizers' offer or the note naming those that did
        not load."""
        extra: list[widgets.Widget] = [self.offer] if self.offer is not None else []
        if self._unloadable:
            extra.append(widgets.HTML(unavailable_html(self._unloadable)))
        return widgets.HBox([self.axis, *extra]) if extra else self.axis

    def set_meters(self, meters: str | Sequence[str]) -> tuple[str, ...]:
        """Show `meters` in every panel: each real tokenizer not yet counted counts the whole
        log first (on the offer's progress bar when there is one), then the panels are rebuilt
        at the same step and x axis. A tokenizer that does not load here is left out (the offer
        names it). Returns the meters shown."""
        from workbench.frames.meters import fill_log_prices
        names = parse_meter_names(meters)
        usable = loadable_meters(names)
        self._unloadable = tuple(m for m in names if m not in usable)
        offer = self.offer
        if usable == self.meters:
            if offer is not None and self._unloadable:
                offer.unavailable(self._unloadable)
            return self.meters
        fill_log_prices(self.session.analysis, usable,
                        progress=offer.progress if offer is not None else False)
        self._meters = usable
        self.rebuild(self.state.step)        # at the same x axis (`set_axis`)
        return self.meters

    def _retire_panels(self) -> None:
        """A live rebuild replaces the panels, and ipywidgets keeps a widget until it is
        closed: the panels the previous rebuild replaced are closed now (the ones replaced now
        may still be initialising in the front end, which a closed model breaks). A large
        session's heap is frozen (`views.data.freeze_if_large`): the closed panels and the view
        data they read are cycles the collector cannot see until it is thawed, so every rebuild
        would keep a whole generation (~40 MiB at 180k events): thawed once per rebuild."""
        if self._retired:
            self._close_panels(self._retired)
            thaw()
        bar = self.live.bar if self.live is not None else None
        self._retired = [child for child in self.children if child is not bar]

    def _close_panels(self, panels: Sequence[widgets.Widget]) -> None:
        for panel in panels:
            close_tree(panel, {id(self)})

    def close(self) -> None:
        """Close every widget of this workbench and stop a live poller. ipywidgets keeps each
        widget (and so the session and its view data) alive until it is closed: a notebook
        that opens many sessions releases one's memory by closing its workbench."""
        if self.live is not None:
            self.live.stop()
        self._close_panels([*self._retired, *self.children])   # the live bar among the children
        self._retired = []
        self.layout.close()
        super().close()
        thaw()

    @property
    def figures(self) -> tuple:
        """The figure panels, which share one x axis."""
        return (self.token_timeline, self.context_fill, self.bracket_chart)

    @property
    def views(self) -> tuple:
        """Every panel, in layout order."""
        return (self.log_pane, self.surface_pane, self.token_timeline, self.context_fill,
                self.bracket_chart, self.inspector, self.diff)

    def set_axis(self, axis: str) -> None:
        """Show seqs ("seq") or UTC times ("time") on the x axis of every chart; the x-axis
        toggle shows it, and a rebuild (`set_meters`, a live redraw) keeps it."""
        for panel in self.figures:
            panel.set_axis(axis)             # refuses anything but "seq" or "time"
        self._axis = axis
        self.axis.value = axis               # the toggle's observer lands here again: no change

    def resolve(self, target: int | str) -> int:
        """The seq a `goto` target names: a seq (0..LAST, or negative from the end: the one
        rule, `workbench.core.seqs.resolve_seq`), or ``"compaction:K"`` (the K-th attempt, from
        1: its checkpoint, else its start), ``"compaction:ID"`` (by compaction id),
        ``"request:SEQ"`` (the model call at or after SEQ, by the same seq rule). A seq outside
        the log raises `SeqOutOfRange`; any other target not found or not understood, `InvalidArgument`. An
        empty log shows one empty step, 0: there the first and the last event (0, -1) are it."""
        data = self.data
        if isinstance(target, str) and ":" in target:
            kind, _, key = target.partition(":")
            number = key.strip() if _DIGITS.fullmatch(key.strip()) else None
            if kind == "compaction":
                frame = data.compactions
                rows = [int(number) - 1] if number is not None else [
                    i for i, v in enumerate(frame["compaction_id"].astype(object)) if v == key]
                if not rows or not 0 <= rows[0] < len(data.brackets):
                    msg = f"no compaction {key!r} (this log has {len(data.brackets)})"
                    raise InvalidArgument(msg)
                b = data.brackets[rows[0]]
                return b.replacement if b.replacement >= 0 else b.start
            if kind == "request" and number is not None:
                seq = resolve_seq(int(number), data.n - 1)   # the one seq rule
                requests = data.navigator.requests
                at = int(np.searchsorted(requests, seq))
                if at < len(requests):
                    return int(requests[at])
                msg = f"no model request at or after seq {seq}"
                raise InvalidArgument(msg)
        if isinstance(target, str) and _DIGITS.fullmatch(target.strip()):
            target = int(target)
        if isinstance(target, str):
            msg = f"unknown target {target!r}: use a seq, 'compaction:K', 'request:SEQ'"
            raise InvalidArgument(msg)
        if data.n == 0 and seq_int(target) in (0, -1):
            return 0
        return resolve_seq(target, data.n - 1)

    def goto(self, target: int | str) -> int:
        """Move every view to `target` (see `resolve`); returns the seq."""
        seq = self.resolve(target)
        self.state.step = seq
        return seq

    def __repr__(self) -> str:
        return f"Workbench({self.session!r}, step={self.state.step})"


def follow(path: str | os.PathLike, **options: object) -> Workbench:
    """A `Workbench` following the log at `path` as DSH writes it (`workbench.views.live`):
    ``workbench.follow(path)`` as a cell's last line shows it."""
    from workbench.session import load
    return Workbench(load(path, follow=True), follow=True, **options)  # type: ignore[arg-type]


def show(source: Session | str | os.PathLike, **options: object) -> None:
    """Display a `Workbench` for a session or a log path (keep a handle with `Workbench(...)`)."""
    from IPython.display import display

    if isinstance(source, (str, os.PathLike)):
        from workbench.session import load
        source = load(source)
    display(Workbench(source, **options))  # type: ignore[arg-type]

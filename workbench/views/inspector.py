"""`Inspector`: the selected event's raw JSON and, at a model request, the request rebuilt.
Layer: views.

Observes `state.selected` (which follows the step unless a surface node or lineage entry was
clicked). The raw event is shown as pretty, collapsible JSON with every string escaped
(`json_html`, with size limits so one huge event cannot stall a step). When the selected event
identifies a model-call attempt (v4: its `assistant/message` / `assistant/attempt`; v0: its
chunks or message), the exact request is rebuilt by `workbench.core.requests.rebuild_request`
from the header snapshot and the surface just before the attempt, and shown as envelope,
system, tools and messages. Rebuilding walks the surface, so it can be switched off
(`show_request`) when stepping quickly through a very large log.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from workbench.core.requests import rebuild_request
from workbench.views.clickable import ClickableHTML
from workbench.views.data import ViewData, view_data
from workbench.views.html import escape, json_html, request_html
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session

_SECTIONS = ("system", "tools", "messages")


def request_sections(request: dict[str, Any]) -> dict[str, Any]:
    """A rebuilt request split for display: envelope (config, ids), system, tools, messages."""
    envelope = {k: v for k, v in request.items() if k not in _SECTIONS}
    return {"envelope": envelope, **{k: request[k] for k in _SECTIONS if k in request}}


class Inspector(Panel):
    """Raw JSON of `state.selected`, plus the rebuilt request at a model call."""

    title = "inspector"
    observes = ("selected",)

    def __init__(self, session: Session, state: StepState | None = None, *,
                 show_request: bool = True) -> None:
        self.session = session
        self.data: ViewData = view_data(session)
        state, own = state_for(self.data.last_seq, state)
        self.show_request = widgets.Checkbox(value=show_request, description="rebuild request",
                                             indent=False)
        self.show_request.observe(lambda _c: self.refresh(), names="value")
        self.pane = ClickableHTML()
        self.pane.add_class("wb-inspector")
        self.request = ClickableHTML()
        self.request.add_class("wb-request-pane")
        super().__init__(state, (self.show_request, self.pane, self.request), own_state=own)

    def rebuilt(self, seq: int) -> dict[str, Any] | None:
        """The request of the attempt `seq` identifies (None: not a model call)."""
        attempt = self.data.attempts.get(seq)
        if attempt is None:
            return None
        session = self.session
        return rebuild_request(session.events, self.data.timeline, attempt,
                               version=session.version, session_id=session.session_id)

    def _render(self, change: dict | None = None) -> None:
        if not self.data.n:
            self.pane.html = '<div class="wb-title">empty log</div>'
            self.request.html = ""
            return
        seq = self.state.selected
        event = self.session.events[seq]
        kind = event.get("type") if isinstance(event, dict) else None
        self.pane.html = (f'<div class="wb-title">event #{seq} · {escape(kind)}</div>'
                          f"{json_html(event, open_levels=2)}")
        attempt = self.data.attempts.get(seq)
        if attempt is None:
            self.request.html = ""
        elif not self.show_request.value:
            self.request.html = (f'<div class="wb-title">model request at #{seq} '
                                 "(tick “rebuild request” to show it)</div>")
        else:
            request = self.rebuilt(seq)
            title = (f"request of the model call at #{seq} (built before #{attempt.before}, "
                     f"{len(request['messages'])} messages)")
            self.request.html = request_html(request_sections(request), title=title)

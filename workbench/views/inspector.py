"""`Inspector`: the selected event's raw JSON and, at a model request, the request rebuilt.
Layer: views.

Observes `state.selected` (which follows the step unless a surface node or lineage entry was
clicked). The raw event is shown as pretty, collapsible JSON with every string escaped
(`json_html`, with size limits so one huge event cannot stall a step; times read as UTC, long seq
lists folded into ranges). When the selected event identifies a model-call attempt (v4: its
`assistant/message` / `assistant/attempt`; v0: its chunks or message), the exact request is
rebuilt by `workbench.core.requests.rebuild_request` from the header snapshot and the surface
just before the attempt, and shown with its token totals per part (system, tools, each message)
by each meter against the context window, then as envelope, system, tools and messages. The
request can be copied (in the browser, to the clipboard) or saved as JSON (`save_request`, the
"save JSON" button), in both cases as `JSON.stringify(request, null, 2)` prints it (numbers as
JavaScript holds them, lone surrogates escaped: `workbench.io.jsjson.stringify`). Rebuilding walks the surface, so it can be switched off (`show_request`)
when stepping quickly through a very large log.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from workbench.core.requests import rebuild_request
from workbench.core.seqs import resolve_seq
from workbench.core.tokens.meters import get_meter
from workbench.errors import InvalidArgument
from workbench.io.jsjson import stringify
from workbench.views.clickable import ClickableHTML
from workbench.views.data import ViewData, view_data
from workbench.views.html import escape, json_html, request_html
from workbench.views.state import Panel, StepState, state_for

if TYPE_CHECKING:
    from workbench.session import Session

_SECTIONS = ("system", "tools", "messages")
COPY_LIMIT = 4_000_000
"""Largest request (JSON characters) embedded in the page for the copy button."""


def request_sections(request: dict[str, Any]) -> dict[str, Any]:
    """A rebuilt request split for display: envelope (config, ids), system, tools, messages."""
    envelope = {k: v for k, v in request.items() if k not in _SECTIONS}
    return {"envelope": envelope, **{k: request[k] for k in _SECTIONS if k in request}}


def request_totals(request: dict[str, Any], meters: Sequence[str], *,
                   version: int) -> list[tuple[str, dict[str, int]]]:
    """Tokens of each part of a rebuilt request by each meter: ``system`` (v0's string; a v4
    system prompt is a message), ``tools`` (the schemas), one entry per message (``#i role``),
    then ``total``. System and tools are priced only by the meter's one envelope rule
    (`Meter.count_envelope`, DSH's `estimateSystemTokens` / `estimateToolsTokens` with their
    overheads), each part as an envelope of its own, so ``total`` equals what `requests_df`
    estimates (``estimated_prompt_tokens``: envelope + surface)."""
    counters = {m: get_meter(m, version=version) for m in meters}
    rows: list[tuple[str, dict[str, int]]] = []
    for part in ("system", "tools"):
        if part in request and (part == "tools" or type(request[part]) is str):
            rows.append((part, {m: c.count_envelope({part: request[part]})
                                for m, c in counters.items()}))
    for i, message in enumerate(request.get("messages") or ()):
        role = message.get("role") if isinstance(message, dict) else None
        rows.append((f"#{i} {role}", {m: c.count_message(message) if isinstance(message, dict)
                                      else 0 for m, c in counters.items()}))
    rows.append(("total", {m: sum(r[1][m] for r in rows) for m in meters}))
    return rows


def totals_html(rows: list[tuple[str, dict[str, int]]], meters: Sequence[str],
                window: int | None, *, fold_after: int = 12) -> str:
    """The per-part table; messages past `fold_after` fold into one expandable block."""
    def line(name: str, counts: dict[str, int], bold: bool = False) -> str:
        cells = "".join(f'<td class="wb-num">{counts[m]:,}'
                        + (f" ({100 * counts[m] / window:.0f} %)" if window and bold else "")
                        + "</td>" for m in meters)
        tag = "th" if bold else "td"
        return f"<tr><{tag}>{escape(name)}</{tag}>{cells}</tr>"

    head = "".join(f"<th>{escape(m)}</th>" for m in meters)
    body = [line(n, c) for n, c in rows[:-1]]
    if len(body) > fold_after + 2:
        inner = "".join(body[fold_after:-2])
        body = body[:fold_after] + [
            f'<tr><td colspan="{len(meters) + 1}"><details><summary>… {len(body) - fold_after - 2}'
            f' more parts</summary><table class="wb-table wb-totals">{inner}</table></details>'
            "</td></tr>"] + body[-2:]
    window_text = f"context window {window:,}" if window else "context window not logged"
    return (f'<table class="wb-table wb-totals"><caption>tokens per part, by meter · '
            f"{escape(window_text)}</caption><thead><tr><th>part</th>{head}</tr></thead>"
            f"<tbody>{''.join(body)}{line(*rows[-1], bold=True)}</tbody></table>")


class Inspector(Panel):
    """Raw JSON of `state.selected`, plus the rebuilt request at a model call."""

    title = "inspector"
    observes = ("selected",)

    def __init__(self, session: Session, state: StepState | None = None, *,
                 show_request: bool = True, meters: Sequence[str] = ("dsh",)) -> None:
        self.session = session
        self.data: ViewData = view_data(session)
        self.meters = tuple(meters)
        state, own = state_for(self.data.last_seq, state)
        self.show_request = widgets.Checkbox(value=show_request, description="rebuild request",
                                             indent=False, tooltip="rebuild the model request "
                                             "at a model call (off: faster stepping)")
        self.show_request.observe(lambda _c: self.refresh(), names="value")
        self.save_path = widgets.Text(placeholder="request.json", description="save as",
                                      tooltip="file to write the rebuilt request to",
                                      layout=widgets.Layout(width="320px"))
        self.save = widgets.Button(description="save JSON", tooltip="write the rebuilt request "
                                   "at the selected model call as JSON")
        self.save_path.add_class("wb-save-path")
        self.save.add_class("wb-save-request")
        self.saved = widgets.HTML("")
        self.save.on_click(lambda _b: self._save_clicked())
        self.pane = ClickableHTML()
        self.pane.add_class("wb-inspector")
        self.request = ClickableHTML()
        self.request.add_class("wb-request-pane")
        bar = widgets.HBox([self.show_request, self.save_path, self.save, self.saved])
        super().__init__(state, (bar, self.pane, self.request), own_state=own)

    def rebuilt(self, seq: int) -> dict[str, Any] | None:
        """The request of the attempt `seq` identifies (None: not a model call); `seq` is
        0..LAST or negative from the end (`workbench.core.seqs.resolve_seq`)."""
        attempt = self.data.attempts.get(resolve_seq(seq, self.data.n - 1))
        if attempt is None:
            return None
        session = self.session
        return rebuild_request(session.events, self.data.timeline, attempt,
                               version=session.version, session_id=session.session_id)

    def save_request(self, path: str | os.PathLike, seq: int | None = None) -> Path:
        """Write the rebuilt request at `seq` (default: the selected event) as JSON (UTF-8); refuses
        a seq that is not a model call and the input log's own path."""
        seq = self.state.selected if seq is None else resolve_seq(seq, self.data.n - 1)
        request = self.rebuilt(seq)
        if request is None:
            msg = f"seq {seq} is not a model call: no request to save"
            raise InvalidArgument(msg)
        target = Path(path)
        if target.exists() and target.resolve() == Path(self.session.path).resolve():
            msg = f"{target}: refusing to write over the input log"
            raise InvalidArgument(msg)
        target.write_text(stringify(request, 2), encoding="utf-8")
        return target

    def _save_clicked(self) -> None:
        seq = self.state.selected
        path = self.save_path.value.strip() or f"request-seq{seq}.json"
        try:
            written = self.save_request(path, seq)
        except (ValueError, IndexError, OSError) as error:   # InvalidArgument, SeqOutOfRange
            self.saved.value = f'<span class="wb-bad">{escape(error)}</span>'
        else:
            self.saved.value = f"wrote {escape(os.fspath(written))}"

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
        self.save.disabled = attempt is None
        if attempt is None:
            self.request.html = ""
        elif not self.show_request.value:
            self.request.html = (f'<div class="wb-title">model request at #{seq} '
                                 "(tick “rebuild request” to show it)</div>")
        else:
            request = self.rebuilt(seq)
            title = (f"request of the model call at #{seq} (built before #{attempt.before}, "
                     f"{len(request['messages'])} messages)")
            totals = request_totals(request, self.meters, version=self.session.version)
            text = stringify(request, 2)
            copy = ('<button class="wb-copy" type="button" data-copy="request" title="copy the '
                    'request as JSON">copy JSON</button><pre data-copy-id="request" '
                    f'hidden>{escape(text)}</pre>' if len(text) <= COPY_LIMIT else
                    '<span class="wb-more">too large to copy here: save it as JSON</span>')
            self.request.html = (f'<div class="wb-title">{escape(title)} {copy}</div>'
                                 + totals_html(totals, self.meters, self.data.context_window)
                                 + request_html(request_sections(request)))

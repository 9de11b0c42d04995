"""Through the page (JupyterLab + Debian Chromium + Playwright at 1440×900, real DSH log): the
x-axis toggle switches every chart to UTC time and they still line up within 2 px; the request
view's "copy JSON" puts the rebuilt request on the clipboard and "save JSON" writes the same
request to a file. Screenshots are saved under the folder the `screenshots` fixture names."""
from __future__ import annotations

import json

import pytest
from test_in_place_lab import (
    HEIGHT,
    KILLED,
    STEP,
    WIDTHS,
    _need,
    _open,
    _workbench_cells,
)

pytestmark = pytest.mark.browser

CHARTS = (".wb-token-timeline", ".wb-context-fill", ".wb-bracket-chart")
DATA_PIXEL = """([selector, value]) => {
  const gd = document.querySelector(selector + ' .js-plotly-plot');
  const ax = gd._fullLayout.xaxis;
  return gd.getBoundingClientRect().left + gd._fullLayout._size.l + ax.l2p(ax.d2l(value));
}"""
AXIS_TYPES = """(selectors) => selectors.map((s) =>
  document.querySelector(s + ' .js-plotly-plot')._fullLayout.xaxis.type)"""
CURSOR_X = """(selector) => {
  const gd = document.querySelector(selector + ' .js-plotly-plot');
  return gd.layout.shapes[0].x0;
}"""


def _iso(session, seq: int) -> str:
    import pandas as pd
    return pd.to_datetime(session.events[seq]["time"], unit="ms").isoformat()


def test_time_axis_toggle_switches_every_chart_and_they_still_line_up(lab, browser,
                                                                      screenshots):
    _need(KILLED)
    import workbench
    session = workbench.load(KILLED)
    errors: list[str] = []
    page = _open(browser, lab, "time-axis.ipynb", _workbench_cells(KILLED, "148"), errors)
    assert page.evaluate(AXIS_TYPES, list(CHARTS)) == ["linear"] * 3
    page.locator(".wb-axis button", has_text="x: time (UTC)").click()
    page.wait_for_function(f"() => ({AXIS_TYPES})({json.dumps(list(CHARTS))})"
                           ".every((t) => t === 'date')", timeout=90_000)
    page.locator(".wb-workbench .wb-token-timeline").first.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshots / "time-axis.png"))
    for seq in (145, 148, 255):      # start and checkpoint of #1, start of the interrupted #2
        xs = [page.evaluate(DATA_PIXEL, [sel, _iso(session, seq)]) for sel in CHARTS]
        assert max(xs) - min(xs) <= 2, (seq, xs)
    cursors = [page.evaluate(CURSOR_X, sel) for sel in CHARTS]     # the step, as a time
    assert len(set(cursors)) == 1 and str(cursors[0]).startswith(_iso(session, 148)[:16])
    ticks = page.evaluate("() => Array.from(document.querySelectorAll("
                          "'.wb-bracket-chart .xtick text')).map((n) => n.textContent)")
    assert ticks and all(":" in t for t in ticks), ticks          # clock times, not seqs
    sizes = page.evaluate(WIDTHS)
    assert all(w >= 0.9 * sizes["widget"] for w in sizes["figures"]), sizes
    page.locator(".wb-axis button", has_text="x: seq").click()
    page.wait_for_function(f"() => ({AXIS_TYPES})({json.dumps(list(CHARTS))})"
                           ".every((t) => t === 'linear')", timeout=90_000)
    xs = [page.evaluate(DATA_PIXEL, [sel, 148]) for sel in CHARTS]
    assert max(xs) - min(xs) <= 2, xs
    assert errors == [] and browser.offsite == []


def test_request_view_copies_and_saves_the_rebuilt_request(lab, browser, screenshots):
    _need(KILLED)
    import workbench
    from workbench.core.requests import rebuild_request
    from workbench.views.data import view_data
    session = workbench.load(KILLED)
    data = view_data(session)
    seq = 155                                     # the first model call after compaction #1
    expected = json.loads(json.dumps(rebuild_request(
        session.events, data.timeline, data.attempts[seq],
        version=session.version, session_id=session.session_id)))
    errors: list[str] = []
    page = _open(browser, lab, "request.ipynb", _workbench_cells(KILLED, f'"request:{seq}"'),
                 errors)
    assert page.evaluate(STEP) == seq
    page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                   origin=lab.notebook_url("request.ipynb").split("/lab")[0])
    pane = page.locator(".wb-request-pane").first
    pane.wait_for(timeout=90_000)
    pane.scroll_into_view_if_needed()
    totals = page.locator(".wb-request-pane .wb-totals").first.inner_text()
    assert "context window 20,000" in totals and "total" in totals and "tools" in totals
    copy = page.locator(".wb-request-pane button.wb-copy").first
    copy.click()
    page.wait_for_function("() => document.querySelector('.wb-request-pane button.wb-copy')"
                           ".dataset.done === 'copied'", timeout=15_000)
    copied = json.loads(page.evaluate("() => navigator.clipboard.readText()"))
    assert copied == expected
    page.locator(".wb-save-path input").first.fill("saved-request.json")
    page.locator(".wb-save-request").first.click()
    page.wait_for_function("() => Array.from(document.querySelectorAll('.widget-html'))"
                           ".some((n) => n.innerText.startsWith('wrote saved-request.json'))",
                           timeout=90_000)
    saved = json.loads((lab.root / "saved-request.json").read_text(encoding="utf-8"))
    assert saved == expected == copied
    page.wait_for_timeout(300)
    page.screenshot(path=str(screenshots / "request-copied-saved.png"))
    assert page.viewport_size["height"] == HEIGHT
    assert errors == [] and browser.offsite == []

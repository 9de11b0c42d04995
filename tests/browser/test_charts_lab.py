"""Through the page (JupyterLab + Debian Chromium + Playwright at 1440×900): the bracket chart
draws one trace per status with each attempt on its own row (segments of one status are not
joined across rows), hovering a point names the stop, its seq and the attempt, clicking it
moves the step there; the token timeline shades each attempt's band. Screenshots are saved
under the folder the `screenshots` fixture names."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_in_place_lab import STEP, _open, _workbench_cells

pytestmark = pytest.mark.browser

LOG = Path(__file__).resolve().parents[2] / "sample_logs" / "crash-then-resume__session.v4.jsonl"
"""Attempts: #1 completed 58-62, #2 stale from 97 (released at 101), #3 completed 105-109."""

POINT = """([seq, row]) => {
  const gd = document.querySelector('.wb-bracket-chart .js-plotly-plot');
  const full = gd._fullLayout, box = gd.getBoundingClientRect();
  const label = full.yaxis._categories.find((c) => c.startsWith('#' + row + ' '));
  return {x: box.left + full._size.l + full.xaxis.l2p(seq),
          y: box.top + full._size.t + full.yaxis.l2p(full.yaxis.d2c(label))};
}"""
TRACES = """() => {
  const gd = document.querySelector('.wb-bracket-chart .js-plotly-plot');
  const moves = Array.from(gd.querySelectorAll('.scatterlayer .trace')).map((t) =>
    Array.from(t.querySelectorAll('path.js-line')).map((p) => p.getAttribute('d') || '')
      .join('').split('M').length - 1);
  return {names: gd._fullData.map((t) => t.name), moves};
}"""
BANDS = """() => {
  const gd = document.querySelector('.wb-token-timeline .js-plotly-plot');
  return Array.from(gd.querySelectorAll('.layer-below .shapelayer path')).map(
    (p) => ({fill: p.style.fill, d: p.getAttribute('d'),
           moves: (p.getAttribute('d').match(/M/g) || []).length}));
}"""


def _chart_in_view(page) -> None:
    """The bracket chart at the bottom of the window (a step change re-renders the panes
    above it, which moves it)."""
    page.locator(".wb-workbench .wb-bracket-chart").first.evaluate(
        "(n) => n.scrollIntoView({block: 'end'})")
    page.wait_for_timeout(800)


def test_bracket_chart_rows_hover_and_click_and_timeline_bands(lab, browser, screenshots):
    errors: list[str] = []
    page = _open(browser, lab, "brackets.ipynb", _workbench_cells(LOG, "0"), errors)
    _chart_in_view(page)
    page.screenshot(path=str(screenshots / "bracket-chart.png"))
    traces = page.evaluate(TRACES)
    assert traces["names"] == ["completed", "stale"]
    assert traces["moves"][0] == 2            # two completed rows: two segments, not one line
    bands = page.evaluate(BANDS)
    assert sorted(b["moves"] for b in bands) == [1, 2]   # completed: 2 bands, stale: 1
    point = page.evaluate(POINT, [109, 3])    # #3's end
    page.mouse.move(point["x"], point["y"])
    page.wait_for_function("() => document.querySelector('.wb-bracket-chart .hoverlayer "
                           ".hovertext') !== null", timeout=30_000)
    hover = page.locator(".wb-bracket-chart .hoverlayer .hovertext").first.text_content()
    assert "end at seq 109" in hover and "compaction 00000004-0000-4eed-8000-000000000026" in hover
    page.screenshot(path=str(screenshots / "bracket-hover.png"))
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function(f"() => ({STEP})() === 109", timeout=60_000)
    _chart_in_view(page)
    point = page.evaluate(POINT, [97, 2])     # the stale attempt's start
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function(f"() => ({STEP})() === 97", timeout=60_000)
    page.locator(".wb-workbench .wb-token-timeline").first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(screenshots / "timeline-bands.png"))
    seq_bands = page.evaluate(BANDS)
    page.locator(".wb-axis button", has_text="x: time (UTC)").click()
    page.wait_for_function("() => document.querySelector('.wb-bracket-chart .js-plotly-plot')"
                           "._fullLayout.xaxis.type === 'date'", timeout=90_000)
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshots / "timeline-bands-time.png"))
    bands = page.evaluate(BANDS)                 # the same bands, drawn on the time axis
    assert sorted(b["moves"] for b in bands) == [1, 2] and bands != seq_bands
    assert all("NaN" not in b["d"] for b in bands)
    assert page.evaluate(TRACES)["moves"][0] == 2    # the rows' segments stay apart
    assert errors == [] and browser.offsite == []


LEGEND = """() => Array.from(document.querySelectorAll('.wb-context-fill .js-plotly-plot'))
  .map((gd) => gd._fullData.map((t) => t.name))"""


def test_real_tokenizers_are_counted_when_the_user_asks(lab, browser, screenshots):
    """Above `views.data.EAGER_METER_EVENTS` (lowered here for a small real log) the first
    picture is the DSH heuristic's and a button beside the x-axis choice offers the real
    tokenizers; clicking it counts them and every chart and pane shows them, same step."""
    pytest.importorskip("tiktoken")
    errors: list[str] = []
    cells = ["import workbench.views.data\nworkbench.views.data.EAGER_METER_EVENTS = 10\n"
             + _workbench_cells(LOG, "105")[0]]
    page = _open(browser, lab, "offer.ipynb", cells, errors)
    offer = page.locator(".wb-meter-offer button", has_text="count o200k, deepseek tokens")
    offer.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(screenshots / "meter-offer.png"))
    assert page.evaluate(LEGEND)[-1][0].startswith("dsh measure")
    assert not any("o200k" in name for name in page.evaluate(LEGEND)[-1])
    offer.click()
    page.wait_for_function("() => document.querySelectorAll('.wb-meter-offer').length === 0 "
                           "&& document.querySelectorAll('.wb-workbench .js-plotly-plot')"
                           ".length === 3", timeout=120_000)
    page.wait_for_function(f"() => ({LEGEND})().some((names) => names.includes("
                           "'o200k (tools + surface)'))", timeout=60_000)
    assert page.evaluate(STEP) == 105
    page.locator(".wb-workbench .wb-context-fill").last.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshots / "meter-offer-counted.png"))
    names = page.evaluate(LEGEND)[-1]
    assert "deepseek (tools + surface)" in names and names[0].startswith("dsh measure")
    assert errors == [] and browser.offsite == []

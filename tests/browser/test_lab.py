"""Browser tests: JupyterLab + Debian Chromium + Playwright (see conftest.py)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]


def write_notebook(root: Path, name: str, cells: list[str]) -> str:
    """A code-only notebook in the Lab root; returns its name (relative path)."""
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}},
          "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None,
                     "outputs": [], "source": src} for i, src in enumerate(cells)]}
    (root / name).write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return name


def open_and_run(page, lab, name: str, *, timeout_ms: float = 90_000) -> None:
    """Open a notebook in Lab, wait for its kernel, run every cell."""
    page.goto(lab.notebook_url(name), timeout=timeout_ms)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell "
                           "&& document.querySelector('.jp-Notebook .jp-Cell')", timeout=timeout_ms)
    page.wait_for_function(
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   const k = w && w.sessionContext && w.sessionContext.session
                             && w.sessionContext.session.kernel;
                   return k && k.status === 'idle'; }""", timeout=timeout_ms)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def test_lab_renders_ipywidgets_and_round_trips_to_the_kernel(lab, browser, screenshots):
    """Harness check: a slider moved in the page reaches the kernel, whose observer updates a label."""
    name = write_notebook(lab.root, "smoke.ipynb", [
        "import ipywidgets as w\n"
        "s = w.IntSlider(0, 0, 10, description='n')\n"
        "out = w.HTML('kernel saw 0', _dom_classes=['smoke-out'])\n"
        "s.observe(lambda c: setattr(out, 'value', f\"kernel saw {c['new']}\"), names='value')\n"
        "w.VBox([s, out])",
    ])
    page = browser.new_page()
    open_and_run(page, lab, name)
    out = page.locator(".smoke-out")
    out.wait_for(timeout=60_000)
    page.locator(".widget-slider .noUi-handle").first.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.smoke-out').innerText.includes('kernel saw 2')",
                           timeout=30_000)
    page.screenshot(path=str(screenshots / "smoke.png"))
    assert browser.offsite == []


def test_clickable_html_reports_row_clicks_to_the_kernel(lab, browser, screenshots):
    """The anywidget ESM loads offline and turns a click on a `data-seq` row into a kernel event."""
    name = write_notebook(lab.root, "clickable.ipynb", [
        "import ipywidgets as w\n"
        "from workbench.views.clickable import ClickableHTML\n"
        "pane = ClickableHTML(html='<table><tr class=\"wb-row\" data-seq=\"7\" data-act=\"step\">"
        "<td>row seven</td></tr><tr class=\"wb-row\" data-seq=\"9\"><td>row nine</td></tr></table>')\n"
        "out = w.HTML('no click', _dom_classes=['click-out'])\n"
        "pane.on_click(lambda seq, act: setattr(out, 'value', f'clicked {seq} {act}'))\n"
        "w.VBox([pane, out])",
    ])
    page = browser.new_page()
    open_and_run(page, lab, name)
    page.locator(".wb-pane td", has_text="row nine").wait_for(timeout=60_000)
    page.locator(".wb-pane td", has_text="row nine").click()
    page.wait_for_function(
        "() => document.querySelector('.click-out').innerText.includes('clicked 9 step')",
        timeout=30_000)
    page.locator(".wb-pane td", has_text="row seven").click()
    page.wait_for_function(
        "() => document.querySelector('.click-out').innerText.includes('clicked 7 step')",
        timeout=30_000)
    page.screenshot(path=str(screenshots / "clickable.png"))
    assert browser.offsite == []


SAMPLES = REPO / "sample_logs"
STEPPED = SAMPLES / "multi-day__session.v4.jsonl.zstd"
HOSTILE = SAMPLES / "hostile-payloads__session.v4.jsonl"

STEP_OF_LOG = """() => { const r = document.querySelector('.wb-log-pane tr.wb-step');
                         return r ? Number(r.dataset.seq) : null; }"""
CURSOR = """() => { const g = document.querySelector('.wb-token-timeline .js-plotly-plot');
                    return g && g.layout && g.layout.shapes ? g.layout.shapes[0].x0 : null; }"""
SURFACE_CAPTION = "() => document.querySelector('.wb-surface-pane caption').innerText"


def _workbench_notebook(lab, name: str, log: Path, step: int) -> str:
    return write_notebook(lab.root, name, [
        "import workbench\n"
        "from workbench.views import Workbench\n"
        f"wb = Workbench(workbench.load({str(log)!r}), step={step})\n"
        "wb",
    ])


def _open_workbench(browser, lab, name: str, errors: list[str]):
    page = browser.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_and_run(page, lab, name)
    page.wait_for_function(f"() => ({STEP_OF_LOG})() !== null", timeout=90_000)
    page.wait_for_function(f"() => ({CURSOR})() !== null", timeout=60_000)
    return page


def _wait_step(page, seq: int) -> None:
    page.wait_for_function(f"() => ({STEP_OF_LOG})() === {seq}", timeout=30_000)


def test_workbench_follows_slider_and_next_compaction(lab, browser, screenshots):
    """Slider and "next compaction" move the log pane, the surface pane and the plot cursor;
    after the compaction the shadowed range is marked with the checkpoint that hid it."""
    if not STEPPED.exists():
        pytest.skip(f"sample log {STEPPED} is absent")
    errors: list[str] = []
    page = _open_workbench(browser, lab, _workbench_notebook(lab, "stepped.ipynb", STEPPED, 40),
                           errors)
    assert page.evaluate(STEP_OF_LOG) == 40
    assert page.evaluate(CURSOR) == 40
    caption = page.evaluate(SURFACE_CAPTION)
    page.screenshot(path=str(screenshots / "01-opened.png"), full_page=True)

    page.locator(".wb-slider .noUi-handle").first.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    _wait_step(page, 43)
    page.wait_for_function(f"() => ({CURSOR})() === 43", timeout=30_000)
    assert page.evaluate(SURFACE_CAPTION) != caption
    assert "surface at seq 43" in page.evaluate(SURFACE_CAPTION)
    page.screenshot(path=str(screenshots / "02-slider.png"), full_page=True)

    page.locator(".wb-next-compaction").click()          # the bracket's start ...
    _wait_step(page, 81)
    page.locator(".wb-next-compaction").click()          # ... then its checkpoint
    _wait_step(page, 84)
    page.wait_for_function(f"() => ({CURSOR})() === 84", timeout=30_000)
    page.wait_for_function("() => document.querySelector('.wb-surface-pane caption').innerText"
                           ".includes('surface at seq 84')", timeout=30_000)
    replaces = page.locator(".wb-surface-pane .wb-replaces").first
    match = re.fullmatch(r"replaces #(\d+)…#(\d+) \((\d+) nodes\)", replaces.inner_text().strip())
    assert match, replaces.inner_text()
    first_hidden = int(match.group(1))
    assert page.locator(".wb-log-pane tr.wb-shadowed").count() > 0    # the range, at the step
    page.screenshot(path=str(screenshots / "03-next-compaction.png"), full_page=True)

    replaces.click()                                   # the link to the range it hid
    page.wait_for_function(
        f"() => document.querySelector('.wb-log-pane tr.wb-focus').dataset.seq === "
        f"'{first_hidden}'", timeout=30_000)
    hidden = page.locator(".wb-log-pane .wb-hidden-by")
    assert hidden.count() > 0
    assert hidden.first.inner_text() == "hidden by #84"
    assert page.locator(".wb-log-pane tr.wb-shadowed").count() == hidden.count()
    assert page.evaluate(STEP_OF_LOG) is None          # the step (84) is outside this window
    assert f"event #{first_hidden}" in page.locator(".wb-inspector").inner_text()
    page.screenshot(path=str(screenshots / "04-hidden-range.png"), full_page=True)

    target = first_hidden + 2                          # clicking a row moves the step there
    page.locator(f'.wb-log-pane tr[data-seq="{target}"]').click()
    _wait_step(page, target)
    page.wait_for_function(f"() => ({CURSOR})() === {target}", timeout=30_000)
    assert page.locator(".wb-log-pane .wb-hidden-by").count() == 0

    buttons = page.locator(".widget-play button")      # play/pause (stop and repeat hidden)
    buttons.nth(0).click()
    page.wait_for_function(f"() => ({STEP_OF_LOG})() >= {target + 3}", timeout=30_000)
    buttons.nth(0).click()
    page.wait_for_timeout(1000)
    paused = page.evaluate(STEP_OF_LOG)
    page.wait_for_function(f"() => ({CURSOR})() === {paused}", timeout=30_000)
    page.wait_for_timeout(1000)
    assert page.evaluate(STEP_OF_LOG) == paused        # pause holds
    assert errors == []
    assert browser.offsite == []


NO_SCRIPT_RAN = "() => window.__wb_pwned === undefined"
FORBIDDEN = """() => ({
  inPanes: document.querySelectorAll('.wb-pane script, .wb-pane img, .wb-pane iframe, '
      + '.wb-pane svg, .wb-pane a, .wb-pane link, .wb-pane style, .wb-pane object').length,
  jsLinks: document.querySelectorAll('a[href^="javascript:"]').length,
  iframes: document.querySelectorAll('iframe').length,
  evil: document.querySelectorAll('[src*="evil.example"], [href*="evil.example"]').length,
})"""


def test_html_and_js_in_a_log_show_as_text_and_never_run(lab, browser, screenshots):
    """A log full of <script>, onerror, javascript: links, breakouts and off-site references:
    every pane shows them as text, no script runs, nothing is fetched."""
    if not HOSTILE.exists():
        pytest.skip(f"sample log {HOSTILE} is absent")
    errors: list[str] = []
    page = _open_workbench(browser, lab, _workbench_notebook(lab, "hostile.ipynb", HOSTILE, 20),
                           errors)
    log_text = page.locator(".wb-log-pane").inner_text()
    assert "<script>window.__wb_pwned = 'script tag'</script>" in log_text
    assert "[the docs](javascript:alert(document.cookie))" in log_text

    page.locator(".wb-next-compaction").click()
    _wait_step(page, 38)
    page.locator(".wb-next-compaction").click()
    _wait_step(page, 41)
    page.locator('.wb-surface-pane details[data-key^="node-"] > summary').first.click()
    lineage = page.locator(".wb-surface-pane .wb-lineage").first.inner_text()
    assert "<svg onload=" in lineage
    page.get_by_role("tab", name="inspector", exact=True).click()
    page.locator('.wb-log-pane tr[data-seq="40"]').click()
    _wait_step(page, 40)
    page.wait_for_function("() => document.querySelector('.wb-inspector').innerText"
                           ".includes('compaction/summary')", timeout=30_000)
    inspected = page.evaluate("() => document.querySelector('.wb-inspector').textContent")
    assert "<script>window.__wb_pwned = 'script tag'</script>" in inspected
    for _ in range(6):
        page.locator(".wb-forward").click()
    _wait_step(page, 46)
    page.wait_for_timeout(1500)   # give any injected handler time to fire
    page.screenshot(path=str(screenshots / "hostile.png"), full_page=True)

    assert page.evaluate(NO_SCRIPT_RAN)
    assert page.evaluate(FORBIDDEN) == {"inPanes": 0, "jsLinks": 0, "iframes": 0, "evil": 0}
    assert errors == []
    assert browser.offsite == []

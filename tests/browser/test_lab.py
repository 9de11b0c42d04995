"""Browser tests: JupyterLab + Debian Chromium + Playwright (see conftest.py)."""
from __future__ import annotations

import pytest

from conftest import open_and_run, write_notebook  # type: ignore[import-not-found]

pytestmark = pytest.mark.browser


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

"""What a user sees, checked through the page (JupyterLab + Debian Chromium + Playwright at
1440×900, see conftest.py) on real DSH logs: the checkpoint's summary body and every row it hid
in view at the checkpoint step, aligned full-width charts, pause keeping the step, the diff
following the step, unfinished brackets named in words, and the report's deep links.

Screenshots are saved under the folder the `screenshots` fixture names (one per test)."""
from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest
from test_lab import open_and_run, write_notebook

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus" / "dsh-real-v4"
KILLED = CORPUS / "dev-killed-mid-compaction__session.v4.jsonl"
WIDTH, HEIGHT = 1440, 900
STEP = """() => { const r = document.querySelector('.wb-log-pane tr.wb-step');
                  return r ? Number(r.dataset.seq) : null; }"""


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"real DSH log {path} is absent (../shared/corpus)")


def _open(browser, lab, name: str, cells: list[str], errors: list[str]):
    page = browser.new_page(WIDTH, HEIGHT)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_and_run(page, lab, write_notebook(lab.root, name, cells))
    page.wait_for_function(f"() => ({STEP})() !== null", timeout=120_000)
    page.wait_for_function("() => document.querySelectorAll('.wb-workbench .js-plotly-plot')"
                           ".length === 3", timeout=60_000)
    return page


def _workbench_cells(log: Path, step: str) -> list[str]:
    return ["import workbench\n"
            "from workbench.views import Workbench\n"
            "from workbench.core.compaction.threshold import PressureSettings\n"
            # the corpus README's settings: ratio 0.75, headroom 1024 (the log does not say)
            f"wb = Workbench(workbench.load({str(log)!r}), step={step},\n"
            "               settings=PressureSettings(threshold_ratio=0.75, headroom_tokens=1024))\n"
            "wb"]


IN_VIEW = """(selector) => {
  const fits = (r, box) => r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.height > 0;
  const view = {top: 0, bottom: window.innerHeight};
  return Array.from(document.querySelectorAll(selector)).map((node) => {
    const r = node.getBoundingClientRect();
    const pane = node.closest('.wb-pane').getBoundingClientRect();
    return {seq: node.dataset.seq, inView: fits(r, view), inPane: fits(r, pane)};
  });
}"""


def test_checkpoint_step_shows_summary_body_and_every_hidden_row(lab, browser, screenshots):
    """At the checkpoint of a real compaction: the summary body (not DSH's preamble) in the
    surface pane and every row it hid (folded runs counted) in the log pane, all in view."""
    _need(KILLED)
    errors: list[str] = []
    page = _open(browser, lab, "checkpoint.ipynb", _workbench_cells(KILLED, '"compaction:1"'),
                 errors)
    assert page.evaluate(STEP) == 148
    page.locator(".wb-workbench .wb-log-pane").first.evaluate(
        "(n) => n.closest('.wb-panel').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    page.screenshot(path=str(screenshots / "checkpoint-step.png"))
    rows = page.evaluate(IN_VIEW, ".wb-log-pane tr.wb-shadowed, .wb-log-pane tr.wb-gap")
    hidden = page.locator(".wb-log-pane tr.wb-shadowed")
    assert hidden.count() >= 10
    assert all(r["inView"] and r["inPane"] for r in rows), rows
    folded = page.locator(".wb-log-pane tr.wb-gap", has_text="more hidden nodes").inner_text()
    shown = hidden.count()
    count = int(folded.split("…", 1)[1].split()[0])
    caption = page.locator(".wb-log-pane caption").inner_text()
    assert f"({shown + count:,} nodes #8–#115)" in caption       # every hidden node accounted
    assert page.locator(".wb-log-pane .wb-hidden-by").first.inner_text() == "hidden by #148"
    body = page.locator(".wb-surface-pane .wb-summary-body").first
    text = body.inner_text()
    assert text.startswith("## Primary Request and Intent")
    assert "automatically generated checkpoint" not in text
    assert page.evaluate(IN_VIEW, ".wb-surface-pane tr.wb-focus")[0]["inView"]
    box = body.bounding_box()
    assert box["y"] >= 0 and box["y"] + 60 <= HEIGHT and box["height"] >= 60
    prices = page.locator(".wb-surface-pane .wb-prices").first.inner_text()
    assert "dsh" in prices and "deepseek" in prices and "o200k" in prices
    page.locator(".wb-surface-pane summary", has_text="full framed message").first.click()
    framed = page.locator(".wb-surface-pane .wb-checkpoint pre").first.inner_text()
    assert framed.startswith("This is an automatically generated checkpoint")
    page.screenshot(path=str(screenshots / "checkpoint-framed.png"))
    assert errors == [] and browser.offsite == []


PIXEL = """([selector, seq]) => {
  const gd = document.querySelector(selector + ' .js-plotly-plot');
  const full = gd._fullLayout;
  return gd.getBoundingClientRect().left + full._size.l + full.xaxis.l2p(seq);
}"""
WIDTHS = """() => ({
  widget: document.querySelector('.wb-workbench').getBoundingClientRect().width,
  figures: Array.from(document.querySelectorAll('.wb-workbench .js-plotly-plot'))
    .map((gd) => gd.querySelector('.main-svg').getBoundingClientRect().width),
})"""


def test_charts_share_one_x_axis_fill_the_width_and_resize(lab, browser, screenshots):
    """The same compaction sits at the same pixel in the token timeline, the context fill and
    the bracket chart; each figure spans at least 90% of the widget, also after a resize."""
    _need(KILLED)
    errors: list[str] = []
    page = _open(browser, lab, "charts.ipynb", _workbench_cells(KILLED, "148"), errors)
    page.locator(".wb-workbench .wb-token-timeline").first.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshots / "charts.png"), full_page=False)
    for seq in (145, 148, 255):
        xs = [page.evaluate(PIXEL, [sel, seq]) for sel in
              (".wb-token-timeline", ".wb-context-fill", ".wb-bracket-chart")]
        assert max(xs) - min(xs) <= 2, (seq, xs)
    sizes = page.evaluate(WIDTHS)
    assert all(w >= 0.9 * sizes["widget"] for w in sizes["figures"]), sizes
    fill = page.locator(".wb-context-fill").first.inner_text()
    assert "threshold" in fill and "15,000" in fill           # floor(min(0.75·20000, 20000−2048−1024))
    page.set_viewport_size({"width": 1100, "height": HEIGHT})
    page.wait_for_function(f"""() => {{ const s = ({WIDTHS})();
        return s.figures.every((w) => w >= 0.9 * s.widget && w <= s.widget + 1); }}""",
                           timeout=30_000)
    xs = [page.evaluate(PIXEL, [sel, 148]) for sel in (".wb-token-timeline", ".wb-bracket-chart")]
    assert abs(xs[0] - xs[1]) <= 2, xs
    page.screenshot(path=str(screenshots / "charts-resized.png"), full_page=False)
    assert errors == [] and browser.offsite == []


def test_pause_keeps_the_step_the_diff_follows_and_brackets_are_named(lab, browser,
                                                                      screenshots):
    """Play then pause holds the step (no rewind to 0); every control has a tooltip; the diff
    tab follows the step; the header names the interrupted bracket in words."""
    _need(KILLED)
    errors: list[str] = []
    page = _open(browser, lab, "navigate.ipynb", _workbench_cells(KILLED, "200"), errors)
    header = page.locator(".wb-header").first.inner_text()
    assert "1 interrupted" in header
    assert "compaction #2 interrupted" in header and "never closed" in header
    assert "compaction/start at seq 255" in header
    untitled = """() => Array.from(document.querySelectorAll(
        '.wb-controls button, .wb-controls input, .wb-controls select'))
        .filter((n) => n.offsetParent !== null && !n.closest('[title]'))
        .map((n) => n.tagName + '.' + n.className + ' in ' + n.parentElement.className)"""
    try:
        page.wait_for_function(f"() => ({untitled})().length === 0", timeout=15_000)
    except Exception:  # noqa: BLE001 - report which controls lack a tooltip
        pytest.fail(f"controls without a tooltip: {page.evaluate(untitled)}")
    assert not page.locator(".wb-controls .widget-play button").nth(1).is_visible()  # no stop
    page.locator(".wb-controls .widget-play button").first.click()          # play
    page.wait_for_function(f"() => ({STEP})() >= 203", timeout=30_000)
    page.locator(".wb-controls .widget-play button").first.click()          # pause
    page.wait_for_timeout(1500)
    paused = page.evaluate(STEP)
    page.wait_for_timeout(1500)
    assert page.evaluate(STEP) == paused and paused >= 203              # held, not rewound
    page.screenshot(path=str(screenshots / "paused.png"))

    page.get_by_role("tab", name="diff", exact=True).click()
    diff_title = "() => document.querySelector('.wb-diff-pane .wb-title').innerText"
    page.wait_for_function(f"() => ({diff_title})().includes('→ #{paused}')", timeout=30_000)
    page.locator(".wb-forward").first.click()
    page.wait_for_function(f"() => ({diff_title})().includes('#{paused} → #{paused + 1}')",
                           timeout=30_000)
    page.get_by_role("button", name="last compaction").click()
    page.wait_for_function(f"() => ({diff_title})().includes('#147 → #{paused + 1}')",
                           timeout=30_000)
    assert "replaced 1" in page.locator(".wb-diff-pane").inner_text()
    page.locator(".wb-diff-pane").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "diff-follows.png"))
    assert errors == [] and browser.offsite == []


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def test_report_opens_at_a_seq_link_and_names_the_interrupted_bracket(browser, tmp_path,
                                                                      screenshots):
    """`report.html#seq=N` opens the step viewer at the last model call at or before N and
    shows the link of the step; the never-closed bracket's heading says so in words."""
    _need(KILLED)
    from workbench.report import write_report
    write_report(KILLED, tmp_path / "killed.html")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = browser.new_page(WIDTH, HEIGHT)
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        import workbench
        calls = sorted(a.seq for a in workbench.load(KILLED).attempts)
        target = calls[len(calls) // 2] + 1
        expected = max(c for c in calls if c <= target)
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/killed.html#seq={target}")
        page.wait_for_function("() => document.getElementById('wb-steps').dataset.linked",
                               timeout=30_000)
        step_row = page.locator("#wb-step-log tr.wb-step")
        assert step_row.count() == 1 and step_row.get_attribute("data-seq") == str(expected)
        assert page.get_attribute("#wb-step-link", "href") == f"#seq={expected}"
        assert f"model call at seq {expected}" in page.inner_text("#wb-step-label")
        page.screenshot(path=str(screenshots / "report-seq-link.png"))
        page.keyboard.press("ArrowRight")
        assert page.evaluate("window.location.hash") != f"#seq={expected}"   # the URL follows
        headings = page.locator(".wb-compaction h3").all_inner_texts()
        assert any("never closed" in h and "interrupted" in h for h in headings), headings
        assert not any("––" in h for h in headings)
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/killed.html#compaction=2")
        page.wait_for_timeout(500)
        assert "wb-target" in page.get_attribute("#wb-compaction-2", "class")
        page.screenshot(path=str(screenshots / "report-compaction-link.png"))
        assert problems == [] and browser.offsite == []
    finally:
        page.close()
        server.shutdown()
        server.server_close()


def test_a_damaged_log_names_its_defect_in_the_header(lab, browser, tmp_path, screenshots):
    """A log with a broken line in the middle opens on its valid prefix, and the widget's header
    says so: the verdict and the defect's severity, rule, line and message, as text."""
    _need(KILLED)
    lines = KILLED.read_bytes().split(b"\n")
    lines[120] = b'{"seq": 120, "type": "user/message", <b>broken</b>'
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"\n".join(lines))
    errors: list[str] = []
    page = _open(browser, lab, "damaged.ipynb", _workbench_cells(damaged, "-1"), errors)
    header = page.locator(".wb-header").first
    assert "corrupt" in header.inner_text()
    row = header.locator(".wb-defects tbody tr")
    assert row.count() == 1
    severity, rule, where, _ = row.first.locator("td").all_inner_texts()
    assert (severity, rule) == ("corrupt", "unparsable_committed")
    assert where.startswith(f"{damaged}, line 120, byte ")
    clipped = """() => Array.from(document.querySelectorAll('.wb-header .wb-defects td'))
        .filter((td) => td.scrollWidth > td.clientWidth + 1).length"""
    assert page.evaluate(clipped) == 0                     # the line and byte are not cut off
    assert "unparsable committed event at line 120" in row.first.inner_text()
    assert page.locator(".wb-header b", has_text="broken").count() == 0
    assert page.evaluate(STEP) == 118                      # the valid prefix: seqs 0..118
    header.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "damaged-header.png"))
    assert errors == [] and browser.offsite == []

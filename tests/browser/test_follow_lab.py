"""Browser test: the widget follows a growing log in JupyterLab (Debian Chromium + Playwright):
the live badge, the log and surface panes and the token chart update as the test appends to
the log, without re-running the cell. Screenshots are saved (conftest)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_lab import open_and_run, write_notebook

pytestmark = pytest.mark.browser

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
LOG = SHARED / "corpus" / "dsh-real-v4" / "dev-long-auto-compaction__session.v4.jsonl"

BADGE = "() => { const b = document.querySelector('.wb-live-badge'); return b ? b.innerText : null; }"
SURFACE_CAPTION = "() => { const c = document.querySelector('.wb-surface-pane caption'); return c ? c.innerText : null; }"
CHART_LAST_X = """() => { const g = document.querySelector('.wb-token-timeline .js-plotly-plot');
    if (!g || !g.data || !g.data.length) return null;
    return Math.max(...g.data.map(t => t.x && t.x.length ? Number(t.x[t.x.length - 1]) : -1)); }"""
LOG_ROWS = "() => document.querySelectorAll('.wb-log-pane tr.wb-row').length"


def _events_in(text: str | None) -> int:
    import re
    found = re.search(r"([\d,]+) events", text or "")
    return int(found.group(1).replace(",", "")) if found else -1


def test_widget_follows_a_growing_log(lab, browser, screenshots):
    if not LOG.exists():
        pytest.skip(f"{LOG} is absent (../shared)")
    lines = LOG.read_bytes().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if b'"compaction/start"' in line) - 30
    target = lab.root / "growing__session.v4.jsonl"
    target.write_bytes(b"".join(lines[:first]))
    name = write_notebook(lab.root, "follow.ipynb", [
        "import workbench\n"
        f"wb = workbench.follow({str(target)!r}, tail=True)\n"
        "wb",
    ])
    errors: list[str] = []
    page = browser.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_and_run(page, lab, name)
    page.wait_for_function(f"() => ({BADGE})() !== null && ({CHART_LAST_X})() !== null", timeout=120_000)
    start_events = _events_in(page.evaluate(BADGE))
    assert start_events == first - 1
    start_x = page.evaluate(CHART_LAST_X)
    start_caption = page.evaluate(SURFACE_CAPTION)
    page.screenshot(path=str(screenshots / "01-following.png"), full_page=True)

    # DSH writes: bursts of lines, one of them left half-written for a moment
    rest = lines[first:]
    with open(target, "ab") as fh:
        for k in range(0, 60, 12):
            fh.write(b"".join(rest[k:k + 12]))
            fh.flush()
            time.sleep(0.3)
        half = rest[60][: len(rest[60]) // 2]
        fh.write(half)
        fh.flush()
        time.sleep(1.0)
        fh.write(rest[60][len(half):])
        fh.flush()
    expected = first - 1 + 61
    page.wait_for_function(f"() => {{ const t = ({BADGE})(); return t && t.includes('{expected:,} events'); }}",
                           timeout=120_000)
    page.wait_for_function(f"() => ({CHART_LAST_X})() === {expected - 1}", timeout=120_000)
    page.wait_for_function(f"() => ({SURFACE_CAPTION})() && ({SURFACE_CAPTION})().includes('seq {expected - 1}')",
                           timeout=120_000)
    assert page.evaluate(CHART_LAST_X) > start_x
    assert page.evaluate(SURFACE_CAPTION) != start_caption
    page.screenshot(path=str(screenshots / "02-grown.png"), full_page=True)

    # the rest of the log: a compaction opens, runs and closes while the widget follows
    with open(target, "ab") as fh:
        fh.write(b"".join(rest[61:]))
    final = len(lines) - 1
    page.wait_for_function(f"() => {{ const t = ({BADGE})(); return t && t.includes('{final:,} events'); }}",
                           timeout=120_000)
    page.wait_for_function(f"() => ({CHART_LAST_X})() === {final - 1}", timeout=120_000)
    page.screenshot(path=str(screenshots / "03-complete.png"), full_page=True)
    assert page.evaluate(LOG_ROWS) > 0
    assert errors == [] and browser.offsite == []

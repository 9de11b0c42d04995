"""The static report in a real browser (Debian's Chromium through Playwright, see conftest.py).

The report of every bundled sample log is served from a 127.0.0.1 HTTP server the test starts
and opened in Chromium: the page must make no request but its own (the conftest's guard aborts
and records anything off-host; a request listener records everything else), log no console
error, step through the model requests with ←/→/Home/End, and — for the hostile-payload log —
show every payload as text and run none of them (`window.__wb_pwned` stays undefined).
"""
from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.report import write_report

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs"
LOGS = sorted(SAMPLES.rglob("*.jsonl*"))


def _name(path: Path) -> str:
    return path.name if path.parent == SAMPLES else f"{path.parent.name}-{path.name}"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, int]]]:
    """Every sample's report, served on 127.0.0.1; yields (base url, report name → steps)."""
    folder = tmp_path_factory.mktemp("reports")
    steps = {}
    for log in LOGS:
        result = write_report(log, folder / f"{_name(log)}.html")
        steps[result.path.name] = result.requests_shown
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", steps
    finally:
        server.shutdown()
        server.server_close()


def _open(browser, url: str):
    page = browser.new_page()
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url, wait_until="load")
    page.wait_for_selector("#wb-fig-timeline .main-svg", timeout=30_000)
    return page, problems, requests


def _state(page) -> tuple[str | None, str]:
    return (page.get_attribute("#wb-steps", "data-step"),
            page.inner_text("#wb-step-label"))


@pytest.mark.parametrize("log", LOGS, ids=_name)
def test_report_opens_offline_and_steps_with_the_keyboard(log: Path, served, browser,
                                                          screenshots: Path) -> None:
    base, steps = served
    name = f"{_name(log)}.html"
    url = f"{base}/{name}"
    page, problems, requests = _open(browser, url)
    try:
        assert requests == [url]
        count = steps[name]
        assert count > 0
        assert _state(page)[0] == "0"
        assert page.locator("#wb-step-log tr.wb-step").count() == 1
        assert page.locator("#wb-step-surface tbody tr").count() > 0
        page.keyboard.press("ArrowRight")
        step, label = _state(page)
        assert step == str(min(1, count - 1))
        assert label.startswith(f"request {min(2, count)} of {count}")
        page.keyboard.press("End")
        assert _state(page)[0] == str(count - 1)
        page.keyboard.press("ArrowLeft")
        assert _state(page)[0] == str(max(count - 2, 0))
        page.keyboard.press("Home")
        assert _state(page)[0] == "0"
        page.click("#wb-step-next")
        assert _state(page)[0] == str(min(1, count - 1))
        seq = page.get_attribute("#wb-steps", "data-seq")
        page.wait_for_function("(seq) => document.getElementById('wb-steps').dataset.cursor === seq",
                               arg=seq)
        cursor = page.evaluate("document.getElementById('wb-fig-timeline').layout.shapes[0].x0")
        assert cursor == int(seq)
        page.screenshot(path=str(screenshots / f"{name}.png"), full_page=False)
        assert browser.offsite == []
        assert problems == []
        assert requests == [url]
    finally:
        page.close()


def test_hostile_payloads_are_shown_and_never_run(served, browser) -> None:
    base, steps = served
    name = "hostile-payloads__session.v4.jsonl.html"
    page, problems, requests = _open(browser, f"{base}/{name}")
    try:
        for _ in range(steps[name]):                       # render every step
            page.keyboard.press("ArrowRight")
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        page.wait_for_timeout(300)
        assert page.evaluate("typeof window.__wb_pwned") == "undefined"
        assert page.evaluate(
            "document.querySelectorAll('img, iframe, object, embed, link[rel=stylesheet]').length"
        ) == 0
        handlers = page.evaluate(
            "Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)"
            ".filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))")
        assert handlers == []
        scripts = page.evaluate("Array.from(document.scripts).filter(s => !s.type).length")
        assert scripts == 2
        text = page.inner_text("body")
        assert "<script>window.__wb_pwned = 'script tag'</script>" in text
        assert "javascript:window.__wb_pwned='javascript link'" in text
        links = page.evaluate("Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))")
        assert all(h.startswith("#") for h in links)
        assert problems == [] and browser.offsite == [] and len(requests) == 1
    finally:
        page.close()

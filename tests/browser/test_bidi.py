"""Bidi text from a log cannot reorder the workbench's own text (Chromium, see conftest.py):
a session id carrying U+202E (right-to-left override) or Hebrew letters sits in the widget's
header right before "N events"; rendered, the count's digits must still read left to right.
The report's summary and header are built by the same escaping helper (`views.html.escape`)."""
from __future__ import annotations

from pathlib import Path

import pytest

import workbench
from workbench.build import LogBuilder
from workbench.report import write_report
from workbench.views.workbench import summary_html

pytestmark = pytest.mark.browser

_POSITIONS = """(needle) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const found = [];
  while (walker.nextNode()) {
    const node = walker.currentNode, at = node.data.indexOf(needle);
    if (at < 0) continue;
    const xs = [];
    for (let i = 0; i < needle.length; i++) {
      const r = document.createRange(); r.setStart(node, at + i); r.setEnd(node, at + i + 1);
      xs.push(r.getBoundingClientRect().left);
    }
    found.push(xs);
  }
  return found;
}"""


def _log(tmp_path: Path, session_id: str) -> Path:
    b = LogBuilder(version=4, session_id=session_id)
    for k in range(6):
        with b.turn():
            with b.step():
                b.user(f"question {k}")
                b.assistant(f"answer {k}")
    return b.write(tmp_path / "bidi__session.v4.jsonl")


def _reads_left_to_right(page, needle: str) -> None:
    found = page.evaluate(_POSITIONS, needle)
    assert found, f"{needle!r} is not on the page"
    for xs in found:
        assert xs == sorted(xs) and len(set(xs)) == len(xs), (needle, xs)


@pytest.mark.parametrize("session_id", ["id-\u202e-x", "\u05e9\u05dc\u05d5\u05dd",
                                        "a\u2069\u202e", "\u2066\u202e"])
def test_log_text_cannot_reorder_the_header_or_the_report(tmp_path: Path, browser, screenshots,
                                                          session_id: str) -> None:
    log = _log(tmp_path, session_id)
    session = workbench.load(log)
    n = len(session)
    assert n >= 10 and len(set(str(n))) > 1
    page = browser.new_page()
    try:
        page.set_content(f"<meta charset=utf-8><body>{summary_html(session)}</body>")
        _reads_left_to_right(page, f"{n:,} events")
        page.screenshot(path=str(screenshots / "header.png"))
        report = Path(write_report(session, tmp_path / "report.html").path)
        assert "\u2068" in report.read_text(encoding="utf-8")   # the same helper isolates it
    finally:
        page.close()
    assert browser.offsite == []

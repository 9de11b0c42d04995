"""The widget's summary header says what and where a damaged log's defects are, as the report
does (one formatter, `views.html.defects_html`), capped with "… and N more"; an empty log's
panes say so; and a log of thousands of compaction attempts is cut the same way in the widget
and the report (`workbench.views.limits`), and both say so."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import workbench
from workbench.build import LogBuilder
from workbench.io.model import Defect
from workbench.report.page import render_report
from workbench.report.sections import defects_section
from workbench.views import Workbench, limits
from workbench.views.html import defects_html

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "crash-then-resume__session.v4.jsonl"
HOSTILE_NAME = "<img src=x onerror=alert(1)>__session.v4.jsonl"


def _damaged(tmp_path: Path, name: str = "session.v4.jsonl") -> Path:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    path = tmp_path / name
    path.write_text("\n".join(lines[:50] + ['{"type":"user/message","seq":49,'] + lines[50:])
                    + "\n", encoding="utf-8")
    return path


def _rows(html: str) -> list[str]:
    return re.findall(r"<tr><td>.*?</tr>", html)


def test_the_header_names_each_defect_as_the_report_does(tmp_path):
    session = workbench.load(_damaged(tmp_path, HOSTILE_NAME))
    assert len(session.defects) == 1 and session.verdict == "corrupt"
    wb = Workbench(session, meters="dsh")
    header = wb.header.value
    defect = session.defects[0]
    assert "<img" not in header          # the hostile file name shows only escaped
    for text in (defect.rule, "line 50", f"byte {defect.byte_offset:,}",
                 "unparsable committed event at line 50", "&lt;img src=x onerror=alert(1)&gt;"):
        assert text in header, text
    assert _rows(header) == _rows(defects_section(session)) != []
    wb.close()


def test_defects_are_capped_with_the_count_of_the_rest(tmp_path, monkeypatch):
    defects = [Defect(f"rule_{i}", f"message <{i}>", "f.jsonl", line=i, byte_offset=10 * i)
               for i in range(12)]
    html = defects_html(defects, 5)
    assert len(_rows(html)) == 5 and "… and 7 more defects" in html
    assert "message &lt;4&gt;" in html and "message &lt;5&gt;" not in html
    assert "f.jsonl, line 3, byte 30" in html
    session = workbench.load(_damaged(tmp_path))
    monkeypatch.setattr(limits, "MAX_DEFECT_NOTES", 0)
    header = Workbench(session, meters="dsh").header.value
    assert _rows(header) == [] and "… and 1 more defects" in header


def test_a_log_without_a_readable_event_says_so(tmp_path):
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "session.v4.jsonl"
    path.write_text(lines[0] + "\n" + '{"type":"turn/start","seq":0,"time":"x","data":{}}\n',
                    encoding="utf-8")
    session = workbench.load(path)
    assert len(session) == 0 and session.defects
    wb = Workbench(session, meters="dsh", step=-1)
    caption = re.search(r"<caption>(.*?)</caption>", wb.log_pane.pane.html).group(1)
    assert "-1" not in caption and "no readable event" in caption
    assert wb.goto(-1) == 0
    assert session.defects[0].rule in wb.header.value
    wb.close()


@pytest.fixture(scope="module")
def many_failed(tmp_path_factory):
    n = limits.MAX_BRACKETS + 37
    b = LogBuilder(version=4, session_id="session-many", seed=1)
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("hi")
            b.assistant("ok")
    for i in range(n):
        with b.turn():
            with b.step():
                b.user(f"msg {i}")
                b.assistant(f"ans {i}")
        b.compact(error=f"summarization produced no text summary content ({i})")
    return workbench.load(b.write(tmp_path_factory.mktemp("many") / "session.v4.jsonl")), n


def _report_chart(page: str) -> dict:
    found = re.search(r'id="wb-fig-brackets-data"[^>]*>(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


def _chart_rows(data: list) -> set[int]:
    return {c[0] for trace in data for c in trace["customdata"] if c is not None}


def test_many_attempts_are_cut_alike_in_the_widget_and_the_report(many_failed):
    session, n = many_failed
    wb = Workbench(session, meters="dsh")
    header = wb.header.value
    assert header.count('class="wb-bracket-note"') == limits.MAX_BRACKET_NOTES
    rest = n - limits.MAX_BRACKET_NOTES
    assert f"… and {rest:,} more compaction attempts that did not complete" in header
    assert len(header) < 20_000
    figure = wb.bracket_chart.figure
    widget_rows = _chart_rows(figure.to_plotly_json()["data"])
    assert len(widget_rows) == limits.MAX_BRACKETS and {0, n - 1} <= widget_rows
    assert figure.layout.height <= 60 + 28 * limits.MAX_BRACKETS
    assert f"{limits.MAX_BRACKETS:,} of {n:,} shown" in figure.layout.title.text
    page, facts = render_report(session)
    assert _chart_rows(_report_chart(page)["data"]) == widget_rows
    assert limits.bracket_cut_note(limits.MAX_BRACKETS, n) in facts["notes"]
    assert page.count('<p class="wb-note"><b>compaction #') == limits.MAX_BRACKET_NOTES
    assert f"… and {rest:,} more compaction attempts that did not complete" in page
    labels = [y for trace in figure.to_plotly_json()["data"] for y in trace["y"] if y]
    assert f"#{n} failed" in " ".join(labels)       # a thinned chart keeps attempt numbers
    wb.close()

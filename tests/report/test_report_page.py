"""The static HTML report: structure, escaping of hostile payloads, offline, sampling.

Reports are parsed with the standard library's HTML parser, the way a browser tokenizes them:
every element and attribute the page really has is checked, while log text that merely *looks*
like markup is only ever character data.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.report import json_for_script, render_report, write_report
from workbench.report.steps import choose_attempts
from workbench.session import load

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs"
sys.path.insert(0, str(SAMPLES))
import sample_texts  # noqa: E402

SAMPLE_LOGS = sorted(p for p in SAMPLES.rglob("*.jsonl*"))
HOSTILE = SAMPLES / "hostile-payloads__session.v4.jsonl"


class Page(HTMLParser):
    """Elements, attributes, script bodies and visible text of an HTML document."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.text: list[str] = []
        self._script: dict[str, str | None] | None = None
        self._body: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script, self._body = dict(attrs), []

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._body)))
            self._script = None

    def handle_data(self, data):
        (self._body if self._script is not None else self.text).append(data)

    def json_block(self, block_id: str):
        for attrs, body in self.scripts:
            if attrs.get("id") == block_id:
                assert attrs.get("type") == "application/json"
                return json.loads(body)
        raise KeyError(block_id)

    @property
    def visible(self) -> str:
        return "".join(self.text)


@pytest.fixture(scope="module")
def hostile_html() -> str:
    html, _ = render_report(load(HOSTILE))
    return html


@pytest.fixture(scope="module")
def seed_html() -> str:
    html, _ = render_report(load(SAMPLES / "seed-story__session.jsonl"))
    return html


# -- JSON inside <script> ---------------------------------------------------------------------

@pytest.mark.parametrize(("value", "text"), [
    ("</script><script>x</script>", r'"\u003c/script\u003e\u003cscript\u003ex\u003c/script\u003e"'),
    ("a & b", r'"a \u0026 b"'),
    ("<!-- x -->", r'"\u003c!-- x --\u003e"'),
    ("line\u2028para\u2029", r'"line\u2028para\u2029"'),
    ("lone \ud800 surrogate", r'"lone \ud800 surrogate"'),
    ("中文 ok", '"中文 ok"'),
    ({"k": [1, None, True]}, '{"k":[1,null,true]}'),
], ids=["script-close", "ampersand", "html-comment", "line-separators", "lone-surrogate",
        "cjk-kept-raw", "structure"])
def test_json_for_script_escapes_what_could_end_the_script(value, text: str) -> None:
    assert json_for_script(value) == text
    assert json.loads(json_for_script(value)) == value


def test_json_for_script_refuses_non_finite_numbers() -> None:
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        json_for_script(float("inf"))


# -- structure --------------------------------------------------------------------------------

def test_report_has_every_section_and_one_plotly(seed_html: str) -> None:
    page = Page(seed_html)
    ids = {attrs.get("id") for _, attrs in page.tags}
    for section in ("wb-summary", "wb-timeline", "wb-audit", "wb-compactions", "wb-steps",
                    "wb-defects", "wb-about", "wb-fig-timeline", "wb-fig-brackets",
                    "wb-step-prev", "wb-step-next", "wb-step-range", "wb-step-label"):
        assert section in ids
    code = [body for attrs, body in page.scripts if "type" not in attrs]
    assert len(code) == 2                                    # plotly.js and ours
    assert seed_html.count("plotly.js v") == 1               # the bundle, inline, once
    timeline = page.json_block("wb-fig-timeline-data")
    assert {"data", "layout"} <= set(timeline)
    assert timeline["layout"]["shapes"][0]["name"] == "cursor"
    assert any(s.get("name", "").startswith("bracket") for s in timeline["layout"]["shapes"])


def test_seed_story_report_shows_the_story(seed_html: str) -> None:
    page = Page(seed_html)
    steps = page.json_block("wb-steps-data")
    assert [s["request"] for s in steps["steps"]] == [1, 3, 5, 7, 13]
    last = steps["steps"][-1]
    assert last["seq"] == 12
    assert [row[1] for row in last["surface"]] == [10, 6, 7, 12]     # the checkpoint first
    assert steps["replaces"]["10"] == [0, 5, 6]
    assert steps["lineage"]["10"][0] == [0, 1, 2, 3, 4, 5]
    assert steps["events"]["2"][3] == 20_012                          # the big file, still there
    log_rows = {row[0]: row for row in last["log"]}
    assert log_rows[2][1] == 1 and log_rows[2][2] == 10               # shadowed, hidden by 10
    assert "20,129" in page.visible                                   # hidden tokens in the audit


def test_csp_allows_exactly_the_page_scripts(seed_html: str) -> None:
    page = Page(seed_html)
    csp = next(a["content"] for t, a in page.tags
               if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    hashes = set(re.findall(r"'(sha256-[A-Za-z0-9+/=]+)'", csp))
    code = [body for attrs, body in page.scripts if "type" not in attrs]
    assert hashes == {"sha256-" + base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()
                      for b in code}
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]


# -- escaping ---------------------------------------------------------------------------------

def _markup_problems(page: Page) -> list[str]:
    problems = []
    for tag, attrs in page.tags:
        if tag in ("img", "iframe", "svg", "object", "embed", "frame", "base", "form"):
            problems.append(f"<{tag}> element")
        for name, value in attrs.items():
            if name.startswith("on"):
                problems.append(f"{name}= on <{tag}>")
            if name in ("href", "src", "action", "formaction") and value is not None:
                if not value.startswith(("#", "data:")):
                    problems.append(f"{name}={value!r} on <{tag}>")
        if tag == "link" and attrs.get("rel") != "icon":
            problems.append("<link> element")
    return problems


def test_hostile_payloads_are_text_and_never_markup(hostile_html: str) -> None:
    page = Page(hostile_html)
    assert _markup_problems(page) == []
    code = [attrs for attrs, _ in page.scripts if "type" not in attrs]
    assert len(code) == 2
    assert [t for t, _ in page.tags].count("style") == 1
    # the payloads are shown, as text, in the audit/compaction panels
    visible = page.visible
    for payload in sample_texts.PAYLOADS[:3]:
        assert payload in visible


def test_hostile_payloads_survive_the_json_blocks_verbatim(hostile_html: str) -> None:
    page = Page(hostile_html)
    for attrs, body in page.scripts:
        if attrs.get("type") == "application/json":
            assert not set(body) & set("<>&\u2028\u2029"), attrs.get("id")
    steps = page.json_block("wb-steps-data")
    previews = " ".join(e[2] for e in steps["events"].values())
    assert "<script>window.__wb_pwned" in previews
    assert "javascript:" in previews


def test_offline_no_remote_loads(hostile_html: str, seed_html: str) -> None:
    for html in (hostile_html, seed_html):
        page = Page(html)
        remote = [(t, a) for t, a in page.tags for k, v in a.items()
                  if k in ("src", "href") and v and re.match(r"(?i)\s*(https?:)?//", v)]
        assert remote == []
        assert not [a for t, a in page.tags if t == "script" and "src" in a]


def test_stylesheets_load_nothing(seed_html: str) -> None:
    css = re.findall(r"<style>(.*?)</style>", seed_html, flags=re.S)
    assert len(css) == 1
    assert "url(" not in css[0] and "@import" not in css[0]


# -- sampling and damaged logs ------------------------------------------------------------------

def test_step_viewer_is_sampled_and_says_so(tmp_path: Path) -> None:
    session = load(SAMPLES / "multi-day__session.v4.jsonl.zstd")
    result = write_report(session, tmp_path / "r.html", max_steps=6)
    assert (result.requests_total, result.requests_shown) == (48, 6)
    assert any("6 of 48 model requests" in n for n in result.notes)
    page = Page((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert "6 of 48 model requests" in page.visible
    assert len(page.json_block("wb-steps-data")["steps"]) == 6
    assert result.bytes == (tmp_path / "r.html").stat().st_size


class _A:
    def __init__(self, before: int) -> None:
        self.before = before


@pytest.mark.parametrize(("n", "ends", "cap", "expected"), [
    (5, [], 10, [0, 1, 2, 3, 4]),
    (100, [], 3, [0, 49, 99]),
    (100, [41, 77], 6, [0, 33, 42, 65, 78, 99]),
    (10, [], 9, [0, 1, 2, 3, 5, 6, 7, 8, 9]),
    (100, [10, 20, 30, 40, 50, 60], 4, [0, 11, 61, 99]),
    (100, [], 1, [0]),
    (10, [], 0, []),
], ids=["all-fit", "evenly-spaced", "first-after-each-compaction", "all-but-one",
         "compactions-capped", "one", "none"])
def test_choose_attempts(n: int, ends: list[int], cap: int, expected: list[int]) -> None:
    chosen = choose_attempts([_A(i) for i in range(n)], ends, cap)
    assert [a.before for a in chosen] == expected


def _torn(tmp_path: Path) -> Path:
    b = LogBuilder(version=4, session_id="session-torn")
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("hello")
            b.request_header()
            b.assistant("hi")
    path = b.write(tmp_path / "session.v4.jsonl")
    with path.open("ab") as fh:
        fh.write(b'{"type":"turn/start","seq":')
    return path


def test_damaged_log_still_gets_a_report_with_its_defects(tmp_path: Path) -> None:
    session = load(_torn(tmp_path))
    assert session.defects
    result = write_report(session, tmp_path / "r.html")
    assert not result.ok
    page = Page((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert "The report shows the readable prefix of the log." in page.visible
    assert session.defects[0].rule in page.visible


def test_log_without_model_requests(tmp_path: Path) -> None:
    b = LogBuilder(version=4, session_id="session-empty")
    with b.turn():
        pass
    session = load(b.write(tmp_path / "session.v4.jsonl"))
    html, facts = render_report(session)
    assert facts["requests_total"] == 0
    assert "no model request in this log" in Page(html).visible


@pytest.mark.parametrize("path", SAMPLE_LOGS, ids=lambda p: p.parent.name + "/" + p.name
                         if p.parent != SAMPLES else p.name)
def test_every_sample_renders(path: Path) -> None:
    html, facts = render_report(load(path))
    page = Page(html)
    assert _markup_problems(page) == []
    assert facts["requests_shown"] == facts["requests_total"] > 0


def test_header_only_log(tmp_path: Path) -> None:
    path = tmp_path / "session.v4.jsonl"
    path.write_text('{"type":"session","version":4,"id":"session-e","createdAt":0,'
                    '"isSeeded":false,"delegationDepth":0}\n', encoding="utf-8")
    result = write_report(path, tmp_path / "r.html")
    page = Page((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert (result.events, result.requests_total, result.ok) == (0, 0, True)
    assert "The log has no events." in page.visible
    assert page.json_block("wb-steps-data")["steps"] == []

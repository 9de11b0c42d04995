"""The one escaping helper and the `*_html` formatters: log text is always text, never markup."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest

from workbench.io.jsjson import loads, stringify
from workbench.views.html import (
    LineageItem,
    LogRow,
    SurfaceRow,
    diff_html,
    error_html,
    escape,
    json_html,
    lineage_html,
    log_table_html,
    pretty_json,
    request_html,
    shorten,
    surface_table_html,
)

PAYLOADS = [
    pytest.param("<script>window.__pwned = 1</script>", id="script"),
    pytest.param('<img src=x onerror="window.__pwned = 2">', id="img-onerror"),
    pytest.param('<a href="javascript:window.__pwned = 3">click me</a>', id="javascript-link"),
    pytest.param("\"><svg onload=alert(4)>", id="attribute-breakout"),
    pytest.param("' onmouseover='alert(5)", id="single-quote-breakout"),
    pytest.param("</td></tr></table><iframe src=//evil>", id="table-breakout"),
    pytest.param("&lt;already&gt; &amp;", id="entities-stay-literal"),
]

ALLOWED_TAGS = {"style", "div", "b", "pre", "table", "caption", "thead", "tbody", "tr", "th", "td",
                "span", "details", "summary", "ul", "li"}
ALLOWED_ATTRS = {"class", "data-seq", "data-act", "data-key", "title", "style", "open"}


class _Audit(HTMLParser):
    """Collects tags, attributes and text as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)

    def handle_data(self, data):
        self.text.append(data)


def audit(markup: str) -> _Audit:
    parser = _Audit()
    parser.feed(markup)
    parser.close()
    return parser


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escape_turns_markup_into_its_own_text(payload):
    seen = audit(f"<div>{escape(payload)}</div>")
    assert seen.tags == {"div"}
    assert "".join(seen.text) == payload


@pytest.mark.parametrize(("value", "text"), [
    pytest.param(-0.0, "0", id="negative-zero-as-js"),
    pytest.param(1e21, "1e+21", id="exponent-as-js"),
    pytest.param(True, "true", id="bool"),
    pytest.param(None, "", id="none"),
    pytest.param({"a": "<b>"}, '{&quot;a&quot;:&quot;&lt;b&gt;&quot;}', id="object-as-json"),
    pytest.param("a\ud800b\x00c", "a\ufffdb\ufffdc", id="lone-surrogate-and-nul"),
])
def test_escape_renders_values_like_javascript(value, text):
    assert escape(value) == text


def test_escape_output_is_always_utf8_encodable():
    value = loads('"\\udc00 tail"')
    escape(value).encode("utf-8")


def test_shorten_flattens_whitespace_and_cuts_with_an_ellipsis():
    assert shorten("a\n\n b\tc", 10) == "a b c"
    assert shorten("x" * 20, 10) == "x" * 9 + "…"


def _formatted(payload: str) -> list[str]:
    row = LogRow(seq=3, type=payload, role=payload, preview=payload, surface="shadowed",
                 hidden_by=9, bracket=(payload, "start"), is_step=True)
    lineage = (LineageItem(4, payload, payload, children=(LineageItem(5, payload, payload),),
                           more=2),)
    node = SurfaceRow(position=0, seq=9, type=payload, role=payload, tokens=12, preview=payload,
                      replaces=(3, 5, 3), lineage=lineage, changed=True)
    return [
        log_table_html([row], caption=payload),
        surface_table_html([node], caption=payload),
        lineage_html(lineage),
        json_html({payload: [payload, {"k": payload}], "n": -0.0}),
        request_html({"system": payload, "messages": [{"content": payload}]}, title=payload),
        diff_html(1, 2, [node], [node], tokens_a=10, tokens_b=5),
        error_html(payload, ValueError(payload)),
    ]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_every_formatter_shows_log_text_as_text(payload):
    for markup in _formatted(payload):
        seen = audit(markup)
        assert seen.tags <= ALLOWED_TAGS, markup
        assert seen.attrs <= ALLOWED_ATTRS, markup
        text = "".join(seen.text)
        assert payload in text or stringify(payload) in text, markup


def test_log_rows_mark_the_step_the_hiding_replacement_and_the_bracket():
    rows = [LogRow(1, "user/message", "user", "hi", "shadowed", hidden_by=7,
                   bracket=("failed", "start")),
            LogRow(2, "turn/end", None, "", "log-only", is_step=True)]
    markup = log_table_html(rows)
    assert 'class="wb-row wb-click wb-shadowed" data-seq="1" data-act="step"' in markup
    assert "hidden by #7" in markup
    assert 'wb-bar wb-bar-start" style="background:#d62728" title="compaction failed"' in markup
    assert 'class="wb-row wb-click wb-log-only wb-step" data-seq="2"' in markup


def test_surface_rows_show_range_lineage_tokens_and_change_marker():
    lineage = (LineageItem(8, "user/message", "first"), LineageItem(148, "user/message", "ckpt",
                                                                    children=(), more=0))
    node = SurfaceRow(1, 255, "user/message", "user", 1234, "summary", replaces=(148, 216, 27),
                      lineage=lineage, changed=True)
    markup = surface_table_html([node])
    assert "replaces #148…#216 (27 nodes)" in markup
    assert "1,234" in markup
    assert 'class="wb-row wb-node wb-changed"' in markup
    # the seq cell, the two lineage entries and the range link (to the first hidden node)
    assert markup.count('data-act="select"') == 4
    assert 'data-seq="148" data-act="select" title="show the range it hid"' in markup


def test_json_html_cuts_long_strings_and_containers_visibly():
    markup = json_html({"s": "x" * 50, "a": list(range(10))[::-1]}, max_string=5, max_items=3)
    text = "".join(audit(markup).text)
    assert '"xxxxx"' in text and "45 more chars" in text
    assert "… 7 more" in text


def test_values_nested_too_deep_show_their_text_cut_and_escaped():
    """A `Deep` value (nested past deepjson.MATERIALISED_DEPTH) is its logged text, cut like a
    long string, in the tree and in the indented form; never a repr, never the whole text."""
    text = '{"k":' + "[" * 3_000 + '"<script>x</script>"' + "]" * 3_000 + "}"
    value = loads(text)
    tree = audit(json_html(value, max_string=4_000))
    shown = "".join(tree.text)
    assert "Deep(" not in shown and "<script>" not in tree.tags
    assert "[" * 2_000 in shown and "more chars (nested too deep to unfold" in shown
    assert "".join(audit(json_html(value, max_string=100)).text).count("[") <= 128 + 100
    plain = pretty_json(value, max_string=100)
    assert "Deep(" not in plain and "more chars)" in plain and plain.count("[") <= 128 + 100


def test_diff_html_reports_token_delta():
    added = [SurfaceRow(0, 9, "user/message", "user", 40, "ckpt", replaces=(1, 5, 5))]
    removed = [SurfaceRow(0, 1, "user/message", "user", 100, "a")]
    text = "".join(audit(diff_html(3, 9, added, removed, tokens_a=500, tokens_b=440)).text)
    assert "surface at #3 → #9: 500 → 440 tokens (-60)" in text
    assert "added 1 (+40 tokens)" in text and "removed 1 (−100 tokens)" in text


def test_pretty_json_indents_like_javascript_and_cuts_long_strings():
    text = pretty_json({"a": [1, -0.0, {"b": "xyz" * 5}], "e": {}, "n": None}, max_string=4)
    assert text == ('{\n  "a": [\n    1,\n    0,\n    {\n      "b": "xyzx" … (11 more chars)\n'
                    '    }\n  ],\n  "e": {},\n  "n": null\n}')


def test_request_html_lists_each_message_with_a_summary():
    request = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text",
                                                                        "text": "<b>hi</b>"}]}]}
    seen = audit(request_html({"envelope": {"model": "m"}, "messages": request["messages"]}))
    text = "".join(seen.text)
    assert "#0 user (1 block) <b>hi</b>" in text
    assert '"text": "<b>hi</b>"' in text
    assert seen.tags <= ALLOWED_TAGS | {"pre"}


@pytest.mark.parametrize("text", [
    "id-\u202e-evil", "\u05e9\u05dc\u05d5\u05dd", "\u2069\u202e53", "\u2066open", "a\u2067b\u2069c\u202b",
    "\u0645\u0631\u062d\u0628\u0627\u200f", "line \u202e\nnext \u202d"])
def test_escape_isolates_text_that_could_reorder_its_neighbours(text):
    """Right-to-left letters and bidi controls are wrapped in FSI … PDI, balanced: every line
    ends with the isolate it started closed (a stray PDI in the log closes an extra FSI)."""
    out = escape(text)
    assert out.replace("\u2068", "").replace("\u2069", "") == text.replace(
        "\u2068", "").replace("\u2069", "")
    for line in out.split("\n"):
        opened: list[int] = []
        closes = {}
        for at, ch in enumerate(line):
            if ch in "\u2066\u2067\u2068":
                opened.append(at)
            elif ch == "\u2069" and opened:
                closes[opened.pop()] = at
        assert not opened and line[0] == "\u2068" and closes[0] == len(line) - 1


def test_escape_leaves_left_to_right_text_as_it_is():
    assert escape("session-1 · 53 events <b>") == "session-1 · 53 events &lt;b&gt;"

"""A lone surrogate (the legal JSON escape ``\\ud800``) in any string of a log: the widget builds,
steps and shows it (as U+FFFD), and the report renders; no text reaches an Arrow ``string``
array, a widget or the page without passing the one sanitiser (`workbench.frames.columns`,
`workbench.views.html.escape`). Also a guard: views and report build no ``string`` arrays of
their own (the frames' typed builders are the one way log text becomes a ``string`` column)."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from tour_script import tour_script

import workbench
from workbench.report.page import render_report
from workbench.views import Workbench

PKG = Path(__file__).resolve().parents[2] / "workbench"
STRUCTURAL = {"type", "role", "surfaceOp", "kind", "status", "format", "blockType"}
"""Keys whose values name a vocabulary: a changed value is another log, not hostile text."""


def _string_keys(value, keys: set[str], key: str | None = None) -> set[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            _string_keys(v, keys, k)
    elif isinstance(value, list):
        for v in value:
            _string_keys(v, keys, key)
    elif isinstance(value, str) and key is not None:
        keys.add(key)
    return keys


def _tainted(value, field: str, key: str | None = None):
    if isinstance(value, dict):
        return {k: _tainted(v, field, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_tainted(v, field, key) for v in value]
    return value + "\ud800" if isinstance(value, str) and key == field else value


def _widget_texts(widget, out: list[str], seen: set[int]) -> list[str]:
    if id(widget) in seen:
        return out
    seen.add(id(widget))
    for name in ("value", "html", "description", "tooltip"):
        text = getattr(widget, name, None)
        if isinstance(text, str):
            out.append(text)
    if hasattr(widget, "to_plotly_json"):
        out.append(json.dumps(widget.to_plotly_json(), default=str, ensure_ascii=False))
    for child in getattr(widget, "children", ()) or ():
        _widget_texts(child, out, seen)
    return out


@pytest.mark.parametrize("version", [4, 0])
def test_a_lone_surrogate_in_any_string_field_reaches_no_view_raw(tmp_path, version):
    base = tour_script(version, failed_attempt=True, context_window=20000).write(
        tmp_path / ("session.v4.jsonl" if version == 4 else "session.jsonl"))
    records = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
    fields = sorted(_string_keys(records, set()) - STRUCTURAL)
    assert {"compactionId", "error", "name", "text", "id", "toolCallId", "callId"} <= set(fields)
    for field in fields:
        path = tmp_path / field / base.name
        path.parent.mkdir()
        path.write_text("".join(json.dumps(_tainted(r, field), ensure_ascii=True) + "\n"
                                for r in records), encoding="utf-8")
        session = workbench.load(path)
        wb = Workbench(session, meters="dsh")
        for seq in range(len(session)):
            wb.goto(seq)
        failed = [f"{type(v).__name__}: {v.last_error!r}" for v in wb.views
                  if v.last_error is not None]
        assert failed == [], field
        for text in _widget_texts(wb, [], set()):
            text.encode("utf-8")               # a lone surrogate could not reach the browser
        page, _facts = render_report(session)
        page.encode("utf-8")
        wb.close()


def test_a_lone_surrogate_in_a_compaction_id_and_error_builds_every_view(tmp_path):
    source = Path(__file__).resolve().parents[2] / "sample_logs" / \
        "failed-summaries__session.v4.jsonl"
    text = source.read_text(encoding="utf-8")
    text = text.replace('"error":"summarization produced no text summary content"',
                        '"error":"summarization produced no text summary content \\ud800"', 1)
    first_id = json.loads(next(line for line in text.splitlines()
                                if '"compaction/start"' in line))["data"]["compactionId"]
    text = text.replace(f'"{first_id}"', f'"{first_id}\\ud800"')
    path = tmp_path / "session.v4.jsonl"
    path.write_text(text, encoding="utf-8")
    session = workbench.load(path)
    wb = Workbench(session, meters="dsh")
    frame = wb.data.compactions
    assert frame["compaction_id"].iloc[0] == first_id + "\ufffd"
    assert frame["error"].dropna().iloc[0].endswith("content \ufffd")
    assert wb.goto(f"compaction:{first_id}\ufffd") == wb.goto("compaction:1")
    render_report(session)[0].encode("utf-8")
    wb.close()


STRING_DTYPES = {"string", "str", "string[python]", "string[pyarrow]", "large_string"}


def _string_array_constructions(path: Path) -> list[str]:
    """Where a module names a string dtype or builds an Arrow string array itself (a column
    declared for the frames' builder, ``Column(name, "string", get)``, is the allowed way)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    declared = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name) and node.func.id in {"Column", "_col"}
                for arg in node.args}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in STRING_DTYPES and id(node) not in declared:
            found.append(f"{path.name}:{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in {
                "StringDtype", "ArrowStringArray", "string", "large_string", "StringArray"}:
            found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    return found


def test_views_and_report_build_no_string_arrays_of_their_own():
    """Log text becomes a ``string`` column only through `workbench.frames.columns` (which
    replaces lone surrogates); a view or the report that names the dtype itself would build
    one from raw log text again (the crash this file's other tests pin)."""
    found = [hit for layer in ("views", "report") for path in sorted((PKG / layer).rglob("*.py"))
             for hit in _string_array_constructions(path)]
    assert found == []

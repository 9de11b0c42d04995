"""The anchor extractor (`workbench.core.compaction.anchors`): each rule, what is never an anchor
(schema keys, JSON keys, harness boilerplate, bare numbers), birth seqs, and the real corpus
(no anchor is a tool-schema word). Skips the corpus part when ../shared is absent."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.compaction.anchors import (
    KINDS,
    RULES,
    Anchor,
    anchor_keys,
    extract_anchors,
    message_texts,
    schema_words,
    states,
    strip_checkpoint,
    text_anchors,
)
from workbench.core.compaction.brackets import frame_summary

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-real-v4"


def _keys(text: str) -> set[tuple[str, str]]:
    return {a.key for a in extract_anchors([text])}


@pytest.mark.parametrize(("text", "expected"), [
    ("open src/app.py now", ("path", "src/app.py")),
    ("see README.md", ("path", "README.md")),
    ("it raised ValueError here", ("error", "ValueError")),
    ("finish CONTEXT_WINDOW_EXCEEDED", ("error", "CONTEXT_WINDOW_EXCEEDED")),
    ("error: could not open file", ("error", "error: could not open file")),
    ("[exit code: 2]", ("error", "exit code 2")),
    ("call parseConfig first", ("identifier", "parseConfig")),
    ("the get_user_name helper", ("identifier", "get_user_name")),
    ("commit 3f9a2c1b landed", ("identifier", "3f9a2c1b")),
    ("id 0a607f4f-17c7-4fd1-82f2-9ebb3e6ab2c9", ("identifier",
                                                 "0a607f4f-17c7-4fd1-82f2-9ebb3e6ab2c9")),
    ("docs at https://example.com/a/b.", ("url", "https://example.com/a/b")),
    ("listens on port 8080", ("number", "port 8080")),
    ("size: 17 rows", ("number", "size 17")),
    ("wait 30s before", ("number", "wait 30s")),
    ("$ pytest -q tests", ("command", "pytest -q tests")),
    ("You must not edit the lockfile.", ("constraint", "You must not edit the lockfile.")),
])
def test_each_rule(text: str, expected: tuple[str, str]) -> None:
    assert expected in _keys(text)


def test_every_rule_has_a_known_kind() -> None:
    assert {r.kind for r in RULES} <= set(KINDS)
    assert len({r.name for r in RULES}) == len(RULES)


@pytest.mark.parametrize("text", [
    "17", "a list: 1, 2, 3", "item1,beta,17", "12: name,kind,size", "[exit code: 0]",
    '{"file_path": 3}', "<path></path>",
])
def test_not_anchors(text: str) -> None:
    assert not [k for k in _keys(text) if k[0] in ("number", "identifier", "error")]


def test_tool_arguments_values_only_and_commands() -> None:
    event = {"type": "assistant/message", "seq": 7, "data": {"message": {
        "role": "assistant", "content": [
            {"type": "tool-call", "id": "toolu_1", "name": "bash",
             "arguments": json.dumps({"command": "ls -la src/pkg\necho done",
                                      "sandbox_permissions": "require_escalated",
                                      "workdir": "/work/demo/sub"})}]}}}
    keys = {a.key: a.born_seq for a in extract_anchors([event])}
    assert keys[("command", "ls -la src/pkg")] == 7
    assert ("path", "src/pkg") in keys and ("path", "/work/demo/sub") in keys
    texts = {t for _, t in keys}
    assert not texts & {"sandbox_permissions", "workdir", "toolu_1", "bash"}


def test_schema_words_of_advertised_tools_are_stopped() -> None:
    tools = [{"name": "apply_patch", "parameters": {"type": "object", "properties": {
        "patch_text": {"type": "string"},
        "opts": {"type": "object", "properties": {"dry_run": {"type": "boolean"}}}}}}]
    words = schema_words(tools)
    assert words == {"apply_patch", "patch_text", "opts", "dry_run"}
    text = "use apply_patch with patch_text and dry_run on my_module"
    assert {t for _, t in text_anchors(text, stop=words)} == {"my_module"}


def test_schema_words_of_a_hostile_schema() -> None:
    """A header's tool schema is log text: a combinator that is not a list is no schema (it
    made `audit` fail with an internal error)."""
    tools = [{"name": "t", "parameters": {"anyOf": 5, "oneOf": True, "allOf": "ab", "properties": {
        "a": {"items": {"anyOf": [{"properties": {"deep": {}}}, 3]}}}}}]
    assert schema_words(tools) == {"t", "a", "deep"}


def test_json_keys_in_prose_are_not_anchors() -> None:
    text = 'config {"retry_count": "fast_path", "maxDepth": "x"}'
    assert {t for _, t in text_anchors(text)} == {"fast_path"}


def test_boilerplate_sources_and_checkpoint_framing() -> None:
    runtime = {"role": "user", "source": {"kind": "runtime-context"},
               "content": [{"type": "text", "text": "Current working directory: /a/b/c.py"}]}
    assert message_texts(runtime) == []
    checkpoint = {"role": "user", "source": {"kind": "compact-checkpoint"},
                  "content": frame_summary([{"type": "text", "text": "Edited src/app.py."}])}
    assert {a.key for a in extract_anchors([checkpoint])} == {("path", "src/app.py")}
    assert "checkpoint condensing" not in strip_checkpoint(
        "\n".join(t for _, t in message_texts(checkpoint)))


def test_constraints_only_from_the_users_words() -> None:
    user = {"role": "user", "source": {"kind": "user"},
            "content": [{"type": "text", "text": "Never push to main. Thanks."}]}
    assistant = {"role": "assistant", "content": [{"type": "text", "text": "Never push to main."}]}
    assert [a.key for a in extract_anchors([user])] == [("constraint", "Never push to main.")]
    assert not extract_anchors([assistant])


def test_birth_is_the_first_item() -> None:
    found = extract_anchors([(3, "edit src/a.py"), (5, "edit src/a.py and src/b.py")])
    assert found == [Anchor("path", "src/a.py", 3), Anchor("path", "src/b.py", 5)]


def test_states_rules() -> None:
    assert states("Listens on Port 8080 now", "number", "port 8080")
    assert not states("port is set\n8080 elsewhere", "number", "port 8080")
    assert states("the user said to never push to main", "constraint", "Never push to main.")
    assert not states("pushed", "constraint", "Never push to main.")
    assert states("edited src/app.py", "path", "src/app.py")
    assert not states("edited src/app", "path", "src/app.py")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["src/a.py", "port 80", "ValueError", "foo_bar", "plain words",
                                 "https://x.org/p", "17", "$ make test"]), max_size=8))
def test_lines_are_independent(parts: list[str]) -> None:
    """No rule crosses a line: the anchors of joined lines are the anchors of each line."""
    joined = anchor_keys([("text", "\n".join(parts))])
    each = anchor_keys([("text", p) for p in parts])
    assert joined == each


def _corpus() -> list[Path]:
    return sorted(REAL.glob("*.jsonl")) if REAL.is_dir() else []


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name.split("__")[0])
def test_real_logs_no_schema_words(path: Path) -> None:
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    tools = [t for e in events if e.get("type") == "request/header"
             for t in (e["data"].get("header") or {}).get("tools") or ()]
    words = schema_words(tools)
    assert "file_path" in words or not tools
    found = extract_anchors(events, stop=words)
    texts = {a.text for a in found}
    assert not texts & words
    assert not texts & {"file_path", "sandbox_permissions"}
    assert all(a.born_seq is not None for a in found)
    assert found

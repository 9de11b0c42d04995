"""Token meters (spec §6): heuristic, header canonical form, price fold, measure, usage, counts."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.build import LogBuilder
from workbench.core.header import canonical_header, header_equals
from workbench.core.load import load_log
from workbench.core.surface import fold_surface
from workbench.core.tokens.bias import content_kind, heuristic_bias
from workbench.core.tokens.compactions import compaction_tokens
from workbench.core.tokens.counts import LogTokens
from workbench.core.tokens.heuristic import (
    estimate_content,
    estimate_header,
    estimate_message,
    estimate_system_message,
    estimate_tools,
    node_price,
    price_events,
)
from workbench.core.tokens.measure import TokenMeter, measure_log
from workbench.core.tokens.meters import DshMeter, get_meter, parse_meter_names
from workbench.core.tokens.surface_prices import fold_surface_tokens, surface_shape
from workbench.core.tokens.usage import usage_samples, usage_totals
from workbench.errors import MeterError
from workbench.io.generations import rules_for

TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]
IMAGE = {"type": "image", "attachment": {"attachmentId": "a", "mediaType": "image/png", "bytes": 1,
                                         "width": 2, "height": 3}}

# -- heuristic ---------------------------------------------------------------------------------

CONTENT = [
    ("empty", [], 0, 0),
    ("text-ascii", [{"type": "text", "text": "abcde"}], 6, 6),
    ("reasoning-astral", [{"type": "reasoning", "text": "😀😀😀"}], 6, 6),
    ("tool-call-two-ceilings", [{"type": "tool-call", "id": "c", "name": "r", "arguments": "x"}], 6, 6),
    ("tool-result-arm-only-v0", [{"type": "tool-result", "toolCallId": "c", "content": [
        {"type": "text", "text": "xy"}]}], 9, 4 + 20),
    ("image-offloaded-key-dropped-v4", [{**IMAGE, "offloaded": True}], 4 + 31, 4 + 27),
    ("non-string-text-prices-structurally", [{"type": "text", "text": 5}], 4 + 6, 4 + 6),
    ("non-object-block", ["ab"], 4 + 1, 4 + 1),
]


@pytest.mark.parametrize(("blocks", "v0", "v4"), [c[1:] for c in CONTENT], ids=[c[0] for c in CONTENT])
def test_estimate_content(blocks, v0, v4) -> None:
    assert estimate_content(blocks, version=0) == v0
    assert estimate_content(blocks, version=4) == v4


def test_system_messages_have_their_own_rule_in_v4_only() -> None:
    message = {"role": "system", "content": [{"type": "text", "text": "abc"}, {"type": "text", "text": "def"}]}
    assert estimate_system_message(message) == 6
    assert estimate_message(message, version=4) == 6
    assert estimate_message(message, version=0) == 5 + 5 + 4
    assert estimate_system_message({"role": "system", "content": []}) == 0


ENVELOPES = [
    ("none", None, 0, 0),
    ("config-only", {"config": {}}, 0, 0),
    ("system-only", {"system": "abcdefgh"}, 6, 0),
    ("tools", {"tools": TOOLS}, 4 + 19, 4 + 19),
    ("fixture-placeholders", {"system": "{{system}}", "tools": "{{tools}}"}, 14, 7),
]


@pytest.mark.parametrize(("header", "v0", "v4"), [e[1:] for e in ENVELOPES], ids=[e[0] for e in ENVELOPES])
def test_estimate_header(header, v0, v4) -> None:
    assert estimate_header(header, version=0) == v0
    assert estimate_header(header, version=4) == v4


def test_estimate_tools_empty_and_absent() -> None:
    assert estimate_tools([]) == 0
    assert estimate_tools(None) == 0
    assert estimate_tools([{}]) == 4 + 1


NODE_PRICES = [
    ("v4-empty-system-none", 4, {"type": "system/message", "data": {"message": {"role": "system", "content": []}}}, 0),
    ("v4-empty-assistant-none", 4, {"type": "assistant/message", "data": {"message": {"content": []}}}, 0),
    ("v4-empty-tool-result-priced", 4, {"type": "tool/result", "data": {"message": {"content": []}}}, 4),
    ("v4-user-is-data", 4, {"type": "user/message", "data": {"role": "user", "content": [
        {"type": "text", "text": "abcd"}]}}, 9),
    ("v0-system-message-not-a-node", 0, {"type": "system/message", "data": {"message": {"content": [
        {"type": "text", "text": "x"}]}}}, 0),
    ("log-only", 4, {"type": "turn/start", "data": {"turn": 1}}, 0),
    ("no-data", 4, {"type": "user/message"}, 0),
]


@pytest.mark.parametrize(("version", "event", "price"), [n[1:] for n in NODE_PRICES], ids=[n[0] for n in NODE_PRICES])
def test_node_price(version, event, price) -> None:
    assert node_price(event, version=version) == price
    assert price_events([event, None], version=version) == [price, 0]


# -- header canonical form and equality --------------------------------------------------------

CANONICAL = [
    ("drops-unknown-and-empty", 0, {"config": {"model": "m"}, "system": "", "tools": [], "messagePrefix": "x",
                                    "adapterDefaults": {"maxTokens": False}}, {"config": {"model": "m"}}),
    ("keeps-true-marker", 4, {"config": {}, "adapterDefaults": {"reasoningEffort": True}},
     {"config": {}, "adapterDefaults": {"reasoningEffort": True}}),
    ("v4-drops-system", 4, {"config": {}, "system": "s"}, {"config": {}}),
    ("v0-keeps-system", 0, {"config": {}, "system": "s"}, {"config": {}, "system": "s"}),
    ("placeholder-tools-kept", 0, {"config": {}, "tools": "{{tools}}"}, {"config": {}, "tools": "{{tools}}"}),
]


@pytest.mark.parametrize(("version", "header", "canonical"), [c[1:] for c in CANONICAL], ids=[c[0] for c in CANONICAL])
def test_canonical_header(version, header, canonical) -> None:
    assert canonical_header(header, version=version) == canonical


BASE = {"config": {"provider": "p", "model": "m", "maxTokens": 10, "stop": ["a"]}, "tools": TOOLS}
EQUALITY = [
    ("identical", BASE, json.loads(json.dumps(BASE)), True),
    ("integral-float", BASE, {**BASE, "config": {**BASE["config"], "maxTokens": 10.0}}, True),
    ("extra-config-key-ignored", BASE, {**BASE, "config": {**BASE["config"], "baseUrl": "x"}}, True),
    ("stop-differs", BASE, {**BASE, "config": {**BASE["config"], "stop": ["b"]}}, False),
    ("stop-absent-vs-present", BASE, {**BASE, "config": {"provider": "p", "model": "m", "maxTokens": 10}}, False),
    ("tool-key-order", BASE, {**BASE, "tools": [{"description": "Read a file", "name": "read",
                                                 "parameters": {"type": "object"}}]}, False),
    ("bool-is-not-number", {"config": {"temperature": 1}}, {"config": {"temperature": True}}, False),
    ("marker", BASE, {**BASE, "adapterDefaults": {"maxTokens": True}}, False),
    ("none-and-none", None, None, True),
    ("none-and-header", None, BASE, False),
]


@pytest.mark.parametrize(("a", "b", "equal"), [e[1:] for e in EQUALITY], ids=[e[0] for e in EQUALITY])
def test_header_equals(a, b, equal) -> None:
    assert header_equals(a, b) is equal
    assert header_equals(b, a) is equal


# -- builder logs --------------------------------------------------------------------------------

def script(version: int) -> LogBuilder:
    b = LogBuilder(version=version, session_id="tokens-test")
    with b.turn():
        with b.step():
            b.system("You are a coding agent. 你是一个编程助手。")
            b.user("Upgrade the dependencies, please.")
            b.request_header(tools=TOOLS, max_tokens=2048)
            a = b.assistant("Reading.", reasoning="Look first.", tool_calls=[("read", {"path": "pyproject.toml"})])
            b.tool_result(a.call_ids[0], text="[project]\nname = 'x'\n" * 200)
        with b.step():
            b.assistant("Done: 依赖已经升级。")
    with b.turn():
        b.prune(b.surface[-2], head=100, tail=50)
        b.compact(summary="The user asked for an upgrade.")
        with b.step():
            b.user("def f(x):\n    return {x: [1, 2]}\n")
            b.assistant("Continuing.")
    return b


@pytest.fixture(params=[0, 4], ids=["v0", "v4"])
def version(request) -> int:
    return request.param


def test_shape_totals_match_the_price_fold_at_every_event(version: int) -> None:
    events = script(version).events
    shape = surface_shape(events, version=version)
    totals = shape.totals(price_events(events, version=version))
    for position in range(len(events)):
        assert totals[position] == fold_surface_tokens(events[:position + 1], version=version).surface_tokens
    final = fold_surface(events, version=version)
    assert [events[p]["seq"] for p in shape.nodes_at(len(events) - 1)] == list(final.nodes)
    middle = len(events) // 2
    assert shape.nodes_at(middle) == list(fold_surface(events, version=version, through=middle).nodes)


def test_price_fold_refuses_an_unresolvable_range() -> None:
    events = [{"type": "user/message", "seq": 0, "data": {"content": []}, "surfaceOp": "append"},
              {"type": "user/message", "seq": 1, "data": {"content": []},
               "surfaceOp": {"op": "replace", "startSeq": 0, "endSeq": 5}}]
    with pytest.raises(MeterError, match=r"^token surface: replace at seq 1 has invalid current range 0-5$"):
        fold_surface_tokens(events, version=4)
    shape = surface_shape(events, version=4)
    assert (shape.error_position, shape.surface.tolist()) == (1, [True, False])


def test_log_tokens_counts_and_envelope(version: int) -> None:
    b = script(version)
    tokens = LogTokens(b.events, version=version, progress=False)
    dsh = tokens.prices("dsh")
    assert dsh.tolist() == price_events(b.events, version=version)
    header = tokens.header_at()
    assert header is not None and header["tools"] == TOOLS
    expected_envelope = estimate_header(header, version=version)
    assert tokens.envelope_at("dsh") == expected_envelope > 0
    assert tokens.envelope_at("dsh", 0) == 0
    rows = tokens.node_counts_at(None, ["dsh"])
    assert [r["seq"] for r in rows] == list(b.surface)
    assert sum(r["dsh"] for r in rows) == tokens.surface_totals("dsh")[-1]


def test_compaction_rows_reproduce_the_logged_counts(version: int) -> None:
    tokens = LogTokens(script(version).events, version=version, progress=False)
    rows = compaction_tokens(tokens, ("dsh",))
    assert [(r.kind, r.status) for r in rows] == [("prune", "completed"), ("summary", "completed")]
    for row in rows:
        assert row.hidden["dsh"] == row.logged_shadowed_tokens
        assert row.added["dsh"] > 0


# -- measure (v0 replay; v4 is covered by the conformance vectors) ------------------------------

def _v0_step(usage: dict | None, *, cite: list | None = None) -> list[dict]:
    chunk = {"type": "text-delta", "index": 0, "text": "abcdefgh"}
    message = {"turn": 1, "step": 1, "message": {"role": "assistant", "content": [
        {"type": "text", "text": "abcdefgh"}], "source": {"kind": "model", "provider": "p", "model": "m"}}}
    if usage is not None:
        message["usage"] = usage
    events = [
        {"type": "request/header", "seq": 0, "data": {"header": {"config": {"provider": "p", "model": "m"},
                                                                "system": "abcd"}}},
        {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}},
        {"type": "user/message", "seq": 2, "data": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
         "surfaceOp": "append"},
        {"type": "assistant/chunk", "seq": 3, "data": {"turn": 1, "step": 1, "chunk": chunk}},
        {"type": "assistant/message", "seq": 4, "data": message, "surfaceOp": "append"},
    ]
    if cite is not None:
        events[4]["sourceEventSeqs"] = cite
    return events


def test_v0_measure_anchors_on_the_surface_at_step_start() -> None:
    # header: system ceil(4/4)+4 = 5; user 1+4+4 = 9 enters after step/start; assistant 2+4+4 = 10.
    [m] = measure_log(_v0_step({"inputTokens": 100, "outputTokens": 5}, cite=[3]), version=0)
    assert (m.baseline.kind, m.baseline.tokens) == ("usage", 105)
    assert m.surface_tokens == 19
    assert m.surface_delta_tokens == 19 - 10  # the entering user message is a deliberate over-estimate
    assert m.total_tokens == 114


def test_v0_measure_without_usage_is_estimated() -> None:
    [m] = measure_log(_v0_step(None), version=0)
    assert (m.baseline.kind, m.baseline.tokens, m.surface_delta_tokens) == ("estimated", 5 + 10, 9)


def test_v0_measure_refuses_a_citation_outside_the_step() -> None:
    with pytest.raises(MeterError, match="cites 2, which is not an earlier assistant/chunk"):
        measure_log(_v0_step({"inputTokens": 1, "outputTokens": 1}, cite=[2]), version=0)


def test_meter_state_is_unchanged_after_an_error() -> None:
    meter = TokenMeter(version=4)
    meter.fold({"type": "step/start", "seq": 0, "data": {"turn": 1, "step": 1}})
    with pytest.raises(MeterError, match="arrived before turn 1/step 1 ended"):
        meter.fold({"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 2}})
    assert meter.consumed_events == 1 and meter.step == {"turn": 1, "step": 1}


# -- provider usage ------------------------------------------------------------------------------

def _usage_event(etype: str, seq: int, step: int, inp: int, *, chunk_only: bool = False) -> dict:
    usage = {"inputTokens": inp, "outputTokens": 1, "cacheReadTokens": 2, "reasoningTokens": 1}
    stream = [{"type": "chunk", "time": 1, "chunk": {"type": "usage", "usage": usage}}]
    data: dict = {"turn": 1, "step": step, "stream": stream}
    if etype == "assistant/message" and not chunk_only:
        data["usage"] = usage
    return {"type": etype, "seq": seq, "data": data}


def test_v4_usage_replacement_and_retry_started() -> None:
    events = [
        _usage_event("assistant/attempt", 0, 1, 10),
        _usage_event("assistant/message", 1, 1, 20),  # replaces the failed attempt
        _usage_event("assistant/attempt", 2, 2, 30),
        {"type": "llm/retry-started", "seq": 3, "data": {"turn": 1, "step": 2}},
        _usage_event("assistant/message", 4, 2, 40, chunk_only=True),  # adds: a retry came in between
    ]
    samples = usage_samples(events, version=4)
    assert [(s.seq, s.source, s.replaced_by) for s in samples] == [
        (0, "attempt", 1), (1, "message", None), (2, "attempt", None), (4, "message", None)]
    totals = usage_totals(samples)
    assert (totals.input_tokens, totals.cache_read_tokens, totals.output_tokens, totals.calls) == (90, 6, 3, 3)
    assert samples[1].prompt_tokens == 22 and samples[1].reasoning_tokens == 1


def test_v0_usage_chunks_and_messages() -> None:
    usage = {"inputTokens": 5, "outputTokens": 1}
    events = [
        {"type": "assistant/chunk", "seq": 0, "data": {"turn": 1, "step": 1, "chunk": {"type": "usage", "usage": usage}}},
        {"type": "assistant/message", "seq": 1, "data": {"turn": 1, "step": 1, "usage": usage}},
        {"type": "llm/retry-started", "seq": 2, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 3, "data": {"turn": 1, "step": 1, "usage": usage}},
    ]
    samples = usage_samples(events, version=0)
    assert [s.replaced_by for s in samples] == [1, 3, None]  # v0 knows no retry exception
    assert usage_totals(samples).total_tokens == 6


def test_malformed_usage_is_flagged_not_summed() -> None:
    [sample] = usage_samples([{"type": "assistant/message", "seq": 0, "data": {
        "turn": 1, "step": 1, "usage": {"inputTokens": "7", "outputTokens": 2}}}], version=4)
    assert sample.malformed and sample.input_tokens == 0 and sample.output_tokens == 2


# -- meters and bias -----------------------------------------------------------------------------

def test_meter_registry() -> None:
    assert parse_meter_names("dsh, o200k_base,dsh") == ("dsh", "o200k")
    with pytest.raises(MeterError, match="unknown meter 'gpt'"):
        parse_meter_names("gpt")
    assert isinstance(get_meter("dsh", version=0), DshMeter)
    assert get_meter("dsh", version=0) is get_meter("heuristic", version=0)


KINDS = [
    ("chinese", {"type": "user/message", "data": {"content": [{"type": "text", "text": "请帮我升级依赖 ok"}]}}, "chinese"),
    ("code", {"type": "user/message", "data": {"content": [{"type": "text", "text": "x = f(a[1]); y = {}"}]}}, "code"),
    ("prose", {"type": "user/message", "data": {"content": [{"type": "text", "text": "Please upgrade it."}]}}, "prose"),
    ("tool", {"type": "tool/result", "data": {"message": {"content": []}}}, "tool_output"),
    ("image-only", {"type": "user/message", "data": {"content": []}}, "other"),
]


@pytest.mark.parametrize(("event", "kind"), [k[1:] for k in KINDS], ids=[k[0] for k in KINDS])
def test_content_kind(event, kind) -> None:
    assert content_kind(event, version=4) == kind


def test_bias_report_with_a_real_tokenizer() -> None:
    tokens = LogTokens(script(4).events, version=4, progress=False)
    report = heuristic_bias(tokens)
    assert report.session.reference == int(np.sum(tokens.prices("dsh")[tokens.shape.surface]))
    assert {k.kind for k in report.by_kind} >= {"tool_output", "prose"}
    assert all(n.real > 0 for n in report.nodes if n.kind != "other")


# -- the corpus ----------------------------------------------------------------------------------

def _corpus_logs(shared_dir: Path) -> list[Path]:
    corpus = shared_dir / "corpus"
    if not corpus.is_dir():
        pytest.skip("../shared/corpus is absent")
    return sorted(p for p in corpus.rglob("*") if p.name.endswith((".jsonl", ".jsonl.zstd")))


def test_corpus_completed_compactions_price_exactly(shared_dir: Path) -> None:
    checked = 0
    for path in _corpus_logs(shared_dir):
        log = load_log(str(path))
        if not log.events:
            continue
        version = rules_for(log.format_version)
        tokens = LogTokens(log.events, version=version, progress=False)
        assert tokens.prices("dsh").tolist() == [node_price(e, version=version) for e in log.events]
        for row in compaction_tokens(tokens, ("dsh",)):
            if row.status == "completed":
                assert row.hidden["dsh"] == row.logged_shadowed_tokens, (path.name, row.seq)
                checked += 1
    assert checked >= 40


# -- the CLI -------------------------------------------------------------------------------------

def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli.main import main

    b = script(4)
    path = tmp_path / "session.v4.jsonl"
    b.write(path)
    at = b.seq - 3
    assert main(["tokens", str(path), "--at", str(at), "--meter", "dsh,usage", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    tokens = LogTokens(b.events, version=4, progress=False)
    assert report["at"] == at
    dsh = report["meters"]["dsh"]
    assert [n["seq"] for n in dsh["nodes"]] == list(fold_surface(b.events, version=4, through=at).nodes)
    assert dsh["surface"] == int(tokens.surface_totals("dsh")[at])
    assert dsh["envelope"] == tokens.envelope_at("dsh", at)
    assert report["meters"]["usage"]["sampleSeq"] is not None
    assert main(["tokens", str(path), "--at", "99999"]) == 2
    assert main(["tokens", str(path), "--meter", "nope"]) == 2

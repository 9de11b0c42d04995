"""The surface fold: exact reference messages and kinds of every rule (v0 and v4 spec §4), the
check order, plan/apply purity, projections and the seed example of the issue."""
from __future__ import annotations

import copy

import pytest

from workbench.core.projection import derive_message, surface_messages, transcript_seqs
from workbench.core.surface import (
    Plan,
    SurfaceState,
    apply_plan,
    fold_surface,
    plan_event,
)
from workbench.errors import FoldError
from workbench.io import jsjson

# -- tiny event builders -------------------------------------------------------------------------


def user(seq, text="hi", op="append", **extra):
    ev = {"type": "user/message", "seq": seq, "time": 0,
          "data": {"id": f"u-{seq}", "role": "user", "content": [{"type": "text", "text": text}],
                   "source": {"kind": "user"}}}
    if op is not None:
        ev["surfaceOp"] = op
    ev.update(extra)
    return ev


def assistant(seq, content=None, op="append", **extra):
    content = [{"type": "text", "text": "ok"}] if content is None else content
    ev = {"type": "assistant/message", "seq": seq, "time": 0,
          "data": {"turn": 1, "step": 1, "message": {
              "id": f"a-{seq}", "role": "assistant", "content": content,
              "source": {"kind": "model", "provider": "mock", "model": "m"}}}}
    if op is not None:
        ev["surfaceOp"] = op
    ev.update(extra)
    return ev


def tool_v0(seq, text="r", op="append", call="c1", msg_id=None, **extra):
    ev = {"type": "tool/result", "seq": seq, "time": 0,
          "data": {"turn": 1, "step": 1, "message": {
              "id": msg_id or f"t-{seq}", "role": "user", "source": {"kind": "tool", "callId": call},
              "content": [{"type": "tool-result", "toolCallId": call,
                           "content": [{"type": "text", "text": text}], "isError": False}]}},
          "surfaceOp": op}
    ev.update(extra)
    return ev


def tool_v4(seq, content=None, op="append", call="c1", msg_id=None, **extra):
    content = [{"type": "text", "text": "r"}] if content is None else content
    ev = {"type": "tool/result", "seq": seq, "time": 0,
          "data": {"turn": 1, "step": 1, "message": {
              "id": msg_id or f"t-{seq}", "role": "tool", "source": {"kind": "tool", "callId": call},
              "toolCallId": call, "content": content, "isError": False}},
          "surfaceOp": op}
    ev.update(extra)
    return ev


def system(seq, text="sys", op="append", **extra):
    ev = {"type": "system/message", "seq": seq, "time": 0,
          "data": {"turn": 1, "step": 1, "message": {
              "id": f"s-{seq}", "role": "system", "content": [{"type": "text", "text": text}],
              "source": {"kind": "system-prompt"}}},
          "surfaceOp": op}
    ev.update(extra)
    return ev


def log_only(seq, etype="turn/start", **extra):
    ev = {"type": etype, "seq": seq, "time": 0, "data": {"turn": 1}}
    ev.update(extra)
    return ev


def header(seq, tools):
    return {"type": "request/header", "seq": seq, "time": 0,
            "data": {"header": {"config": {"provider": "mock", "model": "m"}, "tools": tools},
                     "reason": "initial"}}


def developer(seq, blocks, header_seq=None, role="developer"):
    data = {"turn": 1, "step": 1, "message": {"id": f"d-{seq}", "role": role, "content": blocks,
                                              "source": {"kind": "tool-registry"}}}
    if header_seq is not None:
        data["headerSeq"] = header_seq
    return {"type": "developer/message", "seq": seq, "time": 0, "data": data, "surfaceOp": "append"}


def image(n):
    return {"type": "image", "attachment": {"attachmentId": f"i{n}", "mediaType": "image/png",
                                            "bytes": 1, "width": 1, "height": 1}}


def offload(seq, targets, **extra):
    ev = {"type": "image/offload", "seq": seq, "time": 0, "data": {"targets": targets}}
    ev.update(extra)
    return ev


def rep0(start, end):
    return {"op": "replace", "start": start, "end": end}


def rep4(start, end):
    return {"op": "replace", "startSeq": start, "endSeq": end}


TOOL_DEF = {"name": "grep", "description": "d", "parameters": {"type": "object"}}

# -- exact messages --------------------------------------------------------------------------------

CASES = [
    # (id, version, events, at_seq, kind, message)
    ("seq-gap", 0, [user(0), user(2)], 1, "seq_not_contiguous",
     "session event seq 2 is not contiguous; expected 1"),
    ("seq-string", 4, [user(0), user("1")], 1, "seq_not_contiguous",
     "session event seq 1 is not contiguous; expected 1"),
    ("seq-bool", 0, [{**user(0), "seq": True}], 0, "seq_not_contiguous",
     "session event seq true is not contiguous; expected 0"),
    ("seq-absent", 0, [{k: v for k, v in user(0).items() if k != "seq"}], 0, "seq_not_contiguous",
     "session event seq undefined is not contiguous; expected 0"),
    ("op-on-log-only", 0, [log_only(0, surfaceOp="append")], 0, "surface_op_on_ineligible",
     'session event "turn/start" is not surface-eligible and cannot carry surfaceOp'),
    ("sources-on-log-only", 4, [log_only(0, sourceEventSeqs=None)], 0, "source_seqs_on_ineligible",
     'session event "turn/start" is not surface-eligible and cannot carry sourceEventSeqs'),
    ("v0-system-is-unknown", 0, [system(0)], 0, "surface_op_on_ineligible",
     'session event "system/message" is not surface-eligible and cannot carry surfaceOp'),
    ("v0-ignorable-unknown-not-opaque", 0, [log_only(0, "acme/x", ignorable=True, surfaceOp=1)], 0,
     "surface_op_on_ineligible",
     'session event "acme/x" is not surface-eligible and cannot carry surfaceOp'),
    ("v4-ignorable-known-not-opaque", 4, [log_only(0, "turn/start", ignorable=True, surfaceOp=1)],
     0, "surface_op_on_ineligible",
     'session event "turn/start" is not surface-eligible and cannot carry surfaceOp'),
    ("missing-op", 4, [user(0, op=None)], 0, "missing_surface_op",
     'session event "user/message" is surface-eligible and requires a surfaceOp marker'),
    ("op-null", 0, [user(0, op=None, surfaceOp=None)], 0, "invalid_surface_op",
     'session event "user/message" carries an invalid surfaceOp'),
    ("op-array", 4, [user(0, op=["append"])], 0, "invalid_surface_op",
     'session event "user/message" carries an invalid surfaceOp'),
    ("op-extra-key", 0, [user(0), user(1, op={**rep0(0, 0), "x": 1})], 1, "invalid_replace_op",
     'session event "user/message" carries an invalid replace surfaceOp'),
    ("v4-op-v0-keys", 4, [user(0), user(1, op=rep0(0, 0))], 1, "invalid_replace_op",
     'session event "user/message" carries an invalid replace surfaceOp'),
    ("v4-op-neg-zero", 4, [user(0), user(1, op=rep4(-0.0, 0), sourceEventSeqs=[0])], 1,
     "invalid_replace_op", 'session event "user/message" carries an invalid replace surfaceOp'),
    ("v4-op-bool", 4, [user(0), user(1, op=rep4(True, 0))], 1, "invalid_replace_op",
     'session event "user/message" carries an invalid replace surfaceOp'),
    ("v4-endpoint-self", 4, [user(0), user(1, op=rep4(0, 1))], 1, "replace_endpoints_not_earlier",
     "surface replace at seq 1: startSeq and endSeq must reference earlier events"),
    ("v4-assistant-sources", 4, [assistant(0, sourceEventSeqs=[])], 0, "assistant_source_seqs",
     "assistant/message embeds its source stream and cannot carry sourceEventSeqs"),
    ("sources-not-array", 0, [user(0), user(1, sourceEventSeqs="0")], 1, "source_seqs_not_array",
     "sourceEventSeqs on event at seq 1 must be an array when present"),
    ("v0-sources-empty", 0, [user(0, sourceEventSeqs=[])], 0, "source_seqs_empty",
     "sourceEventSeqs must not be empty except on assistant/message"),
    ("v4-sources-empty", 4, [user(0, sourceEventSeqs=[])], 0, "source_seqs_empty",
     "sourceEventSeqs must not be empty"),
    ("sources-fraction", 0, [user(0), user(1, sourceEventSeqs=[0.5])], 1,
     "source_seqs_invalid_entry",
     'session event "user/message" sourceEventSeqs must densely contain non-negative safe integers'),
    ("v4-sources-neg-zero", 4, [user(0), user(1, sourceEventSeqs=[-0.0])], 1,
     "source_seqs_invalid_entry",
     'session event "user/message" sourceEventSeqs must densely contain non-negative safe integers'),
    ("sources-duplicate-before-future", 0, [user(0), user(1, sourceEventSeqs=[5, 0, 0])], 1,
     "source_seqs_duplicate", "sourceEventSeqs must not contain duplicates"),
    ("sources-first-future", 4, [user(0), user(1, sourceEventSeqs=[0, 7.0, 3])], 1,
     "source_seqs_not_earlier", "sourceEventSeqs must reference earlier events: 7 >= current seq 1"),
    ("start-not-found", 0, [user(0), user(1, op=rep0(9, 0), sourceEventSeqs=[0])], 1,
     "replace_start_not_found", "surface replace: start seq 9 not found in surface"),
    ("end-not-found", 4, [user(0), log_only(1), user(2, op=rep4(0, 1), sourceEventSeqs=[0, 1])],
     2, "replace_end_not_found", "surface replace: end seq 1 not found in surface"),
    ("start-after-end", 0, [user(0), user(1), user(2, op=rep0(1, 0), sourceEventSeqs=[0, 1])], 2,
     "replace_start_after_end", "surface replace: start seq 1 (index 1) is after end seq 0 (index 0)"),
    ("missing-shadowed", 4, [user(0), user(1), user(2), user(3, op=rep4(0, 2), sourceEventSeqs=[1])],
     3, "source_seqs_missing_shadowed",
     "surface replace: sourceEventSeqs must include every shadowed surface node; missing 0, 2"),
    ("v0-range-before-provenance", 0, [user(0), user(1, op=rep0(5, 0), sourceEventSeqs="x")], 1,
     "replace_start_not_found", "surface replace: start seq 5 not found in surface"),
    ("v4-provenance-before-range", 4, [user(0), user(1, op=rep4(0, 0), sourceEventSeqs="x")], 1,
     "source_seqs_not_array", "sourceEventSeqs on event at seq 1 must be an array when present"),
    ("tool-count", 0, [tool_v0(0), tool_v0(1), tool_v0(2, op=rep0(0, 1), sourceEventSeqs=[0, 1])],
     2, "tool_result_rewrite_count",
     "tool/result surface replacement must rewrite exactly one current node"),
    ("tool-target", 4, [user(0), tool_v4(1, op=rep4(0, 0), sourceEventSeqs=[0])], 1,
     "tool_result_rewrite_target", "tool/result surface replacement must target a current tool/result"),
    ("tool-field-v0-is-error", 0,
     [tool_v0(0), {**tool_v0(1, op=rep0(0, 0), msg_id="t-0", sourceEventSeqs=[0]),
                   "data": {**tool_v0(0)["data"], "message": {**tool_v0(0)["data"]["message"],
                            "content": [{"type": "tool-result", "toolCallId": "c1",
                                         "content": [], "isError": True}]}}}],
     1, "tool_result_rewrite_field", "tool/result surface replacement may change only content"),
    ("tool-field-v4-meta", 4,
     [tool_v4(0), {**tool_v4(1, op=rep4(0, 0), msg_id="t-0", sourceEventSeqs=[0]),
                   "data": {**tool_v4(0)["data"], "meta": {"cwd": "/"}}}],
     1, "tool_result_rewrite_field", "tool/result surface replacement may change only content"),
    ("system-head", 4, [system(0), user(1), user(2, op=rep4(0, 1), sourceEventSeqs=[0, 1])], 2,
     "system_head_rewrite", "surface replace: node 0 holds the system prompt and may be rewritten "
     "only by a system/message over exactly that node"),
    ("system-head-two-nodes", 4, [system(0), user(1), system(2, op=rep4(0, 1), sourceEventSeqs=[0, 1])],
     2, "system_head_rewrite", "surface replace: node 0 holds the system prompt and may be "
     "rewritten only by a system/message over exactly that node"),
    ("developer-role", 4, [developer(0, [], role="user")], 0, "developer_role",
     "developer/message at seq 0 developer/message and developer role must occur together"),
    ("developer-tool-name", 4, [developer(0, [{"type": "tool-removal", "toolName": ""}])], 0,
     "developer_tool_name", "developer/message at seq 0 tool-removal requires a nonempty toolName"),
    ("developer-inline", 4, [developer(0, [{"type": "tool-addition", "toolName": "g", "tool": {}}])],
     0, "developer_inline_tool",
     "developer/message at seq 0 tool-addition must omit inline tool definitions"),
    ("developer-header-seq-missing", 4, [developer(0, [{"type": "tool-addition", "toolName": "g"}])],
     0, "developer_header_seq_presence",
     "developer/message at seq 0 requires headerSeq exactly when tool additions are present"),
    ("developer-header-seq-not-header", 4,
     [user(0), developer(1, [{"type": "tool-addition", "toolName": "grep"}], header_seq=0)], 1,
     "developer_header_seq_ref", "developer/message headerSeq must reference an earlier request/header"),
    ("developer-not-unique", 4,
     [header(0, [TOOL_DEF, TOOL_DEF]),
      developer(1, [{"type": "tool-addition", "toolName": "grep"}], header_seq=0)], 1,
     "developer_tool_not_unique",
     'developer/message tool-addition "grep" must name exactly one tool in headerSeq 0'),
    ("developer-incomplete", 4,
     [header(0, [{"name": "grep", "description": "d"}]),
      developer(1, [{"type": "tool-addition", "toolName": "grep"}], header_seq=0)], 1,
     "developer_tool_incomplete",
     'developer/message tool-addition "grep" requires a complete tool definition in headerSeq 0'),
    ("developer-defer", 4,
     [header(0, [{**TOOL_DEF, "deferLoading": False}]),
      developer(1, [{"type": "tool-addition", "toolName": "grep"}], header_seq=0)], 1,
     "developer_defer_loading", "developer/message referenced tool deferLoading must be true when present"),
    ("offload-data", 4, [offload(0, [])], 0, "image_offload_data",
     "image/offload: data must contain a nonempty targets array"),
    ("offload-target-shape", 4, [offload(0, [{"seq": 0}])], 0, "image_offload_target_shape",
     "image/offload: each target must contain a seq and nonempty imageIndexes"),
    ("offload-duplicate", 4,
     [tool_v4(0, [image(0), image(1)]),
      offload(1, [{"seq": 0, "imageIndexes": [0]}, {"seq": 0, "imageIndexes": [1]}])], 1,
     "image_offload_duplicate_target", "image/offload: duplicate target seq 0"),
    ("offload-not-node", 4, [log_only(0), offload(1, [{"seq": 0, "imageIndexes": [0]}])], 1,
     "image_offload_target_not_node", "image/offload: target seq 0 is not a current surface node"),
    ("offload-type", 4, [assistant(0), offload(1, [{"seq": 0, "imageIndexes": [0]}])], 1,
     "image_offload_target_type", "image/offload: target seq 0 must be user/message or tool/result"),
    ("offload-indexes", 4, [user(0), offload(1, [{"seq": 0, "imageIndexes": [1, 1]}])], 1,
     "image_offload_indexes",
     "image/offload: imageIndexes must be strictly increasing non-negative safe integers"),
    ("offload-missing", 4, [tool_v4(0, [image(0)]), offload(1, [{"seq": 0, "imageIndexes": [0, 3]}])],
     1, "image_offload_missing_index", "image/offload: image index 3 does not exist"),
    ("offload-twice", 4, [tool_v4(0, [image(0)]), offload(1, [{"seq": 0, "imageIndexes": [0]}]),
                          offload(2, [{"seq": 0, "imageIndexes": [0]}])], 2,
     "image_offload_already_offloaded", "image/offload: image index 0 is already offloaded"),
    ("offload-with-op", 4, [user(0), offload(1, [{"seq": 0, "imageIndexes": [0]}], surfaceOp="append")],
     1, "surface_op_on_ineligible",
     'session event "image/offload" is not surface-eligible and cannot carry surfaceOp'),
]


@pytest.mark.parametrize(("version", "events", "at_seq", "kind", "message"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_exact_error(version, events, at_seq, kind, message):
    with pytest.raises(FoldError) as info:
        fold_surface(events, version=version)
    err = info.value
    assert (err.seq, err.kind, err.message) == (at_seq, kind, message)
    assert str(err) == message


# -- valid folds -----------------------------------------------------------------------------------

def test_negative_zero_endpoints_accepted_in_v0():
    events = [user(0), user(1), user(2, op=rep0(-0.0, -0.0), sourceEventSeqs=[0])]
    fold = fold_surface(events, version=0)
    assert fold.nodes == (2, 1)
    assert fold.replacements[0].shadowed == (0,)


def test_v4_unknown_ignorable_metadata_is_opaque():
    events = [user(0), log_only(1, "plugin:acme/x", ignorable=True, surfaceOp="bogus",
                                sourceEventSeqs="bogus")]
    assert fold_surface(events, version=4).nodes == (0,)


def test_window_uses_absolute_seqs():
    events = [user(500), user(501), user(502, op=rep0(500, 501), sourceEventSeqs=[500, 501])]
    fold = fold_surface(events, version=0, base_seq=500)
    assert fold.nodes == (502,)
    assert fold.replacements[0].to_json() == {"seq": 502, "start": 500, "end": 501,
                                              "shadowedSeqs": [500, 501]}


def test_through_folds_a_prefix_only():
    events = [user(0), user(1), user(2, op=rep0(0, 1), sourceEventSeqs=[0, 1]), user(3, op=None)]
    assert fold_surface(events, version=0, through=1).nodes == (0, 1)
    assert fold_surface(events, version=0, through=2).nodes == (2,)
    with pytest.raises(FoldError):
        fold_surface(events, version=0, through=3)


def test_nested_replacement_whose_start_is_a_larger_seq():
    events = [user(0), user(1), user(2), user(3, op=rep0(0, 1), sourceEventSeqs=[0, 1]),
              user(4), user(5, op=rep0(3, 2), sourceEventSeqs=[2, 3])]
    fold = fold_surface(events, version=0)
    assert fold.nodes == (5, 4)
    assert [r.shadowed for r in fold.replacements] == [(0, 1), (3, 2)]
    assert fold.replace_generation == 2


def test_tool_rewrite_ignores_key_order_and_only_content_changes():
    original = tool_v4(0, [{"type": "text", "text": "long"}])
    rewrite = tool_v4(1, [{"type": "text", "text": "short"}], op=rep4(0, 0), msg_id="t-0",
                      sourceEventSeqs=[0])
    rewrite["data"] = dict(reversed(list(rewrite["data"].items())))
    assert fold_surface([original, rewrite], version=4).nodes == (1,)


def test_image_offload_projection_and_generations():
    tool = tool_v4(0, [{"type": "text", "text": "a"}, image(0), image(1)])
    events = [tool, offload(1, [{"seq": 0, "imageIndexes": [1]}])]
    fold = fold_surface(events, version=4)
    assert fold.nodes == (0,)
    assert (fold.replace_generation, fold.content_generation) == (0, 1)
    projected = fold.projected_messages[0]
    assert [b.get("offloaded") for b in projected["content"]] == [None, None, True]
    assert "offloaded" not in tool["data"]["message"]["content"][2]  # the log is not mutated
    assert derive_message(tool, version=4, projected=fold.projected_messages) is projected


def test_plan_event_never_mutates_and_apply_commits():
    state = SurfaceState()
    events = [user(0), user(1), user(2, op=rep0(0, 1), sourceEventSeqs=[0, 1])]
    for seq in (0, 1):
        apply_plan(state, plan_event(state, events[seq], seq, version=0, events=events))
    before = (list(state.nodes), _positions(state), state.replace_generation)
    snapshot = copy.deepcopy(events)
    plan = plan_event(state, events[2], 2, version=0, events=events)
    assert (list(state.nodes), _positions(state), state.replace_generation) == before
    assert events == snapshot
    assert plan == Plan("replace", 2, 0, 1, 0, 1, (0, 1))
    apply_plan(state, plan)
    assert state.nodes == [2] and _positions(state) == {2: 0} and state.replace_generation == 1
    assert 0 not in state and 1 not in state and state.order.get(0) == -1


def test_positions_follow_a_shrinking_splice():
    events = [user(i) for i in range(6)] + [user(6, op=rep0(1, 3), sourceEventSeqs=[1, 2, 3])]
    state = SurfaceState()
    for i, ev in enumerate(events):
        apply_plan(state, plan_event(state, ev, i, version=0, events=events))
    assert state.nodes == [0, 6, 4, 5]
    assert _positions(state) == {s: i for i, s in enumerate(state.nodes)}
    assert all(s not in state for s in (1, 2, 3))


def _positions(state: SurfaceState) -> dict[int, int]:
    return {s: state.order.get(s) for s in state.nodes}


# -- projection --------------------------------------------------------------------------------------

def test_empty_assistant_is_a_node_without_message():
    events = [user(0), assistant(1, content=[], sourceEventSeqs=[])]
    fold = fold_surface(events, version=0)
    assert fold.nodes == (0, 1)
    assert [s for s, _ in surface_messages(fold.nodes, events, version=0)] == [0]


def test_v4_empty_system_derives_nothing_but_v0_ignores_system():
    empty = system(0)
    empty["data"]["message"]["content"] = []
    assert derive_message(empty, version=4) is None
    assert derive_message(system(0), version=4)["role"] == "system"
    assert derive_message(system(0), version=0) is None


def test_transcript_is_append_origin_only():
    events = [system(0), user(1), assistant(2), user(3, op=rep4(1, 2), sourceEventSeqs=[1, 2])]
    assert transcript_seqs(events, version=4) == (1, 2)
    assert transcript_seqs(events, version=0) == (1, 2)


# -- seed example of the issue -----------------------------------------------------------------------

def _seed_conversation():
    big = "x" * 80_000  # about 20,000 heuristic tokens
    return [
        user(0, "Please upgrade our dependencies."),
        assistant(1, [{"type": "tool-call", "id": "c1", "name": "bash",
                       "arguments": '{"cmd":"npm outdated"}'}], sourceEventSeqs=[]),
        tool_v0(2, big, sourceEventSeqs=[1]),
        assistant(3, [{"type": "text", "text": "Three packages are outdated."}],
                  sourceEventSeqs=[]),
        user(4, "Upgrade them all."),
        assistant(5, [{"type": "text", "text": "Done."}], sourceEventSeqs=[]),
        user(6, "Run the tests."),
        assistant(7, [{"type": "text", "text": "All green."}], sourceEventSeqs=[]),
        {"type": "compaction/start", "seq": 8, "time": 0, "data": {"compactionId": "k", "turn": None}},
        {"type": "compaction/summary", "seq": 9, "time": 0,
         "data": {"compactionId": "k", "summary": [{"type": "text", "text": "upgraded deps"}],
                  "shadowedRange": {"start": 0, "end": 5}, "shadowedSeqs": [0, 1, 2, 3, 4, 5],
                  "shadowedTokenCount": 20100, "provider": "mock", "model": "m"}},
        user(10, "<summary>upgraded deps</summary>", op=rep0(0, 5),
             sourceEventSeqs=[8, 9, 0, 1, 2, 3, 4, 5]),
    ]


def test_seed_example_compaction_keeps_the_log():
    events = _seed_conversation()
    fold = fold_surface(events, version=0)
    assert fold.nodes == (10, 6, 7)
    assert fold.replacements[0].shadowed == (0, 1, 2, 3, 4, 5)
    # the 20,000-token tool result left the surface but is still readable in the log
    result = events[2]["data"]["message"]["content"][0]["content"][0]["text"]
    assert len(result) == 80_000
    assert jsjson.js_len(result) // 4 == 20_000

"""Assistant streams (v4 spec §2): expansion errors, packing round trips, assembly, settlement."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.assembly import stream_blocks
from workbench.core.streams import (
    AssemblyError,
    SettlementError,
    StreamError,
    assemble,
    assemble_stream,
    expand_stream,
    js_is_blank,
    pack_chunks,
    verify_settlement,
)
from workbench.io.jsjson import ABSENT, loads

RUN = {"type": "text-chunks", "time0": 10, "index": 0, "dt": [1], "texts": ["a", "b"]}

EXPAND_ERRORS = [
    ("not-iterable-object", {}, "not_iterable", "stream is not iterable"),
    ("not-iterable-null", None, "not_iterable",
     "null is not iterable (cannot read property Symbol(Symbol.iterator))"),
    ("string-members-are-records", "ab", "record_not_object", "Assistant stream record must be an object"),
    ("record-number", [5], "record_not_object", "Assistant stream record must be an object"),
    ("type-missing", [{"time": 1}], "unknown_record_type", "Unsupported Assistant stream record undefined"),
    ("type-number", [{"type": 3}], "unknown_record_type", "Unsupported Assistant stream record 3"),
    ("reasoning-keys", [{**RUN, "type": "reasoning-chunks", "extra": 1}], "record_keys",
     "reasoning-chunks Assistant stream record must contain exactly type, time0, index, dt, texts"),
    ("tool-named-keys", [{"type": "tool-call-chunks", "time0": 1, "index": 0, "dt": [], "id": "c",
                          "name": "n", "args": [""], "x": 1}], "record_keys",
     "tool-call-chunks Assistant stream record must contain exactly type, time0, index, dt, id, name, args"),
    ("tool-name-empty", [{"type": "tool-call-chunks", "time0": 1, "index": 0, "dt": [], "id": "c",
                          "name": "", "args": [""]}], "tool_name",
     "tool-call-chunks name must be a non-empty string"),
    ("tool-name-null", [{"type": "tool-call-chunks", "time0": 1, "index": 0, "dt": [], "id": "c",
                         "name": None, "args": [""]}], "tool_name",
     "tool-call-chunks name must be a non-empty string"),
    ("index-negative", [{**RUN, "index": -1}], "index", "text-chunks index must be a non-negative safe integer"),
    ("index-bool", [{**RUN, "index": True}], "index", "text-chunks index must be a non-negative safe integer"),
    ("time0-bool", [{**RUN, "time0": True}], "time", "Assistant stream time must be a safe integer, got true"),
    ("time0-null", [{**RUN, "time0": None}], "time", "Assistant stream time must be a safe integer, got null"),
    ("dt-bool-member", [{**RUN, "dt": [True]}], "dt", "text-chunks dt must contain safe integers"),
    ("member-time-overflow", [{**RUN, "time0": 2**53 - 1, "dt": [1]}], "member_time",
     "text-chunks member times must stay safe integers"),
    ("raw-chunk-neg-zero", [{"type": "chunk", "time": 1, "chunk": {"type": "usage", "x": -0.0}}], "raw_chunk",
     "Assistant stream raw chunk must be a lossless JSON object"),
    ("raw-chunk-infinite", [{"type": "chunk", "time": 1, "chunk": {"a": [float("inf")]}}], "raw_chunk",
     "Assistant stream raw chunk must be a lossless JSON object"),
    ("raw-time-first", [{"type": "chunk", "time": 1.5, "chunk": None}], "time",
     "Assistant stream time must be a safe integer, got 1.5"),
]


@pytest.mark.parametrize(("stream", "kind", "message"), [c[1:] for c in EXPAND_ERRORS],
                         ids=[c[0] for c in EXPAND_ERRORS])
def test_expand_errors_carry_the_reference_text(stream, kind, message) -> None:
    with pytest.raises(StreamError) as caught:
        expand_stream(stream)
    assert (caught.value.kind, caught.value.name, caught.value.message) == (kind, "TypeError", message)


def test_expand_reconstructs_member_times_and_keeps_time_minus_zero() -> None:
    timed = expand_stream([{"type": "text-chunks", "time0": -0.0, "index": 1.0, "dt": [5, -3],
                            "texts": ["x", "", "z"]}])
    assert [t for t, _ in timed] == [0, 5, 2]
    assert [c["text"] for _, c in timed] == ["x", "", "z"]
    assert timed[0][1] == {"type": "text-delta", "index": 1.0, "text": "x"}


def test_empty_string_stream_expands_to_nothing() -> None:
    assert expand_stream("") == []


# -- packing ---------------------------------------------------------------------------------

PACK_ERRORS = [
    ("time-unsafe", [(2**53, {"type": "usage", "usage": {}})], "time"),
    ("chunk-not-lossless", [(1, {"type": "usage", "usage": {"inputTokens": -0.0}})], "chunk_not_lossless"),
    ("delta-index", [(1, {"type": "text-delta", "index": -1, "text": ""})], "index"),
    ("delta-text", [(1, {"type": "text-delta", "index": 0, "text": 5})], "delta_text"),
    ("tool-id", [(1, {"type": "tool-call-delta", "index": 0, "id": 7, "argumentsDelta": ""})], "delta_id"),
    ("tool-name", [(1, {"type": "tool-call-delta", "index": 0, "id": "c", "name": 7,
                        "argumentsDelta": ""})], "delta_name"),
    ("tool-args", [(1, {"type": "tool-call-delta", "index": 0, "id": "c"})], "delta_arguments"),
    ("unknown-type", [(1, {"type": "future"})], "unknown_chunk_type"),
]


@pytest.mark.parametrize(("chunks", "kind"), [c[1:] for c in PACK_ERRORS], ids=[c[0] for c in PACK_ERRORS])
def test_pack_refuses_what_the_writer_refuses(chunks, kind) -> None:
    with pytest.raises(StreamError) as caught:
        pack_chunks(chunks)
    assert caught.value.kind == kind


def test_pack_unknown_type_message() -> None:
    with pytest.raises(StreamError) as caught:
        pack_chunks([{"time": 1, "chunk": {"type": "future", "x": 1}}])
    assert caught.value.name == "Error"
    assert caught.value.message == 'unreachable variant in AssistantStreamAccumulator.push: {"type":"future","x":1}'


_delta = st.one_of(
    st.builds(lambda i, t: {"type": "text-delta", "index": i, "text": t}, st.integers(0, 2), st.text(max_size=4)),
    st.builds(lambda i, t: {"type": "reasoning-delta", "index": i, "text": t}, st.integers(0, 2),
              st.text(max_size=4)),
    st.builds(lambda i, c, n, a: {"type": "tool-call-delta", "index": i, "id": c,
                                  **({} if n is None else {"name": n}), "argumentsDelta": a},
              st.integers(0, 2), st.sampled_from(["", "c1", "c2"]), st.sampled_from([None, "", "read"]),
              st.text(max_size=4)),
    st.builds(lambda i: {"type": "block-start", "index": i, "blockType": "text"}, st.integers(0, 2)),
    st.just({"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2}}),
)
_times = st.integers(-(2**53) + 1, 2**53 - 1) | st.integers(0, 20)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_times, _delta), max_size=25))
def test_pack_then_expand_round_trips(chunks) -> None:
    stream = pack_chunks(chunks)
    assert expand_stream(stream) == chunks


def test_pack_starts_runs_at_the_first_delta() -> None:
    stream = pack_chunks([(5, {"type": "text-delta", "index": 0, "text": "a"})])
    assert stream == [{"type": "text-chunks", "time0": 5, "index": 0, "dt": [], "texts": ["a"]}]


# -- assembly --------------------------------------------------------------------------------

def test_max_tokens_drops_tool_calls_and_prunes_replay_blocks() -> None:
    chunks = [
        {"type": "text-delta", "index": 0, "text": "hi"},
        {"type": "tool-call-delta", "index": 1, "id": "c", "name": "read", "argumentsDelta": "{"},
        {"type": "finish", "reason": {"kind": "max-tokens"},
         "replayState": {"response": {"r": 1}, "blocks": [{"type": "text"}, {"type": "tool-call"}]}},
    ]
    result = assemble(chunks)
    assert result.blocks == ({"type": "text", "text": "hi"},)
    assert result.replay_state == {"response": {"r": 1}, "blocks": [{"type": "text"}]}


def test_misaligned_replay_blocks_give_no_replay_state() -> None:
    result = assemble([{"type": "text-delta", "index": 0, "text": "x"},
                       {"type": "finish", "reason": {"kind": "stop"}, "replayState": {"blocks": []}}])
    assert result.replay_state is ABSENT
    assert "replayState" not in result.to_json()


def test_open_tool_call_without_id_or_name_uses_the_reference_defaults() -> None:
    result = assemble([{"type": "tool-call-delta", "index": 3, "argumentsDelta": "{}"}])
    assert result.blocks == ({"type": "tool-call", "id": "call-3", "name": "", "arguments": "{}"},)


def test_map_keys_follow_same_value_zero() -> None:
    # 1 and 1.0 (and -0 and 0) are one block; true is not the block 1.
    result = assemble([{"type": "text-delta", "index": 1, "text": "a"},
                       {"type": "text-delta", "index": 1.0, "text": "b"},
                       {"type": "text-delta", "index": 0, "text": "c"},
                       {"type": "text-delta", "index": -0.0, "text": "d"},
                       {"type": "text-delta", "index": True, "text": "e"}])
    assert [b["text"] for b in result.blocks] == ["ab", "cd", "e"]


def test_unclosed_unknown_block_is_an_assembly_error_but_interrupted_prefix_survives() -> None:
    result = assemble([{"type": "block-start", "index": 0, "blockType": "image"},
                       {"type": "text-delta", "index": 1, "text": "kept"}])
    assert result.error == 'cannot assemble incomplete block of type "image"'
    assert result.interrupted_blocks == ({"type": "text", "text": "kept"},)
    assert result.to_json() == {"error": {"message": 'cannot assemble incomplete block of type "image"'}}


def test_unknown_chunk_type_raises() -> None:
    with pytest.raises(AssemblyError) as caught:
        assemble([{"type": "nope"}])
    assert caught.value.message == 'unreachable variant in BlockAssembler.push: {"type":"nope"}'


BLANKS = [("ascii", " \t\n", True), ("nbsp", "\u00a0\u3000\ufeff", True), ("text", " a ", False),
          ("file-separator", "\x1c", False), ("next-line", "\x85", False)]


@pytest.mark.parametrize(("text", "blank"), [b[1:] for b in BLANKS], ids=[b[0] for b in BLANKS])
def test_interrupted_prefix_uses_javascript_trim(text, blank) -> None:
    assert js_is_blank(text) is blank


def test_assemble_stream_equals_expanded_assembly() -> None:
    stream = [{"type": "chunk", "time": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
              {"type": "text-chunks", "time0": 1, "index": 0, "dt": [0, 0], "texts": ["a", "b", "c"]},
              {"type": "tool-call-chunks", "time0": 1, "index": 1, "dt": [], "id": "c", "name": "n",
               "args": ["{"]},
              {"type": "tool-call-chunks", "time0": 1, "index": 1, "dt": [0], "id": "c", "args": ["1", "}"]}]
    assert assemble_stream(stream) == assemble(expand_stream(stream))


_end = st.builds(lambda i, b: {"type": "block-end", "index": i, "block": b}, st.integers(0, 2),
                 st.sampled_from([{"type": "text", "text": "t"}, {"type": "image"}, "odd", 3]))
_finish = st.builds(lambda r: {"type": "finish", "reason": r},
                    st.sampled_from([{"kind": "stop"}, {"kind": "max-tokens"}, None]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), _delta | _end | _finish), max_size=25))
def test_stored_records_assemble_as_their_chunks_and_stream_blocks_are_its_blocks(chunks) -> None:
    """The stored runs feed the assembler what their chunks would (`assemble_stream` equals
    the expanded chunks' `assemble`), and `stream_blocks` is that assembly's blocks (or its
    error's text)."""
    stream = pack_chunks(chunks)
    assembly = assemble_stream(stream)
    assert assembly == assemble(expand_stream(stream))
    if assembly.error is None:
        assert stream_blocks(stream) == list(assembly.blocks)
    else:
        with pytest.raises(AssemblyError) as caught:
            stream_blocks(stream)
        assert caught.value.message == assembly.error


# -- settlement ------------------------------------------------------------------------------

def _message(content, *, usage=ABSENT, replay=ABSENT, interrupted=False, stream=None) -> dict:
    source = {"kind": "model", "provider": "p", "model": "m"}
    if replay is not ABSENT:
        source["replayState"] = replay
    data = {"turn": 1, "step": 1, "message": {"role": "assistant", "content": content, "source": source},
            "stream": stream if stream is not None else [
                {"type": "text-chunks", "time0": 1, "index": 0, "dt": [], "texts": ["hello "]},
                {"type": "chunk", "time": 2, "chunk": {"type": "finish", "reason": {"kind": "stop"},
                                                        "replayState": {"response": 1}}}]}
    if usage is not ABSENT:
        data["usage"] = usage
    if interrupted:
        data["interrupted"] = True
    return {"type": "assistant/message", "seq": 3, "time": 3, "data": data}


SETTLEMENTS = [
    ("content", _message([{"type": "text", "text": "other"}], replay={"response": 1}),
     "seed assistant/message at index 7 content disagrees with its embedded stream"),
    ("usage-extra", _message([{"type": "text", "text": "hello "}], usage={"inputTokens": 1},
                             replay={"response": 1}),
     "seed assistant/message at index 7 usage disagrees with its embedded stream"),
    ("replay", _message([{"type": "text", "text": "hello "}]),
     "seed assistant/message at index 7 replay state disagrees with its embedded stream"),
    ("negative-zero-differs", _message([{"type": "text", "text": "hello "}], replay={"response": -0.0},
                                       stream=[{"type": "text-chunks", "time0": 1, "index": 0, "dt": [],
                                                "texts": ["hello "]},
                                               {"type": "chunk", "time": 2, "chunk": {
                                                   "type": "finish", "reason": {"kind": "stop"},
                                                   "replayState": {"response": 0}}}]),
     "seed assistant/message at index 7 replay state disagrees with its embedded stream"),
]


@pytest.mark.parametrize(("event", "message"), [s[1:] for s in SETTLEMENTS], ids=[s[0] for s in SETTLEMENTS])
def test_settlement_disagreements(event, message) -> None:
    with pytest.raises(SettlementError) as caught:
        verify_settlement(event, 7)
    assert caught.value.message == message


def test_settlement_interrupted_message_uses_the_interrupted_prefix() -> None:
    event = _message([], interrupted=True, replay={"response": 1},
                     stream=[{"type": "text-chunks", "time0": 1, "index": 0, "dt": [], "texts": ["  "]},
                             {"type": "chunk", "time": 2, "chunk": {"type": "finish", "reason": {"kind": "stop"},
                                                                     "replayState": {"response": 1}}}])
    verify_settlement(event, 0)


def test_settlement_of_a_parsed_writer_event() -> None:
    event = loads('{"type":"assistant/attempt","seq":1,"time":1,"data":{"turn":1,"step":1,"stream":['
                  '{"type":"text-chunks","time0":1,"index":0,"dt":[1],"texts":["x"]}]}}')
    with pytest.raises(SettlementError) as caught:
        verify_settlement(event, 0)
    assert caught.value.cause == "text-chunks dt length must be one less than its members"

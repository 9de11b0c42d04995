"""The log builder writes logs that fold, price and frame exactly as DSH logs do."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import zstandard
from tour_script import tour_script

from workbench.build import BuildError, LogBuilder
from workbench.build.shapes import CHECKPOINT_PREAMBLE, PRUNE_MARKER
from workbench.core.streams import verify_settlement
from workbench.core.surface import fold_surface
from workbench.core.tokens.heuristic import node_price
from workbench.io.jsjson import js_len, loads
from workbench.io.rows_v0 import decode_storage_record


def script(version: int, **kw) -> LogBuilder:
    """Two turns with tools, a prune, and completed / nested / failed / manual / interrupted
    brackets."""
    return tour_script(version, first_reply="Reading both files to see which dependencies are "
                                            "pinned and how.", **kw)


@pytest.fixture(params=[0, 4], ids=["v0", "v4"])
def version(request) -> int:
    return request.param


def test_builder_surface_equals_the_fold(version: int) -> None:
    b = script(version)
    fold = fold_surface(b.events, version=version)
    assert fold.nodes == b.surface
    assert [e["seq"] for e in b.events] == list(range(len(b.events)))


def test_compaction_records_match_the_fold_and_the_meter(version: int) -> None:
    b = script(version)
    fold = fold_surface(b.events, version=version)
    by_seq = {r.seq: r for r in fold.replacements}
    events = b.events
    summaries = [e for e in events if e["type"] == "compaction/summary"]
    assert len(summaries) == 3
    for summary in summaries:
        checkpoint = events[summary["seq"] + 1]
        shadowed = summary["data"]["shadowedSeqs"]
        assert tuple(shadowed) == by_seq[checkpoint["seq"]].shadowed
        assert summary["data"]["shadowedTokenCount"] == sum(
            node_price(events[s], version=version) for s in shadowed)
        start = next(e["seq"] for e in events if e["type"] == "compaction/start"
                     and e["data"]["compactionId"] == summary["data"]["compactionId"])
        assert checkpoint["sourceEventSeqs"] == [start, summary["seq"], *shadowed]
        assert js_len(checkpoint["data"]["content"][0]["text"]) == 321
    assert CHECKPOINT_PREAMBLE.endswith("<compacted-summary>")


def test_failed_and_interrupted_brackets(version: int) -> None:
    b = script(version)
    ends = {e["data"]["compactionId"]: e for e in b.events if e["type"] == "compaction/end"}
    starts = [e for e in b.events if e["type"] == "compaction/start"]
    assert len(starts) == 5 and len(ends) == 4
    failed = [e for e in ends.values() if "error" in e["data"]]
    assert [e["data"]["error"][:28] for e in failed] == ["summary is not smaller than "]
    assert b.events[-1]["type"] == "session/end-seed"
    manual = [e for e in starts if e["data"]["turn"] is None and "sourceCommandId" in e["data"]]
    assert len(manual) == 1
    done = next(e for e in b.events if e["type"] == "command/done")
    assert done["data"]["kind"] == "success" and done["data"]["sourceEventSeq"] > 0


def test_prune_rewrites_only_the_content(version: int) -> None:
    b = script(version)
    prune = next(e for e in b.events if e["type"] == "compaction/prune")
    original = b.events[prune["data"]["shadowedSeqs"][0]]
    replacement = b.events[prune["seq"] + 1]
    assert prune["data"]["shadowedTokenCount"] == node_price(original, version=version)
    assert replacement["sourceEventSeqs"] == [original["seq"]]
    a, r = original["data"]["message"], replacement["data"]["message"]
    if version >= 4:
        assert {k: v for k, v in a.items() if k != "content"} == \
            {k: v for k, v in r.items() if k != "content"}
        text = r["content"][0]["text"]
    else:
        assert a["content"][0]["toolCallId"] == r["content"][0]["toolCallId"]
        text = r["content"][0]["content"][0]["text"]
    assert len(text) == 100 + len(PRUNE_MARKER) + 50
    assert PRUNE_MARKER in text


def test_v4_streams_settle() -> None:
    b = script(4)
    messages = [e for e in b.events if e["type"] == "assistant/message"]
    assert messages
    for event in messages:
        verify_settlement(event)
        assert "sourceEventSeqs" not in event


def test_v0_message_cites_its_chunks() -> None:
    b = script(0)
    message = next(e for e in b.events if e["type"] == "assistant/message")
    cited = [b.events[s] for s in message["sourceEventSeqs"]]
    assert {e["type"] for e in cited} == {"assistant/chunk"}
    assert cited[-1]["data"]["chunk"]["type"] == "finish"


def _frames(data: bytes) -> list[bytes]:
    frames = []
    while data:
        obj = zstandard.ZstdDecompressor().decompressobj()
        frames.append(obj.decompress(data))
        data = obj.unused_data
    return frames


def test_zstd_frames_header_alone_one_frame_per_batch(version: int, tmp_path: Path) -> None:
    b = script(version)
    plain = b.write(tmp_path / "plain.jsonl").read_bytes()
    packed = b.write(tmp_path / "log.zstd", compression="zstd").read_bytes()
    frames = _frames(packed)
    assert frames[0].count(b"\n") == 1 and frames[0].endswith(b"\n")
    assert loads(frames[0][:-1]) == b.header()
    assert len(frames) == 1 + len(list(b.batches()))
    assert b"".join(frames) == plain
    offset = 0
    for frame in frames:  # every frame: checksum on, no content size (descriptor 0x04)
        assert packed[offset + 4] == 0x04
        offset += _frame_length(packed[offset:])
    assert offset == len(packed)


def _frame_length(data: bytes) -> int:
    obj = zstandard.ZstdDecompressor().decompressobj()
    obj.decompress(data)
    return len(data) - len(obj.unused_data)


def test_v0_packed_rows_round_trip(tmp_path: Path) -> None:
    b = script(0)
    lines = b.write(tmp_path / "session.jsonl").read_bytes().splitlines()[1:]
    records = [loads(line) for line in lines]
    assert any(r["type"] == "text-chunks" for r in records)
    decoded = [e for r in records for e in decode_storage_record(r)]
    assert decoded == b.events
    unpacked = b.write(tmp_path / "flat.jsonl", pack_rows=False).read_bytes().splitlines()
    assert len(unpacked) == len(b.events) + 1


def test_streaming_mode_writes_the_same_bytes(version: int, tmp_path: Path) -> None:
    memory = script(version).write(tmp_path / "a.zstd", compression="zstd").read_bytes()
    streamed = script(version, stream_to=tmp_path / "b.zstd", compression="zstd")
    assert streamed.events is None
    streamed.close()
    assert (tmp_path / "b.zstd").read_bytes() == memory


def test_same_script_same_bytes(tmp_path: Path) -> None:
    a = script(4).write(tmp_path / "a.jsonl").read_bytes()
    assert script(4).write(tmp_path / "b.jsonl").read_bytes() == a


def test_fork_v4_marks_the_inherited_prefix() -> None:
    b = script(4)
    child = b.fork("child-1")
    header = child.header()
    assert header["parentSession"] == "session-test" and header["isSeeded"] is True
    marker = child.events[-1]
    assert marker["type"] == "session/end-seed" and marker["data"] == {"inherited": True}
    assert marker["seq"] == len(b.events)
    assert child.events[:-1] == b.events
    with child.turn():
        with child.step():
            child.user("Go on in the fork.")
    assert fold_surface(child.events, version=4).nodes == child.surface


def test_fork_clips_to_the_last_completed_turn() -> None:
    b = LogBuilder(version=4)
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("one")
    b.turn_start()
    child = b.fork()
    assert child.events[-2]["type"] == "turn/end"
    assert child.header()["isSeeded"] is True


def test_fork_v0_uses_seed_length() -> None:
    b = script(0)
    child = b.fork("child-0")
    assert child.header()["seedLength"] == len(b.events)
    assert child.events[-1]["type"] == "session/end-seed" and child.events[-1]["data"] == {}


def test_spawned_subagent_links_parent_and_child(version: int) -> None:
    b = LogBuilder(version=version, session_id="session-parent", delegation_depth=0)
    with b.turn():
        child = b.spawn_subagent(label="Grep helper")
    header = child.header()
    assert header["parentSession"] == "session-parent"
    assert header["origin"] == "subagent" and header["delegationDepth"] == 1
    catalog = [e for e in b.events if e["type"] == "subagent/catalog"]
    assert [e["data"]["childId"] for e in catalog] == ([child.session_id] if version >= 4 else [])
    with child.turn():
        pass
    assert [e["type"] for e in child.events] == ["turn/start", "subagent/descriptor", "turn/end"]


def test_repair_closes_an_open_turn(version: int) -> None:
    b = LogBuilder(version=version)
    b.turn_start()
    b.step_start()
    b.system("sys")
    b.user("go")
    a = b.assistant("calling", tool_calls=[("read", {"p": 1}), ("read", {"p": 2})])
    b.tool_call(a.call_ids[0])
    b.repair()
    tail = b.events[-4:]
    assert [e["type"] for e in tail] == ["tool/result", "tool/result", "step/end", "turn/end"]
    assert tail[0]["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert tail[0]["sourceEventSeqs"] == [a.seq + 1]
    assert tail[1]["data"]["error"]["code"] == "TOOL_NOT_STARTED"
    assert "sourceEventSeqs" not in tail[1]
    assert tail[1]["data"]["message"]["id"] == f"interrupted-tool-result-{a.call_ids[1]}-" \
        f"{tail[1]['seq']}"
    assert tail[3]["data"]["reason"] == {"kind": "interrupted"}
    assert len({e["time"] for e in tail}) == 1
    assert fold_surface(b.events, version=version).nodes == b.surface


def _unanswered(b: LogBuilder) -> None:
    with b.turn():
        with b.step():
            b.user("x")
            b.assistant("calling", tool_calls=[("read", {})])


def _unknown_call(b: LogBuilder) -> None:
    with b.turn():
        with b.step():
            b.tool_result("toolu_9999", text="x")


def _head_in_range(b: LogBuilder) -> None:
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("x")
        b.compact(b.surface[0], b.surface[-1])


def _nested_turn(b: LogBuilder) -> None:
    with b.turn():
        b.turn_start()


def _message_outside_step(b: LogBuilder) -> None:
    b.assistant("hello")


def _prune_between_turns(b: LogBuilder) -> None:
    with b.turn():
        with b.step():
            b.user("x")
            a = b.assistant("calling", tool_calls=[("read", {})])
            b.tool_result(a.call_ids[0], text="long " * 100)
    b.prune(b.surface[-1])


@pytest.mark.parametrize(("scenario", "message"), [
    (_unanswered, "ends with unanswered tool calls"),
    (_unknown_call, "was not advertised"),
    (_head_in_range, "may not include the protected system head"),
    (_nested_turn, "turn 1 is still open"),
    (_message_outside_step, "needs an open step"),
    (_prune_between_turns, "needs an open turn"),
], ids=["unanswered-calls", "unknown-call", "system-head-in-range", "nested-turn",
        "message-outside-step", "prune-between-turns"])
def test_build_errors(scenario, message: str) -> None:
    with pytest.raises(BuildError, match=message):
        scenario(LogBuilder(version=4))


@pytest.mark.parametrize(("call", "message"), [
    (lambda b: b.delivery_accepted(), "not a format v0 event type"),
    (lambda b: b.job("toolu_0001"), "only in format v4"),
], ids=["delivery-accepted", "job"])
def test_v4_only_events_refused_in_v0(call, message: str) -> None:
    with pytest.raises(BuildError, match=message):
        call(LogBuilder(version=0))


def test_raw_records_are_written_but_not_interpreted(tmp_path: Path) -> None:
    b = LogBuilder(version=4)
    with b.turn():
        with b.step():
            b.user("hi")
            seq = b.raw({"type": "user/message", "data": None, "surfaceOp": "bogus"})
            b.raw(42)
    assert b.surface == (2,) and seq == 3
    assert b.events[3] == {"type": "user/message", "data": None, "surfaceOp": "bogus",
                           "seq": 3, "time": b.events[3]["time"]}
    assert b.events[5]["seq"] == 5 and b.events[5]["type"] == "step/end"
    lines = b.write(tmp_path / "raw.jsonl").read_bytes().splitlines()
    assert lines[5] == b"42"


@pytest.mark.skipif(importlib.util.find_spec("workbench.core.load") is None,
                    reason="workbench.core.load (the loader) is not there yet")
@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_written_logs_load_cleanly(version: int, compression: str, tmp_path: Path) -> None:
    from workbench.core.load import load_log
    b = script(version)
    log = load_log(b.write(tmp_path / f"session.{compression}", compression=compression))
    assert [d for d in log.defects if d.severity != "warning"] == []
    assert len(log.events) == len(b.events)


@pytest.mark.skipif(importlib.util.find_spec("workbench.core.load") is None,
                    reason="workbench.core.load (the loader) is not there yet")
@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_log_larger_than_read_chunks_loads_every_event(compression: str, tmp_path: Path) -> None:
    """20 MiB of lines: records straddle the raw reader's 8 MiB read chunks and many zstd frames.

    Regression guard: a raw reader that drops or misjoins a read chunk loses events silently
    (found while benchmarking: every raw log above 8 MiB)."""
    from workbench.core.load import load_log
    path = tmp_path / ("big.jsonl" + (".zstd" if compression == "zstd" else ""))
    b = LogBuilder(version=4, stream_to=path, compression=compression)
    with b.turn():
        for n in range(3400):
            with b.step():
                if n == 0:
                    b.system("sys")
                    b.user("go")
                a = b.assistant(f"step {n}", tool_calls=[("read", {"n": n})], usage=None)
                b.tool_result(a.call_ids[0], text=f"{n:06d} " * 800)
    b.close()
    if compression == "none":
        assert path.stat().st_size > 20 << 20
    log = load_log(path)
    assert [d for d in log.defects if d.severity != "warning"] == []
    assert len(log.events) == b.seq
    assert log.events[b.seq - 1]["type"] == "turn/end"


@pytest.mark.skipif(importlib.util.find_spec("workbench.core.load") is None,
                    reason="workbench.core.load (the loader) is not there yet")
def test_repair_equals_the_loaders_closers(version: int, tmp_path: Path) -> None:
    from workbench.core.load import load_log
    b = LogBuilder(version=version)
    b.turn_start()
    b.step_start()
    b.user("go")
    a = b.assistant("calling", tool_calls=[("read", {"p": 1}), ("grep", {"q": 2})])
    b.tool_call(a.call_ids[0])
    log = load_log(b.write(tmp_path / "open.jsonl"))
    n = len(b.events)
    b.repair()
    assert b.events[n:] == log.closers

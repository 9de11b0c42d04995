"""Request reconstruction (v0 §7, v4 §7): attempts, envelopes from header snapshots, the surface
just before each attempt, and a check against the token usage the real v4 runtime logged."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.requests import (
    Attempt,
    find_attempt,
    iter_attempts,
    rebuild_request,
)
from workbench.core.timeline import SurfaceTimeline
from workbench.io.jsjson import stringify
from workbench.io.read import read_log

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def chunk(seq, turn, step, kind="text-delta", **fields):
    return {"type": "assistant/chunk", "seq": seq, "time": 0,
            "data": {"turn": turn, "step": step, "chunk": {"type": kind, **fields}}}


def user(seq, text):
    return {"type": "user/message", "seq": seq, "time": 0, "surfaceOp": "append",
            "data": {"id": f"u-{seq}", "role": "user", "source": {"kind": "user"},
                     "content": [{"type": "text", "text": text}]}}


def header(seq, **extra):
    return {"type": "request/header", "seq": seq, "time": 0, "data": {"reason": "initial", "header": {
        "config": {"provider": "p", "model": "m", "maxTokens": 10, "extra": 1}, **extra}}}


def v0_log():
    return [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        user(1, "hello"),
        header(2, system="be brief", tools=[], messagePrefix="x"),
        chunk(3, 1, 1, text="a"),
        chunk(4, 1, 1, "finish", reason={"kind": "error"}),            # failed attempt
        user(5, "checkpoint"),
        chunk(6, 1, 1, text="b"),                                       # cut by step/end
        {"type": "step/end", "seq": 7, "time": 0, "data": {"turn": 1, "step": 1}},
        header(8, system="be kind", tools=[{"name": "t", "description": "d", "parameters": {}}]),
        chunk(9, 1, 2, text="c"),
        chunk(10, 1, 2, "finish", reason={"kind": "stop"}),
        {"type": "assistant/message", "seq": 11, "time": 0, "surfaceOp": "append",
         "sourceEventSeqs": [9, 10],
         "data": {"turn": 1, "step": 2, "message": {"id": "a-11", "role": "assistant",
                                                    "content": [{"type": "text", "text": "c"}],
                                                    "source": {"kind": "model"}}}},
    ]


def test_v0_attempts_split_by_finish_step_end_and_message():
    attempts = list(iter_attempts(v0_log(), version=0))
    assert [(a.seq, a.chunk_seqs, a.message_seq) for a in attempts] == [
        (3, (3, 4), None), (6, (6,), None), (9, (9, 10), 11)]
    assert attempts[0].finish == {"kind": "error"}
    assert find_attempt(v0_log(), 11, version=0) == attempts[2]
    assert find_attempt(v0_log(), 4, version=0) == attempts[0]
    assert find_attempt(v0_log(), 1, version=0) is None


def test_v0_request_envelope_and_messages():
    events = v0_log()
    timeline = SurfaceTimeline(events, version=0)
    first = rebuild_request(events, timeline, 3, version=0, session_id="s")
    assert first == {"provider": "p", "model": "m", "maxTokens": 10, "system": "be brief",
                     "messages": [events[1]["data"]], "sessionId": "s"}
    last = rebuild_request(events, timeline, 11, version=0, session_id="s")
    assert last["system"] == "be kind" and len(last["tools"]) == 1
    assert [m["id"] for m in last["messages"]] == ["u-1", "u-5"]
    assert list(last) == ["provider", "model", "maxTokens", "system", "tools", "messages",
                          "sessionId"]


def test_request_without_header_has_no_envelope():
    events = [user(0, "hi"), chunk(1, 1, 1, "finish", reason={"kind": "stop"})]
    request = rebuild_request(events, SurfaceTimeline(events, version=0), 1, version=0,
                              session_id=None)
    assert request == {"messages": [events[0]["data"]], "sessionId": None}
    with pytest.raises(LookupError):
        rebuild_request(events, SurfaceTimeline(events, version=0), 0, version=0, session_id=None)


def test_v4_attempts_are_settlement_events():
    events = [user(0, "hi"),
              {"type": "assistant/attempt", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1,
               "stream": [{"type": "chunk", "time": 0,
                           "chunk": {"type": "finish", "reason": {"kind": "error"}}}]}},
              {"type": "assistant/message", "seq": 2, "time": 0, "surfaceOp": "append",
               "data": {"turn": 1, "step": 1, "stream": [],
                        "message": {"id": "a", "role": "assistant", "content": [],
                                    "source": {"kind": "model"}}}}]
    attempts = list(iter_attempts(events, version=4))
    assert attempts == [Attempt(1, 1, "attempt", 1, 1, finish={"kind": "error"}),
                        Attempt(2, 2, "message", 1, 1, message_seq=2)]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
def test_v4_rebuilt_requests_match_the_logged_usage():
    """The mock model of the real v4 corpus reports inputTokens as about a quarter of the JSON of
    tools + messages (README): a rebuilt request must never be larger, and rarely much smaller."""
    log = read_log(CORPUS / "dsh-real-v4" / "dev-long-auto-compaction__session.v4.jsonl")
    events = log.events
    timeline = SurfaceTimeline(events, version=4)
    ratios = []
    for attempt in iter_attempts(events, version=4):
        usage = events[attempt.seq]["data"].get("usage")
        if not usage:
            continue
        request = rebuild_request(events, timeline, attempt, version=4, session_id=log.session_id)
        assert request["messages"][0]["role"] == "system"
        assert request["sessionId"] == log.session_id and request["model"] == "mock-small"
        sent = usage["inputTokens"] + usage.get("cacheReadTokens", 0) + usage.get(
            "cacheWriteTokens", 0)
        size = len(stringify({"tools": request.get("tools", []), "messages": request["messages"]}))
        ratios.append(sent / (size / 4))
    assert len(ratios) > 30
    assert 0.85 < min(ratios) and max(ratios) < 1.0

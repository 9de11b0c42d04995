"""v0 packed chunk rows: the encoder and decoder are inverse on any event sequence."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io.jsjson import MAX_SAFE_INTEGER, stringify
from workbench.io.rows_v0 import (
    MIN_RUN,
    ROW_TAGS,
    RowError,
    decode_storage_record,
    pack_chunk_runs,
)

_chunk = st.one_of(
    st.builds(lambda k, i, t: {"type": k, "index": i, "text": t},
              st.sampled_from(["text-delta", "reasoning-delta"]), st.integers(0, 2),
              st.text(max_size=4)),
    st.builds(lambda i, cid, args: {"type": "tool-call-delta", "index": i, "id": cid,
                                    "argumentsDelta": args},
              st.integers(0, 2), st.sampled_from(["c1", "c2"]), st.text(max_size=4)),
    st.builds(lambda i, cid, name, args: {"type": "tool-call-delta", "index": i, "id": cid,
                                          "name": name, "argumentsDelta": args},
              st.integers(0, 2), st.sampled_from(["c1", "c2"]), st.sampled_from(["", "bash"]),
              st.text(max_size=4)),
    st.builds(lambda i: {"type": "block-start", "index": i, "blockType": "text"},
              st.integers(0, 2)),
)


@st.composite
def event_runs(draw):
    n = draw(st.integers(0, 40))
    seq = draw(st.integers(0, 5))
    time = draw(st.sampled_from([0, -5, 1_790_000_000_000, MAX_SAFE_INTEGER - 100]))
    events = []
    for _ in range(n):
        seq += draw(st.sampled_from([1, 1, 1, 1, 2]))
        time += draw(st.sampled_from([0, 1, 10, -3]))
        time = max(-MAX_SAFE_INTEGER, min(MAX_SAFE_INTEGER, time))
        if draw(st.integers(0, 9)) == 0:
            events.append({"type": "turn/start", "seq": seq, "time": time, "data": {"turn": 1}})
            continue
        step = draw(st.sampled_from([1, 1, 1, 2]))
        events.append({"type": "assistant/chunk", "seq": seq, "time": time,
                       "data": {"turn": 1, "step": step, "chunk": draw(_chunk)}})
    return events


@settings(max_examples=150, deadline=None)
@given(event_runs())
def test_pack_then_decode_is_identity(events: list[dict]) -> None:
    records = pack_chunk_runs(events)
    decoded = [e for r in records for e in decode_storage_record(r)]
    assert stringify(decoded) == stringify(events)
    for record in records:
        if record["type"] in ROW_TAGS:
            members = record["data"]["texts" if "texts" in record["data"] else "args"]
            assert len(members) >= MIN_RUN
            assert list(record) == ["type", "seq0", "time0", "data"]


def test_row_error_carries_kind_and_reference_text() -> None:
    row = {"type": "reasoning-chunks", "seq0": 0, "time0": 0,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["a"]}}
    with pytest.raises(RowError) as caught:
        decode_storage_record(row)
    assert (caught.value.kind, caught.value.message) == (
        "dt_arity", "malformed reasoning-chunks storage row: dt length 2 does not match 1 members")

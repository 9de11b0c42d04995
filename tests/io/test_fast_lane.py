"""The loader's fast lanes give exactly what the general paths give.

* the line scanner's batched lane (`LineScanner(..., batch=...)` with a codec's ``take``) against
  the per-line lane, on bodies mixing well-formed rows with every kind of unusual line, fed in
  any chunking;
* the event store's per-line locations: a log parsed on demand (packed v0 rows, implicit
  fixture rows, zstd runs of frames) reads back, by index and in order, exactly the events the
  scan decoded and handed to its observer.
"""
from __future__ import annotations

import json

import pytest
import zstandard
from decoded import Decoded

from workbench.io.legacy import V0Codec
from workbench.io.read import scan_bytes
from workbench.io.rows_v0 import pack_chunk_runs
from workbench.io.rows_v4 import V4Codec
from workbench.io.scan import LineScanner

V4_HEADER = (b'{"type":"session","version":4,"id":"s4","createdAt":1,"isSeeded":false,'
             b'"delegationDepth":0}\n')
V0_HEADER = b'{"type":"session","version":0,"id":"s0","createdAt":1,"delegationDepth":0}\n'


def line(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def v4_body(extra: list[bytes]) -> bytes:
    rows = [
        line({"type": "todo/write", "seq": 0, "time": 1, "data": {"todos": []}}),
        line({"type": "todo/write", "seq": 1, "time": 2, "data": {"n": -0.0}}),
        b'{"type":"todo/write","seq":2,"time":3,"data":{"n":-0}}\n',  # integer -0: the exact parser
        line({"type": "job/registered", "seq": 3.0, "time": 4, "data": {}}),  # 3.0 === 3
        line({"type": "tool/result", "seq": 4, "time": 5, "sourceEventSeqs": [[0, 2]], "ignorable": True,
              "data": {"message": {"id": "m4", "role": "tool", "toolCallId": "c1",
                                   "source": {"kind": "tool", "callId": "c1"}, "content": []}}}),
        line({"type": "session/end-seed", "seq": 5, "time": 6, "data": {}}),
        line({"type": "todo/write", "seq": 6, "time": 7, "data": {"s": "tool-result \\u0041"}}),
    ]
    return b"".join(rows + extra)


def v0_body() -> bytes:
    events = [{"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}]
    for k in range(1, 12):
        events.append({"type": "assistant/chunk", "seq": k, "time": 5 + k,
                       "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"t{k}"}}})
    events.append({"type": "steering/message", "seq": 12, "time": 20, "data": {"content": [], "source": {}}})
    events.append({"type": "turn/end", "seq": 13, "time": 21, "data": {"turn": 1, "reason": {"kind": "disposed"}}})
    return b"".join(line(r) for r in pack_chunk_runs(events))


TAILS = {
    "clean": [],
    "gap": [line({"type": "todo/write", "seq": 9, "time": 8, "data": {}})],
    "unparsable-then-turn-end": [b"{oops\n", line({"type": "turn/end", "seq": 8, "time": 9, "data": {}})],
    "retired-syntax": [line({"type": "tool/code-dispatch", "seq": 7, "time": 8, "data": {}})],
    "torn": [b'{"type":"todo/write","seq":7'],
}


def _collect(codec_factory, body: bytes, base: int, size: int, batched: bool) -> tuple:
    got: list = []

    def sink(events: list, line_no: int, start: int, end: int) -> None:
        got.extend((e, line_no, start, end) for e in events)

    def batch(events: list, first: int, starts: list, ends: list, chunk_start: int, rows: list) -> None:
        spans = {k: (at, count) for k, at, count in rows}
        at = 0
        for k, start in enumerate(starts):
            count = spans.get(k, (at, 1))[1]
            got.extend((e, first + k, chunk_start + start, chunk_start + ends[k]) for e in events[at:at + count])
            at += count

    scanner = LineScanner(codec_factory(), sink, base=base, batch=batch if batched else None)
    for i in range(0, len(body), size):
        scanner.write(body[i:i + size])
    torn = scanner.finish()
    issue = (scanner.issue.kind, scanner.issue.message) if scanner.issue else None
    fatal = (scanner.fatal.kind, scanner.fatal.message) if scanner.fatal else None
    return repr(got), issue, fatal, scanner.committed_bytes, scanner.line, torn


@pytest.mark.parametrize("size", [7, 100, 1 << 20])
@pytest.mark.parametrize("tail", sorted(TAILS))
def test_v4_batched_lane_equals_line_by_line(tail: str, size: int) -> None:
    body = v4_body(TAILS[tail])
    fast = _collect(V4Codec, body, len(V4_HEADER), size, batched=True)
    slow = _collect(V4Codec, body, len(V4_HEADER), size, batched=False)
    assert fast == slow
    assert fast[4] == 7 + sum(row.endswith(b"\n") for row in TAILS[tail])  # the tail is reached


CROWDED = [  # more openers than deepjson.MATERIALISED_DEPTH: nested that deep, or not
    b'{"type":"todo/write","seq":1,"time":2,"data":{"d":' + b"[" * 200 + b"1" + b"]" * 200 + b"}}\n",
    line({"type": "todo/write", "seq": 2, "time": 3, "data": {"s": "[{" * 150}}),
    line({"type": "todo/write", "seq": 3, "time": 4, "data": {"w": [[]] * 300}}),
    b'{"type":"todo/write","seq":4,"time":5,"data":{"d":' + b'{"k":' * 2000 + b"0" + b"}" * 2000
    + b"}}\n",
    line({"type": "todo/write", "seq": 5, "time": 6, "data": {}})]


@pytest.mark.parametrize("size", [7, 100, 1 << 20])
def test_crowded_lines_are_bounded_in_the_batched_lane(size: int) -> None:
    body = line({"type": "todo/write", "seq": 0, "time": 1, "data": {}}) + b"".join(CROWDED)
    fast = _collect(V4Codec, body, len(V4_HEADER), size, batched=True)
    assert fast == _collect(V4Codec, body, len(V4_HEADER), size, batched=False)
    assert fast[1:3] == (None, None) and fast[0].count("Deep(") == 2  # seqs 1 and 4


@pytest.mark.parametrize("size", [1_000, 1 << 20])
def test_crowded_lines_among_many_batches(size: int) -> None:
    """Deep lines after whole batches and after lines the general path took: each one found."""
    deep = [3, 200, 201, 256, 257, 600, 601, 602, 900]
    rows = []
    for seq in range(1_000):
        data: dict = {"k": seq}
        if seq % 7 == 0:
            data["s"] = "[" * 300                       # crowded, not deep
        rows.append(line({"type": "todo/write", "seq": seq, "time": seq, "data": data}))
        if seq in deep:
            rows[-1] = rows[-1].replace(b'{"k":', b'{"d":' + b"[" * 150 + b"0" + b"]" * 150 + b',"k":')
        if seq % 97 == 0:
            rows[-1] = rows[-1].replace(b'"k":', b'"n":-0,"k":')   # the general path
    body = b"".join(rows)
    fast = _collect(V4Codec, body, len(V4_HEADER), size, batched=True)
    assert fast == _collect(V4Codec, body, len(V4_HEADER), size, batched=False)
    assert fast[1:3] == (None, None) and fast[0].count("Deep(") == len(deep)


@pytest.mark.parametrize("size", [5, 64, 1 << 20])
def test_v0_batched_lane_equals_line_by_line(size: int) -> None:
    body = v0_body() + line({"type": "todo/write", "seq": 14, "time": 22, "data": {}})
    fast = _collect(lambda: V0Codec("s0"), body, len(V0_HEADER), size, batched=True)
    slow = _collect(lambda: V0Codec("s0"), body, len(V0_HEADER), size, batched=False)
    assert fast == slow
    assert '"text-chunks"' in body.decode()  # packed rows took part


def _read_back(data: bytes, name: str) -> tuple:
    seen = Decoded()
    store = scan_bytes(data, name=name, observer=seen).log.events
    n = len(store)
    assert n == len(seen.events) > 0
    by_index = [store[i] for i in reversed(range(n))][::-1]
    in_order = list(store)
    assert [store.type_of(i) for i in range(n)] == [e.get("type") for e in seen.events]
    plain = data
    if name.endswith(".zstd"):
        plain = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
    lines = plain.split(b"\n")   # line 0 is the header
    assert [store.raw_line(i) for i in range(n)] == [lines[store.line_of(i)] for i in range(n)]
    return repr(seen.events), repr(by_index), repr(in_order)


def test_lazy_v0_store_reads_back_packed_rows() -> None:
    kept, by_index, in_order = _read_back(V0_HEADER + v0_body(), "session.jsonl")
    assert kept == by_index == in_order


def test_lazy_v0_store_reads_back_a_fixture() -> None:
    body = b"".join(line({"type": "todo/write", "data": {"k": k}}) for k in range(5))
    kept, by_index, in_order = _read_back(V0_HEADER + body, "session.jsonl")
    assert kept == by_index == in_order


@pytest.mark.parametrize("per_frame", [1, 3])
def test_lazy_zstd_store_reads_back_runs_of_frames(per_frame: int) -> None:
    lines = v4_body([]).splitlines(keepends=True)
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    frames = [compressor.compress(V4_HEADER)]
    for k in range(0, len(lines), per_frame):
        piece = b"".join(lines[k:k + per_frame])
        if per_frame == 3:  # a record spanning two frames
            frames += [compressor.compress(piece[:9]), compressor.compress(piece[9:])]
        else:
            frames.append(compressor.compress(piece))
    kept, by_index, in_order = _read_back(b"".join(frames), "session.v4.jsonl.zstd")
    assert kept == by_index == in_order

#!/usr/bin/env python3
"""Generators of the worst inputs for reading time after a defect: `python bench/make_hostile.py [OUT]`.

Every file starts as a valid v4 log written by `workbench.build` (a few turns), then one bad line
(the first defect), then a tail that the reader must get past without parsing it line by line:

* ``zstd-bomb-32k`` / ``zstd-bomb-128k``: a zstd log whose frames after the bad line are RLE blocks
  of one repeated short garbage line (``x/\\`` style bytes), about 30,000x expansion: 32 KiB and
  128 KiB of file for ~1 GiB and ~4 GiB of plaintext;
* ``zstd-bomb-events``: the same with copies of a valid ``user/message`` line (a row type the v4
  admission screen applies to, no ``turn/end``), so every line is a candidate that must be parsed
  until the documented limit (`workbench.io.tail.AFTER_ISSUE_LINES`) stops reading;
* ``raw-garbage``: 5M garbage lines (10 MB) after the bad line;
* ``raw-escapes``: 5M lines holding a backslash escape (each one a candidate line);
* ``raw-long-line``: a clean log with one valid 300 MB event line (a long user message);
* ``clean``: the valid base log alone (the baseline of the benchmark);
* valid logs whose work could grow faster than their size: ``ranges-every-earlier``,
  ``broken-run-line``, ``one-node-compactions``, ``one-node-compactions-calls`` and
  ``front-compactions`` (each generator's docstring says what it holds).

Inputs are written under `OUT` (default ``bench/out/hostile/``); `bench/bench_hostile.py` times
``workbench info`` on each.
"""
from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.build import LogBuilder  # noqa: E402
from workbench.io.zstd import compress_frames  # noqa: E402

BLOCK = 128 * 1024
"""Largest zstd block: an RLE block of this size costs 3 header bytes + 1 byte."""


def _base_lines() -> list[bytes]:
    b = LogBuilder(version=4, session_id="session-hostile")
    for k in range(3):
        with b.turn():
            with b.step():
                if k == 0:
                    b.system("You are a coding agent.")
                b.user(f"Task {k}: look at the repository")
                b.request_header()
                b.assistant(f"Done with task {k}.")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = b.write(Path(tmp) / "base.session.v4.jsonl")
        return Path(path).read_bytes().splitlines(keepends=True)


def _rle_frame(byte: int, blocks: int) -> bytes:
    """One zstd frame (checksum off, no content size) of `blocks` RLE blocks of `byte`."""
    out = bytearray(b"\x28\xb5\x2f\xfd")
    out.append(0x00)          # descriptor: no FCS, not single segment, no checksum, no dict
    out.append(0x58)          # window descriptor: 128 KiB window
    for i in range(blocks):
        last = 1 if i == blocks - 1 else 0
        header = (BLOCK << 3) | (1 << 1) | last      # RLE block of BLOCK bytes
        out += header.to_bytes(3, "little") + bytes([byte])
    return bytes(out)


def _zstd_bomb(base: list[bytes], tail_line: bytes, file_bytes: int) -> bytes:
    """The base log as frames, the bad line, then `tail_line` repeated (compressed by periodic
    data) followed by RLE frames until the file is about `file_bytes`."""
    head = compress_frames([base[0], b"".join(base[1:]) + b"{bad line\n"])
    cctx = zstandard.ZstdCompressor(level=19, write_checksum=True, write_content_size=False)
    body = bytearray(head)
    if tail_line:
        repeats = (64 * 1024 * 1024) // len(tail_line)
        body += cctx.compress(tail_line * repeats)
    while len(body) < file_bytes:
        body += _rle_frame(ord("x"), 256) + compress_frames([b"\n"])
    return bytes(body)


def generate(out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    base = _base_lines()
    event_line = json.dumps({"type": "user/message", "seq": 999_999, "time": 1, "data": {
        "content": [{"type": "text", "text": "more"}], "source": {"kind": "user"}, "role": "user",
        "id": "u"}, "surfaceOp": "append"}, separators=(",", ":")).encode() + b"\n"
    files = {
        "zstd-bomb-32k.session.v4.jsonl.zstd": _zstd_bomb(base, b"", 32 * 1024),
        "zstd-bomb-128k.session.v4.jsonl.zstd": _zstd_bomb(base, b"", 128 * 1024),
        "zstd-bomb-events.session.v4.jsonl.zstd": _zstd_bomb(base, event_line, 128 * 1024),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = out / name
        paths[name].write_bytes(data)
    paths["clean.session.v4.jsonl"] = out / "clean.session.v4.jsonl"
    paths["clean.session.v4.jsonl"].write_bytes(b"".join(base))  # the baseline
    prefix = b"".join(base) + b"{bad line\n"
    raw = {
        "raw-garbage.session.v4.jsonl": prefix + b"x\n" * 5_000_000,
        "raw-escapes.session.v4.jsonl": prefix + b"\\\n" * 5_000_000,
    }
    for name, data in raw.items():
        paths[name] = out / name
        paths[name].write_bytes(data)
    long_name = "raw-long-line.session.v4.jsonl"
    paths[long_name] = out / long_name
    _long_line_log(paths[long_name], base, 300 * 1000 * 1000)
    for name, write in (("ranges-every-earlier.session.v4.jsonl", _ranges_log),
                        ("broken-run-line.session.v4.jsonl", _broken_run_log),
                        ("one-node-compactions.session.v4.jsonl", _compactions_log),
                        ("one-node-compactions-calls.session.v4.jsonl",
                         partial(_compactions_log, count=1_000, calls=True)),
                        ("front-compactions.session.v4.jsonl", _front_log)):
        paths[name] = write(out / name, base)
    return paths


def _ranges_log(path: Path, base: list[bytes]) -> Path:
    """40,000 rows after the base log, each citing every earlier seq as one range pair (4 MB on
    disk, 800M seqs expanded)."""
    first = len(base) - 1
    with open(path, "wb") as fh:
        fh.write(b"".join(base))
        for k in range(first, first + 40_000):
            fh.write(json.dumps({"type": "session/title", "seq": k, "time": 1, "data": {
                "title": "t"}, "sourceEventSeqs": [[0, k - 1]]}, separators=(",", ":")).encode()
                + b"\n")
    return path


def _broken_run_log(path: Path, base: list[bytes]) -> Path:
    """A valid log whose user message is 400 KB of "-a": a start for the path patterns at
    every break of one long run of word characters."""
    b = LogBuilder(version=4, session_id="session-hostile-run")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user("-a" * 200_000)
            b.request_header()
            b.assistant("Done.")
    return Path(b.write(path))


def _compactions_log(path: Path, base: list[bytes], *, count: int = 2_000,
                     calls: bool = False) -> Path:
    """A valid log of 20,000 user messages and then `count` compactions that each hide one node:
    every compaction's audit looks at a 20,000-node surface. `calls`: a model call before each
    compaction and after the last, so every cache break and ledger row compares two 20,000-node
    requests."""
    b = LogBuilder(version=4, session_id="session-hostile-compaction-calls" if calls
                   else "session-hostile-compactions")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            for i in range(20_000):
                b.user(f"message {i}")
        for k in range(count + calls):
            if calls:
                with b.step():
                    b.request_header()
                    b.assistant(f"answer {k}")
            if k < count:
                node = b.state.nodes[b.state.first_compactable()]
                b.compact(node, node, summary=f"summary {k}")
    return Path(b.write(path))


def _front_log(path: Path, base: list[bytes], *, messages: int = 300_000,
               count: int = 1_000) -> Path:
    """A valid log of 300,000 user messages and then 1,000 compactions that each hide the first
    two nodes of the surface (68 MB): every replacement shortens a 300,000-node surface at its
    front, so a surface replay that renumbered the nodes after a splice, or checkpointed the
    surface after every few such splices, would do work (or hold memory) of compactions times
    surface."""
    b = LogBuilder(version=4, session_id="session-hostile-front")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            for i in range(messages):
                b.user(f"message {i}")
        for k in range(count):
            first = b.state.first_compactable()
            b.compact(b.state.nodes[first], b.state.nodes[first + 1], summary=f"summary {k}")
    return Path(b.write(path))


def _long_line_log(path: Path, base: list[bytes], size: int) -> None:
    """The base log plus a copy of its last turn whose user message text makes that line `size`
    bytes long (a valid event: the log stays clean)."""
    turn = [json.loads(line) for line in base[-7:]]
    shift = len(turn)
    with open(path, "wb") as fh:
        fh.write(b"".join(base))
        for event in turn:
            event["seq"] += shift
            data = event["data"]
            if "turn" in data:
                data["turn"] += 1
            line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
            if event["type"] != "user/message":
                fh.write(line + b"\n")
                continue
            text = json.dumps(data["content"][0]["text"]).encode()
            before, after = line.split(text)
            fill = size - len(before) - len(after) - 2
            fh.write(before + b'"')
            chunk = b"abcdefghij" * 100_000
            while fill > 0:
                fh.write(chunk[:fill])
                fill -= len(chunk)
            fh.write(b'"' + after + b"\n")


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "bench" / "out" / "hostile"
    for name, path in generate(out).items():
        print(f"{path}  {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

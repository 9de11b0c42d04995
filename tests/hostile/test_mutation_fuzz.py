"""Mutation fuzz over the real corpus logs (`../shared/corpus`): each log is mutated (bytes
flipped, lines dropped, duplicated or swapped, garbage and deep nesting inserted, numbers blown
up, the file cut anywhere, a value of another JSON type put at a random path or another event type
over an event's data), then loaded, framed and run through ``workbench info``, ``fold``, ``audit``
and ``tokens``.
Zero untyped exceptions, zero tracebacks, and every input (corpus and mutated) byte-identical
afterwards.

Bounded in time: ``WORKBENCH_FUZZ_SECONDS`` (default 60) for the whole run, spread over the logs;
``WORKBENCH_FUZZ_SEED`` picks another sequence of mutations. The time bound only decides how many
mutations run, never whether the test passes.
"""
from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path

import pytest
from hostile_checks import digest, every_command, every_frame

from workbench.errors import WorkbenchError
from workbench.io import zstd

SECONDS = float(os.environ.get("WORKBENCH_FUZZ_SECONDS", "60"))
SEED = int(os.environ.get("WORKBENCH_FUZZ_SEED", "14"))
_NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _corpus(shared: Path) -> list[Path]:
    logs = sorted(p for p in (shared / "corpus").rglob("*") if p.is_file()
                  and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.zstd"))
                  and "migrated" not in p.parts)
    return logs


def _plaintext(data: bytes) -> bytes:
    if data[:4] != zstd.MAGIC_BYTES:
        return data
    scan = zstd.scan_frames(data)
    return b"".join(zstd.decode_frame(data[s:e], s) for s, e in zip(scan.starts, scan.ends))


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random mutation of a log's plaintext (the header line is kept most of the time)."""
    lines = data.split(b"\n")
    kind = rng.randrange(12)
    i = rng.randrange(1, max(2, len(lines)))
    if kind == 0:  # flip bytes
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        return bytes(buf)
    if kind == 1:
        del lines[i:i + rng.randint(1, 3)]
    elif kind == 2:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif kind == 3:
        j = rng.randrange(1, max(2, len(lines)))
        if i < len(lines) and j < len(lines):
            lines[i], lines[j] = lines[j], lines[i]
    elif kind == 4:
        lines.insert(i, rng.choice([b"{broken", b"", b"\x00\xff\xfe", b"[]", b"null", b"\\u0000",
                                    b'{"type":"turn/end"}', b"x" * 10_000]))
    elif kind == 5 and i < len(lines):  # blow up one number
        hits = list(_NUMBER.finditer(lines[i]))
        if hits:
            m = rng.choice(hits)
            big = rng.choice([b"1e308", b"-1e308", b"1e400", b"123456789012345678901234567890",
                              b"9007199254740993", b"-0", b"0.5"])
            lines[i] = lines[i][:m.start()] + big + lines[i][m.end():]
    elif kind == 6 and i < len(lines) and lines[i].endswith(b"}"):  # deep nesting
        depth = rng.choice([1_030, 20_000])
        lines[i] = lines[i][:-1] + b',"zz":' + b"[" * depth + b"]" * depth + b"}"
    elif kind == 7:
        return data[:rng.randrange(len(data) + 1)]
    elif kind == 8 and i < len(lines):  # odd unicode into a string
        at = lines[i].find(b'"text":"')
        if at >= 0:
            at += 8
            lines[i] = lines[i][:at] + rng.choice(["\u202e", "\ud800", "😀" * 1000,
                                                   "\\ud800", "\u2028"]).encode(
                "utf-8", "surrogatepass") + lines[i][at:]
    elif kind == 9 and i < len(lines):  # a value of another JSON type at a random path
        lines[i] = _retyped(lines[i], rng)
    elif kind == 10 and i < len(lines):  # another event type over this event's data
        lines[i] = _retyped(lines[i], rng, event_type=True)
    else:
        lines.insert(i, b"\\" * rng.randint(1, 50))
    return b"\n".join(lines)


_VALUES = [None, True, 0, -1, 2**53 + 1, 1e308, 0.5, "", "x" * 5_000, "\ud800", [], {}, [None], [[]],
           [{}], {"type": 5}, {"type": "text", "text": 5}, {"op": "replace"}, list(range(300))]
_TYPES = ["user/message", "assistant/message", "tool/result", "tool/call", "system/message",
          "compaction/start", "compaction/summary", "compaction/end", "request/header",
          "turn/start", "turn/end", "step/start", "step/end", "assistant/chunk", "todo/write"]


def _retyped(line: bytes, rng: random.Random, *, event_type: bool = False) -> bytes:
    """`line` with one value (at a random path) replaced by one of another JSON type or
    deleted, or with another event type; a line that is not JSON stays as it is."""
    try:
        value = json.loads(line)
    except ValueError:
        return line
    if event_type and isinstance(value, dict):
        value["type"] = rng.choice(_TYPES)
    else:
        paths: list[tuple] = []
        todo: list[tuple[tuple, object]] = [((), value)]
        while todo:
            path, node = todo.pop()
            paths.append(path)
            items = node.items() if isinstance(node, dict) else \
                enumerate(node[:20]) if isinstance(node, list) else ()
            todo.extend((path + (k,), v) for k, v in items)
        if len(paths) < 2:
            return line
        path = rng.choice(paths[1:])
        parent = value
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and rng.random() < 0.25:
            del parent[path[-1]]
        else:
            parent[path[-1]] = rng.choice(_VALUES)
    return json.dumps(value, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def _zstd(plaintext: bytes, rng: random.Random) -> bytes:
    lines = plaintext.splitlines(keepends=True)
    if not lines:
        return zstd.compress_frames([plaintext])
    chunks, k = [lines[0]], 1
    while k < len(lines):
        step = rng.randint(1, 8)
        chunks.append(b"".join(lines[k:k + step]))
        k += step
    return zstd.compress_frames(chunks)


def test_mutation_fuzz_over_the_corpus(shared_dir: Path, tmp_path: Path, capsys) -> None:
    logs = _corpus(shared_dir)
    if not logs:
        pytest.skip("no corpus logs under ../shared/corpus")
    before = {p: digest(p) for p in logs}
    rng = random.Random(SEED)
    deadline = time.monotonic() + SECONDS
    runs = 0
    order = list(logs)
    rng.shuffle(order)
    while time.monotonic() < deadline or runs < len(order) // 4:
        source = order[runs % len(order)]
        plain = _plaintext(source.read_bytes())
        mutated = mutate(plain, rng)
        zstd_out = source.name.endswith(".zstd") or rng.random() < 0.2
        data = _zstd(mutated, rng) if zstd_out else mutated
        name = source.name.split("__")[-1]
        if zstd_out and not name.endswith(".zstd"):
            name += ".zstd"
        path = tmp_path / f"m{runs}" / name
        path.parent.mkdir()
        path.write_bytes(data)
        mutated_digest = digest(path)
        try:
            every_frame(path)
        except WorkbenchError:
            pass  # a typed refusal (e.g. not a session log at all) is an answer, not a crash
        every_command(path, tmp_path / f"m{runs}", capsys, ("info", "fold", "audit", "tokens"))
        assert digest(path) == mutated_digest, path
        runs += 1
    assert {p: digest(p) for p in logs} == before
    print(f"{runs} mutated logs")

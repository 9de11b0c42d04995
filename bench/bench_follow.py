#!/usr/bin/env python3
"""Follow benchmark (issue 17): `python bench/bench_follow.py [FILE] [--append N] [--rounds R]`.

The cost of `Session.refresh()` after DSH appended `--append` events (default 1,000) to a followed
log, against reloading the whole log (what a user does without following). FILE (default
`/work/benchdata/large-v4.jsonl` when present, else `bench/out/large-v4.jsonl`, the 1.3M-event log
of `bench/make_large_log.py`) is never written: its lines up to the last ``R * N`` events are
copied to a temporary file, which is followed and then grows by the log's own next N lines, R
times (a raw v4 log: one event per line).

Each measurement runs in a fresh subprocess, in the same run:

* ``reload``  — `workbench.load(copy)` plus the surface timeline and the event scan, on the copy
  after every append: the baseline (what following replaces);
* ``refresh`` — in a process that follows the copy (`workbench.load(copy, follow=True)`, timeline,
  scan, `timeline_df()` and the compaction brackets built: the state a live widget keeps): append
  N lines, then time `session.refresh()` (read the new bytes, check, extend store, scan, timeline,
  brackets), then the first `timeline_df()` and `compactions` after it, R rounds.

Target: refresh < 50 ms (CPU and wall), i.e. proportional to what was appended. CPU time is what
the verdict uses (the machine is shared); wall time is printed next to it. Prints a table and
exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from _common import run_fresh

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = Path("/work/benchdata/large-v4.jsonl")
if not DEFAULT.exists():
    DEFAULT = ROOT / "bench" / "out" / "large-v4.jsonl"
TARGET_MS = 50.0


def _split(source: Path, copy: Path, tail_lines: int) -> list[bytes]:
    """Copy `source` without its last `tail_lines` lines to `copy`; return those lines."""
    size = source.stat().st_size
    with open(source, "rb") as fh:
        block = 1 << 20
        data = b""
        while data.count(b"\n") <= tail_lines and len(data) < size:
            start = max(0, size - len(data) - block)
            fh.seek(start)
            data = fh.read(size - len(data) - start) + data
        lines = data.splitlines(keepends=True)[-tail_lines:]
        keep = size - sum(map(len, lines))
        fh.seek(0)
        with open(copy, "wb") as out:
            left = keep
            while left:
                chunk = fh.read(min(left, 64 << 20))
                out.write(chunk)
                left -= len(chunk)
    return lines


def _child_reload(path: str) -> dict:
    import workbench
    w0, c0 = time.perf_counter(), time.process_time()
    session = workbench.load(path)
    session.timeline, session.index
    return {"wall_ms": (time.perf_counter() - w0) * 1e3, "cpu_ms": (time.process_time() - c0) * 1e3,
            "events": len(session)}


def _timed(run) -> dict:
    w0, c0 = time.perf_counter(), time.process_time()
    run()
    return {"wall_ms": (time.perf_counter() - w0) * 1e3, "cpu_ms": (time.process_time() - c0) * 1e3}


def _child_refresh(path: str, lines_file: str, append: int, rounds: int) -> dict:
    import workbench
    lines = Path(lines_file).read_bytes().splitlines(keepends=True)
    box: dict = {}

    def start() -> None:
        box["s"] = session = workbench.load(path, follow=True)
        session.timeline, session.index
    setup = _timed(start)
    session = box["s"]
    first = {"timeline_df": _timed(session.timeline_df), "compactions": _timed(lambda: session.compactions)}
    out = []
    for r in range(rounds):
        with open(path, "ab") as fh:
            fh.write(b"".join(lines[r * append:(r + 1) * append]))
        read0 = session.live.tail.bytes_read

        def refresh() -> None:
            box["added"] = session.refresh().added
            session.timeline, session.index
        row = _timed(refresh)
        row.update(added=box["added"], bytes=session.live.tail.bytes_read - read0)
        row["timeline_df"] = _timed(session.timeline_df)
        row["compactions"] = _timed(lambda: session.compactions)
        out.append(row)
    return {"setup": setup, "first": first, "rounds": out, "events": len(session)}


def _run(*args: str) -> dict:
    return run_fresh(__file__, "--child", *args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--append", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = _child_reload(*rest) if kind == "reload" else _child_refresh(
            rest[0], rest[1], int(rest[2]), int(rest[3]))
        print(json.dumps(result))
        return 0
    if not args.file.exists():
        print(f"{args.file}: no such file (run bench/make_large_log.py first)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-follow-") as tmp:
        copy = Path(tmp) / args.file.name
        tail = Path(tmp) / "tail.jsonl"
        lines = _split(args.file, copy, args.append * args.rounds)
        tail.write_bytes(b"".join(lines))
        follow = _run("refresh", str(copy), str(tail), str(args.append), str(args.rounds))
        reload = _run("reload", str(copy))   # the copy has every appended line now
    events = follow["events"]
    print(f"# {args.file} ({events:,} events at the end), +{args.append:,} events x {args.rounds} rounds")
    print(f"follow setup (load + timeline + scan): {follow['setup']['cpu_ms']:.0f} ms CPU, "
          f"{follow['setup']['wall_ms']:.0f} ms wall; then the first timeline_df() "
          f"{follow['first']['timeline_df']['cpu_ms']:.0f} ms, compactions "
          f"{follow['first']['compactions']['cpu_ms']:.0f} ms CPU")
    print(f"{'measurement':<22}{'CPU ms':>9}{'wall ms':>9}{'bytes read':>13}"
          f"{'timeline_df CPU':>17}{'compactions CPU':>17}")
    for k, r in enumerate(follow["rounds"], 1):
        print(f"{'refresh, round ' + str(k):<22}{r['cpu_ms']:>9.1f}{r['wall_ms']:>9.1f}{r['bytes']:>13,}"
              f"{r['timeline_df']['cpu_ms']:>17.1f}{r['compactions']['cpu_ms']:>17.1f}")
    print(f"{'reload (baseline)':<22}{reload['cpu_ms']:>9.1f}{reload['wall_ms']:>9.1f}"
          f"{os.path.getsize(args.file):>13,}")

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]
    cpu = [r["cpu_ms"] for r in follow["rounds"]]
    verdict = "meets" if max(cpu) < TARGET_MS else "misses"
    print(f"refresh median {median(cpu):.1f} ms CPU, worst {max(cpu):.1f} ms: {verdict} the {TARGET_MS:.0f} ms "
          f"target; reload / refresh = {reload['cpu_ms'] / median(cpu):,.0f}x; after a refresh: "
          f"timeline_df {median([r['timeline_df']['cpu_ms'] for r in follow['rounds']]):.0f} ms, "
          f"compactions {median([r['compactions']['cpu_ms'] for r in follow['rounds']]):.1f} ms CPU (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

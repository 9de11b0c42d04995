#!/usr/bin/env python3
"""Frames benchmark: `python bench/bench_frames.py [--log FILE] [--sessions N] [--workers N]`.

Two measurements, each in a fresh subprocess (so peak RSS is its own):

* ``events`` — `workbench.core.load.load_log(FILE)`, then `Session(log).events_df()` on it
  (the 1.3M-event log `bench/make_large_log.py` writes, default `bench/out/large-v4.jsonl`).
  Target: building the frame takes at most 2x the load (CPU time; wall time is printed too,
  but a machine shared with other jobs disturbs it far more).
* ``many`` — `workbench.load_sessions(ROOT)` over a DSH session root of N sessions (default
  500) with every frame, in parallel worker processes. The root is generated once with the log
  builder (`workbench.build`) into `bench/out/root-<N>/`: sessions of 40..3000 events with tool
  calls, failing tools, compactions (some failed), prunes, forks and a few broken logs, written
  raw or zstd like the harness does.

Prints one line per figure and a JSON summary line at the end.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from _common import peak_rss_mib, run_fresh

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
TARGET_EVENTS_VS_LOAD = 2.0

TOOLS = [{"name": n, "description": f"{n} tool. " + "Details of its limits. " * 6,
          "parameters": {"type": "object"}} for n in ("bash", "read", "grep", "todo_write")]


def measure_events(path: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from workbench.core.load import load_log
    from workbench.session import Session
    w0, c0 = time.perf_counter(), time.process_time()
    log = load_log(path)
    w1, c1 = time.perf_counter(), time.process_time()
    df = Session(log).events_df()
    w2, c2 = time.perf_counter(), time.process_time()
    return {"kind": "events", "file": str(path), "events": len(log.events), "rows": len(df),
            "load_wall": w1 - w0, "load_cpu": c1 - c0, "frame_wall": w2 - w1,
            "frame_cpu": c2 - c1, "frame_mib": df.memory_usage(deep=True).sum() / 2**20,
            "peak_rss_mib": peak_rss_mib()}


def measure_many(root: Path, workers: int | None) -> dict:
    sys.path.insert(0, str(ROOT))
    import workbench
    w0 = time.perf_counter()
    frames = workbench.load_sessions(root, workers=workers, progress=False)
    wall = time.perf_counter() - w0
    sessions = frames["sessions"]
    return {"kind": "many", "root": str(root), "sessions": len(sessions),
            "events": int(sessions["events"].fillna(0).sum()), "wall": wall,
            "sessions_per_s": len(sessions) / wall,
            "rows": {name: len(df) for name, df in frames.frames.items()},
            "unreadable_or_failed": int(sessions["error"].notna().sum()),
            "defects": len(frames["defects"]), "peak_rss_mib": peak_rss_mib()}


# -- the N-session root ---------------------------------------------------------------------------

def _session(b, rng: random.Random, target: int) -> None:
    turn = 0
    while b.seq < target:
        turn += 1
        if turn > 1:
            b.end_seed()
        with b.turn():
            for step in range(1, rng.randint(2, 9) + 1):
                with b.step():
                    if step == 1:
                        if turn == 1:
                            b.system("You are a coding agent. " * 20)
                        b.user(f"Turn {turn}: work through the next items. " * rng.randint(1, 6))
                        b.request_header(tools=TOOLS, max_tokens=2048)
                    if rng.random() < 0.03:
                        b.attempt_failed("SERVER", "upstream 503")
                    kind = rng.choice(["bash", "read", "grep", "todo_write"])
                    a = b.assistant(f"Using {kind}.", reasoning="Next item.",
                                    tool_calls=[(kind, {"n": b.seq})])
                    b.tool_call(a.call_ids[0])
                    big = rng.random() < 0.05
                    b.tool_result(a.call_ids[0], text=("row of output\n" * (900 if big else 12)),
                                  is_error=rng.random() < 0.05)
                    if big and rng.random() < 0.5:
                        b.prune(b.surface[-1], head=400, tail=100)
            if b.state.surface_tokens > 6000 and len(b.surface) > 6:
                nodes = b.surface
                first = 1 if b.version >= 4 else 0
                end = _balanced_end(b, nodes, first)
                if end is not None:
                    error = None if rng.random() > 0.1 else (
                        "summarization produced no text summary content")
                    b.compact(nodes[first], end, summary="Checkpoint of earlier turns.",
                              error=error)
            with b.step():
                b.assistant(f"Done with turn {turn}.")


def _balanced_end(b, nodes, first: int) -> int | None:
    """Last node of a head-anchored, tool-balanced span that keeps the newest 4 nodes."""
    balance, last = 0, None
    for i in range(first, len(nodes) - 4):
        event = b.state.node_events[nodes[i]]
        if event["type"] == "assistant/message":
            balance += sum(1 for blk in event["data"]["message"]["content"]
                           if blk["type"] == "tool-call")
        elif event["type"] == "tool/result":
            balance -= 1
        if balance == 0:
            last = nodes[i]
    return last


def make_root(n: int, seed: int = 11) -> Path:
    """Write (once) a session root of `n` sessions under bench/out/root-<n>/."""
    sys.path.insert(0, str(ROOT))
    from workbench.build import LogBuilder
    root = OUT / f"root-{n}"
    done = root / ".complete"
    if done.exists():
        return root
    rng = random.Random(seed)
    for i in range(n):
        version = 4 if rng.random() < 0.8 else 0
        b = LogBuilder(version=version, session_id=f"bench-{i:04d}", seed=seed + i,
                       cwd=f"/srv/project-{i % 7}", created_at=1_790_000_000_000 + i * 60_000)
        _session(b, rng, int(rng.lognormvariate(6.0, 0.8)) + 40)
        b.write_to_root(root, compression="zstd" if rng.random() < 0.5 else "none")
        if version >= 4 and rng.random() < 0.04 and b.state.open_turn is None:
            child = b.fork(f"bench-{i:04d}-fork")
            _session(child, rng, child.seq + 60)
            child.write_to_root(root)
    for k in range(3):  # broken logs: never dropped, always reported
        broken = root / "--srv-broken--" / f"broken-{k}"
        broken.mkdir(parents=True, exist_ok=True)
        (broken / "session.v4.jsonl").write_bytes(
            b'{"type":"session","version":4,"id":"broken-%d","createdAt":0,"isSeeded":false,'
            b'"delegationDepth":0}\n{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'
            b"\x00garbage\n" % k + b'{"type":"turn/end","seq":1,"time":2,"data":{"turn":1,'
            b'"reason":{"kind":"completed"}}}\n')
    done.write_text(str(n))
    return root


def _run(kind: str, *args: str) -> dict:
    return run_fresh(__file__, "--measure", kind, *args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=OUT / "large-v4.jsonl")
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--only", default="events,many", help="events, many or both")
    parser.add_argument("--measure", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        kind, *rest = args.measure
        if kind == "events":
            result = measure_events(Path(rest[0]))
        else:
            result = measure_many(Path(rest[0]), int(rest[1]) if len(rest) > 1 else None)
        print(json.dumps(result))
        return 0
    summary: dict = {}
    only = set(args.only.split(","))
    if "events" in only:
        if not args.log.exists():
            raise SystemExit(f"{args.log} is missing: run `python bench/make_large_log.py` first")
        r = _run("events", str(args.log))
        ratio = r["frame_cpu"] / r["load_cpu"]
        print(f"events_df: {r['events']:,} events; load {r['load_wall']:.1f}s wall / "
              f"{r['load_cpu']:.1f}s cpu; events_df {r['frame_wall']:.1f}s wall / "
              f"{r['frame_cpu']:.1f}s cpu = {ratio:.2f}x the load (target <= "
              f"{TARGET_EVENTS_VS_LOAD}x); frame {r['frame_mib']:.0f} MiB; peak RSS "
              f"{r['peak_rss_mib']:.0f} MiB")
        summary["events"] = {**r, "ratio_cpu": ratio,
                             "ratio_wall": r["frame_wall"] / r["load_wall"]}
    if "many" in only:
        t0 = time.perf_counter()
        root = make_root(args.sessions)
        made = time.perf_counter() - t0
        extra = [str(args.workers)] if args.workers else []
        r = _run("many", str(root), *extra)
        print(f"load_sessions: {r['sessions']} sessions, {r['events']:,} events in "
              f"{r['wall']:.1f}s ({r['sessions_per_s']:.1f} sessions/s; root made in "
              f"{made:.1f}s); {r['defects']} defect rows, {r['unreadable_or_failed']} "
              f"sessions with an error; peak RSS (parent) {r['peak_rss_mib']:.0f} MiB")
        summary["many"] = r
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

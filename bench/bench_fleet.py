#!/usr/bin/env python3
"""Fleet benchmark: `python bench/bench_fleet.py [--root DIR] [--sessions N] [--store DIR]`.

A synthetic DSH session root of N sessions (default 2,000, about 4M events, written once with
`workbench.build` into ``--root``, default ``/tmp/workbench-fleet-root-<N>``), then, each in a fresh
process:

* first ``workbench export ROOT -o STORE`` with 1 and with 2 workers (fresh stores);
* a re-export when nothing changed (target <= 5% of the first export);
* a re-export after 1% of the logs grew (a turn appended to each); both re-exports with the
  worker count `export` chooses (for a few logs: in its own process);
* every ready query of `workbench.fleet(STORE)` (target < 1 s each, after the first connection).

Prints one line per figure and a JSON summary line at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sys
import time
from pathlib import Path

from _common import run_fresh

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_frames import _session  # noqa: E402  (one session generator for every benchmark)

TARGET_NOOP = 0.05
TARGET_QUERY_S = 1.0


GROW_EVERY = 100
"""Every 100th session (1%) also gets a longer version (more turns appended) in ROOT.grown/."""


def make_root(root: Path, n: int, seed: int = 23) -> Path:
    """Write (once) a root of `n` sessions of about 2,000 events each (lognormal sizes), and
    for 1% of them (raw logs) the same log with more turns under ``<root>.grown/``."""
    sys.path.insert(0, str(ROOT))
    from workbench.build import LogBuilder
    done = root / ".complete"
    if done.exists():
        return root
    grown = _grown(root)
    rng = random.Random(seed)
    for i in range(n):
        version = 4 if rng.random() < 0.8 else 0
        b = LogBuilder(version=version, session_id=f"fleet-{i:05d}", seed=seed + i,
                       cwd=f"/srv/project-{i % 11}", created_at=1_790_000_000_000 + i * 60_000)
        _session(b, rng, int(rng.lognormvariate(7.45, 0.6)) + 40)
        grow = i % GROW_EVERY == 0
        b.write_to_root(root, compression="none" if grow or rng.random() < 0.5 else "zstd")
        if grow:
            _session(b, random.Random(seed * i + 1), b.seq + 300)
            b.write_to_root(grown, compression="none")
        if (i + 1) % 100 == 0:
            print(f"  built {i + 1}/{n} sessions", file=sys.stderr, flush=True)
    done.write_text(str(n))
    return root


def _grown(root: Path) -> Path:
    return root.with_name(root.name + ".grown")


def grow(root: Path) -> list[tuple[Path, int]]:
    """Append to each growing log the tail its longer version has; returns (path, old size)."""
    out = []
    for longer in sorted(_grown(root).rglob("session*.jsonl")):
        target = root / longer.relative_to(_grown(root))
        old, new = target.read_bytes(), longer.read_bytes()
        if len(new) > len(old) and new.startswith(old):
            with open(target, "ab") as fh:
                fh.write(new[len(old):])
            out.append((target, len(old)))
    return out


def shrink(grown: list[tuple[Path, int]]) -> None:
    """Undo `grow` (the root is reused by the next run)."""
    for path, size in grown:
        os.truncate(path, size)


# -- measurements, each in a fresh process ------------------------------------------------------

def _cpu() -> float:
    """CPU seconds of this process and its finished children (the pool's workers)."""
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_mib() -> tuple[float, float]:
    self_ = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return self_, children


def measure_export(root: str, store: str, workers: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from workbench.frames.store import export_store
    t0 = time.perf_counter()
    s = export_store(root, store, workers=int(workers) if workers != "auto" else None,
                     progress=False)
    wall = time.perf_counter() - t0
    peak, child = _peak_mib()
    return {"wall": wall, "cpu": _cpu(), **s.as_dict(), "peak_rss_mib": peak,
            "peak_child_rss_mib": child}


def measure_queries(store: str) -> dict:
    sys.path.insert(0, str(ROOT))
    import workbench
    from workbench.frames.fleet import READY
    t0 = time.perf_counter()
    fleet = workbench.fleet(store)
    out: dict = {"open": time.perf_counter() - t0, "queries": {}}
    for name in READY:
        times, rows = [], None
        for _ in range(3):
            t = time.perf_counter()
            try:
                rows = len(fleet.ready(name))
            except KeyError as exc:
                rows = f"skipped: {exc}"
                break
            times.append(time.perf_counter() - t)
        out["queries"][name] = {"first": times[0] if times else None,
                                "best": min(times) if times else None, "rows": rows}
    return out


def measure_load(root: str, workers: str) -> dict:
    sys.path.insert(0, str(ROOT))
    import workbench
    t0 = time.perf_counter()
    frames = workbench.load_sessions(root, workers=int(workers) if workers != "auto" else None,
                                     progress=False)
    wall = time.perf_counter() - t0
    peak, child = _peak_mib()
    return {"wall": wall, "cpu": _cpu(), "sessions": len(frames.sessions),
            "events": int(frames.sessions["events"].fillna(0).sum()),
            "unreadable": int((frames.sessions["verdict"] == "unreadable").sum()),
            "peak_rss_mib": peak, "peak_child_rss_mib": child}


def make_tiny(root: Path, n: int) -> Path:
    """`n` tiny sessions (about 50 events each) for the load_sessions measurement."""
    sys.path.insert(0, str(ROOT))
    from workbench.build import LogBuilder
    if (root / ".complete").exists():
        return root
    rng = random.Random(5)
    for i in range(n):
        b = LogBuilder(version=4, session_id=f"tiny-{i:05d}", seed=i, cwd="/srv/tiny")
        _session(b, rng, 50)
        b.write_to_root(root, compression="none")
    (root / ".complete").write_text(str(n))
    return root


def _run(kind: str, *args: str) -> dict:
    return run_fresh(__file__, "--measure", kind, *args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None,
                        help="where the stores go (default /tmp/workbench-fleet-bench-<N>)")
    parser.add_argument("--only", default="export,noop,grow,queries,load",
                        help="comma-separated: export, noop, grow, queries, load")
    parser.add_argument("--workers", default="1,2",
                        help="worker counts of the first exports (the last one's store is "
                             "re-exported and queried)")
    parser.add_argument("--load-workers", default="auto,1",
                        help="worker counts of the load_sessions measurements")
    parser.add_argument("--build-only", action="store_true", help="only write the root")
    parser.add_argument("--measure", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        kind, *rest = args.measure
        fn = {"export": measure_export, "queries": measure_queries, "load": measure_load}[kind]
        print(json.dumps(fn(*rest)))
        return 0
    root = args.root or Path(f"/tmp/workbench-fleet-root-{args.sessions}")
    t0 = time.perf_counter()
    make_root(root, args.sessions)
    print(f"root: {root} ({time.perf_counter() - t0:.0f} s to make or find)")
    if args.build_only:
        return 0
    only = set(args.only.split(","))
    summary: dict = {"root": str(root)}
    out = args.out or Path(f"/tmp/workbench-fleet-bench-{args.sessions}")
    counts = args.workers.split(",")
    two = out / f"store-w{counts[-1]}"
    if "export" in only:
        for workers in counts:
            store = out / f"store-w{workers}"
            shutil.rmtree(store, ignore_errors=True)
            r = _run("export", str(root), str(store), workers)
            summary[f"export_w{workers}"] = r
            print(f"first export, {workers} worker(s): {r['sessions']} sessions, "
                  f"{r['events']:,} events in {r['wall']:.1f} s ({r['cpu']:.1f} s CPU; commit "
                  f"{r['commit_seconds']:.1f} s) "
                  f"({r['events'] / r['wall']:,.0f} events/s); peak RSS {r['peak_rss_mib']:.0f} "
                  f"MiB (parent), {r['peak_child_rss_mib']:.0f} MiB (largest worker)")
        if "export_w1" in summary and "export_w2" in summary:
            speedup = summary["export_w1"]["wall"] / summary["export_w2"]["wall"]
            print(f"  2 workers vs 1: {speedup:.2f}x")
    first = summary.get(f"export_w{counts[-1]}", {}).get("wall")
    if "noop" in only:
        r = _run("export", str(root), str(two), "auto")
        summary["noop"] = r
        ratio = f" = {r['wall'] / first:.1%} of the first (target <= {TARGET_NOOP:.0%})" \
            if first else ""
        print(f"re-export, nothing changed: {r['wall']:.2f} s ({r['cpu']:.2f} s CPU), "
              f"exported {r['exported']}, "
              f"unchanged {r['unchanged']}{ratio}")
    if "grow" in only:
        grown = grow(root)
        try:
            r = _run("export", str(root), str(two), "auto")
        finally:
            shrink(grown)
        summary["grow"] = r
        ratio = f" = {r['wall'] / first:.1%} of the first" if first else ""
        print(f"re-export after {len(grown)} logs ({len(grown) / args.sessions:.0%}) grew: "
              f"{r['wall']:.2f} s ({r['cpu']:.1f} s CPU), exported {r['exported']}{ratio}")
    if "queries" in only:
        r = _run("queries", str(two))
        summary["queries"] = r
        print(f"fleet open: {r['open']:.2f} s")
        for name, q in r["queries"].items():
            if q["first"] is None:
                print(f"  {name}: {q['rows']}")
                continue
            verdict = "ok" if q["best"] < TARGET_QUERY_S else "SLOW"
            print(f"  {name}: first {q['first']:.3f} s, best of 3 {q['best']:.3f} s, "
                  f"{q['rows']} rows (target < {TARGET_QUERY_S:.0f} s: {verdict})")
    if "load" in only:
        tiny = make_tiny(Path(f"/tmp/workbench-tiny-root-{args.sessions}"), args.sessions)
        for workers in args.load_workers.split(","):
            r = _run("load", str(tiny), workers)
            summary[f"load_tiny_{workers}"] = r
            print(f"load_sessions over {r['sessions']} tiny sessions ({r['events']:,} events), "
                  f"workers={workers}: {r['wall']:.1f} s ({r['cpu']:.1f} s CPU), peak RSS "
                  f"{r['peak_rss_mib']:.0f} MiB (parent), {r['peak_child_rss_mib']:.0f} MiB "
                  f"(largest worker), "
                  f"{r['unreadable']} unreadable")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

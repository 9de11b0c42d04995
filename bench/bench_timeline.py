#!/usr/bin/env python3
"""Timeline benchmark (issue 3): `python bench/bench_timeline.py [FILE ...] [--queries N] [--profile]`.

For each log (default: `bench/out/large-v4.jsonl`, the 1.3M-event log `bench/make_large_log.py`
writes; `--all` adds its zstd and v0 twins) and in one run, each measurement in a fresh
subprocess (so peak RSS is that measurement's own):

* ``load``     — `workbench.core.load.load_log(path)`: the baseline;
* ``timeline`` — in a process that loads the log first (its own load time is printed too):
  `workbench.core.timeline.SurfaceTimeline(log.events, version=...)`, then `surface_at` for
  `--queries` random seqs (default 10,000, uniform over the log, fixed `--seed`), each timed
  alone, in random order (the worst case for the timeline's small cache of rebuilt surfaces).

Targets: building the timeline costs at most the load (ratio timeline / load <= 1, CPU time),
`surface_at` p99 < 5 ms. CPU time (`time.process_time`) is what the ratios and verdicts use: the
machine is shared, and wall time (printed next to it) mostly measures the other jobs. A large log
is parsed on demand (`workbench.io.store.EventStore`), so the build includes parsing every event
once more; that is part of what a user waits for and is not subtracted. Peak RSS is ``VmHWM`` of
``/proc/self/status`` (``ru_maxrss`` also counts the parent's high-water mark through fork + exec).
``--profile`` runs the build under cProfile as well. Prints a table and exits 0.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from _common import best_of, peak_rss_mib, run_fresh

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
DEFAULT_FILES = [OUT / "large-v4.jsonl"]
ALL_FILES = [OUT / n for n in ("large-v4.jsonl", "large-v4.jsonl.zstd", "large-v0.jsonl",
                               "large-v0.jsonl.zstd")]
TARGET_RATIO = 1.0
TARGET_P99_MS = 5.0


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    last = len(ordered) - 1
    return {name: ordered[round(q * last)] for name, q in
            (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("max", 1.0))}


def _load(path: Path):
    from workbench.core.load import load_log
    w0, c0 = time.perf_counter(), time.process_time()
    log = load_log(path)
    return log, time.perf_counter() - w0, time.process_time() - c0


def _measure(kind: str, path: Path, queries: int, seed: int) -> dict:
    sys.path.insert(0, str(ROOT))
    log, wall, cpu = _load(path)
    result: dict = {"kind": kind, "events": len(log.events), "load_wall": wall, "load_cpu": cpu,
                    "lazy": bool(getattr(log.events, "lazy", False))}
    if kind == "timeline":
        from workbench.core.timeline import SurfaceTimeline
        w0, c0 = time.perf_counter(), time.process_time()
        timeline = SurfaceTimeline(log.events, version=log.format_version)
        result["build_wall"] = time.perf_counter() - w0
        result["build_cpu"] = time.process_time() - c0
        result["replacements"] = len(timeline.replacements)
        result["errors"] = len(timeline.errors)
        rng = random.Random(seed)
        n = len(log.events)
        seqs = [rng.randrange(n) for _ in range(queries)]
        walls, cpus, sizes = [], [], 0
        perf, cpu_ns = time.perf_counter_ns, time.process_time_ns
        for seq in seqs:
            w, c = perf(), cpu_ns()
            surface = timeline.surface_at(seq)
            c2, w2 = cpu_ns(), perf()
            walls.append((w2 - w) / 1e6)
            cpus.append((c2 - c) / 1e6)
            sizes += len(surface)
        result["query_wall_ms"] = _percentiles(walls)
        result["query_cpu_ms"] = _percentiles(cpus)
        result["query_cpu_total"] = sum(cpus) / 1e3
        result["mean_surface"] = sizes / max(1, len(seqs))
        result["queries"] = len(seqs)
    elif kind != "load":
        raise SystemExit(f"unknown measurement {kind!r}")
    result["maxrss_mib"] = peak_rss_mib()
    return result


def _run(kind: str, path: Path, queries: int, seed: int, repeat: int) -> dict:
    result = best_of(repeat, lambda: run_fresh(__file__, "--measure", kind, str(path), "--queries",
                                               str(queries), "--seed", str(seed), check=False),
                     "load_cpu" if kind == "load" else "build_cpu")
    return {"kind": kind, **result}


def _profile(path: Path, top: int) -> None:
    subprocess.run([sys.executable, __file__, "--measure", "profile", str(path), "--top", str(top)],
                   check=False)


def _profile_here(path: Path, top: int) -> None:
    import cProfile
    import pstats
    sys.path.insert(0, str(ROOT))
    from workbench.core.timeline import SurfaceTimeline
    log, _, _ = _load(path)
    profiler = cProfile.Profile()
    profiler.enable()
    SurfaceTimeline(log.events, version=log.format_version)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def bench_file(path: Path, queries: int, seed: int, repeat: int) -> dict:
    with open(path, "rb") as fh:  # warm the page cache in pieces (keep this parent small)
        while fh.read(1 << 20):
            pass
    print(f"\n== {path.name}: {path.stat().st_size / 2**20:.1f} MiB on disk")
    load = _run("load", path, queries, seed, repeat)
    if "error" in load:
        print(f"  load      ERROR: {load['error']}")
        return {"load": load}
    print(f"  load      {load['load_cpu']:7.2f} s CPU {load['load_wall']:7.2f} s wall  "
          f"peak RSS {load['maxrss_mib']:6.0f} MiB  {load['events']} events"
          f"{' (lazy store)' if load['lazy'] else ''}", flush=True)
    tl = _run("timeline", path, queries, seed, repeat)
    if "error" in tl:
        print(f"  timeline  ERROR: {tl['error']}")
        return {"load": load, "timeline": tl}
    print(f"  timeline  {tl['build_cpu']:7.2f} s CPU {tl['build_wall']:7.2f} s wall  "
          f"peak RSS {tl['maxrss_mib']:6.0f} MiB (incl. the log)  {tl['replacements']} "
          f"replacements, {tl['errors']} fold errors; this process loaded in "
          f"{tl['load_cpu']:.2f} s CPU {tl['load_wall']:.2f} s wall")
    qc, qw = tl["query_cpu_ms"], tl["query_wall_ms"]
    print(f"  surface_at x{tl['queries']} (mean {tl['mean_surface']:.0f} nodes): "
          f"CPU p50 {qc['p50']:.3f} p90 {qc['p90']:.3f} p99 {qc['p99']:.3f} max {qc['max']:.3f} ms; "
          f"wall p50 {qw['p50']:.3f} p90 {qw['p90']:.3f} p99 {qw['p99']:.3f} max {qw['max']:.3f} ms")
    ratio = tl["build_cpu"] / load["load_cpu"]
    wall = tl["build_wall"] / load["load_wall"]
    ok = "PASS" if ratio <= TARGET_RATIO else "FAIL"
    print(f"  timeline / load = {ratio:.2f}x CPU, {wall:.2f}x wall (target <= {TARGET_RATIO}x) {ok}")
    ok = "PASS" if qc["p99"] < TARGET_P99_MS else "FAIL"
    wok = "PASS" if qw["p99"] < TARGET_P99_MS else "FAIL"
    print(f"  surface_at p99 = {qc['p99']:.3f} ms CPU {ok}, {qw['p99']:.3f} ms wall {wok} "
          f"(target < {TARGET_P99_MS} ms)")
    summary = {"file": path.name, "load_cpu": load["load_cpu"], "load_wall": load["load_wall"],
               "build_cpu": tl["build_cpu"], "build_wall": tl["build_wall"], "ratio_cpu": ratio,
               "ratio_wall": wall, "p99_cpu_ms": qc["p99"], "p99_wall_ms": qw["p99"],
               "p50_cpu_ms": qc["p50"], "p50_wall_ms": qw["p50"]}
    print("  " + json.dumps(summary))
    return {"load": load, "timeline": tl}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--all", action="store_true", help="the four bench logs (v4, v0; raw, zstd)")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1, help="keep the fastest of N runs")
    parser.add_argument("--profile", action="store_true", help="cProfile the build as well")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    if args.measure:
        if args.measure[0] == "profile":
            _profile_here(Path(args.measure[1]), args.top)
            return 0
        print(json.dumps(_measure(args.measure[0], Path(args.measure[1]), args.queries, args.seed)))
        return 0
    files = args.files or [p for p in (ALL_FILES if args.all else DEFAULT_FILES) if p.exists()]
    if not files:
        print("no logs: run `python bench/make_large_log.py` first", file=sys.stderr)
        return 0
    for path in files:
        bench_file(path, args.queries, args.seed, args.repeat)
        if args.profile:
            _profile(path, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

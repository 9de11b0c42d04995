#!/usr/bin/env python3
"""Compaction audit benchmark: `python bench/bench_audit.py [FILE ...] [--repeat N] [--profile]`.

For each log (default: the 1.3M-event `bench/out/large-v4.jsonl` that `bench/make_large_log.py`
writes, plus its zstd and v0 twins when present), each measurement in a fresh subprocess:

* ``load``    — `workbench.core.load.load_log(path)` alone;
* ``audit``   — `load_log` and then `workbench.core.compaction.audit.audit_log(log)` (what
  `workbench audit PATH` runs): the figures are the audit's own, the load in the same process is
  printed beside them;
* ``session`` — `workbench.session.Session(log).audit` (the audit behind `compactions_df`, on the
  session's own timeline and prices), likewise without the load. Not in the default set
  (``--only load,audit,session``).

Conventions as in `bench/bench_load.py`: wall time and CPU time (`time.process_time`) are both
printed and ratios use CPU time, which a machine shared with other jobs disturbs far less;
``--repeat N`` keeps the fastest of N runs; the file is read once before measuring so every run
sees it in the page cache; peak RSS is the measuring process's `VmHWM`. Target: audit <= 2x the
load time of the same log. ``--profile`` also runs the audit under cProfile.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _common import best_of, peak_rss_mib, run_fresh

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
DEFAULT_FILES = [OUT / n for n in ("large-v4.jsonl", "large-v4.jsonl.zstd", "large-v0.jsonl",
                                   "large-v0.jsonl.zstd")]
TARGET_AUDIT_VS_LOAD = 2.0


def _measure(kind: str, path: Path) -> dict:
    """Run one measurement in this process and return its figures."""
    sys.path.insert(0, str(ROOT))
    from workbench.core.load import load_log
    result: dict = {"kind": kind}
    c0, t0 = time.process_time(), time.perf_counter()
    log = load_log(path)
    c1, t1 = time.process_time(), time.perf_counter()
    result.update(load_cpu_seconds=c1 - c0, load_seconds=t1 - t0, events=len(log.events))
    if kind == "load":
        result.update(cpu_seconds=c1 - c0, seconds=t1 - t0)
    elif kind in ("audit", "session"):
        if kind == "audit":
            from workbench.core.compaction.audit import audit_log
            report = audit_log(log)
        else:
            from workbench.session import Session
            report = Session(log).audit
        c2, t2 = time.process_time(), time.perf_counter()
        result.update(cpu_seconds=c2 - c1, seconds=t2 - t1, compactions=len(report.compactions),
                      prunes=len(report.prunes), ok=report.ok)
    else:
        raise SystemExit(f"unknown measurement {kind!r}")
    result["maxrss_mib"] = peak_rss_mib()
    return result


def _run(kind: str, path: Path, repeat: int = 1) -> dict:
    result = best_of(repeat, lambda: run_fresh(__file__, "--measure", kind, str(path), check=False),
                     "cpu_seconds")
    return {"kind": kind, **result}


def _profile(path: Path, top: int) -> None:
    code = (
        f"import cProfile, pstats, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from workbench.core.load import load_log\n"
        "from workbench.core.compaction.audit import audit_log\n"
        f"log = load_log({str(path)!r})\n"
        "p = cProfile.Profile(); p.enable(); audit_log(log); p.disable()\n"
        f"s = pstats.Stats(p); s.sort_stats('tottime').print_stats({top})\n"
        f"s.sort_stats('cumulative').print_stats({top})\n")
    subprocess.run([sys.executable, "-c", code], check=False)


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"{r['kind']:8s} ERROR: {r['error']}"
    extra = ""
    if r["kind"] != "load":
        extra = (f"  {r['compactions']} compactions, {r['prunes']} prunes"
                 f"{'' if r['ok'] else ', findings'}; load in the same process "
                 f"{r['load_cpu_seconds']:.2f} s CPU")
    return (f"{r['kind']:8s} {r['cpu_seconds']:7.2f} s CPU {r['seconds']:7.2f} s wall  "
            f"peak RSS {r['maxrss_mib']:6.0f} MiB  {r['events']:>9} events{extra}")


def bench_file(path: Path, kinds: list[str], repeat: int = 1) -> dict:
    with open(path, "rb") as fh:  # warm the page cache in pieces (keep this parent small)
        while fh.read(1 << 20):
            pass
    print(f"\n== {path.name}: {path.stat().st_size / 2**20:.1f} MiB on disk")
    results = {}
    for kind in kinds:
        results[kind] = _run(kind, path, repeat)
        print("  " + _fmt(results[kind]), flush=True)
    load = results.get("load", {})
    for kind in ("audit", "session"):
        r = results.get(kind, {})
        if "cpu_seconds" in r and "cpu_seconds" in load:
            ratio = r["cpu_seconds"] / load["cpu_seconds"]
            wall = r["seconds"] / load["seconds"]
            ok = "PASS" if ratio <= TARGET_AUDIT_VS_LOAD else "FAIL"
            print(f"  {kind} / load = {ratio:.2f}x CPU, {wall:.2f}x wall "
                  f"(target <= {TARGET_AUDIT_VS_LOAD}x) {ok}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--only", default="load,audit",
                        help="comma-separated measurements (load, audit, session)")
    parser.add_argument("--repeat", type=int, default=1, help="keep the fastest of N runs")
    parser.add_argument("--profile", action="store_true", help="cProfile the audit as well")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(_measure(args.measure[0], Path(args.measure[1]))))
        return 0
    files = args.files or [p for p in DEFAULT_FILES if p.exists()]
    if not files:
        print("no logs: run `python bench/make_large_log.py` first", file=sys.stderr)
        return 2
    for path in files:
        bench_file(path, args.only.split(","), args.repeat)
        if args.profile:
            _profile(path, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

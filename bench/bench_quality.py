#!/usr/bin/env python3
"""Compaction-quality benchmark: `python bench/bench_quality.py [FILE ...] [--meters NAMES]`.

For each log (default: the 1.3M-event `bench/out/large-v4.jsonl` of `bench/make_large_log.py`),
each measurement in a fresh subprocess, wall and CPU time (`time.process_time`) and peak RSS:

* ``load``    — `workbench.load(path)` alone (the baseline);
* ``quality`` — after the load (and the session's fold and compaction records, timed apart as
  ``prerequisites``): `anchors_df()`, `citations_df()`, `refetch_df()` and `ledger_df(meters)`
  (default ``dsh``; ``--meters dsh,o200k,deepseek`` adds the real tokenizers' whole-log count).

Target: ``quality`` <= 1x the ``load`` of the same log (CPU time; the machine may be shared).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _common import peak_rss_mib

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
DEFAULT_FILES = [OUT / "large-v4.jsonl"]
TARGET = 1.0


def _clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    c, t = _clock()
    return c - start[0], t - start[1]


def measure(kind: str, path: str, meters: str) -> dict:
    sys.path.insert(0, str(ROOT))
    import workbench
    out: dict = {"kind": kind}
    start = _clock()
    session = workbench.load(path)
    out["load_cpu"], out["load_wall"] = _since(start)
    out["events"] = len(session)
    if kind == "quality":
        start = _clock()
        records = session.compactions.records
        out["prereq_cpu"], out["prereq_wall"] = _since(start)
        start = _clock()
        anchors = session.anchors_df()
        citations = session.citations_df()
        refetch = session.refetch_df()
        ledger = session.ledger_df(meters)
        out["cpu"], out["wall"] = _since(start)
        out.update(compactions=len(records), anchors=len(anchors), citations=len(citations),
                   refetches=len(refetch), ledger_rows=len(ledger),
                   net_tokens_dsh=int(ledger.loc[ledger["meter"] == "dsh", "net_tokens"].sum()),
                   mean_score=float(citations["score"].mean()) if len(citations) else None)
    out["peak_rss_mib"] = peak_rss_mib()
    return out


def _run(kind: str, path: Path, meters: str) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); "
            f"from bench_quality import measure; "
            f"print(json.dumps(measure({kind!r}, {str(path)!r}, {meters!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--meters", default="dsh")
    args = parser.parse_args()
    worst = 0.0
    for path in args.files:
        if not path.is_file():
            print(f"{path}: missing (run bench/make_large_log.py)", file=sys.stderr)
            return 2
        path.read_bytes()  # page cache
        load = _run("load", path, args.meters)
        quality = _run("quality", path, args.meters)
        ratio = quality["cpu"] / load["load_cpu"]
        worst = max(worst, ratio)
        print(f"{path.name}: {load['events']:,} events")
        print(f"  load                 {load['load_cpu']:7.2f} s CPU {load['load_wall']:7.2f} s "
              f"wall  peak {load['peak_rss_mib']:,.0f} MiB")
        print(f"  fold + records       {quality['prereq_cpu']:7.2f} s CPU "
              f"{quality['prereq_wall']:7.2f} s wall (the session's own, shared with "
              "compactions_df)")
        print(f"  quality ({args.meters:<9})  {quality['cpu']:7.2f} s CPU {quality['wall']:7.2f} s wall"
              f"  peak {quality['peak_rss_mib']:,.0f} MiB  -> {ratio:.2f}x load "
              f"(target <= {TARGET:g}x)")
        print(f"  {quality['compactions']:,} compactions, {quality['anchors']:,} anchor rows, "
              f"{quality['refetches']:,} re-fetches, {quality['ledger_rows']:,} ledger rows, "
              f"mean score {quality['mean_score']}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

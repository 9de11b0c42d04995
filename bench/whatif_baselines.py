#!/usr/bin/env python3
"""DSH's own summaries vs the model-free baselines, on real logs (issue 19).

For each log with completed compactions, replay DSH's automatic compaction with the settings the
log was written with (the corpus README's: they are inputs, not in the log) once per summarizer:
``logged`` (DSH's own summaries: the real log, reproduced), ``mask``, ``extractive``, ``truncate``.
Prints one markdown row per log and summarizer: compactions (completed/failed), mean summary
tokens (dsh heuristic), prompt tokens sent over all model calls, peak surface tokens, and the
citation audit's anchor recall (mean over completed compactions, macro over kinds) with kept /
lost / invented totals; then the totals per summarizer. `--json` prints the rows.

    .venv/bin/python bench/whatif_baselines.py ../shared/corpus/dsh-real-v4
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import workbench

COMMON = {"threshold_ratio": 0.75, "headroom_tokens": 1024, "retain_tokens": 2500}
PER_LOG = {"dev-summary-errors": {"compaction_retries": 0},
           "dev-tool-result-prune-then-compaction": {
               "pruner": {"thresholdChars": 6000, "headChars": 1500, "tailChars": 700}}}
SUMMARIZERS = ("logged", "mask", "extractive", "truncate")


def measure(path: Path) -> list[dict]:
    real = workbench.load(path)
    settings = {**COMMON, **PER_LOG.get(path.name.split("__")[0], {})}
    rows = []
    for name in SUMMARIZERS:
        cf = real.whatif.policy(summarizer=name, **settings)
        c = workbench.compare(real, cf)
        side = c.compactions[c.compactions["side"] != "real"]
        done = side[side["status"] == "completed"]
        session = c.sessions.iloc[1]
        rows.append({
            "log": path.name.split("__")[0], "summarizer": name, "clean": cf.verdict == "clean",
            "audit_ok": bool(cf.audit.ok) or not real.audit.ok,   # a killed log's own audit fails
            "completed": len(done),
            "failed": int((side["status"] == "failed").sum()),
            "summary_tokens_mean": float(done["summary_tokens"].astype("float").mean())
            if len(done) else None,
            "prompt_tokens": int(session["prompt_tokens_dsh"]),
            "peak_surface": int(session["peak_surface_tokens"]),
            "recall_mean": float(done["recall"].astype("float").mean())
            if done["recall"].notna().any() else None,
            "kept": int(done["anchors_kept"].fillna(0).sum()),
            "lost": int(done["anchors_lost"].fillna(0).sum()),
            "invented": int(done["anchors_invented"].fillna(0).sum()),
            "net_tokens": int(done["net_tokens"].fillna(0).sum())})
    return rows


def _fmt(value) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) and value <= 1 else (
        f"{value:,.0f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int)
        and not isinstance(value, bool) else str(value))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for path in sorted(args.corpus.glob("*.jsonl*")):
        real = workbench.load(path)
        if any(r.status == "completed" for r in real.compactions.records):
            rows.extend(measure(path))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    cols = ["log", "summarizer", "completed", "failed", "summary_tokens_mean", "prompt_tokens",
            "peak_surface", "recall_mean", "kept", "lost", "invented", "net_tokens"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(_fmt(row[c]) for c in cols) + " |")
    print()
    print("| summarizer | completed | failed | prompt tokens | kept | lost | invented | recall (kept/(kept+lost)) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in SUMMARIZERS:
        mine = [r for r in rows if r["summarizer"] == name]
        kept, lost = sum(r["kept"] for r in mine), sum(r["lost"] for r in mine)
        print(f"| {name} | {sum(r['completed'] for r in mine)} | {sum(r['failed'] for r in mine)} | "
              f"{sum(r['prompt_tokens'] for r in mine):,} | {kept:,} | {lost:,} | "
              f"{sum(r['invented'] for r in mine):,} | "
              f"{kept / (kept + lost):.3f} |" if kept + lost else "| – |")
    bad = [r for r in rows if not (r["clean"] and r["audit_ok"])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

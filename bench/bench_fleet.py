#!/usr/bin/env python3
"""Fleet benchmark: `python bench/bench_fleet.py [--root DIR] [--sessions N] [--store DIR]`.

A synthetic DSH session root of N sessions (default 2,000, about 4M events, written once with
`workbench.build` into ``--root``, default ``/tmp/workbench-fleet-root-<N>``), then, each in a fresh
process:

* first ``workbench export ROOT -o STORE`` with 1 and with 2 workers (fresh stores);
* a re-export when nothing changed (target <= 5% of the first export);
* a re-export after 1% of the logs grew (a turn appended to each);
* every ready query of `workbench.fleet(STORE)` (target < 1 s each, after the first connection).

Prints one line per figure and a JSON summary line at the end.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_frames import _session  # noqa: E402  (one session generator for every benchmark)

TARGET_NOOP = 0.05
TARGET_QUERY_S = 1.0


def make_root(root: Path, n: int, seed: int = 23) -> Path:
    """Write (once) a root of `n` sessions of about 2,000 events each (lognormal sizes)."""
    sys.path.insert(0, str(ROOT))
    from workbench.build import LogBuilder
    done = root / ".complete"
    if done.exists():
        return root
    rng = random.Random(seed)
    for i in range(n):
        version = 4 if rng.random() < 0.8 else 0
        b = LogBuilder(version=version, session_id=f"fleet-{i:05d}", seed=seed + i,
                       cwd=f"/srv/project-{i % 11}", created_at=1_790_000_000_000 + i * 60_000)
        _session(b, rng, int(rng.lognormvariate(7.45, 0.6)) + 40)
        b.write_to_root(root, compression="zstd" if rng.random() < 0.5 else "none")
        if (i + 1) % 100 == 0:
            print(f"  built {i + 1}/{n} sessions", file=sys.stderr, flush=True)
    done.write_text(str(n))
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--build-only", action="store_true", help="only write the root")
    args = parser.parse_args(argv)
    root = args.root or Path(f"/tmp/workbench-fleet-root-{args.sessions}")
    t0 = time.perf_counter()
    make_root(root, args.sessions)
    print(f"root: {root} ({time.perf_counter() - t0:.0f} s to make or find)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

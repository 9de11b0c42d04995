#!/usr/bin/env python3
"""Compaction audit benchmark: `python bench/bench_audit.py [FILE ...] [--repeat N] [--profile]`.

For each log (default: `/work/benchdata/large-v4.jsonl` when present, else the 1.3M-event
`bench/out/large-v4.jsonl` that `bench/make_large_log.py` writes, plus its zstd and v0 twins), each
measurement in a fresh process:

* ``info``    — the CLI `workbench info --json PATH` (the baseline: one load);
* ``audit``   — the CLI `workbench audit --json PATH` (load, compaction audit, lost-fact probes,
  citations, re-fetches and the ledger: everything rides on the load's one pass);
* ``session`` — `workbench.load(path)` then `Session.compactions_df()` (the notebook's audit, on
  the facts of the session's own pass), timed apart from the load. Not in the default set
  (``--only info,audit,session``).

CPU time of the child (user + system, `os.wait4`) is what the ratio uses: a machine shared with
other jobs disturbs it far less than wall time, which is printed beside it. ``--repeat N``
keeps the fastest of N runs; the file is read once before measuring so every run sees it in the
page cache; peak RSS is the child's. Target: CLI audit <= 1.3x CLI info on the same log.
``--profile`` also runs the CLI audit under cProfile.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import best_of, peak_rss_mib

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
_DATA = Path("/work/benchdata")
DEFAULT_FILES = [(_DATA if (_DATA / n).exists() else OUT) / n
                 for n in ("large-v4.jsonl", "large-v4.jsonl.zstd", "large-v0.jsonl",
                           "large-v0.jsonl.zstd")]
TARGET_AUDIT_VS_INFO = 1.3


def _measure_session(path: Path) -> dict:
    """`workbench.load` then `compactions_df()`, in this process (the ``session`` kind)."""
    sys.path.insert(0, str(ROOT))
    import workbench
    c0 = time.process_time()
    session = workbench.load(path)
    c1, t1 = time.process_time(), time.perf_counter()
    frame = session.compactions_df()
    c2, t2 = time.process_time(), time.perf_counter()
    return {"kind": "session", "load_cpu_seconds": c1 - c0, "cpu_seconds": c2 - c1,
            "seconds": t2 - t1, "events": len(session), "compactions": len(frame),
            "maxrss_mib": peak_rss_mib()}


def _child(kind: str, path: Path) -> dict:
    """Run one measurement in a fresh process; its CPU time and peak RSS from `os.wait4`."""
    if kind == "session":
        argv = [sys.executable, __file__, "--measure", kind, str(path)]
    elif kind in ("info", "audit"):
        argv = [sys.executable, "-m", "workbench.cli.main", kind, "--json", str(path)]
    else:
        raise SystemExit(f"unknown measurement {kind!r}")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if code not in (0, 1):
        tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"kind": kind, "error": f"exit {code}: {tail}"}
    if kind == "session":
        return json.loads(stdout.strip().splitlines()[-1])
    return {"kind": kind, "seconds": wall, "exit": code,
            "cpu_seconds": usage.ru_utime + usage.ru_stime, "maxrss_mib": usage.ru_maxrss / 1024}


def _run(kind: str, path: Path, repeat: int = 1) -> dict:
    return best_of(repeat, lambda: _child(kind, path), "cpu_seconds")


def _profile(path: Path, top: int) -> None:
    code = (
        f"import cProfile, pstats, sys, io, contextlib; sys.path.insert(0, {str(ROOT)!r})\n"
        "from workbench.cli.main import main\n"
        "p = cProfile.Profile()\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    p.enable(); main(['audit', '--json', {str(path)!r}]); p.disable()\n"
        f"s = pstats.Stats(p); s.sort_stats('tottime').print_stats({top})\n"
        f"s.sort_stats('cumulative').print_stats({top})\n")
    subprocess.run([sys.executable, "-c", code], check=False)


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"{r['kind']:8s} ERROR: {r['error']}"
    extra = ""
    if r["kind"] == "session":
        extra = (f"  {r['events']} events, {r['compactions']} compactions; load in the same "
                 f"process {r['load_cpu_seconds']:.2f} s CPU")
    return (f"{r['kind']:8s} {r['cpu_seconds']:7.2f} s CPU {r['seconds']:7.2f} s wall  "
            f"peak RSS {r['maxrss_mib']:6.0f} MiB{extra}")


def bench_file(path: Path, kinds: list[str], repeat: int = 1) -> dict:
    with open(path, "rb") as fh:  # warm the page cache in pieces (keep this parent small)
        while fh.read(1 << 20):
            pass
    print(f"\n== {path.name}: {path.stat().st_size / 2**20:.1f} MiB on disk")
    results = {}
    for kind in kinds:
        results[kind] = _run(kind, path, repeat)
        print("  " + _fmt(results[kind]), flush=True)
    info, audit = results.get("info", {}), results.get("audit", {})
    if "cpu_seconds" in info and "cpu_seconds" in audit:
        ratio = audit["cpu_seconds"] / info["cpu_seconds"]
        wall = audit["seconds"] / info["seconds"]
        ok = "PASS" if ratio <= TARGET_AUDIT_VS_INFO else "FAIL"
        print(f"  audit / info = {ratio:.2f}x CPU, {wall:.2f}x wall "
              f"(target <= {TARGET_AUDIT_VS_INFO}x) {ok}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--only", default="info,audit",
                        help="comma-separated measurements (info, audit, session)")
    parser.add_argument("--repeat", type=int, default=1, help="keep the fastest of N runs")
    parser.add_argument("--profile", action="store_true", help="cProfile the audit as well")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(_measure_session(Path(args.measure[1]))))
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

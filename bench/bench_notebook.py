#!/usr/bin/env python3
"""Notebook-path benchmark: `python bench/bench_notebook.py [FILE ...] [--only KIND ...]`.

For each log (default: the 1.3M-event v4 log `bench/make_large_log.py` writes, raw and zstd,
from `/work/benchdata/` when present, else `bench/out/`) and in one run, each measurement in a
fresh subprocess (so its peak RSS and its caches are its own):

* ``floor``  — read the file 4 MiB at a time (decompressed when zstd), split lines,
  `orjson.loads` each line and drop the value at once (the parse floor). Reading the whole file
  first cost the same user time but 0.8-5.5 s more of the kernel's, zeroing the 1.4 GiB of fresh
  pages the file and its lines take, and that varied between runs (3.6-8.1 s in all for one
  file within minutes); read in chunks, the floor is the parse;
* ``keep``   — the same loop keeping every value in a list (GC on, the interpreter default);
* ``notebook`` — what a notebook user does, cumulative in one process: `workbench.load(path)`
  → `Workbench(session)` constructed with its first render done (every widget's state
  serialised as the kernel does when the cell displays it) → `events_df()` →
  `compactions_df()` → `surface_df(mid)` → `timeline_df()`;
* ``info`` and ``audit`` — the CLI subcommands with `--json`, run in-process through
  `workbench.cli.main.main` (stdout to /dev/null).

Every step reports wall and CPU time (`time.process_time`: the machine is shared, CPU time is
what the process itself spent), and each process its peak RSS (``VmHWM``). With ``--repeat N``
every measurement runs N times, round by round (each round runs every kind once, so a slow
minute of the machine falls on all of them), and each reports its run of least final CPU time
(its peak RSS the highest of the N) with the spread of the N: one run's parse floor moved
between 4.0 and 6.3 s CPU in the same ten minutes on this machine, and a ratio against one
such run says little. Targets: the first
widget in <= 3x the floor; every frame and the widget in <= 4x the floor; peak RSS <= 1 GiB for
the whole notebook path; CLI `audit` <= 1.3x `info` on the same log. Ratios use CPU time.
Imports run from bytecode, as in an installed environment: `run.sh` installs the dependencies
with their bytecode compiled, and the bench compiles the measured package's source before the
first measurement (with ``PYTHONDONTWRITEBYTECODE`` set, as on the CI machine, every fresh
process would otherwise compile pandas, plotly and workbench again: ~1.5 s of CPU in `load`).
Prints a markdown table per log and one JSON line per measurement (`--json-out` saves them).
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import sys
import time
from pathlib import Path

from _common import peak_rss_mib, run_fresh

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("/work/benchdata")
OUT = ROOT / "bench" / "out"
KINDS = ("floor", "keep", "notebook", "info", "audit")
TARGET_WIDGET, TARGET_ALL, TARGET_RSS_MIB, TARGET_AUDIT = 3.0, 4.0, 1024, 1.3


def default_files() -> list[Path]:
    base = DATA if (DATA / "large-v4.jsonl").exists() else OUT
    return [base / "large-v4.jsonl", base / "large-v4.jsonl.zstd"]


CHUNK = 1 << 22


def _lines(path: Path):
    """Every line of the file, read (and decompressed) 4 MiB at a time, as the loader reads."""
    import zstandard
    with open(path, "rb") as fh:
        head = fh.read(4)
        fh.seek(0)
        reader = (zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True)
                  if head == b"\x28\xb5\x2f\xfd" else fh)
        rest = b""
        while chunk := reader.read(CHUNK):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield from lines
        yield rest


class _Clock:
    def __init__(self) -> None:
        self.steps: list[dict] = []
        self.w0, self.c0 = time.perf_counter(), time.process_time()

    def step(self, name: str) -> None:
        w, c = time.perf_counter(), time.process_time()
        self.steps.append({"step": name, "wall": w - self.w0, "cpu": c - self.c0})


def _first_render(wb) -> int:
    """Serialise the state of every widget in the tree, as displaying the cell does."""
    from ipywidgets.widgets.widget import _remove_buffers
    seen, todo, size = set(), [wb], 0
    while todo:
        w = todo.pop()
        if id(w) in seen:
            continue
        seen.add(id(w))
        state, _paths, buffers = _remove_buffers(w.get_state())
        size += len(json.dumps(state, default=str)) + sum(len(b) for b in buffers)
        for value in w.get_state().values():
            items = value if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if isinstance(item, str) and item.startswith("IPY_MODEL_"):
                    from ipywidgets.widgets.widget import _instances
                    child = _instances.get(item[len("IPY_MODEL_"):])
                    if child is not None:
                        todo.append(child)
    return size


def measure(kind: str, path: Path) -> dict:
    sys.path.insert(0, os.environ.get("BENCH_SRC") or str(ROOT))
    clock = _Clock()
    result: dict = {"kind": kind, "file": path.name}
    if kind in ("floor", "keep"):
        import orjson
        lines = _lines(path)
        loads = orjson.loads
        if kind == "floor":
            for line in lines:
                if line:
                    loads(line)
        else:
            kept = [loads(line) for line in lines if line]
            result["values"] = len(kept)
        clock.step(kind)
    elif kind == "notebook":
        import workbench
        session = workbench.load(path)
        clock.step("load")
        from workbench.views import Workbench
        wb = Workbench(session)
        result["render_bytes"] = _first_render(wb)
        clock.step("Workbench(session) + first render")
        session.events_df()
        clock.step("events_df()")
        session.compactions_df()
        clock.step("compactions_df()")
        session.surface_df(len(session) // 2)
        clock.step("surface_df(mid)")
        session.timeline_df()
        clock.step("timeline_df()")
        result["events"] = len(session)
    else:
        from workbench.cli.main import main
        saved = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            result["rc"] = main([kind, "--json", str(path)])
            sys.stdout.flush()
        finally:
            os.dup2(saved, 1)
        clock.step(f"workbench {kind}")
    result["steps"] = clock.steps
    result["peak_rss_mib"] = peak_rss_mib()
    return result


def fresh(kind: str, path: Path, src: str | None = None) -> dict:
    env = dict(os.environ, BENCH_SRC=src) if src else None
    return run_fresh(__file__, "--child", kind, str(path), env=env)


def least(runs: list[dict]) -> dict:
    """The run of least final CPU time, with the highest peak RSS and every run's final CPU
    (``runs_cpu``)."""
    best = dict(min(runs, key=lambda r: r["steps"][-1]["cpu"]))
    best["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    best["runs_cpu"] = [r["steps"][-1]["cpu"] for r in runs]
    return best


def table(path: Path, results: dict[str, dict]) -> tuple[str, bool]:
    floor = results.get("floor")
    floor_cpu = floor["steps"][-1]["cpu"] if floor else None
    rows = [f"### {path.name}", "", "| measurement (cumulative within a process) | wall s | CPU s |"
            " CPU / floor | peak RSS MiB |", "|---|---:|---:|---:|---:|"]
    ok = True
    for kind, res in results.items():
        for i, s in enumerate(res["steps"]):
            ratio = f"{s['cpu'] / floor_cpu:.2f}x" if floor_cpu else ""
            rss = f"{res['peak_rss_mib']:.0f}" if i == len(res["steps"]) - 1 else ""
            rows.append(f"| {kind}: {s['step']} | {s['wall']:.2f} | {s['cpu']:.2f} | {ratio} | {rss} |")
    verdicts = []
    nb = results.get("notebook")
    if nb and floor_cpu:
        widget = nb["steps"][1]["cpu"] / floor_cpu
        total = nb["steps"][-1]["cpu"] / floor_cpu
        verdicts += [(f"first widget {widget:.2f}x floor (target <= {TARGET_WIDGET}x)", widget <= TARGET_WIDGET),
                     (f"all frames + widget {total:.2f}x floor (target <= {TARGET_ALL}x)", total <= TARGET_ALL),
                     (f"notebook peak RSS {nb['peak_rss_mib']:.0f} MiB (target <= {TARGET_RSS_MIB})",
                      nb["peak_rss_mib"] <= TARGET_RSS_MIB)]
    if "info" in results and "audit" in results:
        r = results["audit"]["steps"][-1]["cpu"] / results["info"]["steps"][-1]["cpu"]
        verdicts.append((f"CLI audit {r:.2f}x info (target <= {TARGET_AUDIT}x)", r <= TARGET_AUDIT))
    rows.append("")
    for kind, res in results.items():
        spread = res.get("runs_cpu", [])
        if len(spread) > 1:
            rows.append(f"- {kind}: least CPU of {len(spread)} fresh runs "
                        f"(final CPU {min(spread):.2f}-{max(spread):.2f} s)")
    for text, good in verdicts:
        rows.append(f"- {'PASS' if good else 'MISS'}: {text}")
        ok = ok and good
    return "\n".join(rows), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--only", action="append", choices=KINDS)
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--src", help="run the `workbench` package in this directory (a pinned "
                        "commit's tree) instead of this checkout's")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="fresh runs of each measurement, round by round; each reports its "
                        "run of least CPU (module doc)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child[0], Path(args.child[1]))))
        return 0
    files = args.files or default_files()
    compileall.compile_dir(Path(args.src or ROOT) / "workbench", quiet=1)
    kinds = args.only or list(KINDS)
    everything, ok = [], True
    for path in files:
        if not path.exists():
            print(f"{path} is missing: run `python bench/make_large_log.py` first", file=sys.stderr)
            return 2
        runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
        for _round in range(max(1, args.repeat)):
            for kind in kinds:
                runs[kind].append(fresh(kind, path, args.src))
                print(json.dumps(runs[kind][-1]), flush=True)
        results = {kind: least(found) for kind, found in runs.items()}
        everything += results.values()
        text, good = table(path, results)
        ok = ok and good
        print(text, flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(everything, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

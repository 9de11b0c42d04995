#!/usr/bin/env python3
"""Step benchmark: kernel time per step of the `Workbench`.
`python bench/bench_step.py [FILE] [--steps N] [--seed S]`

Target (issue 7): moving the step on a 1.3M-event log costs under 100 ms of kernel time. The
default FILE is the v4 log `bench/make_large_log.py` writes (`bench/out/large-v4.jsonl`,
1.3M events; run that script first).

What is measured, in one process, after building the workbench once (build time is reported
separately, split into the session's own frames and the views):

* ``kernel``: the time of ``wb.state.step = s``, i.e. every observer the step triggers (log and
  surface panes, both plot cursors, the inspector with the rebuilt request at model calls) plus
  serialising the state that changed to JSON, which is the part of sending a widget message
  that runs in the kernel (without a front end, ipywidgets sends nothing);
* four kinds of move, `--steps` each: one event forward from a random seq, a random jump, a
  jump to the next compaction, and a jump to a model-call attempt (the inspector's worst case);
* CPU time (`time.process_time`) next to wall time: the machine is shared, CPU time is what the
  kernel spent.

Exit status 1 when the 95th percentile of any kind reaches the target.
"""
from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT = ROOT / "bench" / "out" / "large-v4.jsonl"
TARGET_MS = 100.0


def _html_widgets(wb) -> list:
    found = []
    for view in wb.views:
        for name in ("pane", "request"):
            widget = getattr(view, name, None)
            if widget is not None and hasattr(widget, "html"):
                found.append(widget)
    return found


def _send(wb, before: dict) -> int:
    """Serialise what the step changed (pane HTML, cursor shapes) as the kernel would."""
    size = 0
    for widget in _html_widgets(wb):
        if before.get(id(widget)) is not widget.html:
            size += len(json.dumps({"html": widget.html}))
    for view in wb.views:
        figure = getattr(view, "figure", None)
        if figure is not None:
            size += len(json.dumps(figure.layout.shapes[0].to_plotly_json()))
    return size


class _GcClock:
    """Wall time spent in the cyclic garbage collector (full collections of a huge heap are
    the usual cause of a rare slow step)."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self._t = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.pauses.append((time.perf_counter() - self._t) * 1e3)


def _measure(wb, targets: list[int]) -> tuple[list[float], list[float], int]:
    walls, cpus, largest = [], [], 0
    for seq in targets:
        before = {id(w): w.html for w in _html_widgets(wb)}
        w0, c0 = time.perf_counter(), time.process_time()
        wb.state.step = seq
        largest = max(largest, _send(wb, before))
        walls.append((time.perf_counter() - w0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
        errors = [type(v).__name__ for v in wb.views if v.last_error is not None]
        if errors:
            msg = f"views failed at seq {seq}: {errors}: " + "; ".join(
                str(v.last_error) for v in wb.views if v.last_error is not None)
            raise SystemExit(msg)
    return walls, cpus, largest


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT))
    parser.add_argument("--steps", type=int, default=200, help="moves of each kind (default 200)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    path = Path(args.file)
    if not path.exists():
        print(f"{path} is missing: run `python bench/make_large_log.py` first", file=sys.stderr)
        return 2

    import workbench
    from workbench.views import Workbench
    from workbench.views.data import view_data

    t0 = time.perf_counter()
    session = workbench.load(path)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = view_data(session)          # the session's frames and core results the views read
    data.timeline_frame, data.compactions, data.attempts, data.navigator  # noqa: B018
    t_data = time.perf_counter() - t0
    t0 = time.perf_counter()
    wb = Workbench(session)
    t_views = time.perf_counter() - t0
    print(f"{path.name}: {len(session):,} events, {len(data.brackets)} compaction attempts, "
          f"{len(session.attempts):,} model calls")
    print(f"build: load {t_load:.1f} s, frames+core {t_data:.1f} s, views {t_views:.2f} s")

    rng = random.Random(args.seed)
    last = data.last_seq
    nav = data.navigator
    starts = [rng.randrange(0, max(last, 1)) for _ in range(args.steps)]
    kinds: dict[str, list[int]] = {
        "forward": [],
        "jump": [rng.randrange(0, last + 1) for _ in range(args.steps)],
        "compaction": [],
        "request": [int(s) for s in rng.sample(list(nav.requests), min(args.steps,
                                                                        len(nav.requests)))],
    }
    for s in starts:
        kinds["forward"].extend((s, s + 1))
        target = nav.next_compaction(s)
        if target is not None:
            kinds["compaction"].extend((s, target))

    wb.state.step = last // 2          # warm caches the first render fills
    clock = _GcClock()
    status = 0
    print(f"{'move':<12}{'n':>6}{'median':>10}{'p95':>10}{'max':>10}{'cpu p95':>10}"
          f"{'max KB':>9}   (kernel ms per step; KB sent)")
    for kind, targets in kinds.items():
        if not targets:
            continue
        walls, cpus, largest = _measure(wb, targets)
        if kind in ("forward", "compaction"):   # only the second of each pair is the move
            walls, cpus = walls[1::2], cpus[1::2]
        p95 = _pct(walls, 0.95)
        print(f"{kind:<12}{len(walls):>6}{_pct(walls, 0.5):>10.1f}{p95:>10.1f}"
              f"{max(walls):>10.1f}{_pct(cpus, 0.95):>10.1f}{largest / 1024:>9.1f}")
        if _pct(cpus, 0.95) >= TARGET_MS:
            status = 1
    pauses = clock.pauses
    print(f"gc during the moves: {len(pauses)} collections, longest "
          f"{max(pauses, default=0):.1f} ms, frozen objects {gc.get_freeze_count():,}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"target: p95 CPU < {TARGET_MS:.0f} ms per step -> {'met' if status == 0 else 'MISSED'}"
          f"; peak RSS {rss:,.0f} MiB")
    return status


if __name__ == "__main__":
    sys.exit(main())

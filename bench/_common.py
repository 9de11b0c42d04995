"""What every benchmark script shares: one measurement per fresh process, and its peak RSS.

* `run_fresh(script, *args, env=None)`: run ``python SCRIPT ARGS`` in a new interpreter (so a
  measurement's caches, imports and high-water mark are its own) and return the JSON object it
  printed last. A failed run returns ``{"error": <last stderr line>}`` (`check=False`) or ends
  the benchmark with its stderr (`check=True`).
* `best_of(repeat, run, key)`: the run with the lowest `key` (CPU seconds) of `repeat` fresh
  runs, its ``peak``-named figures the highest seen (the machine is shared: CPU time is what a
  process itself spent, and the least of several is the least disturbed).
* `peak_rss_mib()`: the measuring process's own peak resident set, ``VmHWM`` of
  ``/proc/self/status`` (`ru_maxrss` also counts the parent's high-water mark through fork +
  exec), in MiB.

Bench scripts run as ``python bench/NAME.py``, so this module is imported as ``_common``.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def peak_rss_mib() -> float:
    """Peak resident set of this process image (Linux `VmHWM`), in MiB."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_fresh(script: str | Path, *args: str, env: dict | None = None, check: bool = True) -> dict:
    """The last JSON line ``python SCRIPT ARGS`` printed, run in a fresh process (module doc)."""
    proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          check=False, env=env)
    if proc.returncode != 0:
        if check:
            raise SystemExit(f"{Path(script).name} {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
        return {"error": (proc.stderr.strip().splitlines() or ["(no output)"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def best_of(repeat: int, run: Callable[[], dict], key: str) -> dict:
    """The result of `run()` with the lowest `key` over `repeat` runs (module doc); an error
    result is returned at once."""
    best: dict | None = None
    peaks: dict[str, float] = {}
    for _ in range(max(1, repeat)):
        result = run()
        if "error" in result:
            return result
        for name, value in result.items():
            if "rss" in name and isinstance(value, (int, float)):
                peaks[name] = max(peaks.get(name, 0.0), value)
        if best is None or result.get(key, 0) < best.get(key, 0):
            best = result
    assert best is not None
    best.update(peaks)
    return best

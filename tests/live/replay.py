"""A DSH-like writer for the follow tests: replays a real log's records (lines of a raw log,
frames of a zstd log) into a new file in bursts, sometimes stopping halfway through a record
until the follower has seen that torn moment."""
from __future__ import annotations

import random
import time
from pathlib import Path

from workbench.io import zstd


def records(path: Path) -> list[bytes]:
    """The log's durable units, byte for byte: lines (raw) or frames (zstd)."""
    data = path.read_bytes()
    if data[:4] == zstd.MAGIC_BYTES:
        scan = zstd.scan_frames(data)
        assert scan.torn_start is None
        return [data[s:e] for s, e in zip(scan.starts, scan.ends)]
    return data.splitlines(keepends=True)


def replay(source: str, target: str, seed: int, torn, seen, done, pace: float = 0.002) -> None:
    """Write `source`'s records to `target` in bursts of 1-40 records (fewer for a short log); about one burst in four
    ends halfway through the next record: then set `torn`, wait for `seen` (the follower polled
    the torn moment), and write the rest. Sets `done` at the end."""
    rng = random.Random(seed)
    units = records(Path(source))
    i = 0
    with open(target, "ab", buffering=0) as out:
        while i < len(units):
            burst = rng.randint(1, max(2, min(40, len(units) // 15)))
            out.write(b"".join(units[i:i + burst]))
            i += burst
            if i < len(units) and rng.random() < 0.25:
                unit = units[i]
                cut = rng.randint(1, len(unit) - 1) if len(unit) > 1 else 0
                out.write(unit[:cut])
                torn.set()
                if not seen.wait(60):
                    raise RuntimeError("the follower never saw the torn record")
                seen.clear()
                out.write(unit[cut:])
                i += 1
            time.sleep(rng.random() * pace)
    done.set()

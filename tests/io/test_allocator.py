"""After a log is read, a freed buffer of a MiB or more goes back to the OS (`io.allocator`)."""
from __future__ import annotations

import os
import platform

import numpy as np
import pytest

from workbench.io.allocator import THRESHOLD, map_large_buffers


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or not os.path.exists("/proc/self/statm"),
                    reason="glibc's mallopt and /proc/self/statm (Linux) are what this checks")
def test_a_freed_large_array_is_returned_after_a_larger_one_was_freed() -> None:
    """glibc alone would serve the second array from its heap (its mmap threshold rose to the
    first one's size when that was freed) and keep it resident after `del`."""
    assert map_large_buffers() and map_large_buffers()
    first = np.ones(16 << 20, dtype=np.uint8)
    del first
    before = _rss_bytes()
    second = np.ones(8 << 20, dtype=np.uint8)   # touched: resident
    assert _rss_bytes() - before >= 6 << 20
    del second
    assert _rss_bytes() - before < 2 << 20
    assert THRESHOLD <= 8 << 20


def test_reading_a_log_file_sets_it(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.io import read
    calls: list[int] = []
    monkeypatch.setattr(read, "map_large_buffers", lambda: calls.append(1) or True)
    path = tmp_path / "session.v4.jsonl"
    path.write_text("")
    read.read_log(path)
    assert calls == [1]

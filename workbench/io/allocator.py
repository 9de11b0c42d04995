"""Where large buffers live in a process that loads a log. Layer: io (stdlib).

Loading a large log and building its frames allocate many arrays of one value per event (10 MiB
each on a 1.3M-event log), a good part of them temporary, and grow the log index's columns by
reallocation. glibc's malloc raises its mmap threshold to the size of every mapped chunk freed
(up to 32 MiB), so from the first freed array on, such buffers are carved from the heap, whose
free space goes back to the OS only at its top: on the notebook path of the 1.3M-event log
~45 MiB of freed heap stayed resident and counted in the peak.

`map_large_buffers` fixes the threshold at `THRESHOLD` (which also stops glibc adjusting it): a
buffer of a MiB or more is then its own mapping, returned to the OS when it is freed, and a
growing one is remapped instead of copied. Python objects are not affected (pymalloc maps its
own arenas). The setting is process-wide, made once, and only under glibc; anywhere else
nothing changes.
"""
from __future__ import annotations

import ctypes
import platform

M_MMAP_THRESHOLD = -3
"""glibc's `mallopt` parameter number for the mmap threshold."""
THRESHOLD = 1 << 20
"""Buffers of this many bytes or more are mapped on their own."""

_set: list[bool] = []


def map_large_buffers() -> bool:
    """Fix glibc's mmap threshold at `THRESHOLD` (once per process); whether it is set."""
    if not _set:
        _set.append(_mallopt(M_MMAP_THRESHOLD, THRESHOLD))
    return _set[0]


def _mallopt(param: int, value: int) -> bool:
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(param, value))


__all__ = ["THRESHOLD", "map_large_buffers"]

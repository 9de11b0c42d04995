"""Writing a result file beside the logs it was read from. Layer: io (stdlib only).

Invariants: an input log is never written: a target is the input when it is the same file
(`same_file`: any path or link to it), not only the same path; a file is replaced only through a
temporary file of a unique name in its folder (`write_replacing`), so no existing file (an input
among them) is ever opened for writing by that name, and a reader never sees half a file; a target
that exists and is not a regular file (a FIFO, a device) is not replaced (`not_replaceable`).
"""
from __future__ import annotations

import os
import stat
import tempfile


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether `a` and `b` name one existing file (hard or symbolic links included)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def not_replaceable(target: str | os.PathLike) -> str | None:
    """Why `write_replacing` may not put a file at `target` (None: it may)."""
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{os.fspath(target)}: {exc.strerror or exc}"
    if not stat.S_ISREG(mode):
        return f"{os.fspath(target)}: exists and is not a regular file"
    return None


def write_replacing(target: str | os.PathLike, data: bytes) -> None:
    """Put `data` at `target`: written to a new temporary file in its folder, then renamed."""
    path = os.fspath(target)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".",
                               prefix=f".{os.path.basename(path)}.", suffix=".tmp-workbench")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


__all__ = ["not_replaceable", "same_file", "write_replacing"]

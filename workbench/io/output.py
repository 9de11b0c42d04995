"""What a path on disk is, and writing a result file beside the logs. Layer: io (stdlib only).

`special_file` and `entry_is_file` say what a path is without opening it (a FIFO is never
opened: a read of one waits for a writer). `path_text` is a path as text any UTF-8 consumer
holds (Arrow, DuckDB, HTML): a name's undecodable bytes as ``\\xNN``, as the CLI prints them.

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


def path_text(path: str | os.PathLike) -> str:
    """`path` as valid Unicode: each byte of a non-UTF-8 name (a surrogate escape of
    `os.fsdecode`) as ``\\xNN``, any other lone surrogate as ``\\udXXX``; a UTF-8 path as it
    is. Display only: a file is opened again by the path itself (a manifest keeps it), and the
    text is not injective."""
    text = os.fsdecode(path)
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether `a` and `b` name one existing file (hard or symbolic links included)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False

def special_file(path: str | os.PathLike) -> str | None:
    """What `path` is when it exists but is not a regular file (``"a FIFO"``, ...), else None."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:   # a symbolic link loop, a name too long, ...: never opened either
        return f"unreadable ({exc.strerror or exc})"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")

def entry_is_file(entry: os.DirEntry) -> bool:
    """`entry.is_file()`, False where the entry cannot be read (a symbolic link loop)."""
    try:
        return entry.is_file()
    except OSError:
        return False


def not_replaceable(target: str | os.PathLike) -> str | None:
    """Why `write_replacing` may not put a file at `target` (None: it may)."""
    kind = special_file(target)
    return None if kind is None else f"{os.fspath(target)}: {kind}, not a regular file"


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


__all__ = ["entry_is_file", "not_replaceable", "same_file", "special_file", "write_replacing"]

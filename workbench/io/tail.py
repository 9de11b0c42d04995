"""The scan after the first issue: bounded time, named limits. Layer: io (stdlib only).

Once a log has its issue (the first problem line, v0 spec §1.7, v4 spec §1.7), later lines matter
only if they hold a ``turn/end`` (it makes the issue fatal) or, in v4, a row type the admission
screen applies to (a refused row refuses the log even in the dropped tail). A codec names those
types in ``after_issue_types``. A line that holds none of those names literally and no ``\\``
escape cannot spell one (every name holds a ``/``), so:

* a chunk holding neither ``/`` nor ``\\`` is counted (its newlines) at `bytes.find` speed;
* otherwise only the lines around a literal name or a backslash are parsed (the candidates);
* at most `AFTER_ISSUE_LINES` candidates (`AFTER_ISSUE_BYTES` of them) are parsed and at most
  `AFTER_ISSUE_INPUT` bytes of plaintext read after the issue; then reading stops with
  ``limit`` set (rule ``scan_limit_after_issue``, naming the limit). The verdict is then corrupt:
  a later ``turn/end`` can no longer be ruled out, and the reference would read on.

So a zstd bomb or millions of garbage lines after a bad line cost decompression and `find`
speed, never a parse per line. `TailScan` is a mixin of `workbench.io.scan.LineScanner`, whose
slots hold its state (``_markers``, ``_after_lines``, ``_after_bytes``, ``_after_input``, ``limit``).
"""
from __future__ import annotations

from typing import Any

AFTER_ISSUE_LINES = 50_000
"""Candidate lines (see the module docstring) parsed after the issue before reading stops."""

AFTER_ISSUE_BYTES = 256 * 1024 * 1024
"""Bytes of candidate lines parsed after the issue before reading stops."""

AFTER_ISSUE_INPUT = 256 * 1024 * 1024
"""Bytes (plaintext: a zstd log's decompressed bytes) read after the issue before reading stops."""


class TailScan:
    """The after-the-issue methods of `LineScanner` (see the module docstring)."""

    __slots__ = ()
    _markers: tuple[bytes, ...]
    _after_lines: int
    _after_bytes: int
    _after_input: int
    limit: Any
    line: int
    stopped: bool
    _unparsable: Any
    _consume: Any

    def _charge(self, size: int, at: int) -> bool:
        """Charge a chunk read after the issue to `AFTER_ISSUE_INPUT`; False once it is spent."""
        self._after_input += size
        if self._after_input > AFTER_ISSUE_INPUT:
            self._stop(f"{AFTER_ISSUE_INPUT} bytes were read after the first issue "
                       "(limit AFTER_ISSUE_INPUT)", at)
            return False
        return True

    def _after_issue(self, data: bytes, pos: int, chunk_start: int, counted: bool) -> int:
        """The complete lines of `data` from `pos` once the issue exists: only lines holding one
        of the markers are parsed; the others are counted. Returns the end of the last line.
        `counted`: the chunk's bytes were already charged to `AFTER_ISSUE_INPUT`."""
        end = data.rfind(b"\n") + 1
        over = False
        if not counted:
            budget = AFTER_ISSUE_INPUT - self._after_input
            if end - pos > budget:
                end, over = max(data.rfind(b"\n", pos, pos + budget) + 1, pos), True
            self._after_input += end - pos
        if end <= pos:
            if over:
                self._stop(f"{AFTER_ISSUE_INPUT} bytes were read after the first issue "
                           "(limit AFTER_ISSUE_INPUT)", chunk_start + pos)
            return pos
        find, count = data.find, data.count
        if find(b"/", pos, end) == -1 and find(b"\\", pos, end) == -1:  # no type name, no escape
            self.line += count(b"\n", pos, end)
            nexts: dict[bytes, int] = {}
        else:
            nexts = {}
            for marker in self._markers:
                at = find(marker, pos, end)
                if at != -1:
                    nexts[marker] = at
        cursor = pos if nexts else end
        while nexts and not self.stopped:
            hit = min(nexts.values())
            start = data.rfind(b"\n", cursor, hit) + 1 or cursor
            stop = find(b"\n", hit, end)
            self.line += count(b"\n", cursor, start)
            self._line(data, start, stop, chunk_start)
            cursor = stop + 1
            for marker, at in list(nexts.items()):
                if at < cursor:
                    at = find(marker, cursor, end)
                    if at == -1:
                        del nexts[marker]
                    else:
                        nexts[marker] = at
        if not self.stopped:
            self.line += count(b"\n", cursor, end)
            if over:
                self._stop(f"{AFTER_ISSUE_INPUT} bytes were read after the first issue "
                           "(limit AFTER_ISSUE_INPUT)", chunk_start + end)
        return end

    def _line(self, data: bytes, start: int, stop: int, chunk_start: int) -> None:
        """Line `data[start:stop]` (no newline): consumed, or counted when over `MAX_LINE`."""
        from workbench.io import scan
        if stop - start > scan.MAX_LINE:
            self._unparsable(chunk_start + start)
        else:
            self._consume(data[start:stop], chunk_start + start, chunk_start + stop)

    def _candidate(self, line_bytes: bytes, start: int) -> bool:
        """After the issue: whether line `self.line + 1` must be parsed (it may hold a type that
        matters); counts the budget and sets `limit` when it is spent."""
        if (b"/" not in line_bytes and b"\\" not in line_bytes) or not any(
                marker in line_bytes for marker in self._markers):
            return False
        self._after_lines += 1
        self._after_bytes += len(line_bytes)
        if self._after_lines > AFTER_ISSUE_LINES:
            self._stop(f"{AFTER_ISSUE_LINES} lines that could hold a turn/end were parsed after "
                       "the first issue (limit AFTER_ISSUE_LINES)", start)
        elif self._after_bytes > AFTER_ISSUE_BYTES:
            self._stop(f"{AFTER_ISSUE_BYTES} bytes of lines that could hold a turn/end were parsed "
                       "after the first issue (limit AFTER_ISSUE_BYTES)", start)
        return self.limit is None

    def _stop(self, why: str, start: int) -> None:
        """Reading ends at a documented limit past the issue (rule ``scan_limit_after_issue``)."""
        from workbench.io.scan import ScanIssue
        line = self.line + 1
        self.limit = ScanIssue(
            "scan_limit_after_issue", f"stopped reading at line {line}: {why}; a later turn/end "
            "can no longer be ruled out, so the log counts as corrupt", line=line, byte_offset=start)


__all__ = ["AFTER_ISSUE_BYTES", "AFTER_ISSUE_INPUT", "AFTER_ISSUE_LINES", "TailScan"]

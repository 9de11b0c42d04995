"""What reading a log produces: the `Log` (header + seq-indexed events) and its `Defect`s.
Layer: io (stdlib only).

Verdicts follow the reference loader exactly:

* ``clean``       the reference loads it as it is;
* ``repairable``  the reference loads it after cutting a torn tail or a tolerated bad suffix
                  (``truncate_to`` says where a mutating load would cut; we never cut);
* ``corrupt``     the reference rejects it (damage inside committed history, a broken v4
                  relationship, a fold violation, ...);
* ``refused``     a format version this build does not read (distinct from corruption).

Whatever the verdict, `events` holds everything readable: the valid prefix in seq order, and
every problem is a `Defect` naming the file, the line/frame, the seq and the rule.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["clean", "repairable", "corrupt", "refused"]
Severity = Literal["refused", "corrupt", "tolerated", "warning"]

_VERDICT_RANK = {"clean": 0, "repairable": 1, "corrupt": 2, "refused": 3}


@dataclass(frozen=True, slots=True)
class Defect:
    """One problem found while reading or validating a log.

    `rule` is a stable kind (the conformance kinds where one exists, e.g. ``seq_gap_committed``,
    ``relationships``, ``fold:replace_start_not_found``); `message` is the reference's text.
    `severity` says what the reference would do about it: refuse, reject as corrupt, tolerate (cut
    a torn tail), or nothing (``warning``: something only a workbench flags).
    """

    rule: str
    message: str
    file: str
    severity: Severity = "corrupt"
    line: int | None = None      # record line as the reference's messages number it: the header
    #                              is line 0, the first event record line 1 (file line - 1)
    frame: int | None = None     # 1-based zstd frame
    seq: int | None = None
    byte_offset: int | None = None

    def where(self) -> str:
        parts = [self.file]
        if self.frame is not None:
            parts.append(f"frame {self.frame}")
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.seq is not None:
            parts.append(f"seq {self.seq}")
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"{self.where()}: {self.rule}: {self.message}"


@dataclass(slots=True)
class Log:
    """A session log as read: header, meta and the decoded events (seq == index).

    `events` is a read-only sequence of plain dicts with JavaScript number semantics (see
    `workbench.io.jsjson`); never mutate them. A loaded log's store decodes each payload on
    demand (`workbench.io.store`), so index `events` rather than copying it, and compare events
    by seq, not identity.
    """

    path: str
    encoding: Literal["jsonl", "zstd"]
    format_version: int | None
    header: dict[str, Any] | None
    meta: dict[str, Any] | None
    events: Sequence[dict[str, Any]]
    byte_length: int
    committed_bytes: int = 0
    torn_tail: bool = False
    truncate_to: int | None = None
    tolerated_issue: str | None = None
    recovered_tail_seqs: list[int] = field(default_factory=list)
    inherited_event_count: int = 0
    implicit_seqs: bool = False   # a test-fixture snapshot: seq/time assigned by position
    defects: list[Defect] = field(default_factory=list)
    closers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        worst = "clean"
        for d in self.defects:
            v = {"refused": "refused", "corrupt": "corrupt", "tolerated": "repairable"}.get(d.severity)
            if v and _VERDICT_RANK[v] > _VERDICT_RANK[worst]:
                worst = v
        if worst == "clean" and (self.torn_tail or self.truncate_to is not None):
            worst = "repairable"
        return worst  # type: ignore[return-value]

    @property
    def session_id(self) -> str | None:
        if self.meta and isinstance(self.meta.get("id"), str):
            return self.meta["id"]
        if self.header and isinstance(self.header.get("id"), str):
            return self.header["id"]
        return None

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return (f"Log({self.path!r}, v{self.format_version}, {len(self.events)} events, "
                f"{self.verdict}, {len(self.defects)} defects)")

"""Pass 1 of reconstructing compaction attempts: which events belong to which attempt, and
which replacement pairs with which prune. Layer: core.

`BracketScan` reads the log's events in seq order, once, and can go on from where it stopped
(a followed log grows): attempts are keyed by `compactionId` while open (v0/v4 §5.1-5.2), a
`session/end-seed` closes every open attempt for good, a prune pairs with the next tool-result
replace. The records built from these groups (what the surface says) are
`workbench.core.compaction.brackets`'s.
"""
from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from typing import Any, Literal

from workbench.core.compaction.invariant import (
    is_checkpoint_replacement as _is_v0_checkpoint,
)
from workbench.io.generations import producer_sources, seq_replace_keys
from workbench.io.jsvalues import is_scalar
from workbench.io.payloads import type_reader

TriggerKind = Literal["pressure", "overflow", "manual"]


def _data(event: Mapping[str, Any]) -> dict:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def replace_range(event: Mapping[str, Any], *, version: int) -> tuple[Any, Any] | None:
    """The (start, end) endpoints of a replace `surfaceOp` (v0 `start`/`end`, v4 `startSeq`/
    `endSeq`), or None for an append or no op."""
    op = event.get("surfaceOp")
    if not isinstance(op, dict):
        return None
    keys = ("startSeq", "endSeq") if seq_replace_keys(version) else ("start", "end")
    return op.get(keys[0]), op.get(keys[1])


def is_checkpoint(event: Mapping[str, Any], *, version: int) -> bool:
    """A compaction checkpoint: a replacing `user/message` whose source marks it as one."""
    if not producer_sources(version):  # v0, v3: {kind: "plugin", plugin: "compact"}
        return _is_v0_checkpoint(event)
    if event.get("type") != "user/message" or not isinstance(event.get("surfaceOp"), dict):
        return False
    source = _data(event).get("source")
    return isinstance(source, dict) and source.get("kind") == "compact-checkpoint"


def _is_replace(event: Mapping[str, Any]) -> bool:
    return isinstance(event.get("surfaceOp"), dict)


@dataclass(frozen=True, slots=True)
class Trigger:
    """What opened an attempt: `turn` is the owner (None for manual); a manual attempt names its
    `command/run` (`command_seq`, `command_id`, `command` such as ``/compact``) when logged."""

    kind: TriggerKind
    turn: Any = None
    command_id: Any = None
    command_seq: int | None = None
    command: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "turn": self.turn, "command_id": self.command_id,
                "command_seq": self.command_seq, "command": self.command}


@dataclass(slots=True)
class _Open:
    start_seq: int
    compaction_id: Any
    trigger: Trigger
    summary_seq: int | None = None
    replacement_seq: int | None = None
    end_seq: int | None = None
    end_seed_seq: int | None = None


_BOUNDARY = frozenset({"turn/start", "turn/end", "step/end"})


class BracketScan:
    """Pass 1, resumable: group compaction events into attempts and pair prunes with their
    replacements, fed seqs in ascending order (`run`, any number of times: a followed log goes
    on from the last seq). An attempt is final once it closed (`end_seq` or `end_seed_seq`); a
    prune once it is paired, or once a later prune was seen."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.attempts: list[_Open] = []
        self.open_: list[_Open] = []
        self.prunes: list[tuple[int, int | None]] = []
        self.pending_prune: int | None = None
        self.commands: dict[Any, tuple[int, str]] = {}
        self.open_step = False
        self.scanned = 0   # seqs below this were scanned

    def copy(self) -> BracketScan:
        """A copy that can go on without changing this one (open attempts are copied)."""
        other = copy.copy(self)
        fresh = {id(a): replace(a) for a in self.open_}
        other.attempts = [fresh.get(id(a), a) for a in self.attempts]
        other.open_ = [fresh[id(a)] for a in self.open_]
        other.prunes, other.commands = list(self.prunes), dict(self.commands)
        return other

    def _find(self, cid: Any) -> _Open | None:
        for attempt in reversed(self.open_):
            if attempt.compaction_id == cid and type(attempt.compaction_id) is type(cid):
                return attempt
        return None

    def run(self, events: Sequence[Mapping[str, Any]], replacements: Set[int],
            seqs: Iterable[int]) -> None:
        """Scan `seqs` (ascending, after the ones scanned before). Only compaction events,
        `command/run` and the `replacements` candidates (every seq the fold replaced or
        rejected) are parsed; boundaries are read by type (`workbench.io.payloads.type_reader`)."""
        version, attempts, open_, prunes, commands = (
            self.version, self.attempts, self.open_, self.prunes, self.commands)
        find = self._find
        open_step, pending_prune = self.open_step, self.pending_prune
        type_of = type_reader(events)
        seq = self.scanned - 1
        for seq in seqs:
            kind = type_of(seq)
            if kind in _BOUNDARY:
                open_step = False
            elif kind == "step/start":
                open_step = True
            elif kind == "session/end-seed":
                for attempt in open_:
                    attempt.end_seed_seq = seq
                open_.clear()
            elif kind == "command/run":
                data = _data(events[seq])
                args = data.get("args")
                text = f"/{data.get('name')}" + (f" {args}" if isinstance(args, str) and args else "")
                command_id = data.get("commandId")
                if is_scalar(command_id):
                    commands[command_id] = (seq, text)
            elif kind == "compaction/start":
                data = _data(events[seq])
                owner = data.get("turn")
                if owner is None:
                    cid = data.get("sourceCommandId")
                    seq_text = commands.get(cid) if isinstance(cid, str) else None
                    trigger = Trigger("manual", None, cid, *(seq_text or (None, None)))
                else:
                    trigger = Trigger("overflow" if open_step else "pressure", owner)
                attempt = _Open(seq, data.get("compactionId"), trigger)
                attempts.append(attempt)
                open_.append(attempt)
            elif kind == "compaction/summary":
                attempt = find(_data(events[seq]).get("compactionId"))
                if attempt is not None and attempt.summary_seq is None:
                    attempt.summary_seq = seq
            elif kind == "compaction/end":
                attempt = find(_data(events[seq]).get("compactionId"))
                if attempt is not None:
                    attempt.end_seq = seq
                    open_.remove(attempt)
            elif kind == "compaction/prune":
                prunes.append((seq, None))
                pending_prune = len(prunes) - 1
            elif seq in replacements and kind in ("tool/result", "user/message"):
                event = events[seq]
                if kind == "tool/result" and _is_replace(event):
                    if pending_prune is not None:
                        prunes[pending_prune] = (prunes[pending_prune][0], seq)
                        pending_prune = None
                elif is_checkpoint(event, version=version):
                    source = _data(event).get("source")
                    attempt = find(source.get("compactionId") if isinstance(source, dict) else None)
                    if attempt is not None and attempt.replacement_seq is None:
                        attempt.replacement_seq = seq
        self.open_step, self.pending_prune = open_step, pending_prune
        self.scanned = max(self.scanned, seq + 1)


def scan_brackets(events: Sequence[Mapping[str, Any]], version: int, replacements: Set[int],
          marked: Sequence[int] | None = None) -> BracketScan:
    """Pass 1 over the log: `marked` lists the seqs worth looking at when known
    (`eventfacts.EventFacts.marked`: every event this scan acts on), else every seq is."""
    scan = BracketScan(version)
    scan.run(events, replacements, range(len(events)) if marked is None else marked)
    scan.scanned = len(events)
    return scan


__all__ = ["BracketScan", "Trigger", "TriggerKind", "is_checkpoint", "replace_range", "scan_brackets"]

"""The counterfactual builder: real events carried onto a new surface, new compactions emitted.
Layer: core (no pandas).

`Replay` appends to one new seq-indexed event list. `carry(real)` renumbers a real event
(`remap`), keeps the surface-dependent facts of a kept compaction true on the new surface (its
span is DSH's head-anchored range up to the logged end, or to the checkpoint that now hides that
end; `shadowedSeqs`, `shadowedTokenCount` and the checkpoint's `sourceEventSeqs` are recomputed),
and shifts provider usage by how much bigger or smaller the new surface is than the real one
before each model call (`remap.shift_usage`), so `measure()` on the counterfactual sees the
prompt the model would have been sent. New brackets and prunes are written by
`workbench.core.whatif.brackets` (mixed in).

Invariant: the event list is always a valid v4 log prefix with the same header; a `TokenMeter`
(`workbench.core.tokens.measure`) and the surface fold follow every appended event, so
`measure()`, the nodes and their heuristic prices are those of the counterfactual.
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.compaction.brackets import framed_summary_tokens
from workbench.core.compaction.pairing import ToolPairing
from workbench.core.compaction.selection import first_compactable_index
from workbench.core.tokens.heuristic import derive_message
from workbench.core.tokens.measure import Measurement, TokenMeter
from workbench.core.whatif.brackets import BracketScript
from workbench.core.whatif.remap import SeqMap, WhatIfError, remap_event, shift_usage
from workbench.io.jsvalues import is_scalar

_SEQ_TYPES = ("assistant/message", "assistant/attempt")
REMOVE = object()
"""A `carry(patch=...)` value that deletes the key."""


def _ordered_like(event: dict[str, Any], like: Mapping[str, Any]) -> dict[str, Any]:
    """`event` with its keys (and its data's keys) in `like`'s order, new keys last: DSH's
    writer order, so an unchanged event writes back byte for byte."""
    def order(new: dict[str, Any], old: Any) -> dict[str, Any]:
        keys = [k for k in (old if isinstance(old, dict) else ()) if k in new]
        return {k: new[k] for k in keys + [k for k in new if k not in keys]}
    out = order(event, like)
    if isinstance(out.get("data"), dict):
        out["data"] = order(out["data"], like.get("data"))
    return out


class Replay(BracketScript):
    """One counterfactual under construction (module doc). `label` names the summarizer."""

    def __init__(self, real: Sequence[Mapping[str, Any]], header: Mapping[str, Any], *,
                 label: str, version: int = 4) -> None:
        if version < 4:
            raise WhatIfError("what-if needs a format v4 log (this log is read with the v0 rules)")
        self.real = real
        self.header = header
        self.label = label
        self.version = version
        self.out: list[Mapping[str, Any]] = []
        self.seqs = SeqMap()
        self.meter = TokenMeter(version=version)
        self.real_meter = TokenMeter(version=version)
        self.real_done = 0
        self._made = 0
        self.fired: list[dict[str, Any]] = []   # one record per emitted bracket or prune
        self.notices: list[str] = []   # what the counterfactual cannot know, in words
        self.origin: list[int] = []
        self.hidden_by: dict[int, int] = {}    # counterfactual node -> the replacement that hid it
        self.stand_in: dict[int, int] = {}     # dropped real prune copy -> its original
        self.failing: dict[Any, str] = {}      # kept attempt id -> the shrink-check error it gets
        self.failed_summaries: set[int] = set()   # per counterfactual seq: the real seq it follows
        self.origin_cursor = -1

    # -- the surface

    def nodes(self) -> list[tuple[int, int]]:
        """`(seq, heuristic price)` of the counterfactual surface, in model order."""
        return self.meter.surface.nodes()

    def measure(self) -> Measurement:
        return self.meter.measure()

    def _time(self) -> Any:
        return self.out[-1].get("time", 0) if self.out else self.header.get("createdAt", 0)

    def new_id(self) -> str:
        """A fresh, reproducible id (uuid5 of the session id, label and a counter)."""
        self._made += 1
        name = f"{self.header.get('id')}/{self.label}/{self._made}"
        return str(uuid.uuid5(uuid.NAMESPACE_URL, name))

    # -- appending

    def emit(self, event: Mapping[str, Any]) -> int:
        """Append `event` (its seq is set here) and fold it; returns its seq."""
        seq = len(self.out)
        event = {**event, "seq": seq} if event.get("seq") != seq else event
        op = event.get("surfaceOp")
        if isinstance(op, dict):
            nodes = [s for s, _ in self.nodes()]
            if op.get("startSeq") in nodes and op.get("endSeq") in nodes:
                for hidden in nodes[nodes.index(op["startSeq"]):nodes.index(op["endSeq"]) + 1]:
                    self.hidden_by[hidden] = seq
        self.meter.fold(event)  # type: ignore[arg-type]
        self.out.append(event)
        self.origin.append(self.origin_cursor)
        return seq

    def _fold_real(self, upto: int) -> None:
        while self.real_done < upto:
            self.real_meter.fold(self.real[self.real_done])  # type: ignore[arg-type]
            self.real_done += 1

    def carry(self, event: Mapping[str, Any], *, patch: Mapping[str, Any] | None = None) -> int:
        """Append one real event onto the counterfactual surface (module doc); returns its new
        seq, or -1 for a logged prune pair whose tool result the counterfactual already hid.
        `patch` sets data keys after renumbering (counterfactual seqs; `REMOVE` deletes)."""
        old = event["seq"]
        kind = event.get("type")
        data0 = event.get("data") if isinstance(event.get("data"), dict) else {}
        source = data0.get("source")
        cid = (data0.get("compactionId") if str(kind).startswith("compaction/") else
               source.get("compactionId") if kind == "user/message" and isinstance(source, dict)
               else None)
        cid = cid if is_scalar(cid) else None
        if cid is not None and cid in self.failing and kind != "compaction/end":
            self.skip(event)           # the summary and checkpoint of a now-failing attempt
            return -1
        if cid is not None and cid in self.failing:
            patch = {**(patch or {}), "error": self.failing.pop(cid)}
        if kind == "command/done" and data0.get("sourceEventSeq") in self.failed_summaries:
            patch = {**(patch or {}), "sourceEventSeq": REMOVE, "kind": "error",
                     "text": "Compaction could not produce a useful summary. The attempt is "
                             "recorded in the session log."}
        if kind == "compaction/summary" and self._fails_shrink(event):
            self.failed_summaries.add(old)
            self.skip(event)
            return -1
        if old == self._drop_next or (kind == "compaction/prune" and not self._prunable(event)):
            if kind == "compaction/prune":
                self._drop_next = old + 1
                self.stand_in[old + 1] = event["data"]["shadowedRange"]["start"]
            else:
                self._drop_next = None
            self.skip(event)
            return -1
        self._fold_real(old)
        new = len(self.out)
        real = event
        respan = kind in ("compaction/summary", "compaction/prune")
        replaces = isinstance(event.get("surfaceOp"), dict) and self._pending is not None
        strip = set(patch or ())
        if respan:
            strip |= {"shadowedRange", "shadowedSeqs"}
        if strip:
            event = {**event, "data": {k: v for k, v in (event.get("data") or {}).items()
                                       if k not in strip}}
        if replaces:   # recomputed below from the pending span
            event = {k: v for k, v in event.items() if k not in ("surfaceOp", "sourceEventSeqs")}
        out = remap_event(event, new, self.seqs)
        if patch:
            data = dict(out["data"])
            data.update({k: v for k, v in patch.items() if v is not REMOVE})
            out = {**out, "data": data}
        if respan:
            out = self._respan(real, out)
        elif replaces:
            out = self._replacement(real, out)
        elif kind in _SEQ_TYPES:
            delta = self.meter.surface.surface_tokens - self.real_meter.surface.surface_tokens
            out = shift_usage(out, delta)
        if strip or replaces:
            out = _ordered_like(out, real)
        self._fold_real(old + 1)
        self.seqs.keep(old, new)
        self.origin_cursor = old
        return self.emit(out)

    def skip(self, event: Mapping[str, Any]) -> None:
        """Drop one real event (a bracket the counterfactual decides anew)."""
        self._fold_real(event["seq"] + 1)
        self.seqs.drop(event["seq"])
        self.origin_cursor = event["seq"]

    _pending: dict[str, Any] | None = None
    _drop_next: int | None = None

    def _prunable(self, event: Mapping[str, Any]) -> bool:
        """A logged prune still applies when its tool result is still on the surface (a
        counterfactual compaction may have hidden it: then the prune pair is dropped)."""
        target = ((event.get("data") or {}).get("shadowedRange") or {}).get("start")
        return self.seqs.has(target) and self.seqs.get(target) in {s for s, _ in self.nodes()}

    def _fails_shrink(self, event: Mapping[str, Any]) -> bool:
        """A kept summary no longer smaller than what it would hide now: DSH's shrink check
        fails it (v4 §5.4); the attempt becomes start → end{error}."""
        data = event["data"]
        span = data.get("shadowedRange") or {}
        seqs = self.span(span.get("start"), span.get("end"), head=True)
        prices = dict(self.nodes())
        shadowed = sum(prices[s] for s in seqs)
        framed = framed_summary_tokens(data.get("summary"), version=self.version)
        if framed < shadowed:
            return False
        cid = data.get("compactionId")
        if is_scalar(cid):   # another id matches no event (`carry`)
            self.failing[cid] = (f"summary is not smaller than the shadowed content ({framed} "
                                 f"estimated framed tokens >= {shadowed})")
        return True

    def resolve(self, real_seq: Any) -> int | None:
        """The current node that stands for real seq `real_seq`: itself, or the replacement
        that hid it (through dropped prune copies and nested checkpoints); None if none."""
        while type(real_seq) is int and not self.seqs.has(real_seq):
            if real_seq not in self.stand_in:
                return None
            real_seq = self.stand_in[real_seq]
        if type(real_seq) is not int:
            return None
        seq = self.seqs.get(real_seq)
        on = {s for s, _ in self.nodes()}
        while seq not in on and seq in self.hidden_by:
            seq = self.hidden_by[seq]
        return seq if seq in on else None

    def _respan(self, real: Mapping[str, Any], event: dict[str, Any]) -> dict[str, Any]:
        """A kept summary/prune over what the counterfactual surface holds (module doc)."""
        span = real["data"].get("shadowedRange") or {}
        seqs = self.span(span.get("start"), span.get("end"), head=real["type"] == "compaction/summary")
        price = sum(p for s, p in self.nodes() if s in set(seqs))
        data = {**event["data"], "shadowedRange": {"start": seqs[0], "end": seqs[-1]},
                "shadowedSeqs": seqs, "shadowedTokenCount": price}
        self._pending = {"seqs": seqs, "kind": real["type"]}
        return {**event, "data": data}

    def _replacement(self, real: Mapping[str, Any], event: dict[str, Any]) -> dict[str, Any]:
        pending, self._pending = self._pending, None
        assert pending is not None
        seqs = pending["seqs"]
        op = {**real["surfaceOp"], "startSeq": seqs[0], "endSeq": seqs[-1]}
        head = []
        if pending["kind"] == "compaction/summary":
            head = [self.seqs.get(s) for s in (real.get("sourceEventSeqs") or [])[:2]]
        return {**event, "sourceEventSeqs": head + seqs, "surfaceOp": op}

    def span(self, start: Any, end: Any, *, head: bool) -> list[int]:
        """The surface span a kept compaction shadows now (real endpoints): from its logged
        start (a summary: from the first compactable node, DSH ranges being head-anchored) to
        the node that stands for its logged end (`resolve`)."""
        nodes = [s for s, _ in self.nodes()]
        where = {s: i for i, s in enumerate(nodes)}
        if head:
            first = first_compactable_index(nodes, self.out, version=self.version)
        else:
            first = where.get(self.resolve(start), -1)
        last = where.get(self.resolve(end), -1)
        if first < 0 or last < first:
            raise WhatIfError(f"a logged compaction over {start}..{end} has nothing left to shadow "
                              "on the counterfactual surface")
        return nodes[first:last + 1]

    # -- new compactions

    def legal_span(self, first: int, last: int) -> list[int]:
        """The surface span first..last (counterfactual seqs), checked like DSH: both are current
        nodes in order (rule `surface span`), the span leaves the protected system head alone
        (rule `system head`) and cuts no tool call from its result (rule `tool-call pairing`)."""
        nodes = [s for s, _ in self.nodes()]
        where = {s: i for i, s in enumerate(nodes)}
        if first not in where or last not in where:
            missing = first if first not in where else last
            raise WhatIfError(f"surface span: seq {missing} is not on the surface here")
        i, j = where[first], where[last]
        if i > j:
            raise WhatIfError(f"surface span: {first} comes after {last} on the surface")
        if i < first_compactable_index(nodes, self.out, version=self.version):
            raise WhatIfError("system head: node 0 holds the system prompt; a compaction range "
                              "starts after it (v4 §5.3)")
        pairing = ToolPairing.of(nodes, self.out)
        if not (pairing.balanced_before(first) and pairing.balanced_after(last)):
            raise WhatIfError("tool-call pairing: the span would separate a tool call from its "
                              "result (DSH cuts only where no call is waiting, v4 §5.3)")
        return nodes[i:j + 1]

    def messages(self, seqs: Sequence[int]) -> list[dict[str, Any]]:
        """The projected model messages of `seqs` (what DSH sends the summarizer, v4 §5.6)."""
        out = []
        for s in seqs:
            message = derive_message(self.out[s], version=self.version)
            if message is not None:
                out.append(message)
        return out


__all__ = ["REMOVE", "Replay"]

"""The surface over time: every seq's model-visible surface from ONE pass over the log.
Layer: core (pure; imports io only).

The pass (`TimelineBuilder`, fed one event at a time) is the log's one fold: the loader feeds it
while it scans, and its restore stage reads the outcome (`workbench.core.restore`). It runs
`plan_event`/`apply_plan` (the same pair as `fold_surface`, v0/v4 spec §4) once per event, except
for the two cases whose plan needs no look at the surface (a log-only event, a plain append whose
sources, if any, surely pass: see `log_only_types`, `plain_append_types`,
`workbench.core.surface_rules.plain_sources`), and records only what changes:

* appended nodes, in one ascending array (between two replacements the surface only grows by
  appends, so the surface at a seq is "surface after the last replacement" + a prefix of that
  epoch's appends, found by bisection); a timeline shares the builder's arrays, which only grow,
  and reads its own prefix of them (a followed log's builder goes on after `finish`);
* per replacement its positions and shadowed nodes; the surface after a replacement is a
  checkpoint every few replacements (or when replaying the splices since the last one would cost
  too much), else rebuilt from the nearest one; checkpoints hold at most `_CHECKPOINT_SHARE`
  nodes per event fed (memory in proportion to the log, whatever its replacements times its
  surface: such a log's rebuilds replay more splices instead);
* per event a status byte and, for nodes that left the surface, the seq that hid them (arrays);
* v4 `image/offload` projections per target node, in seq order.

A log that breaks a fold rule does not stop the pass: the `FoldError` is recorded in `errors`
(the first one is what the reference reports), that event's surface change is skipped, and folding
continues so a debugger still sees a surface.

Invariants (property tests): `surface_at(s)` (and `surface_seqs(s)`, the same as an int64 array)
equals a full refold of the prefix ending at `s` (for a log without errors); the lineages of a
surface's nodes, concatenated in order, are the appended nodes up to `s`, each once;
`diff(a, b).apply(surface_at(a)) == surface_at(b)`.
"""
from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from workbench.core.projection import derive_message
from workbench.core.surface import (Replacement, SurfaceState, apply_plan, log_only_types,
                                    plain_append_types, plan_event)
from workbench.core.surface_diff import SurfaceDiff, diff_surfaces
from workbench.core.surface_rules import _MISSING, plain_sources
from workbench.errors import FoldError, SeqOutOfRange

LOG_ONLY, APPENDED, REPLACEMENT, REJECTED = 0, 1, 2, 3
Status = Literal["current", "shadowed", "log-only", "rejected"]

_CHECKPOINT_EVERY = 256         # replacements between two stored surfaces, at most
_REPLAY_BUDGET = 1 << 20        # node moves allowed when rebuilding a surface from a checkpoint
_CHECKPOINT_SHARE = 4           # checkpointed nodes per event fed, at most (beyond the first)
_CACHE = 8                      # rebuilt post-replacement surfaces kept


class Shadowing(NamedTuple):
    """Why a node left the surface: `hidden_at` is the replacing event's seq and `replacement`
    the node that took the place of the shadowed range (in DSH the replacing event itself)."""

    hidden_at: int
    replacement: int


class TimelineBuilder:
    """The timeline's one pass: `feed_batch` consecutive events (or `feed` one) in seq order
    (from seq `base_seq` on), then `finish`. `events` gives random access to the earlier events
    the fold reads (shadowed nodes, offload targets); the loader feeds each batch of events as
    it scans them, so a log is folded for its timeline without a second parse. `feed_batch` is a
    closure with the per-event rules in its loop (no call per event)."""

    def __init__(self, events: Sequence[Mapping[str, Any]], *, version: int,
                 base_seq: int = 0) -> None:
        self.version = version
        self.base_seq = base_seq
        self.events = events
        self.shadow = array("q")
        self.status = bytearray()
        self.appended = array("q")
        self.epoch_start = [0]
        self.rep_seqs: list[int] = []
        self.rep_pos: list[tuple[int, int]] = []
        self.replacements: list[Replacement] = []
        self.projections: dict[int, list[tuple[int, dict]]] = {}
        self.project_seqs: list[int] = []
        self.checkpoints: dict[int, array] = {0: array("q")}
        self.checkpoint_epochs = [0]
        self.errors: list[FoldError] = []
        self.rejected: dict[int, FoldError] = {}   # seq -> the fold error of that event
        self.state = SurfaceState()
        self.feed_batch = self._feeder()
        feed_batch = self.feed_batch
        self.feed = lambda event: feed_batch((event,))

    @property
    def count(self) -> int:
        """Events fed so far."""
        return len(self.status)

    def _feeder(self) -> Any:
        version, base_seq, events = self.version, self.base_seq, self.events
        state, shadow, status = self.state, self.shadow, self.status
        appended, epoch_start = self.appended, self.epoch_start
        rep_seqs, rep_pos, replacements = self.rep_seqs, self.rep_pos, self.replacements
        projections, project_seqs = self.projections, self.project_seqs
        checkpoints, checkpoint_epochs, errors = self.checkpoints, self.checkpoint_epochs, self.errors
        rejected = self.rejected
        quiet, plain = log_only_types(version), plain_append_types(version)
        append_node, nodes = state.order.append, state.nodes
        unset = array("q", (-1,))
        work = held = 0

        def feed_batch(batch: Sequence[Mapping[str, Any]]) -> None:
            nonlocal work, held
            start = len(status)
            status.extend(bytes(len(batch)))        # LOG_ONLY each, until an event says otherwise
            shadow.extend(unset * len(batch))       # not shadowed
            for index, event in enumerate(batch, start):
                seq = base_seq + index
                etype = event.get("type")
                if type(etype) is str and type(event.get("seq")) is int and event["seq"] == seq:
                    # what plan_event returns for these, without asking it: nothing, or an append
                    if etype in quiet and "surfaceOp" not in event and "sourceEventSeqs" not in event:
                        continue
                    op = event.get("surfaceOp", None)
                    if etype in plain and type(op) is str and op == "append" and (
                            (sources := event.get("sourceEventSeqs", _MISSING)) is _MISSING
                            or plain_sources(sources, etype, seq, version)):
                        appended.append(seq)
                        status[index] = APPENDED
                        append_node(seq)
                        continue
                try:
                    plan = plan_event(state, event, seq, version=version, events=events,
                                      base_seq=base_seq)
                except FoldError as err:
                    errors.append(err)
                    rejected[seq] = err
                    status[index] = REJECTED
                    continue
                if plan is None:
                    continue
                kind = plan.kind
                if kind == "append":
                    appended.append(seq)
                    status[index] = APPENDED
                    apply_plan(state, plan)
                    continue
                if kind == "project":
                    project_seqs.append(seq)
                    for target, message in (plan.messages or {}).items():
                        projections.setdefault(target, []).append((seq, message))
                    apply_plan(state, plan)
                    continue
                status[index] = REPLACEMENT
                for hidden in plan.shadowed:
                    shadow[hidden - base_seq] = seq
                work += (len(appended) - epoch_start[-1]) + (
                    len(nodes) - plan.start_idx if plan.end_idx != plan.start_idx else 1)
                replacements.append(plan.replacement())
                rep_seqs.append(seq)
                rep_pos.append((plan.start_idx, plan.end_idx))
                epoch_start.append(len(appended))
                apply_plan(state, plan)
                epoch = len(rep_seqs)
                if (epoch - checkpoint_epochs[-1] >= _CHECKPOINT_EVERY or work >= _REPLAY_BUDGET) and (
                        held + len(nodes) <= _CHECKPOINT_SHARE * len(status)):
                    checkpoints[epoch] = array("q", nodes)
                    checkpoint_epochs.append(epoch)
                    work, held = 0, held + len(nodes)

        return feed_batch

    def finish(self, events: Sequence[Mapping[str, Any]] | None = None) -> SurfaceTimeline:
        """The timeline of the events fed (`events`: the log they came from, for later reads;
        default the sequence given at construction)."""
        timeline = SurfaceTimeline.__new__(SurfaceTimeline)
        timeline._adopt(self, self.events if events is None else events)
        return timeline


class SurfaceTimeline:
    """Surfaces, shadows and lineage of a log at every seq, built in one pass.

    `events` is the log (or a window starting at `base_seq`, like the reference's
    `SurfaceManager(log, baseSeq)`); seqs in every argument and result are absolute. The pass is
    a `TimelineBuilder`; the loader can run it while it scans (`workbench.core.load`)."""

    def __init__(self, events: Sequence[Mapping[str, Any]], *, version: int,
                 base_seq: int = 0) -> None:
        builder = TimelineBuilder(events, version=version, base_seq=base_seq)
        feed = builder.feed
        # In order through the sequence's own iterator: a lazily parsed store reads ahead in large
        # windows there instead of one pread + cache entry per event (zip stops at `n` first).
        for _index, event in zip(range(len(events)), events):
            feed(event)
        self._adopt(builder, events)

    def _adopt(self, builder: TimelineBuilder, events: Sequence[Mapping[str, Any]]) -> None:
        self.version = builder.version
        self.base_seq = builder.base_seq
        self._events = events
        self._n = builder.count
        self._shadow, self._status = builder.shadow, builder.status
        self._appended = builder.appended   # shared with the builder, which only appends to it
        self._n_appended = len(builder.appended)
        self._epoch_start, self._rep_seqs, self._rep_pos = (
            builder.epoch_start, builder.rep_seqs, builder.rep_pos)
        self._checkpoints, self._checkpoint_epochs = builder.checkpoints, builder.checkpoint_epochs
        self._projections, self._project_seqs = builder.projections, builder.project_seqs
        self._cache: OrderedDict[int, list] = OrderedDict()
        replacements = builder.replacements
        self.replacements: tuple[Replacement, ...] = tuple(replacements)
        self.replacement_by_seq: Mapping[int, Replacement] = MappingProxyType(
            {r.seq: r for r in replacements})
        self.errors: tuple[FoldError, ...] = tuple(builder.errors)
        self.final_nodes: tuple[int, ...] = tuple(builder.state.nodes)

    # -- surfaces ------------------------------------------------------------------------------

    @property
    def end_seq(self) -> int:
        """Seq of the last event (base_seq - 1 for an empty log)."""
        return self.base_seq + self._n - 1

    def _epoch_base(self, epoch: int) -> list:
        """The surface right after replacement `epoch` (0: the empty initial surface) as a cache
        entry ``[seqs as array("q"), the same as a tuple or None until asked]``."""
        cached = self._cache.get(epoch)
        if cached is not None:
            self._cache.move_to_end(epoch)
            return cached
        cp = self._checkpoint_epochs[bisect_right(self._checkpoint_epochs, epoch) - 1]
        start = self._checkpoints[cp]
        for known, entry in self._cache.items():   # a nearer rebuilt one (readers walk forward)
            if cp < known < epoch:
                cp, start = known, entry[0]
        nodes = array("q", start)
        appended, starts = self._appended, self._epoch_start
        for r in range(cp + 1, epoch + 1):
            nodes.extend(appended[starts[r - 1]:starts[r]])
            i, j = self._rep_pos[r - 1]
            nodes[i:j + 1] = array("q", (self._rep_seqs[r - 1],))
        entry = self._cache[epoch] = [nodes, None]
        if len(self._cache) > _CACHE:
            self._cache.popitem(last=False)
        return entry

    def _tail(self, seq: int) -> tuple[list, array]:
        """The cache entry of the epoch of `seq` and that epoch's appends up to `seq`."""
        epoch = bisect_right(self._rep_seqs, seq)
        lo = self._epoch_start[epoch]
        hi = self._epoch_start[epoch + 1] if epoch + 1 < len(self._epoch_start) else self._n_appended
        return self._epoch_base(epoch), self._appended[lo:bisect_right(self._appended, seq, lo, hi)]

    def surface_at(self, seq: int) -> tuple[int, ...]:
        """Model-visible nodes after applying events `base_seq..seq`, in surface order."""
        if seq < self.base_seq or seq >= self.end_seq:
            return () if seq < self.base_seq else self.final_nodes
        entry, tail = self._tail(seq)
        if entry[1] is None:
            entry[1] = tuple(entry[0])
        return entry[1] + tuple(tail) if entry[0] else tuple(tail)

    def surface_seqs(self, seq: int) -> array:
        """`surface_at(seq)` as a new int64 ``array("q")`` (no int objects: for numpy readers)."""
        if seq < self.base_seq or seq >= self.end_seq:
            return array("q", () if seq < self.base_seq else self.final_nodes)
        entry, tail = self._tail(seq)
        return entry[0] + tail

    def replace_generation_at(self, seq: int) -> int:
        return bisect_right(self._rep_seqs, seq)

    def content_generation_at(self, seq: int) -> int:
        return bisect_right(self._rep_seqs, seq) + bisect_right(self._project_seqs, seq)

    def replacements_through(self, seq: int) -> tuple[Replacement, ...]:
        return self.replacements[:bisect_right(self._rep_seqs, seq)]

    def replacement_positions(self) -> list[tuple[int, int]]:
        """Per replacement (in order), the positions `(i, j)` it replaced; its node landed at `i`."""
        return self._rep_pos[:len(self.replacements)]

    def appended_through(self, seq: int) -> tuple[int, ...]:
        """Every node appended up to `seq` (ascending), shadowed later or not."""
        return tuple(self._appended[:bisect_right(self._appended, seq, 0, self._n_appended)])

    # -- per-event facts -----------------------------------------------------------------------

    def event_codes(self) -> tuple[bytes, array]:
        """Per event, copies: its status (`LOG_ONLY`, `APPENDED`, `REPLACEMENT`, `REJECTED`) and
        the seq of the replacement that hid it (-1: never hidden), for vectorised readers."""
        return bytes(self._status[:self._n]), self._shadow[:self._n]

    def _index(self, seq: int) -> int:
        index = seq - self.base_seq
        if not 0 <= index < self._n:
            raise SeqOutOfRange(f"seq {seq} is outside the log ({self.base_seq}..{self.end_seq})")
        return index

    def is_node(self, seq: int) -> bool:
        """Whether `seq` ever joined the surface (appended or a replacement)."""
        return self._status[self._index(seq)] in (APPENDED, REPLACEMENT)

    def shadowed_by(self, seq: int) -> Shadowing | None:
        """For a node that left the surface: the seq that hid it and the node that took its place."""
        hidden_at = self._shadow[self._index(seq)]
        return None if hidden_at < 0 else Shadowing(hidden_at, hidden_at)

    def status_at_end(self, seq: int) -> Status:
        index = self._index(seq)
        code = self._status[index]
        if code == REJECTED:
            return "rejected"
        if code == LOG_ONLY:
            return "log-only"
        return "shadowed" if self._shadow[index] >= 0 else "current"

    def on_surface(self, seq: int, at: int) -> bool:
        """Whether `seq` is a node of the surface at `at`."""
        if seq > at or not self.is_node(seq):
            return False
        hidden_at = self._shadow[seq - self.base_seq]
        return hidden_at < 0 or hidden_at > at

    def representative(self, seq: int, at: int | None = None) -> int | None:
        """The node of the surface at `at` (default: the end) that stands for `seq`: itself, or
        the replacement (through nested replacements) that hides it; None if `seq` is not a node
        or joined the surface after `at`."""
        at = self.end_seq if at is None else at
        if seq > at or not self.is_node(seq):
            return None
        while True:
            hidden_at = self._shadow[seq - self.base_seq]
            if hidden_at < 0 or hidden_at > at:
                return seq
            seq = hidden_at

    def lineage(self, node_seq: int) -> tuple[int, ...]:
        """The original (appended) events a node stands for, in surface order, through nested
        replacements; an appended node stands for itself, a log-only event for nothing."""
        if not self.is_node(node_seq):
            return ()
        out: list[int] = []
        stack = [node_seq]
        reps = self.replacement_by_seq
        while stack:
            seq = stack.pop()
            rep = reps.get(seq)
            if rep is None:
                out.append(seq)
            else:
                stack.extend(reversed(rep.shadowed))
        return tuple(out)

    # -- comparing surfaces --------------------------------------------------------------------

    def diff(self, a: int, b: int) -> SurfaceDiff:
        """Nodes added, removed and replaced between the surfaces at seqs `a` and `b`."""
        return diff_surfaces(a, b, self.surface_at(a), self.surface_at(b))

    # -- messages ------------------------------------------------------------------------------

    def projected_at(self, node_seq: int, at: int | None = None) -> dict | None:
        """The v4 `image/offload` projection of a node in force at `at` (default: the end)."""
        history = self._projections.get(node_seq)
        if not history:
            return None
        at = self.end_seq if at is None else at
        found = None
        for seq, message in history:
            if seq > at:
                break
            found = message
        return found

    def projected_nodes(self) -> list[int]:
        """The nodes some v4 `image/offload` projects, each once."""
        return list(self._projections)

    def message_at(self, node_seq: int, at: int | None = None) -> dict | None:
        """The model message `node_seq` projects to at `at` (None: it derives none)."""
        event = self._events[self._index(node_seq)]
        projected = self.projected_at(node_seq, at)
        if projected is not None:
            return projected
        return derive_message(event, version=self.version)

    def messages_at(self, seq: int) -> list[tuple[int, dict]]:
        """The model history after `seq`: `(node seq, message)` for every node deriving one."""
        return [(node, message) for node in self.surface_at(seq)
                if (message := self.message_at(node, seq)) is not None]

    def transcript_at(self, seq: int) -> tuple[int, ...]:
        """The append-origin transcript up to `seq` (v0 §4.9): appended user/assistant/tool
        nodes in log order, including later shadowed ones (v4: system/developer are model-only)."""
        keep = ("user/message", "assistant/message", "tool/result")
        events, base = self._events, self.base_seq
        return tuple(s for s in self.appended_through(seq) if events[s - base].get("type") in keep)

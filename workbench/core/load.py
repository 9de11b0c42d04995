"""Load a log with every check the real loader applies, and keep going past each one.
Layer: core (imports io; no pandas).

The pipeline mirrors the reference loaders (v0 spec §1.9, v4 spec §1.9), stage by stage:

1. **scan** (`workbench.io.read`): framing, header, rows, committed prefix, torn tail; v4: the
   inherited marker and the lifecycle relationships (`workbench.core.relationships`);
2. **stored validation** (`workbench.core.stored`): vocabulary and per-event message shapes;
3. **closers** (`workbench.core.repair`): what a resume appends to close an open final turn;
4. **resume** (`workbench.core.restore`): session restore over events + closers. Its fold step is
   the log's one fold, a `workbench.core.timeline.TimelineBuilder` the pipeline feeds every
   event before the checks see it (`LoadReport.fold`): the surface timeline is that fold's
   record, nothing folds the log again.

The reference stops at the first failing stage; a workbench must show the log anyway. So every
stage runs over the valid prefix and each problem becomes a `Defect` (rule = the conformance kind,
the reference's exact message, the seq and line): relationship violations are all listed; the
reference's own error per stage is kept in the `LoadReport` (``scan_error``, ``stored_error``,
``resume``). Stages 2-4 see each event once, while the scan runs (a large log is parsed once).

`load_log` never raises for data problems; only `LogUnreadable` (no such file, a directory, no
permission). ``strict=True`` raises `LogRefused` / `LogCorrupt` for the reference's verdicts.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core import relationships as _relationships
from workbench.core import restore as _restore
from workbench.core import stored as _stored
from workbench.core.events import known_types, surface_types
from workbench.core.relationships import RelationshipChecker, RelationshipViolation
from workbench.core.repair import CloserTracker
from workbench.core.restore import RestoreChecker, RestoreError, RestoreResult
from workbench.core.stored import ShapeMemo, StoredValidator, StoredViolation
from workbench.core.timeline import REJECTED, TimelineBuilder
from workbench.errors import InternalError, LogCorrupt, LogRefused
from workbench.io.generations import nested_streams
from workbench.io.header import HeaderResult
from workbench.io.model import Defect, Log
from workbench.io.read import ReadResult, scan_bytes, scan_path
from workbench.io.scan import ScanIssue
from workbench.io.store import EventStore


@dataclass(slots=True)
class LoadReport:
    """The staged outcome of one load, in the reference's terms.

    `scan_error` is the error the reference's scan raises (header, framing, committed damage,
    retired syntax, inherited marker, first relationship violation); `stored_error` the first
    stored-event violation; `resume` the restore result or its error. `closers` are the events a
    resume appends; `resume_appended` the types it appends (closers, then ``session/end-seed``).
    """

    log: Log
    read: ReadResult
    scan_error: ScanIssue | None = None
    relationships: list[RelationshipViolation] = field(default_factory=list)
    stored: list[StoredViolation] = field(default_factory=list)
    closers: list[dict] = field(default_factory=list)
    resume: RestoreResult | RestoreError | None = None
    resume_appended: list[str] = field(default_factory=list)
    fold: TimelineBuilder | None = None

    @property
    def stored_error(self) -> StoredViolation | None:
        return self.stored[0] if self.stored else None


def relationship_kind(message: str) -> str:
    """The conformance kind of a relationship-stage message (v4 INDEX error kinds)."""
    if message.startswith("format v4 "):
        return "retired_or_forbidden_syntax"
    if "delivery" in message:
        return "delivery_marker"
    if "inherited end-seed marker" in message:
        return "inherited_marker"
    return "relationships"


_MAX = 2**53 - 1
_CLEARED = frozenset(("system/message", "user/message", "assistant/message", "tool/result"))
"""The v4 message types whose row admission leaves, when the stored rules pass, no
relationship source rule unsettled (``developer/message`` has its own admission rules)."""

Feeder = Callable[[int, Sequence[Any], TimelineBuilder], Callable[[Any], None] | None]
"""A pass that rides on the load: called once the header is read with the format generation
(0, 3 or 4), the growing event store (random access to the events scanned so far) and the
load's one fold (fed each event before the pass is), it returns the function fed every event
of the log in seq order, each exactly once, as the scan accepts it (so a large log is parsed
once for the load and for the pass), or None when it only keeps the fold."""


class _Pipeline:
    """Observer of the scan: feeds each accepted event to every later stage.

    The fold takes each batch first (one call), then the riding passes, then the checks. Dispatch
    on the type, read once: an event without ``surfaceOp``/``sourceEventSeqs`` and with an
    integer ``seq`` (v0: and the plain four-key envelope the restore check wants) runs the steps
    of its type's route (the stages whose `INTEREST` holds its type), and a *quiet* type
    (``job/*``, ``todo/write``, ...: no stage looks at it) runs none; a decoded v4 row of a
    surface type every stage concerns takes the same route, surface fields and all; every other
    event goes through every stage as it is. An event the fold planned at its own seq without a
    `FoldError` passes the stored stage's event-local surface rules (the plan's first checks:
    `ShapeMemo.planned`), which are not run again; a v4 message row the fold planned whose
    stored verdicts pass (`ShapeMemo.cleared`) leaves nothing for the stored stage, the
    relationship source rule or restore (`RestoreChecker.passes_cleared`) to find, so only the
    lifecycle and the closers see it. The stages' end state (closers' last seq/time, restore's
    count and last type) is brought forward once per batch. Each stage's result is unchanged:
    they skip exactly the events they would ignore or pass.
    """

    def __init__(self, name: str, location: str | None, feeders: Sequence[Feeder] = ()) -> None:
        self.name = name
        self.feeders = feeders
        self.feeds: list[Callable[[Any], None]] = []
        self.location = location
        self.version = 0
        self.store: EventStore | None = None
        self.header: HeaderResult | None = None
        self.relationships: RelationshipChecker | None = None
        self.stored: StoredValidator | None = None
        self.closers: CloserTracker | None = None
        self.restore: RestoreChecker | None = None
        self.fold: TimelineBuilder | None = None
        self.crashes: list[Defect] = []

    def start(self, header: HeaderResult, events: EventStore) -> None:
        self.header = header
        self.store = events
        self.version = version = header.generation
        meta = header.meta if header.meta is not None else (header.raw if type(header.raw) is dict else {})
        if nested_streams(version):
            self.relationships = RelationshipChecker(meta, self._event_at, admitted=version == 4, version=version)
        memo = ShapeMemo(version if nested_streams(version) else 0)
        self.stored = StoredValidator(meta, version=version, location=self.location, memo=memo)
        self.closers = CloserTracker(version=version)
        self.fold = fold = TimelineBuilder(events, version=version)
        self.restore = RestoreChecker(version=version, events=events, decoded=nested_streams(version), memo=memo,
                                      header=header.meta if nested_streams(version) else None, fold=fold)
        fed = (start(version, events, fold) for start in self.feeders)
        self.feeds = [feed for feed in fed if feed is not None]
        self.accept = self._accept_function()  # type: ignore[method-assign]

    def _accept_function(self) -> Any:
        relationships = self.relationships
        stored, closers, restore = self.stored, self.closers, self.restore
        crash = self._crash
        v4 = nested_streams(self.version)  # rows decoded by the v4 envelope decoder (v3, v4)
        known = known_types(self.version)
        to_relationships = _relationships.INTEREST if relationships is not None else frozenset()
        to_stored = _stored.CHECKED_TYPES
        to_restore = _restore.INTEREST
        # types every stage concerns (v4 rows: the envelope decoded): their surface fields change
        # no stage's lane, so such an event goes the typed way to every stage
        surfaced = surface_types(4) & to_relationships & to_stored & to_restore if v4 else frozenset()
        # the stages of each known type, read once per event: (relationship artifact checks,
        # lifecycle step, stored check, closers, restore); None for a quiet type
        routes: dict[str, tuple | None] = {}
        for kind in known:
            steps = relationships.route(kind) if relationships is not None else (None, None)
            route = (*steps, kind in to_stored, closers.step(kind), kind in to_restore)
            routes[kind] = route if any(route) else None
        unknown = (None, None, True, None, False)   # refused unless ignorable
        stored_accept, restore_accept = stored.accept, restore.accept
        feeds, fold_batch = self.feeds, self.fold.feed_batch  # type: ignore[union-attr]
        status, planned = self.fold.status, stored.memo.planned  # type: ignore[union-attr]
        # format v4 rows passed row admission (io.admission_v4): a message row of these types
        # that passes the stored shape rules passes the relationship source rule too, and only
        # the lifecycle, the closers and (settlement) restore have anything left to check
        cleared_types = _CLEARED if self.version == 4 else frozenset()
        cleared, passes_cleared = stored.memo.cleared, restore.passes_cleared
        life = relationships.lifecycle.accept if relationships is not None else None
        count = 0

        def accept(batch: list) -> None:
            nonlocal count
            fold_batch(batch)
            for feed in feeds:
                for event in batch:
                    feed(event)
            index = count - 1
            for event in batch:
                index += 1
                try:
                    kind = event.get("type")
                    seq = event.get("seq")
                    # the typed lane: a str type, an integer seq, no surface fields, and (v0) just
                    # the four envelope keys with a safe integer time; v4 rows were decoded already
                    if type(seq) is int and type(kind) is str and (
                            (len(event) == 4 and (v4 or ("data" in event and type(time := event.get("time")) is int
                                                         and -_MAX <= time <= _MAX)))
                            or (v4 and "surfaceOp" not in event and "sourceEventSeqs" not in event)):
                        route = routes.get(kind, unknown)
                        if route is None:
                            continue
                    elif type(kind) is str and kind in surfaced and type(seq) is int:
                        # a decoded v4 row of a surface type, carrying its surface fields
                        if seq == index and status[index] != REJECTED:
                            # the fold's verdict settles validateSurfaceMetadata; a v4 message
                            # row's admission and its stored verdicts settle the rest
                            if kind in cleared_types and cleared(event, kind):
                                life(event, kind, seq)   # message_sources passes: its rules are the shape's
                                tracked = routes[kind][3]  # type: ignore[index]
                                if tracked is not None:
                                    tracked(event)
                                if not passes_cleared(event, kind):
                                    restore_accept(event, index, enveloped=True)
                                continue
                            planned(event)
                        route = routes[kind]
                    else:
                        if v4 and type(seq) is int and seq == index and status[index] != REJECTED:
                            planned(event)
                        if relationships is not None:
                            relationships.accept(event)
                        stored_accept(event)
                        closers.observe(event)
                        restore_accept(event, index)
                        continue
                    artifact, life_step, checked, tracked, restored = route  # type: ignore[misc]
                    if artifact is not None:
                        artifact(event, kind, seq)
                    if life_step is not None:
                        life_step(event, kind, seq)
                    if checked:
                        stored_accept(event)
                    if tracked is not None:
                        tracked(event)
                    if restored:
                        restore_accept(event, index, enveloped=True)
                except Exception as exc:  # noqa: BLE001 - a checker bug must not lose the log
                    crash(event, exc)
            count = index = index + 1
            if batch:
                last = batch[-1]
                closers.note_last(last)
                restore.skip(index, last.get("type"))
        return accept

    def _crash(self, event: Any, exc: Exception) -> None:
        if not self.crashes:
            seq = event.get("seq") if type(event) is dict else None
            self.crashes.append(Defect("checker_error", f"a workbench check failed on this event "
                                       f"({type(exc).__name__}: {exc}); later checks may be incomplete",
                                       self.name, "warning", seq=seq if type(seq) is int else None))

    def accept(self, batch: list) -> None:  # replaced in start()
        raise InternalError("pipeline not started")

    def _event_at(self, seq: int) -> Any:
        store = self.store
        return store[seq] if store is not None and 0 <= seq < len(store) else None


def _line(store: Sequence, seq: Any) -> int | None:
    """The line of the record holding event `seq`, numbered as the reference's messages number
    lines (the header is line 0; see `workbench.io.model.Defect.line`)."""
    if isinstance(store, EventStore) and type(seq) is int and 0 <= seq < len(store):
        return store.line_of(seq)
    return None


def _evaluate(read: ReadResult, pipeline: _Pipeline) -> LoadReport:
    log = read.log
    report = LoadReport(log, read, read.fatal, fold=pipeline.fold)
    if pipeline.stored is None:  # rows could not be read at all
        return report
    events = log.events
    defects = log.defects
    defects.extend(pipeline.crashes)
    if pipeline.relationships is not None:
        found = pipeline.relationships.finish(log.inherited_event_count)
        report.relationships = found
        for violation in found:
            defects.append(Defect(relationship_kind(violation.message), violation.message, log.path, "corrupt",
                                  line=_line(events, violation.seq), seq=violation.seq))
        if report.scan_error is None and found:
            first = found[0]
            report.scan_error = ScanIssue(relationship_kind(first.message), first.message, first.name,
                                          seq=first.seq, line=_line(events, first.seq))
    report.stored = pipeline.stored.finish()
    for violation in report.stored:
        severity = "refused" if violation.klass == "unsupported" else "corrupt"
        defects.append(Defect(violation.kind, violation.message, log.path, severity,  # type: ignore[arg-type]
                              line=_line(events, violation.seq), seq=violation.seq))
    closers = pipeline.closers.closers("interrupted")
    report.closers = closers
    log.closers = closers
    restore = pipeline.restore
    for closer in closers:
        restore.accept(closer)
    try:
        report.resume = restore.finish(log.inherited_event_count)
        report.resume_appended = [c["type"] for c in closers]
        if report.resume.appended_end_seed:
            report.resume_appended.append("session/end-seed")
    except RestoreError as exc:
        report.resume = exc
        for problem in (exc, restore.fold_error):
            if problem is not None:
                rule = problem.kind.replace("seed_surface:", "fold:")
                defects.append(Defect(rule, problem.message, log.path, "corrupt",
                                      line=_line(events, problem.index), seq=problem.index))
    return report


def evaluate_path(path: str | os.PathLike, *, generation: int | None = None,
                  location: str | None = None, feeders: Sequence[Feeder] = ()) -> LoadReport:
    """Load the file at `path` and return the staged `LoadReport` (never raises for data)."""
    name = os.fspath(path)
    pipeline = _Pipeline(name, location if location is not None else name, feeders)
    read = scan_path(name, generation=generation, observer=pipeline)
    return _evaluate(read, pipeline)


def evaluate_bytes(data: bytes, *, name: str, encoding: str | None = None, generation: int | None = None,
                   location: str | None = None) -> LoadReport:
    """`evaluate_path` for bytes in memory (`name` stands for the file)."""
    pipeline = _Pipeline(name, location if location is not None else name)
    read = scan_bytes(data, name=name, encoding=encoding, generation=generation, observer=pipeline)
    return _evaluate(read, pipeline)


def _strict(log: Log) -> Log:
    for defect in log.defects:
        if defect.severity == "refused":
            raise LogRefused(str(defect))
    for defect in log.defects:
        if defect.severity == "corrupt":
            raise LogCorrupt(str(defect))
    return log


def load_log(path: str | os.PathLike, *, strict: bool = False, generation: int | None = None,
             feeders: Sequence[Feeder] = ()) -> Log:
    """Read and validate the log at `path`; every problem is a `Defect` of the returned `Log`.

    `generation` forces the reader (0 or 4) instead of the file name / header version.
    `feeders` ride on the scan (see `Feeder`): each sees every event once, while it is parsed.
    """
    log = evaluate_path(path, generation=generation, feeders=feeders).log
    return _strict(log) if strict else log


def load_bytes(data: bytes, *, name: str, encoding: str | None = None, generation: int | None = None,
               strict: bool = False) -> Log:
    """`load_log` for bytes in memory."""
    log = evaluate_bytes(data, name=name, encoding=encoding, generation=generation).log
    return _strict(log) if strict else log


__all__ = ["LoadReport", "evaluate_bytes", "evaluate_path", "load_bytes", "load_log", "relationship_kind"]

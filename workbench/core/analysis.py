"""`AnalysedLog`: one loaded log and everything the workbench computes of it. Layer: core
(stdlib + numpy; no pandas).

One loader call (`AnalysedLog.load`, or `workbench.core.follow.LiveLog` for a followed log) with
one pass riding on it (`workbench.core.log_pass.LogPass`): the log is parsed once. Each member
is computed once, on first use, from that pass:

* `index` (`workbench.core.index.LogIndex`, the one per-seq store), `timeline` (the load's one
  fold; `surface_fold(at)` reads it as a fold of the prefix would give it), `surface`
  (`core.surface_arrays.SurfaceArrays`), `prices` (DSH node price per seq);
* `usage` (provider usage samples), `attempts` (model-call attempts), `model_calls` (what the
  audit and the cost ledger read of the attempts);
* `compactions` (`core.compaction.brackets.Compactions`), `audit` (`core.compaction.audit
  .AuditReport`), `quality` (`core.quality.Quality`: citations, re-fetches, ledger inputs);
* `meter_counts`: per-seq counts of each real-tokenizer meter, once a caller computed them.

The CLI (every subcommand reading one log), the frames (`workbench.session.Session` is this
object plus a frame cache; every builder is a function of these members), the views and the
report all read them. What the pass feeds is chosen up front: the notebook's pass feeds the
index, usage and attempts (`audit=False`); the CLI audit's feeds the audit's probe texts and the
quality's node facts instead (`audit=True`), and a member the pass did not feed (the index,
usage, v4 attempts) is computed by the same pass over the loaded events when first asked. With
no pass riding (`ride=False`: `info`, `fold`, `tokens`) the load's fold is kept: `timeline`,
`surface_fold` and `compactions` need no pass (the bracket scan parses only the events it acts
on); anything else makes the whole pass on first use, as for a log loaded elsewhere
(`AnalysedLog(log)`).

A followed log keeps its pass open (`grown`): the index, fold, usage and attempts continue from
their state, the compaction brackets are extended, the rest is recomputed on first use.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.core.log_pass import LogPass, Passed
from workbench.core.surface import SurfaceFold
from workbench.core.surface_arrays import SurfaceArrays
from workbench.io.generations import rules_for

if TYPE_CHECKING:
    from workbench.core.compaction.audit import AuditReport
    from workbench.core.compaction.brackets import Compactions
    from workbench.core.index import LogIndex
    from workbench.core.quality import Quality
    from workbench.core.requests import Attempt
    from workbench.core.timeline import SurfaceTimeline, TimelineBuilder
    from workbench.core.tokens.usage import UsageSample
    from workbench.io.model import Log

DERIVED = ("timeline", "surface", "compactions", "audit", "quality", "model_calls")
"""Members recomputed on first use after a followed log grew (`grown`; the compaction brackets
are extended instead when they were computed)."""


class AnalysedLog:
    """One analysed log (module doc). `probes`: the audit runs the lost-fact probe (its texts
    are kept by a pass made with `audit=True`)."""

    def __init__(self, log: Log, passed: LogPass | None = None, *, probes: bool = False,
                 follow: bool = False, fold: TimelineBuilder | None = None) -> None:
        self.log = log
        self._feeding = passed
        self._rode = passed is not None
        self._fold = fold if passed is None else None
        """The load's fold when no pass rode on it (`load(ride=False)`): the timeline without
        the pass, and the pass made later does not fold again."""
        self.probes = probes
        self.follow = follow
        """The pass stays open: `grown` extends it (`workbench.core.follow.LiveLog`)."""
        self.meter_counts: dict[str, np.ndarray] = {}
        """Per-seq counts of each real-tokenizer meter, once computed (`frames.meters`)."""

    @classmethod
    def load(cls, path: str | os.PathLike, *, strict: bool = False, audit: bool = False,
             ride: bool = True) -> AnalysedLog:
        """Load the log at `path` (`core.load.load_log`, same errors) with the one pass riding
        on the scan; `audit`: the pass the CLI audit wants (module doc); `ride=False`: no pass
        rides (for a caller that reads only the log; a member makes the pass when first asked)."""
        from workbench.core.load import load_log
        from workbench.io.read import path_arg
        passed = cls.pass_for(audit=audit) if ride else None
        folds: list[TimelineBuilder] = []

        def keep_fold(version: int, events: Any, fold: TimelineBuilder) -> None:
            folds.append(fold)
        log = load_log(path_arg(path), strict=strict,
                       feeders=(passed.start if passed is not None else keep_fold,))
        return cls(log, passed, probes=audit, fold=folds[0] if folds else None)

    @staticmethod
    def pass_for(*, audit: bool = False, follow: bool = False) -> LogPass:
        """The `LogPass` a load rides (module doc)."""
        if audit:
            return LogPass(index=False, texts=None, quality=True)
        return LogPass(spare=follow)

    # -- identity ------------------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self.log.path

    @property
    def session_id(self) -> str | None:
        return self.log.session_id

    @property
    def version(self) -> int:
        """Format version the semantics follow: 4, 3 or 0 (`workbench.io.generations.rules_for`)."""
        return rules_for(self.log.format_version)

    @property
    def format_version(self) -> int | None:
        """The log's format version, its header's (a refused v2 log: 2); None without a header
        (an empty file, whatever its name claims). What `workbench info` reports."""
        return self.log.format_version if self.log.header is not None else None

    @property
    def events(self) -> Sequence[dict[str, Any]]:
        return self.log.events

    @property
    def defects(self) -> list:
        return self.log.defects

    @property
    def verdict(self) -> str:
        return self.log.verdict

    @property
    def has_times(self) -> bool:
        """False for logs whose seq/time were assigned by position (v0 fixtures, §1.11)."""
        return not self.log.implicit_seqs

    def __len__(self) -> int:
        return len(self.log.events)

    # -- the pass ------------------------------------------------------------------------------

    @cached_property
    def passed(self) -> Passed:
        """What the one pass found: the pass that rode on the load, else one made now."""
        feeding = self._feeding
        if not self.follow:
            self._feeding = None    # its builders are done: keep only what they found
        n = len(self)
        if feeding is None or not feeding.started or feeding.count != n \
                or feeding.version != self.version:
            wants = {} if feeding is None else feeding.wants
            fold = self._fold if self._fold is not None and self._fold.count == n else None
            feeding = LogPass.run(self.events, version=self.version, fold=fold, **wants)
        return feeding.finish(self.events, has_times=self.has_times)

    @property
    def _complete(self) -> Passed:
        """`passed`, or (when it did not feed the index) the same pass over the loaded events."""
        passed = self.passed
        return passed if passed.index is not None else self._frames_pass

    @cached_property
    def _frames_pass(self) -> Passed:
        return LogPass.run(self.events, version=self.version).finish(
            self.events, has_times=self.has_times)

    @property
    def index(self) -> LogIndex:
        """The log's per-seq columns (`workbench.core.index`)."""
        return self._complete.index  # type: ignore[return-value]

    @cached_property
    def timeline(self) -> SurfaceTimeline:
        """The surface at every seq, from the load's one fold (`workbench.core.timeline`)."""
        fold = self._fold
        if "passed" in self.__dict__ or fold is None or fold.count != len(self):
            return self.passed.timeline
        return fold.finish(self.events)     # no pass needed for it

    @property
    def prices(self) -> np.ndarray:
        """Heuristic node price per seq (DSH meter, §6.4); -1 for events of a log-only type."""
        prices = self.passed.prices
        return prices if isinstance(prices, np.ndarray) else np.frombuffer(prices, dtype=np.int64)

    def price(self, seq: int) -> int:
        """Heuristic price of the node at `seq` (0 for log-only events)."""
        return max(0, int(self.passed.prices[seq]))

    def surface_fold(self, at: int) -> SurfaceFold:
        """The surface after event `at` as `core.surface.fold_surface(events, through=at)`
        gives it, read from the timeline (no second fold): raises the first `FoldError` at or
        before `at`; `projected_messages` holds the projections of the nodes of that surface."""
        timeline = self.timeline
        for error in timeline.errors:
            if error.seq is not None and error.seq <= at:
                raise error
        nodes = timeline.surface_at(at)
        projected = {s: m for s in nodes if (m := timeline.projected_at(s, at)) is not None}
        return SurfaceFold(nodes, timeline.replacements_through(at),
                           timeline.replace_generation_at(at), timeline.content_generation_at(at),
                           MappingProxyType(projected))

    @cached_property
    def surface(self) -> SurfaceArrays:
        """Per-seq surface arrays of the timeline (`core.surface_arrays`)."""
        return SurfaceArrays(self.timeline, len(self))

    @property
    def usage(self) -> Sequence[UsageSample]:
        """Provider usage samples (`workbench.core.tokens.usage`: usage chunks, assistant
        messages and attempts; `llm/retry-started` separates retried attempts)."""
        return self._complete.usage  # type: ignore[return-value]

    @property
    def attempts(self) -> Sequence[Attempt]:
        """Every model-call attempt (`workbench.core.requests.AttemptCollector`: v4 settling
        events, v0 chunk runs closed by messages and step/turn ends)."""
        attempts = self.passed.attempts
        return self._complete.attempts if attempts is None else attempts  # type: ignore[return-value]

    @cached_property
    def model_calls(self) -> Sequence[Attempt]:
        """The model-call attempts the audit and the ledger read (by `seq` and `before`): every
        attempt when the pass collected them, else (v4) found by type without a parse
        (`audit.model_requests`)."""
        passed = self.passed
        if passed.index is not None:
            return self.attempts
        if passed.facts.attempts is not None:
            return passed.facts.attempts
        from workbench.core.compaction.audit import model_requests
        return model_requests(self.events, version=self.version)

    # -- compactions, audit, quality -----------------------------------------------------------

    @cached_property
    def compactions(self) -> Compactions:
        """Compaction attempts and prunes (`workbench.core.compaction.brackets`)."""
        from workbench.core.compaction.brackets import (
            NodePrices,
            compactions,
            price_cache,
        )
        if not self._rode and "passed" not in self.__dict__ and self._fold is not None:
            # no pass rode: the bracket scan reads types from the store's index and parses
            # only the events it acts on, priced when asked (no pass for it)
            return compactions(self.events, version=self.version, timeline=self.timeline,
                               price=price_cache(self.events, version=self.version))
        passed = self.passed
        facts = passed.facts if passed.facts.count == len(self) else None
        return compactions(self.events, version=self.version, timeline=self.timeline,
                           price=NodePrices(column=passed.prices), facts=facts)

    @cached_property
    def audit(self) -> AuditReport:
        """The compaction audit (`workbench.core.compaction.audit`)."""
        from workbench.core.compaction.audit import audit_log
        return audit_log(self.log, found=self.compactions, attempts=self.model_calls,
                         probes=self.probes)

    @cached_property
    def quality(self) -> Quality:
        """Citations and re-fetches of every compaction (`workbench.core.quality.analyse`, with
        the node facts the pass read when it was made for the audit)."""
        from workbench.core.quality import analyse
        return analyse(self.events, version=self.version, timeline=self.timeline,
                       records=self.compactions.records if len(self) else (),
                       reader=self.passed.reader)

    # -- a followed log ------------------------------------------------------------------------

    def grown(self, log: Log, start: int) -> None:
        """The followed log now holds `log`, events `start..` appended: the pass's results are
        taken again, the compaction brackets extended, the rest dropped (module doc)."""
        from workbench.core.compaction.brackets import extend_compactions
        self.log = log
        found = self.__dict__.pop("compactions", None)
        self.forget()
        if "passed" not in self.__dict__ or self._feeding is None:
            return
        self.__dict__["passed"] = passed = self._feeding.finish(self.events,
                                                                has_times=self.has_times)
        if found is not None:
            facts = passed.facts if passed.facts.count == len(self) else None
            grown = extend_compactions(found, self.events, version=self.version,
                                       timeline=self.timeline, price=self.price, facts=facts)
            if grown is not None:
                self.__dict__["compactions"] = grown

    def forget(self, *, everything: bool = False) -> None:
        """Drop what is recomputed on first use (`everything`: the pass's results too)."""
        for name in DERIVED + (("passed", "_frames_pass") if everything else ()):
            self.__dict__.pop(name, None)


__all__ = ["DERIVED", "AnalysedLog", "SurfaceArrays"]

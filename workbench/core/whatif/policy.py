"""DSH's automatic compaction replayed over a whole log with other settings. Layer: core.

Spec v4 §5.8 (triggers and thresholds), §5.3 (range selection), §5.9 (pruner). The replay walks
the real log once and carries every real event onto the counterfactual surface (`replay.Replay`),
dropping the log's own compaction brackets and prunes and deciding them anew:

* **pressure**, at every pre-step point of an open turn (before `step/start`, or where the log
  itself opened a pressure bracket, e.g. one killed before its step): `threshold =
  floor(min(ctxWindow × thresholdRatio, ctxWindow − maxTokens − headroomTokens))`; if
  `messageBudget` or `pressureBudget` ≤ 0 pressure never fires (DSH: misconfigured target). When
  `measure().totalTokens ≥ threshold`: prune first (if a pruner is configured), re-measure, then up
  to `1 + compactionRetries` summaries over `selectCompactableRange(retain)` until below threshold;
  an unmatched start (the lock) blocks every attempt until the next `session/end-seed`;
* **manual** (`/compact`) and **context overflow** fire where the log has them, with retain 0,
  over the counterfactual surface (they are caused by real events: a command, a rejected request);
  a manual `command/done` is rewritten to what DSH would report.

`ctxWindow` is `request/context.contextWindow` and `maxTokens` the request header's
`config.maxTokens` unless the policy overrides them; `thresholdRatio`, `retainTokens` and
`headroomTokens` are deployment settings that are not in the log: they are inputs (defaults are
DSH's documented ones: 0.8, `floor(messageBudget × 0.16)`, 65536).

A summarizer is a callable `summarize(messages) -> str` (messages: the projected messages of the
range, v4 §5.6) or ``"logged"``: the log's own attempts in order, per trigger (the k-th pressure
attempt of the replay gets the k-th logged pressure attempt, failures and interrupted attempts
included; manual and overflow attempts keep their own). Replaying with the settings the log was
written with and ``"logged"`` reproduces the log.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.compaction.pruner import (
    PruneConfig,
    PruneConfigError,
    resolve_config,
)
from workbench.core.compaction.selection import select_compactable_range
from workbench.core.whatif.brackets import summary_text
from workbench.core.whatif.remap import WhatIfError
from workbench.core.whatif.replay import REMOVE, Replay
from workbench.errors import InvalidArgument
from workbench.io.jsjson import is_number, is_safe_int

Summarizer = Callable[[list[dict[str, Any]]], str]

MAX_RETRIES = 100
"""Summaries per pressure point are ``1 + compaction_retries``; a replay bounds its time."""


@dataclass(frozen=True)
class Policy:
    """Compaction settings (module doc); None means "from the log" or DSH's default."""

    context_window: int | None = None
    threshold_ratio: float = 0.8
    retain_tokens: int | None = None
    retain_ratio: float = 0.16
    headroom_tokens: int = 65536
    max_tokens: int | None = None
    compaction_retries: int = 1
    pruner: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        """Settings DSH could run with, else `InvalidArgument` naming the setting: token counts
        are integers (a window above 0, the others at least 0, retries at most `MAX_RETRIES`),
        ratios finite numbers (the threshold's above 0, the retained share 0..1), a pruner a
        mapping DSH's `resolve_config` accepts (v4 §5.9)."""
        for name in ("context_window", "retain_tokens", "headroom_tokens", "max_tokens",
                     "compaction_retries"):
            value = getattr(self, name)
            if value is None and name in ("context_window", "retain_tokens", "max_tokens"):
                continue
            least = 1 if name == "context_window" else 0
            if type(value) is not int or value < least or (
                    name == "compaction_retries" and value > MAX_RETRIES):
                most = f" and at most {MAX_RETRIES}" if name == "compaction_retries" else ""
                raise InvalidArgument(f"policy setting {name} must be an integer of at least "
                                      f"{least}{most}, not {value!r}")
        for name, low, high in (("threshold_ratio", 0.0, math.inf), ("retain_ratio", 0.0, 1.0)):
            value = getattr(self, name)
            if type(value) not in (int, float) or not math.isfinite(value) or not (
                    low < value if name == "threshold_ratio" else low <= value <= high):
                bounds = "a finite number above 0" if high == math.inf else "a number from 0 to 1"
                raise InvalidArgument(f"policy setting {name} must be {bounds}, not {value!r}")
        if self.pruner is not None:
            if not isinstance(self.pruner, Mapping):
                raise InvalidArgument("policy setting pruner must be a mapping of thresholdChars, "
                                      f"headChars, tailChars, not {self.pruner!r}")
            try:
                resolve_config(dict(self.pruner))
            except PruneConfigError as exc:
                raise InvalidArgument(f"policy setting pruner: {exc}") from exc

    def threshold(self, window: int, reserved: int) -> tuple[int | None, int]:
        """(threshold or None when pressure is disabled, retained tail) for a route."""
        budget = window - reserved
        if not math.isfinite(budget):   # a logged maxTokens of ±1e400 (±Infinity): no budget
            return None, 0
        pressure = budget - self.headroom_tokens
        retain = (self.retain_tokens if self.retain_tokens is not None
                  else math.floor(budget * self.retain_ratio))
        if budget <= 0 or pressure <= 0:
            return None, retain
        return math.floor(min(window * self.threshold_ratio, pressure)), retain

    def prune_config(self) -> PruneConfig | None:
        return None if self.pruner is None else resolve_config(dict(self.pruner))


@dataclass
class LoggedBracket:
    """One real compaction attempt: its events, trigger and outcome."""

    start: int
    trigger: str
    owner: Any
    command_id: Any
    events: list[Mapping[str, Any]] = field(default_factory=list)
    closed: bool = False

    @property
    def seqs(self) -> set[int]:
        return {e["seq"] for e in self.events}

    def summary(self) -> Any:
        for e in self.events:
            if e.get("type") == "compaction/summary":
                return e["data"].get("summary")
        return None

    def error(self) -> Any:
        for e in self.events:
            if e.get("type") == "compaction/end":
                return e["data"].get("error")
        return None


def logged_brackets(events: Sequence[Mapping[str, Any]]) -> tuple[list[LoggedBracket], set[int]]:
    """Every real bracket with its own events (start, delivery markers citing it, summary,
    checkpoint, end) and the seqs of every prune pair."""
    brackets: list[LoggedBracket] = []
    prunes: set[int] = set()
    current: LoggedBracket | None = None
    in_step = False
    for e in events:
        kind, seq = e.get("type"), e["seq"]
        data = e.get("data") if isinstance(e.get("data"), dict) else {}
        if kind == "compaction/start":
            owner = data.get("turn")
            trigger = "manual" if owner is None else ("overflow" if in_step else "pressure")
            current = LoggedBracket(seq, trigger, owner, data.get("sourceCommandId"), [e])
            brackets.append(current)
        elif kind == "compaction/prune":
            prunes.update((seq, seq + 1))
        elif current is not None and not current.closed and (
                kind in ("compaction/summary", "compaction/end")
                or (kind == "user/message" and isinstance(e.get("surfaceOp"), dict)
                    and (data.get("source") or {}).get("compactionId") is not None)
                or (kind == "session-log-deepseek/delivery-accepted"
                    and data.get("throughSeq", -1) >= current.start)):
            current.events.append(e)
            if kind == "compaction/end":
                current.closed = True
        elif kind == "session/end-seed":
            current = None
        if kind == "step/start":
            in_step = True
        elif kind in ("step/end", "turn/end"):
            in_step = False
    return brackets, prunes


class _Driver:
    def __init__(self, real: Sequence[Mapping[str, Any]], header: Mapping[str, Any], policy: Policy,
                 summarizer: Summarizer | str, label: str) -> None:
        self.r = Replay(real, header, label=label)
        self.policy = policy
        self.summarizer = summarizer
        self.prune = policy.prune_config()
        self.brackets, self.prune_seqs = logged_brackets(real)
        self.by_seq = {s: b for b in self.brackets for s in b.seqs}
        self.pressure_logged = [b for b in self.brackets if b.trigger == "pressure"]
        self.prune_events = [e for e in real if e["seq"] in self.prune_seqs]
        self.window: int | None = None
        self.locked = False
        self.checked = False
        self.turn: Any = None
        self.manual: dict[Any, dict] = {}
        self.overflows = 0

    def run(self) -> Replay:
        r = self.r
        for e in self.r.real:
            kind, seq = e.get("type"), e["seq"]
            bracket = self.by_seq.get(seq)
            if bracket is not None or seq in self.prune_seqs:
                if bracket is not None and seq == bracket.start:
                    if bracket.trigger == "pressure" and self.turn is not None and not self.checked:
                        self.pressure()
                    elif bracket.trigger != "pressure":
                        self.fire(bracket)
                r.skip(e)
                continue
            if kind == "step/start" and self.turn is not None and not self.checked:
                self.pressure()
            override = None
            if kind == "command/done" and (e.get("data") or {}).get("commandId") in self.manual:
                override = self._command_done(e)
            if kind in ("assistant/message", "assistant/attempt") and self.window:
                if r.measure().total_tokens > (self.policy.context_window or self.window):
                    self.overflows += 1
            r.carry(e, patch=override)
            data = e.get("data") if isinstance(e.get("data"), dict) else {}
            if kind == "request/context" and is_safe_int(data.get("contextWindow")):
                self.window = int(data["contextWindow"])   # a JS number: never a boolean
            elif kind == "turn/start":
                self.turn, self.checked = data.get("turn"), False
            elif kind == "turn/end":
                self.turn = None
            elif kind in ("step/start", "step/end"):
                self.checked = False
            elif kind == "session/end-seed":
                self.locked = False
        if self.overflows:
            r.notices.append(f"the counterfactual sends {self.overflows} model call(s) a prompt larger "
                             "than the context window; the real calls did not overflow, so the log "
                             "cannot say what DSH would have done there (an overflow recovery)")
        return r

    # -- triggers

    def _settings(self) -> tuple[int | None, int]:
        window = self.policy.context_window or self.window
        if window is None:
            return None, 0
        header = self.r.meter.header or {}
        reserved = self.policy.max_tokens
        if reserved is None:
            config = header.get("config")
            reserved = config.get("maxTokens") if isinstance(config, dict) else None
            reserved = reserved if is_number(reserved) else 0   # none logged, or no number
        return self.policy.threshold(window, reserved)

    def pressure(self) -> None:
        self.checked = True
        threshold, retain = self._settings()
        r = self.r
        if threshold is None and self.window and not r.notices:
            r.notices.append("pressure compaction is disabled with these settings: the context window "
                             "minus maxTokens minus headroomTokens is <= 0 (v4 §5.8); pass "
                             "headroom_tokens (DSH's default is 65536)")
        if threshold is None or self.locked or r.measure().total_tokens < threshold:
            return
        if self.prune is not None:
            r.prune(self.prune, self._prune_reuse())
            if r.measure().total_tokens < threshold:
                return
        for _ in range(1 + self.policy.compaction_retries):
            seqs = self._select(retain)
            if seqs is None:
                return
            logged = None
            if self.summarizer == "logged":
                if not self.pressure_logged:
                    raise WhatIfError("summarizer 'logged': this policy compacts more often than the "
                                      "log did and there is no logged summary left to reuse")
                logged = self.pressure_logged.pop(0)
            if not self._attempt(seqs, self.turn, logged, "pressure") or self.locked:
                return
            if r.measure().total_tokens < threshold:
                return

    def fire(self, bracket: LoggedBracket) -> None:
        """A manual or overflow attempt where the log has one (retain 0)."""
        if self.locked:
            return
        if bracket.trigger == "overflow" and self.prune is not None:
            self.r.prune(self.prune, self._prune_reuse())
        seqs = self._select(0)
        logged = bracket if self.summarizer == "logged" else None
        if seqs is None:
            if bracket.command_id is not None:
                self.manual[bracket.command_id] = {"status": "empty"}
            return
        record = self._attempt(seqs, bracket.owner, logged, bracket.trigger,
                               command_id=bracket.command_id)
        if bracket.command_id is not None and record is not None:
            self.manual[bracket.command_id] = record

    def _prune_reuse(self) -> list[Mapping[str, Any]]:
        if self.summarizer != "logged":
            return []
        return self.prune_events

    def _select(self, retain: int) -> list[int] | None:
        nodes = self.r.nodes()
        seqs = [s for s, _ in nodes]
        found = select_compactable_range(seqs, [p for _, p in nodes], self.r.out, version=4,
                                         retain_tokens=retain)
        if found is None:
            return None
        return seqs[seqs.index(found.start):seqs.index(found.end) + 1]

    def _attempt(self, seqs: list[int], owner: Any, logged: LoggedBracket | None, trigger: str,
                 command_id: Any = None) -> dict | None:
        r = self.r
        if logged is not None:
            if not logged.closed:
                r.unclosed(logged, owner=owner, trigger=trigger)
                self.locked = True
                return None
            return r.compaction(seqs, owner=owner, summary=logged.summary(), error=logged.error(),
                                logged=logged.events, trigger=trigger, command_id=command_id)
        assert callable(self.summarizer)
        text = self.summarizer(r.messages(seqs))
        return r.compaction(seqs, owner=owner, summary=text, error=summary_text(text, given=False),
                            trigger=trigger, command_id=command_id)

    def _command_done(self, e: Mapping[str, Any]) -> dict[str, Any]:
        """What `command/done` of a re-decided `/compact` reports (v4 §5.7)."""
        record = self.manual[e["data"]["commandId"]]
        data: dict[str, Any] = {"sourceEventSeq": REMOVE}
        if record.get("status") == "empty":
            data.update(kind="success", text="No compactable history yet.")
        elif record["status"] == "failed":
            data.update(kind="error", text="Compaction could not produce a useful summary. "
                                           "The attempt is recorded in the session log.")
        else:
            data.update(kind="success", text=f"Compacted {len(record['shadowed_seqs'])} history "
                                             f"items (~{record['shadowed_tokens']} tokens).")
            data["sourceEventSeq"] = record["summary_seq"]
        return data


def replay_policy(events: Sequence[Mapping[str, Any]], header: Mapping[str, Any], policy: Policy,
                  summarizer: Summarizer | str, *, label: str) -> Replay:
    """The counterfactual of `events` under `policy` (module doc)."""
    if summarizer != "logged" and not callable(summarizer):
        raise WhatIfError("summarizer must be a callable summarize(messages) -> str or 'logged'")
    return _Driver(events, header, policy, summarizer, label).run()

"""The token meter's positional price fold. Layer: core.

Reference `planSurfaceTokens` / `commitSurfaceTokens` (v4) and `foldSurfaceTokens` (v0), spec §6.4:
an append adds the event's node with its own price; a replace finds `start` and `end` among the
current nodes (positional, `start` not after `end`), removes that range and puts the new node in
its place. `surfaceTokens` is the sum of the current prices. The fold trusts that the log passed the
surface fold (`workbench.core.surface`); an unresolvable range is corruption and raises `MeterError`
with the reference text. Plan/commit keeps a failed event from half-applying.

`SurfaceShape` records the fold once (which nodes every replace removed) so that the running surface
total of *any* meter at every event is one vectorised pass over that meter's per-event prices.

Positions are a `workbench.core.surface_order.SurfaceOrder` (each seq at its first occurrence, as
the reference's map rebuilt after every replace has it): no event searches or renumbers the surface.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.events import surface_types
from workbench.core.surface_order import SurfaceOrder
from workbench.core.tokens.heuristic import node_price
from workbench.errors import MeterError
from workbench.io.generations import seq_replace_keys
from workbench.io.jsjson import ABSENT
from workbench.io.jsvalues import js_str
from workbench.io.payloads import read_events

PriceFn = Callable[[dict], int]


def _is_seq_like(value: Any) -> bool:
    return type(value) is int or type(value) is float


@dataclass(frozen=True)
class SurfacePlan:
    """One validated transition: `target` is None for an append, else `(start_index, end_index)`."""

    seq: Any
    tokens: int
    delta_tokens: int
    target: tuple[int, int] | None


def replace_bounds(op: Any, *, version: int) -> tuple[Any, Any]:
    """The `(start, end)` seqs of a replace surfaceOp (v4 `startSeq`/`endSeq`, v0 `start`/`end`)."""
    if op is None:
        raise MeterError("Cannot read properties of null (reading 'startSeq')")
    if type(op) is not dict:
        return ABSENT, ABSENT
    if seq_replace_keys(version):
        return op.get("startSeq", ABSENT), op.get("endSeq", ABSENT)
    return op.get("start", ABSENT), op.get("end", ABSENT)


class SurfacePriceFold:
    """The priced surface as a list of `(seq, tokens, event_position)` nodes, folded event by event."""

    def __init__(self, *, version: int, price: PriceFn | None = None) -> None:
        self.version = version
        self._surface_types = surface_types(version)
        self._price = price or (lambda event: node_price(event, version=version))
        self._order = SurfaceOrder(first=True)
        self.seqs: list[Any] = self._order.nodes
        self.tokens: list[int] = []
        self.positions: list[int] = []
        self.surface_tokens = 0

    def is_surface_event(self, event: dict) -> bool:
        """Reference `isSurfaceEvent`: a surface-eligible type that carries a surfaceOp."""
        return type(event) is dict and event.get("type") in self._surface_types and "surfaceOp" in event

    def plan(self, event: dict, tokens: int | None = None) -> SurfacePlan:
        """Validate and price one surface event without changing the fold."""
        price = self._price(event) if tokens is None else tokens
        op = event["surfaceOp"]
        seq = event.get("seq", ABSENT)
        if op == "append":
            return SurfacePlan(seq, price, price, None)
        start, end = replace_bounds(op, version=self.version)
        i = self._order.get(start, -1) if _is_seq_like(start) else -1
        j = self._order.get(end, -1) if _is_seq_like(end) else -1
        if i == -1 or j == -1 or i > j:
            msg = (f"token surface: replace at seq {js_str(seq)} has invalid current range "
                   f"{js_str(start)}-{js_str(end)}")
            raise MeterError(msg)
        return SurfacePlan(seq, price, price - sum(self.tokens[i:j + 1]), (i, j))

    def commit(self, plan: SurfacePlan, position: int = -1) -> list[int]:
        """Apply a plan; returns the event positions of the nodes it removed."""
        self.surface_tokens += plan.delta_tokens
        if plan.target is None:
            self._order.append(plan.seq)
            self.tokens.append(plan.tokens)
            self.positions.append(position)
            return []
        i, j = plan.target
        removed = self.positions[i:j + 1]
        self._order.replace(i, j, plan.seq)
        self.tokens[i:j + 1] = [plan.tokens]
        self.positions[i:j + 1] = [position]
        return removed

    def fold(self, event: dict, position: int = -1) -> SurfacePlan | None:
        """Plan and commit one event; None for events that are not surface events."""
        if not self.is_surface_event(event):
            return None
        plan = self.plan(event)
        self.commit(plan, position)
        return plan

    def nodes(self) -> list[tuple[Any, int]]:
        return list(zip(self.seqs, self.tokens))


@dataclass(frozen=True)
class SurfaceTokens:
    """Result of `fold_surface_tokens`: final `(seq, tokens)` nodes, their sum, and one
    `(seq, tokens, delta_tokens)` step per surface event (v0 vector `steps`)."""

    nodes: tuple[tuple[Any, int], ...]
    surface_tokens: int
    steps: tuple[tuple[Any, int, int], ...]


def fold_surface_tokens(events: Sequence[dict], *, version: int, price: PriceFn | None = None) -> SurfaceTokens:
    """Reference `foldSurfaceTokens`: the priced surface after `events`."""
    fold = SurfacePriceFold(version=version, price=price)
    steps = []
    for position, event in enumerate(events):
        plan = fold.fold(event, position)
        if plan is not None:
            steps.append((plan.seq, plan.tokens, plan.delta_tokens))
    return SurfaceTokens(tuple(fold.nodes()), fold.surface_tokens, tuple(steps))


@dataclass(frozen=True)
class SurfaceShape:
    """Meter-independent record of the fold over a whole log.

    `surface` marks events that are surface events; `replaced[p]` lists the event positions that
    the replace at position `p` removed. With any meter's per-event prices, `totals` gives the
    surface total after every event and `nodes_at` the surface nodes after one event.
    """

    version: int
    surface: np.ndarray
    replaced: dict[int, tuple[int, ...]]
    ops: tuple[tuple[int, int, int], ...]
    error: str | None = None
    """The `MeterError` text of the event where folding stopped (later events are not folded)."""
    error_position: int | None = None

    def totals(self, prices: Sequence[int] | np.ndarray) -> np.ndarray:
        """Surface total after each event (int64 array aligned with the events)."""
        p = np.asarray(prices, dtype=np.int64)
        deltas = np.where(self.surface, p, 0)
        for position, removed in self.replaced.items():
            deltas[position] -= int(p[list(removed)].sum()) if removed else 0
        return np.cumsum(deltas)

    def nodes_at(self, position: int) -> list[int]:
        """Event positions of the surface nodes after the event at `position`, in surface order."""
        current: list[int] = []
        for pos, i, j in self.ops:
            if pos > position:
                break
            if i < 0:
                current.append(pos)
            else:
                current[i:j + 1] = [pos]
        return current


def surface_shape(events: Sequence[dict], *, version: int, strict: bool = False,
                  positions: Iterable[int] | None = None) -> SurfaceShape:
    """Fold `events` once (prices ignored) and record its shape.

    `positions` may restrict the pass to the events of surface-eligible types (read with
    `workbench.io.payloads.read_events`), so a large log is not parsed whole. An unresolvable replace range raises `MeterError` when `strict`,
    else folding stops there and the shape records the error (the surface then stays as it was
    before that event).
    """
    fold = SurfacePriceFold(version=version, price=lambda event: 0)
    surface = np.zeros(len(events), dtype=bool)
    replaced: dict[int, tuple[int, ...]] = {}
    ops: list[tuple[int, int, int]] = []
    for position, event in read_events(events, range(len(events)) if positions is None else positions):
        if not fold.is_surface_event(event):
            continue
        try:
            plan = fold.plan(event, 0)
        except MeterError as exc:
            if strict:
                raise
            return SurfaceShape(version, surface, replaced, tuple(ops), str(exc), position)
        surface[position] = True
        if plan.target is None:
            ops.append((position, -1, -1))
        else:
            ops.append((position, plan.target[0], plan.target[1]))
        removed = fold.commit(plan, position)
        if plan.target is not None:
            replaced[position] = tuple(removed)
    return SurfaceShape(version, surface, replaced, tuple(ops))


__all__ = [
    "SurfacePlan", "SurfacePriceFold", "SurfaceShape", "SurfaceTokens", "fold_surface_tokens",
    "replace_bounds", "surface_shape",
]

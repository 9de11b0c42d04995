"""Per-type steps of the log's one pass (`workbench.core.log_pass.LogPass`). Layer: core.

A consumer of the pass says, per event type, what it does with an event of that type: a
`Steps` table maps a type to a `Step` (``step(seq, event)``). `merged` joins the tables of every
consumer into one, so the pass looks an event's type up once and runs only the steps that type
needs, in the order the tables are given (a type no table names costs that one look-up).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

Step = Callable[[int, Mapping[str, Any]], None]
Steps = Mapping[str, Step]


def merged(tables: Iterable[Steps]) -> dict[str, Step]:
    """One table running, for each type, the steps of every table that names it, in order."""
    found: dict[str, list[Step]] = {}
    for table in tables:
        for etype, step in table.items():
            found.setdefault(etype, []).append(step)
    return {etype: steps[0] if len(steps) == 1 else _chain(tuple(steps))
            for etype, steps in found.items()}


def _chain(steps: tuple[Step, ...]) -> Step:
    if len(steps) == 2:
        first, second = steps

        def both(seq: int, event: Mapping[str, Any]) -> None:
            first(seq, event)
            second(seq, event)
        return both

    def each(seq: int, event: Mapping[str, Any]) -> None:
        for step in steps:
            step(seq, event)
    return each


__all__ = ["Step", "Steps", "merged"]

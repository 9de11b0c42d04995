"""Per-type steps of the log's one pass (`workbench.core.log_pass.LogPass`). Layer: core.

A consumer of the pass says, per event type, what it does with an event of that type: a
`Steps` table maps a type to a `Step` (``step(seq, event)``) or to a tuple of them. `merged`
joins the tables of every consumer into one flat table of tuples, so the pass looks an event's
type up once and runs the steps that type needs in one loop, in the order the tables are given
(a type no table names costs that one look-up; a merged table given to `merged` again is
spliced, not nested).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Union

Step = Callable[[int, Mapping[str, Any]], None]
Steps = Mapping[str, Union[Step, "tuple[Step, ...]"]]


def merged(tables: Iterable[Steps]) -> dict[str, tuple[Step, ...]]:
    """One table giving, for each type, the steps of every table that names it, in order."""
    found: dict[str, list[Step]] = {}
    for table in tables:
        for etype, step in table.items():
            steps = found.setdefault(etype, [])
            if type(step) is tuple:
                steps.extend(step)
            else:
                steps.append(step)   # type: ignore[arg-type]
    return {etype: tuple(steps) for etype, steps in found.items()}


__all__ = ["Step", "Steps", "merged"]

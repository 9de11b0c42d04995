"""The one rule for a seq argument: which event a caller names. Layer: core.

Every place that takes a seq from a user reads it here: the CLI's ``--at``
(`workbench.cli.common.at_or_usage`), the widget's `Workbench.goto` / ``step=``, and the
library's methods taking a seq (`Session.surface_df`, `Session.price`,
`Inspector.save_request`). The rule is Python's index rule over the log's seqs: ``0..LAST``,
or negative from the end (``-1`` = the last event, ``-(LAST + 1)`` = the first).

Invariants: a seq is an integer (an ``int`` or a numpy integer); a bool, a float, a string or
anything else is refused with `InvalidArgument`, never truncated or parsed; a value outside
the log is refused with `SeqOutOfRange` (`seq_index` returns None instead), and the message
names the span (`seq_span`), also for an empty log (``LAST`` = -1), which has no seq to name.
"""
from __future__ import annotations

import operator
from typing import Any

from workbench.errors import InvalidArgument, SeqOutOfRange


def seq_span(last: int) -> str:
    """The seqs a log whose last seq is `last` accepts, in words."""
    if last < 0:
        return "the log is empty"
    return f"seqs 0..{last}, or -1..-{last + 1} from the end"


def seq_int(value: Any) -> int:
    """`value` as an integer seq, or `InvalidArgument` (a bool, float or string is no seq)."""
    if isinstance(value, bool):
        raise InvalidArgument(f"seq {value!r} is not an integer")
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgument(f"seq {value!r} is not an integer") from None


def seq_index(value: int, last: int) -> int | None:
    """The seq an integer `value` names in a log whose last seq is `last` (None: outside)."""
    at = value + last + 1 if value < 0 else value
    return at if 0 <= at <= last else None


def resolve_seq(value: Any, last: int) -> int:
    """The seq `value` names in a log whose last seq is `last` (module doc); raises
    `InvalidArgument` for a value that is not an integer, `SeqOutOfRange` outside the log."""
    at = seq_index(seq_int(value), last)
    if at is None:
        raise SeqOutOfRange(f"seq {value!r} is outside the log ({seq_span(last)})")
    return at


__all__ = ["resolve_seq", "seq_index", "seq_int", "seq_span"]

"""Rows of a format-v4 log: admission of retired/forbidden syntax and the envelope decoder.
Layer: io (stdlib only).

Every line after the header is exactly one event (v4 spec §1.2). The reference reads a line in two
steps, reproduced here with its exact texts:

1. **row admission** (``assertV4RowAdmission``, spec §1.7, in `workbench.io.admission_v4`):
   retired or forbidden syntax refuses the whole log even in a tail that would otherwise be
   dropped;
2. **envelope decode** (the released row framing, ``decodeEvent``/``decodeSeqRanges``, spec §1.4):
   exact key set, ``time`` a safe integer other than ``-0``, ``ignorable`` only ``true``,
   ``sourceEventSeqs`` range pairs ``[a,b]`` expanded (values unique and earlier than the event's
   seq; strictly increasing when a pair was used), then ``seq === index`` (JavaScript ``===``: ``3.0``
   is 3, ``-0`` is 0, ``"3"`` is not) and the inherited ``session/end-seed`` marker.

Problems become `RowIssue`s for the line scanner (`workbench.io.scan`); decode problems carry the
reference wrapper ``corrupt session log: invalid committed event at line N: <detail>``.

Range pairs are the one storage encoding whose decoded size is not bounded by the bytes read: a
row's pairs expand to at most its seq values, but every row may cite all earlier seqs, so a log
of n such rows of a few bytes each expands to n²/2. The codecs (v4, v3 and v0's DSH 0.1.2 pairs)
charge each expanded list to `charge_ranges`: past `MAX_RANGE_SEQS` plus `RANGE_SEQS_PER_EVENT`
per event, reading stops at that line (rule ``sources_limit``), a workbench bound the reference
does not have. A log whose pairs each cite the events since the last one never comes near it.
"""
from __future__ import annotations

from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.admission_v4 import ADMISSION_TYPES as _ADMISSION_TYPES
from workbench.io.admission_v4 import SyntaxRefusal, admit_row
from workbench.io.jsjson import ABSENT, is_neg_zero, is_safe_int
from workbench.io.jsvalues import js_str
from workbench.io.scan import RowIssue

_EVENT_REQUIRED = ("type", "seq", "time", "data")
_EVENT_KEYS = frozenset(_EVENT_REQUIRED + ("ignorable", "sourceEventSeqs", "surfaceOp"))
_MAX = 2**53 - 1

MAX_RANGE_SEQS = 1 << 22
"""Seqs that the range pairs of a log may expand to in all, beyond `RANGE_SEQS_PER_EVENT` per
event (module doc)."""

RANGE_SEQS_PER_EVENT = 8
"""Seqs per event (by the citing event's seq) that range pairs may expand to beyond
`MAX_RANGE_SEQS`: the bound grows with the log, so memory stays linear in its length."""


def charge_ranges(spent: int, expanded: int, seq: int, line: int) -> int:
    """`spent` plus the `expanded` seqs of the range-pair list of the event `seq` at `line`;
    raises the fatal ``sources_limit`` `RowIssue` past the log's bound (module doc)."""
    spent += expanded
    if spent > MAX_RANGE_SEQS + RANGE_SEQS_PER_EVENT * seq:
        raise RowIssue("sources_limit", f"stopped reading at line {line}: its sourceEventSeqs range "
                       f"pairs bring the log's expanded range seqs to {spent:,}, more than "
                       f"{MAX_RANGE_SEQS:,} + {RANGE_SEQS_PER_EVENT} per event (MAX_RANGE_SEQS, the "
                       "workbench's memory bound; the reference expands them all)", fatal=True)
    return spent

__all__ = ["MAX_RANGE_SEQS", "RANGE_SEQS_PER_EVENT", "RowDecodeError", "SyntaxRefusal", "V4Codec", "admit_row",
           "charge_ranges", "decode_envelope", "decode_seq_ranges", "expand_sources", "strict_equal"]


# -- envelope decode (reference: released v2 decodeEvent / decodeSeqRanges) ---------------------

class RowDecodeError(WorkbenchError):
    """A decoder failure: `kind` is ``row_invalid``, ``sources_storage`` or ``seq_gap_committed``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _storage_count(value: Any, label: str) -> Any:
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise RowDecodeError("sources_storage", f"{label} must be a non-negative safe integer")
    return value


def decode_seq_ranges(value: Any, max_entries: Any) -> list:
    """Expand storage-form ``sourceEventSeqs`` (members and inclusive ``[a,b]`` pairs)."""
    if type(value) is not list:
        raise RowDecodeError("sources_storage", "sourceEventSeqs must be an array")
    output: list = []
    has_range = False
    for entry in value:
        if type(entry) is not list:
            output.append(_storage_count(entry, "sourceEventSeqs member"))
            continue
        if len(entry) != 2:
            raise RowDecodeError("sources_storage", "sourceEventSeqs range must be a [start, end] pair")
        start = _storage_count(entry[0], "sourceEventSeqs range start")
        end = _storage_count(entry[1], "sourceEventSeqs range end")
        if start > end or end >= max_entries or end - start + 1 > max_entries - len(output):
            raise RowDecodeError("sources_storage", "sourceEventSeqs range exceeds its event seq")
        output.extend(range(int(start), int(end) + 1))
        has_range = True
    seen: set = set()
    for source in output:
        if source >= max_entries or source in seen:
            raise RowDecodeError("sources_storage", "sourceEventSeqs ranges must contain unique earlier seqs")
        seen.add(source)
    if has_range and any(output[i] <= output[i - 1] for i in range(1, len(output))):
        raise RowDecodeError("sources_storage", "sourceEventSeqs ranges must be strictly increasing")
    return output


def decode_envelope(value: Any, row: int) -> dict:
    """The logical event of one row (sources expanded); raises `RowDecodeError`."""
    if type(value) is not dict:
        raise RowDecodeError("row_invalid", f"released v2 row {row} must be an object")
    for key in _EVENT_REQUIRED:
        if key not in value:
            raise RowDecodeError("row_invalid", f"released v2 row {row} lacks required field {key}")
    if len(value) > 4:
        for key in value:
            if key not in _EVENT_KEYS:
                raise RowDecodeError("row_invalid", f"released v2 row {row} has unexpected field {key}")
    if type(value["type"]) is not str:
        raise RowDecodeError("row_invalid", f"released v2 row {row} type must be a string")
    time = value["time"]
    if not (type(time) is int and -_MAX <= time <= _MAX) and (not is_safe_int(time) or is_neg_zero(time)):
        raise RowDecodeError("row_invalid", f"released v2 row {row} time must be a safe integer")
    ignorable = value.get("ignorable", ABSENT)
    if ignorable is not ABSENT and ignorable is not True:
        raise RowDecodeError("row_invalid", f"released v2 row {row} ignorable must be true when present")
    sources = value.get("sourceEventSeqs", ABSENT)
    if sources is ABSENT:
        return value
    seq = value["seq"]
    if not is_safe_int(seq) or seq < 0 or is_neg_zero(seq):
        raise RowDecodeError("row_invalid", f"released v2 row {row} seq must be a non-negative safe integer")
    if type(sources) is list and all(type(s) is not list for s in sources):
        decoded = decode_seq_ranges(sources, seq)
        return value if decoded == sources else {**value, "sourceEventSeqs": decoded}
    return {**value, "sourceEventSeqs": decode_seq_ranges(sources, seq)}


def expand_sources(event: dict) -> dict:
    """Re-apply the (already validated) range expansion to a re-parsed event line; a line that
    no longer holds what was validated (the file changed) may expand to at most its seq entries
    (the validated list is distinct earlier seqs), else `RowDecodeError`."""
    sources = event.get("sourceEventSeqs")
    if type(sources) is list and any(type(s) is list for s in sources):
        out: list = []
        bound = event.get("seq")
        for entry in sources:
            if type(entry) is list:
                lo, hi = int(entry[0]), int(entry[1])
                if type(bound) not in (int, float) or hi - lo + 1 + len(out) > bound:
                    raise RowDecodeError("row_invalid", "re-read sourceEventSeqs ranges exceed the "
                                         "event's seq")
                out.extend(range(lo, hi + 1))
            else:
                out.append(entry)
        return {**event, "sourceEventSeqs": out}
    return event


def strict_equal(value: Any, expected: int) -> bool:
    """JavaScript ``value === expected`` for an integer `expected` (``3.0`` yes, ``true``/``"3"`` no)."""
    kind = type(value)
    return (kind is int or kind is float) and value == expected


class V4Codec:
    """`RowCodec` of format v4 for `workbench.io.scan.LineScanner` (one event per line).

    Tracks the inherited ``session/end-seed {"inherited": true}`` marker: `inherited` is the seq of
    the last one seen (the fork cut, spec v4 §1.3).
    """

    unparsable_kind = "unparsable_committed"
    after_issue_types = frozenset(("turn/end", *_ADMISSION_TYPES))
    """Row types that still matter after the issue: ``turn/end`` and the admission-screened ones."""
    inline = False
    packed = False

    __slots__ = ("inherited", "ranged")

    def __init__(self) -> None:
        self.inherited: Any = None
        self.ranged = 0
        """Seqs the log's range pairs expanded to so far (`charge_ranges`)."""

    def screen(self, value: Any, raw: bytes) -> None:
        if type(value) is dict:
            try:
                admit_row(value, raw)
            except SyntaxRefusal as exc:
                raise exc.to_issue() from None

    @staticmethod
    def holds_turn_end(value: Any) -> bool:
        return type(value) is dict and value.get("type") == "turn/end"

    screened = _ADMISSION_TYPES
    """The row types `take` runs `admit` on (the types any admission rule applies to)."""
    admit = staticmethod(admit_row)
    """The row admission of the format (raises `SyntaxRefusal`)."""

    def take(self, value: Any, raw: bytes, line: int, expected: int) -> dict | None:
        """`screen` then `decode` of one line in one call, returning the event itself.

        The common row (a plain envelope: integer ``seq`` equal to `expected`, integer ``time``,
        no ``ignorable``/``sourceEventSeqs``, not a ``session/end-seed``) is settled here; any
        other goes the general way (None: a row that is not an object or lacks a required key;
        else `decode`). Raises what `screen` or `decode` raise (or `SyntaxRefusal`, which the
        general path turns into the same refusal), with no side effect.
        """
        try:
            kind = value["type"]
            seq = value["seq"]
            time = value["time"]
        except (KeyError, TypeError):  # not an object, or a required key missing
            return None
        if kind in self.screened:
            self.admit(value, raw)
        if (type(seq) is int and seq == expected and type(time) is int and -_MAX <= time <= _MAX
                and type(kind) is str and "data" in value and kind != "session/end-seed"):
            if len(value) == 4:
                return value
            if value.keys() <= _EVENT_KEYS and "ignorable" not in value:
                sources = value.get("sourceEventSeqs", ABSENT)
                if sources is ABSENT:
                    return value
                if type(sources) is list and len(sources) == 1:  # a plain earlier seq: kept as it is
                    source = sources[0]
                    if type(source) is int and 0 <= source < seq:
                        return value
        return self.decode(value, line, expected)[0]

    def decode(self, value: Any, line: int, expected: int) -> list:
        row = expected  # the scanner decodes until the first issue: row index == events so far
        try:
            event = decode_envelope(value, row)
        except RowDecodeError as exc:
            raise RowIssue(exc.kind, f"corrupt session log: invalid committed event at line {line}: {exc.message}",
                           turn_end=self.holds_turn_end(value)) from None
        seq = event["seq"]
        if not strict_equal(seq, expected):
            raise RowIssue("seq_gap_committed",
                           f"corrupt session log: invalid committed event at line {line}: released v2 row {row} "
                           f"has seq gap (expected {expected}, got {js_str(seq)})",
                           turn_end=event["type"] == "turn/end")
        inherited = False
        if event["type"] == "session/end-seed":
            data = event["data"]
            if type(data) is not dict:
                raise RowIssue("row_invalid", f"corrupt session log: invalid committed event at line {line}: "
                               f"session/end-seed {js_str(seq)} data must be an object")
            inherited = data.get("inherited") is True
        sources = value.get("sourceEventSeqs")
        if type(sources) is list and event["sourceEventSeqs"] is not sources:   # pairs expanded
            self.ranged = charge_ranges(self.ranged, len(event["sourceEventSeqs"]), expected, line)
        if inherited:
            self.inherited = expected
        return [event]

    @staticmethod
    def reparse(event: dict) -> dict:
        """Bring a re-parsed line back to its logical form (sourceEventSeqs ranges expanded)."""
        return expand_sources(event)

    def finish(self, is_seeded: Any) -> RowIssue | None:
        """The decoder's end-of-log check of the inherited marker against the header."""
        if is_seeded is True and self.inherited is None:
            return RowIssue("inherited_marker", "released v2 seeded Session lacks an inherited end-seed marker",
                            name="SessionFormatError")
        if is_seeded is not True and self.inherited is not None:
            return RowIssue("inherited_marker", "released v2 unseeded Session contains an inherited end-seed marker",
                            name="SessionFormatError")
        return None

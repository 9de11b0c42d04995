"""`LogIndex`: the one per-seq store of a log, filled during the loader's one pass while each
event is in hand (`workbench.core.index_builder.LogIndexBuilder`). Layer: core (stdlib, numpy; no pandas, no pyarrow).

Every per-event value that only needs the event itself (and the turn/step it sits in) is taken
here, once, so a 1.3M-event log is parsed once, not once per consumer: type, time, structural
turn and step, surface op and replace range, ``sourceEventSeqs``, the carried message's role,
source kind and id, a preview (`workbench.core.preview`), the DSH heuristic node price (v0 spec
§6.4) of every surface-eligible event, the tool-call facts pairing reads
(`workbench.core.tool_facts.ToolFacts`) and the first stream time of each v4 assistant
message or attempt (request timing). The frames and the views read these columns.

Storage is compact, because the index lives as long as the session: numbers are int64 arrays
with a missing-mask (`MaskedInts`; a missing time holds int64 min, NumPy's NaT, so the frames
read the column as datetime64 without a copy), small vocabularies (type, role, source kind) are int32
codes (`Vocab`), seq lists are one flat array plus offsets (the Arrow list layout), and
previews and message ids are UTF-8 buffers plus offsets (`Texts`; the frames layer hands them
to Arrow without a copy). Stream starts are two arrays (seq, time) for the events that have one.

Turn and step are *structural*: the turn opened by the latest `turn/start` and not yet closed by
its `turn/end` (both boundary events included), likewise for steps (v0 spec §3.3). That is what
a reader groups by; it differs from `data.turn` only on pruned tool-result copies, which keep
the turn of the original result (v0 spec §5.9), and on between-turn events.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.index_columns import MaskedInts, Texts, Vocab
from workbench.core.tool_facts import INT_LIMIT, ToolFacts, as_int


def seq_list(value: Any) -> list[int] | None:
    """A logical event's ``sourceEventSeqs`` as ints (an entry that is no integer left out). Range
    pairs are a storage encoding its codec expanded (`workbench.io.rows_v4`); one that did not
    decode is a list entry, not a range of seqs here."""
    if not isinstance(value, list):
        return None
    out: list[int] = []
    for item in value:
        if type(item) is int and -INT_LIMIT < item < INT_LIMIT:   # as_int's common case
            out.append(item)
            continue
        v = as_int(item)
        if v is not None:
            out.append(v)
    return out


@dataclass(frozen=True, slots=True)
class LogIndex:
    """Per-event values of one pass (index = seq); see the module docstring."""

    n: int
    time: MaskedInts
    type_codes: np.ndarray
    types: Vocab
    turn: MaskedInts
    step: MaskedInts
    role_codes: np.ndarray
    roles: Vocab
    source_kind_codes: np.ndarray
    source_kinds: Vocab
    surface_op: np.ndarray          # int8: -1 none, 0 append, 1 replace
    replace_seqs: np.ndarray        # int64 ascending: the events with a replace op ...
    replace_starts: MaskedInts      # ... its start (startSeq) and end (endSeq), one per row
    replace_ends: MaskedInts
    source_offsets: np.ndarray      # int64, n + 1 entries
    source_values: np.ndarray       # int64, flat
    source_present: np.ndarray      # bool
    price: np.ndarray               # int64 heuristic node price; -1 for log-only types
    message_id: Texts
    preview: Texts
    tools: ToolFacts
    stream_seqs: np.ndarray         # int64 ascending: v4 assistant message/attempt seqs ...
    stream_times: np.ndarray        # int64: ... and the time of their first stream record
    seq: np.ndarray                 # int64 0..n-1, one array every frame's seq column shares

    @property
    def replace_start(self) -> MaskedInts:
        """The replace op's start (startSeq) per seq; missing where there is none."""
        return self._dense(self.replace_starts)

    @property
    def replace_end(self) -> MaskedInts:
        """The replace op's end (endSeq) per seq; missing where there is none."""
        return self._dense(self.replace_ends)

    def _dense(self, rows: MaskedInts) -> MaskedInts:
        values, mask = np.zeros(self.n, dtype=np.int64), np.ones(self.n, dtype=bool)
        values[self.replace_seqs], mask[self.replace_seqs] = rows.values, rows.mask
        return MaskedInts(values, mask)

    def replace_range_at(self, seq: int) -> tuple[int | None, int | None]:
        """(start, end) of the replace op at `seq`; (None, None) without one."""
        k = int(np.searchsorted(self.replace_seqs, seq))
        if k < len(self.replace_seqs) and self.replace_seqs[k] == seq:
            return self.replace_starts[k], self.replace_ends[k]
        return None, None

    @property
    def type(self) -> np.ndarray:
        """Object array of event type strings."""
        return self.types.decode(self.type_codes)

    def preview_at(self, seq: int) -> str | None:
        return self.preview[seq]

    def message_id_at(self, seq: int) -> str | None:
        return self.message_id[seq]

    def stream_start_at(self, seq: int) -> int | None:
        """Time of the first stream record of the v4 assistant message/attempt at `seq`."""
        k = int(np.searchsorted(self.stream_seqs, seq))
        if k < len(self.stream_seqs) and self.stream_seqs[k] == seq:
            return int(self.stream_times[k])
        return None

    def seq_of_type(self, etype: str) -> np.ndarray:
        """Seqs of every event of type `etype` (ascending)."""
        code = self.types.codes.get(etype)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        return np.nonzero(self.type_codes == code)[0]


__all__ = ["LogIndex", "seq_list"]

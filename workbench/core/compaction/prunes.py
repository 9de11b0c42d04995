"""Model-free tool-result prunes read back from the log (v0 §5.9, v4 §5.9). Layer: core.

A prune is `compaction/prune {shadowedRange, shadowedSeqs: [s], shadowedTokenCount}` followed
immediately by a `tool/result` replacing node `s` with the same data except the result content.
It has no bracket and no id; the pruner reports `{originalSeq, replacementSeq, callId,
charsBefore, charsAfter}` but never logs them, so they are recomputed here from the two events
(code points of the text the pruner measures, `pruner.tool_result_content`). The pairing of a
prune with its replacement is `brackets._scan`'s.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.compaction.pruner import measure_content, tool_result_content
from workbench.core.timeline import SurfaceTimeline
from workbench.io.jsjson import is_safe_int


def _data(event: Mapping[str, Any]) -> dict:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True, slots=True)
class PruneRecord:
    """One model-free tool-result prune (v0 §5.9, v4 §5.9): `compaction/prune` at `prune_seq`
    and the replacing `tool/result` at `replacement_seq` (None when missing)."""

    prune_seq: int
    logged_shadowed_seqs: tuple[Any, ...]
    logged_shadowed_tokens: Any
    original_seq: Any
    replacement_seq: int | None
    call_id: Any
    original_tokens: int | None
    replacement_tokens: int | None
    chars_before: int | None
    chars_after: int | None
    fold_shadowed_seqs: tuple[int, ...] | None


def prune_record(prune_seq: int, replacement_seq: int | None,
                 events: Sequence[Mapping[str, Any]],
                 timeline: SurfaceTimeline, price: Callable[[int], int],
                 version: int) -> PruneRecord:
    """The record of the prune at `prune_seq` and its replacement (None when missing)."""
    data = _data(events[prune_seq])
    seqs = data.get("shadowedSeqs")
    seqs = tuple(seqs) if isinstance(seqs, list) else ()
    original = seqs[0] if seqs else None
    at = int(original) if is_safe_int(original) else -1   # a JS number: 3.0 is seq 3, true is none
    original_event = events[at] if 0 <= at < prune_seq else None
    chars_before = chars_after = call_id = None
    original_tokens = replacement_tokens = None
    fold_shadowed = None
    if original_event is not None:
        original_tokens = price(at)
        message = _data(original_event).get("message")
        content = tool_result_content(message, version=version)
        chars_before = measure_content(content) if content is not None else None
        source = message.get("source") if isinstance(message, dict) else None
        call_id = source.get("callId") if isinstance(source, dict) else None
    if replacement_seq is not None:
        replacement_tokens = price(replacement_seq)
        message = _data(events[replacement_seq]).get("message")
        content = tool_result_content(message, version=version)
        chars_after = measure_content(content) if content is not None else None
        landed = timeline.replacement_by_seq.get(replacement_seq)
        fold_shadowed = landed.shadowed if landed is not None else None
    return PruneRecord(prune_seq, seqs, data.get("shadowedTokenCount"), original,
                       replacement_seq, call_id, original_tokens, replacement_tokens,
                       chars_before, chars_after, fold_shadowed)

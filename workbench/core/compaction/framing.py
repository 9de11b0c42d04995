"""The checkpoint framing DSH wraps around a compaction summary (reference `frameSummary`,
v0 §5.5, v4 §5.5). Layer: core (stdlib only).

A checkpoint `user/message` is ``[preamble + open tag, *summary blocks, close tag]``;
`frame_summary` builds it from a logged summary and `checkpoint_body` undoes it for display.
"""
from __future__ import annotations

from typing import Any

CHECKPOINT_PREAMBLE = (
    "This is an automatically generated checkpoint condensing an earlier span of the "
    "conversation to free up context. Treat the captured context as established background and "
    "build on it without restating it. Continue the task directly from the messages that follow, "
    "without acknowledging this checkpoint.")
"""Reference `CHECKPOINT_PREAMBLE` (v0 §5.5, v4 §5.5): a format constant."""
SUMMARY_OPEN_TAG = "<compacted-summary>"
SUMMARY_CLOSE_TAG = "</compacted-summary>"


def frame_summary(summary: Any) -> list[Any]:
    """Checkpoint content for a logged summary (reference `frameSummary`)."""
    blocks = list(summary) if isinstance(summary, list) else []
    return [{"type": "text", "text": f"{CHECKPOINT_PREAMBLE}\n\n{SUMMARY_OPEN_TAG}"}, *blocks,
            {"type": "text", "text": SUMMARY_CLOSE_TAG}]


def checkpoint_body(content: Any) -> str | None:
    """The summary text a checkpoint message frames (`frame_summary` undone): the blocks between
    the preamble block and the closing tag, joined; None when `content` is not so framed."""
    if not isinstance(content, list) or len(content) < 2:
        return None
    first = content[0].get("text") if isinstance(content[0], dict) else None
    if type(first) is not str or not first.startswith(CHECKPOINT_PREAMBLE):
        return None
    texts = [b.get("text") if isinstance(b, dict) else None for b in content]
    if not (type(texts[0]) is str and texts[0].startswith(CHECKPOINT_PREAMBLE)
            and texts[0].rstrip().endswith(SUMMARY_OPEN_TAG)
            and type(texts[-1]) is str and texts[-1].strip() == SUMMARY_CLOSE_TAG):
        return None
    return "\n\n".join(t for t in texts[1:-1] if type(t) is str).strip("\n")

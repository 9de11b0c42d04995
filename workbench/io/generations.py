"""The feature matrix of the log generations: which format rule applies to which version.
Layer: io (stdlib only).

One home for "does generation N have feature F" (v4 spec §0.3 feature matrix, §0.4 migration
steps), so no module compares version numbers itself. A feature exists from the generation whose
migration step introduced it, and every later generation keeps it:

| feature | from | v0 (DSH 0.1.2) | v3 (DSH 0.1.5) | v4 (DSH 0.2.1) |
|---|---|---|---|---|
| `nested_streams`: streams in `data.stream`, `assistant/attempt`, one event per line | 2 | no | yes | yes |
| `seq_replace_keys`: replace ops `startSeq`/`endSeq` (earlier than the event) | 3 | no | yes | yes |
| `system_node`: the system prompt is a `system/message` surface node, not `header.system` | 3 | no | yes | yes |
| `tool_role`: tool results are tool-role messages (no `tool-result` wrapper block) | 4 | no | no | yes |
| `producer_sources`: message sources are producer kinds (`compact-checkpoint`, ...) | 4 | no | no | yes |

Generations 1 and 2 were never released (no runtime on PyPI writes them) and are refused, as is
anything above 4 (written by a newer harness). Rules that v3 shares with v4 (nested streams, the
fold, relationships, `isSeeded` headers, the v4 event vocabulary) follow `nested_streams`; the
message-shape rules follow `tool_role` / `producer_sources`.
"""
from __future__ import annotations

READABLE = (0, 3, 4)
"""The generations this build reads: v0 (DSH 0.1.x), v3 (DSH 0.1.5) and v4 (DSH 0.2.1)."""

CURRENT = 4
"""The generation the current runtime writes, and the target of `workbench migrate`."""


def nested_streams(version: int) -> bool:
    """Streams nested in `assistant/message|attempt.data.stream`, `isSeeded` headers, the v4
    vocabulary and load-time relationship validation (v1→v2 step and later)."""
    return version >= 2


def seq_replace_keys(version: int) -> bool:
    """Replace ops spelled `{op, startSeq, endSeq}`, both endpoints earlier than the event."""
    return version >= 3


def system_node(version: int) -> bool:
    """The system prompt is a `system/message` surface node (the protected head), the request
    envelope is the tools only, compaction ranges start after the head (v2→v3 step)."""
    return version >= 3


def tool_role(version: int) -> bool:
    """Tool results are `role: "tool"` messages with `toolCallId` (v3→v4 step); before, a
    `role: "user"` message wrapping one `tool-result` block."""
    return version >= 4


def producer_sources(version: int) -> bool:
    """Message sources are producer kinds (`compact-checkpoint`, `system-prompt`, ...); before,
    `{kind: "plugin", plugin: NAME}` (v3→v4 step)."""
    return version >= 4


def rules_for(format_version: object) -> int:
    """The generation whose rules read a log with this header version: itself when readable,
    v4 for a newer one, v0 otherwise (a refused or header-less log is still shown leniently)."""
    if isinstance(format_version, (int, float)) and not isinstance(format_version, bool):
        if format_version in READABLE:
            return int(format_version)
        if format_version > CURRENT:
            return CURRENT
    return 0


__all__ = ["CURRENT", "READABLE", "nested_streams", "rules_for", "producer_sources", "seq_replace_keys", "system_node",
           "tool_role"]

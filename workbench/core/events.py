"""Event taxonomy of the formats: which types exist, which can join the surface.
Layer: core. Source: v0 spec §3.1–3.2 (48 types), v4 spec §3.1–3.2 (62 types). Format v3 (DSH
0.1.5) reads with the v4 vocabulary (its logs hold `system/message`, `subagent/catalog`, nested
streams; `workbench.io.generations.nested_streams`)."""
from __future__ import annotations

from workbench.io.generations import nested_streams

KNOWN_TYPES_V4: frozenset[str] = frozenset({
    "agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided",
    "approval/policy", "assistant/attempt", "assistant/message", "command/done", "command/run",
    "compaction/end", "compaction/prune", "compaction/start", "compaction/summary",
    "deliverables/presented", "developer/message", "feedback/message-delete",
    "feedback/message-put", "feedback/record", "goal/change", "hook/invoked", "hook/result",
    "image/offload", "job/registered", "job/settled", "llm/retry", "llm/retry-started",
    "model/selection", "permission/preset", "plan/mode", "request/context", "request/header",
    "sandbox/mode", "schedule/change", "session-log-deepseek/delivery-accepted",
    "session/end-seed", "session/title", "session/title-llm-request", "step/end", "step/start",
    "subagent/catalog", "subagent/descriptor", "subagent/model-selection-policy",
    "system/message", "team/member", "team/message/delivered", "team/message/queued",
    "team/task", "todo/write", "tool-workflow/agent-end", "tool-workflow/agent-start",
    "tool-workflow/run-end", "tool-workflow/run-start", "tool/call", "tool/ptc-dispatch",
    "tool/ptc-dispatch-start", "tool/result", "turn/end", "turn/start", "user/message",
    "web/deepseek-search-llm-request", "working-directory/change", "workspace/changes",
})
"""The 62 event types the released v4 reader interprets (its KNOWN_SESSION_EVENT_TYPES)."""

_V4_ONLY = frozenset({
    "assistant/attempt", "deliverables/presented", "developer/message", "feedback/message-delete",
    "feedback/message-put", "image/offload", "job/registered", "job/settled", "model/selection",
    "session-log-deepseek/delivery-accepted", "subagent/catalog",
    "subagent/model-selection-policy", "system/message", "tool/ptc-dispatch",
    "tool/ptc-dispatch-start", "working-directory/change", "workspace/changes",
})

KNOWN_TYPES_V0: frozenset[str] = (KNOWN_TYPES_V4 - _V4_ONLY) | frozenset({
    "assistant/chunk", "tool/code-dispatch-start", "tool/code-dispatch",
})
"""The 48 event types of format v0 (DSH 0.1.1, spec §3.2)."""

SURFACE_TYPES_V0: frozenset[str] = frozenset({"user/message", "assistant/message", "tool/result"})
SURFACE_TYPES_V4: frozenset[str] = SURFACE_TYPES_V0 | {"system/message", "developer/message"}

PACKED_ROW_TAGS: frozenset[str] = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
"""Storage tags of v0 packed chunk rows (and of v4 stream records); never event types."""


def known_types(version: int) -> frozenset[str]:
    return KNOWN_TYPES_V4 if nested_streams(version) else KNOWN_TYPES_V0


def surface_types(version: int) -> frozenset[str]:
    return SURFACE_TYPES_V4 if nested_streams(version) else SURFACE_TYPES_V0

"""Compaction: brackets, prunes, the lock, tool pairing, range selection and the audit.
Layer: core (pure; imports io and the other core modules, never pandas or widgets).

Spec v0 §5 / v4 §5. Modules, one concept each:

* `brackets` — `compactions(events, version=)`: one `CompactionRecord` per attempt (status
  completed / failed / interrupted / stale, trigger, seqs, times, summary call, logged vs
  surface-derived shadow sets and prices) and one `PruneRecord` (`prunes`) per tool-result prune;
* `shapes` — the conformance vectors' JSON view of those records;
* `entry` — `inspect_compaction_entry_state` and the durable lock;
* `pairing` — tool-call/result balance of surface cuts;
* `selection` — `select_compactable_range` (head-anchored, retained tail, balanced cut);
* `pruner` — `resolve_config`, `prune_content` (code points);
* `invariant` — the v0 compaction invariant replayed over a log (v4: `core.relationships`);
* `audit`, `checks`, `probe` — the acceptance table per compaction, lost facts, cache break;
* `eventfacts`, `sweep` — what the audit reads from the events (per-seq facts collected in one
  in-order pass: the fold's own, or one over the planned seqs) and the checks' answers from them;
"""
from workbench.core.compaction.audit import (
    AuditReport,
    CompactionAudit,
    PruneAudit,
    audit_events,
    audit_log,
)
from workbench.core.compaction.brackets import (
    CompactionRecord,
    Compactions,
    Trigger,
    compactions,
    frame_summary,
)
from workbench.core.compaction.checks import Check
from workbench.core.compaction.entry import EntryState, inspect_compaction_entry_state
from workbench.core.compaction.invariant import (
    InvariantFailure,
    check_compaction_invariant,
)
from workbench.core.compaction.pairing import (
    ToolPairing,
    ToolPairingError,
    cut_balanced,
)
from workbench.core.compaction.pruner import (
    PruneConfig,
    PruneConfigError,
    measure_content,
    prune_content,
    resolve_config,
)
from workbench.core.compaction.prunes import PruneRecord
from workbench.core.compaction.selection import (
    CompactableRange,
    select_compactable_range,
)

__all__ = [
    "AuditReport", "Check", "CompactableRange", "CompactionAudit", "CompactionRecord",
    "Compactions", "EntryState", "InvariantFailure", "PruneAudit", "PruneConfig",
    "PruneConfigError", "PruneRecord", "ToolPairing", "ToolPairingError", "Trigger",
    "audit_events", "audit_log", "check_compaction_invariant", "compactions", "cut_balanced",
    "frame_summary", "inspect_compaction_entry_state", "measure_content", "prune_content",
    "resolve_config", "select_compactable_range",
]

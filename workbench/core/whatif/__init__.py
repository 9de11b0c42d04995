"""What if: counterfactual DSH logs branched from a real one. Layer: core (no pandas).

A counterfactual is another valid log of the same format version, built by carrying every real
event onto a new surface (`replay`), renumbered (`remap`), with compactions the log does not have
or decided anew: another summary text (`edits.replace_summary`), a compaction at a chosen point
(`edits.compact`), or DSH's automatic policy with other settings (`policy.replay_policy`).
Summarizers are plain callables `summarize(messages) -> str`; `summarizers` ships the model-free
baselines. Nothing here writes files; `workbench.frames.whatif` turns the events into a Session.
"""
from workbench.core.whatif.policy import Policy, replay_policy
from workbench.core.whatif.remap import WhatIfError
from workbench.core.whatif.replay import Replay

__all__ = ["Policy", "Replay", "WhatIfError", "replay_policy"]

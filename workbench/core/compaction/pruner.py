"""Model-free tool-result pruning: head + marker + tail of an over-budget tool result.
Layer: core (stdlib only).

Spec v0 §5.9 / v4 §5.9; reference `ToolResultPruner.pruneContent`, `resolveConfig`,
`codePointLength` (dsh-compaction-tool-result-pruner).

Invariants worth knowing:

* Budgets count Unicode **code points**, not UTF-16 units: a Python `str` indexes code points, and
  `Array.from(text)` in the reference splits a string the same way (a lone surrogate, as
  `workbench.io.jsjson` keeps it, is one element in both).
* Only `text` blocks are measured and cut; every other block stays in place, in order.
* The marker is inserted once, into the first text block that meets the removed middle; a text
  block that ends up empty is dropped.
* A valid config always emits at most `thresholdChars` code points
  (`head + len(marker) + tail <= threshold`), so a pruned copy is strictly smaller.

Used twice: by the conformance vectors (`mode: "prune"`) and by the audit, which recomputes the
`{charsBefore, charsAfter}` the pruner reports but never logs (v0 §5.9).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.generations import tool_role
from workbench.io.jsvalues import js_str

PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
"""Fixed text substituted for every removed middle (39 code points): a format constant."""

CONFIG_KEYS = ("thresholdChars", "headChars", "tailChars")


class PruneConfigError(WorkbenchError):
    """A pruner configuration the reference's `resolveConfig` rejects (exact reference text)."""


class PruneError(WorkbenchError):
    """An internal pruner guarantee broken (cannot happen with a resolved config)."""


@dataclass(frozen=True, slots=True)
class PruneConfig:
    """Resolved budgets, in code points."""

    threshold_chars: int = 8192
    head_chars: int = 4096
    tail_chars: int = 1024

    def as_json(self) -> dict[str, int]:
        return {"thresholdChars": self.threshold_chars, "headChars": self.head_chars,
                "tailChars": self.tail_chars}


DEFAULT_CONFIG = PruneConfig()


def _is_js_integer(value: Any) -> bool:
    """`Number.isInteger(value)` (booleans and non-numbers are not integers)."""
    if type(value) is int:
        return True
    return type(value) is float and value.is_integer()


def resolve_config(config: Mapping[str, Any] | None = None) -> PruneConfig:
    """Apply defaults and validate, raising `PruneConfigError` with the reference's messages.

    Unknown keys are refused first, then each budget (threshold > 0, head/tail >= 0, integral),
    then the emitted-size bound. `null` and absent both take the default (`??`).
    """
    config = config or {}
    for key in config:
        if key not in CONFIG_KEYS:
            msg = (f'ToolResultPruneConfig: unknown key "{key}" '
                   "(allowed: thresholdChars, headChars, tailChars)")
            raise PruneConfigError(msg)
    values = {}
    for key, default in zip(CONFIG_KEYS, (8192, 4096, 1024)):
        value = config.get(key)
        values[key] = default if value is None else value
    _require_integer("thresholdChars", values["thresholdChars"], minimum=1)
    _require_integer("headChars", values["headChars"], minimum=0)
    _require_integer("tailChars", values["tailChars"], minimum=0)
    emitted = values["headChars"] + len(PRUNE_MARKER) + values["tailChars"]
    if emitted > values["thresholdChars"]:
        msg = (f"ToolResultPruneConfig: headChars + marker + tailChars ({js_str(emitted)}) "
               f"must be at most thresholdChars ({js_str(values['thresholdChars'])})")
        raise PruneConfigError(msg)
    return PruneConfig(int(values["thresholdChars"]), int(values["headChars"]),
                       int(values["tailChars"]))


def _require_integer(name: str, value: Any, *, minimum: int) -> None:
    if not _is_js_integer(value) or value < minimum:
        kind = "a positive integer" if minimum == 1 else "a non-negative integer"
        msg = f"ToolResultPruneConfig: {name} ({js_str(value)}) must be {kind}"
        raise PruneConfigError(msg)


def measure_content(blocks: Sequence[Any]) -> int:
    """Code points over the `text` blocks of a content array; other blocks count 0."""
    total = 0
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                total += len(text)
    return total


def prune_content(blocks: Sequence[Any], config: PruneConfig = DEFAULT_CONFIG
                  ) -> list[Any] | None:
    """The pruned copy of `blocks`, or None when the text is within `threshold_chars`.

    Reference `ToolResultPruner.pruneContent`: keep the first `head_chars` and the last
    `tail_chars` code points of the concatenated text, marker in the first text block touching
    the removed middle, empty text blocks dropped, non-text blocks kept in place.
    """
    total = measure_content(blocks)
    if total <= config.threshold_chars:
        return None
    removed_start = config.head_chars
    removed_end = total - config.tail_chars
    pruned: list[Any] = []
    consumed = 0
    marker_inserted = False
    for block in blocks:
        if not (isinstance(block, dict) and block.get("type") == "text"
                and isinstance(block.get("text"), str)):
            pruned.append(block)
            continue
        text: str = block["text"]
        block_start = consumed
        block_end = block_start + len(text)
        head_end = min(len(text), max(0, removed_start - block_start))
        tail_start = min(len(text), max(0, removed_end - block_start))
        marker = ""
        if block_start < removed_end and block_end > removed_start and not marker_inserted:
            marker = PRUNE_MARKER
            marker_inserted = True
        new_text = text[:head_end] + marker + text[tail_start:]
        if new_text:
            pruned.append({**block, "text": new_text})
        consumed = block_end
    if not marker_inserted:
        raise PruneError("tool-result prune: failed to locate the removed text span")
    after = measure_content(pruned)
    if after > config.threshold_chars or after >= total:
        raise PruneError("tool-result prune: replacement must be smaller and within threshold")
    return pruned


def tool_result_content(message: Any, *, version: int) -> list[Any] | None:
    """The content the pruner measures in a tool/result message (None when it has none).

    v4 (§5.9): the tool-role message's own `content`. v0 (§5.9): the inner `content` of the
    message's `tool-result` wrapper block (`message.content[0].content`).
    """
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if not isinstance(content, list):
        return None
    if tool_role(version):
        return content
    if content and isinstance(content[0], dict) and content[0].get("type") == "tool-result":
        inner = content[0].get("content")
        return inner if isinstance(inner, list) else None
    return content

"""Model-free baseline summarizers: plain callables `summarize(messages) -> str`. Layer: core.

`messages` are the projected model messages of the range a compaction hides (v4 §5.6: what DSH
sends its summarizer, without the instruction). Every summarizer has a `label` (the
counterfactual is named after it; a user's callable is labelled by its `label` attribute or its
name). The three baselines, from the context-management literature:

* `mask` — observation masking (Lindenbauer et al., "The Complexity Trap", arXiv 2508.21433):
  the range's own turns, in order, with every tool result replaced by a placeholder that keeps its
  call id and size; user and assistant text and tool calls stay verbatim;
* `extractive` — the literal anchors of the range (paths, commands, errors, identifiers, URLs,
  numbers in context, constraints), grouped by kind, from the one anchor extractor
  (`workbench.core.compaction.anchors`);
* `truncate` — drop the range: a one-line marker says what was removed.

All are deterministic. DSH's own checks still apply to what they return (a checkpoint framed from
the text must be smaller than the range: `mask` can fail that check on text-heavy ranges).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.core.whatif.remap import WhatIfError

Summarizer = Callable[[list[dict[str, Any]]], str]


def _texts(content: Any) -> list[str]:
    out = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif block.get("type") == "tool-call":
            out.append(f"[tool call {block.get('name')} {block.get('arguments')}]")
    return out


def _size(content: Any) -> int:
    return sum(len(t) for t in _texts(content))


def mask(messages: list[dict[str, Any]]) -> str:
    """Observation masking (module doc)."""
    lines = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "tool":
            lines.append(f"tool ({message.get('toolCallId')}): [tool result masked: "
                         f"{_size(content)} characters]")
        elif role in ("user", "assistant"):
            text = "\n".join(_texts(content)).strip()
            if text:
                lines.append(f"{role}: {text}")
    return "\n".join(lines)


def extractive(messages: list[dict[str, Any]]) -> str:
    """The anchors of the range, by kind (module doc)."""
    try:
        from workbench.core.compaction import anchors
    except ImportError as exc:  # pragma: no cover - the extractor ships with issue 16
        raise WhatIfError("the extractive summarizer needs workbench.core.compaction.anchors") from exc
    found = anchors.extract_anchors(messages)
    sections = []
    for kind in anchors.KINDS:
        texts = [a.text for a in found if a.kind == kind]
        if texts:
            sections.append(f"## {kind}\n" + "\n".join(f"- {t}" for t in texts))
    return "\n\n".join(sections) or "(no anchors in the compacted span)"


def truncate(messages: list[dict[str, Any]]) -> str:
    """Drop the range (module doc)."""
    return f"[{len(messages)} earlier messages were dropped]"


mask.label = "mask"              # type: ignore[attr-defined]
extractive.label = "extractive"  # type: ignore[attr-defined]
truncate.label = "truncate"      # type: ignore[attr-defined]

BASELINES: dict[str, Summarizer] = {"mask": mask, "extractive": extractive, "truncate": truncate}
"""The shipped baselines by name (the CLI's `--summarizer`)."""


def resolve(summarizer: Any) -> tuple[Any, str]:
    """(summarizer, label): a baseline name, ``"logged"``, or a callable."""
    if isinstance(summarizer, str):
        if summarizer == "logged":
            return "logged", "logged"
        if summarizer in BASELINES:
            return BASELINES[summarizer], summarizer
        known = ", ".join(["logged", *BASELINES])
        raise WhatIfError(f"unknown summarizer {summarizer!r}; known: {known}, or a callable")
    if not callable(summarizer):
        raise WhatIfError("a summarizer is a callable summarize(messages) -> str")
    label = getattr(summarizer, "label", None) or getattr(summarizer, "__name__", None)
    return summarizer, str(label or repr(summarizer))


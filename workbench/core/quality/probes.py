"""Probe questions for grading a compaction with a model, as Inspect AI dataset samples.
Layer: core (pure; no dependency on Inspect AI).

For each landed compaction and each of its kept or lost anchors (at most `per_kind` of each
status per kind, in the citation's order), one sample:

* ``input``: the model-visible surface right after the compaction (one ``[role] text`` block per
  message, as `probe.message_text` reads it), then a cloze question: the line of the event the
  anchor was born in, with the anchor blanked out (for a number: the number; for a user
  constraint, the question quotes its first words);
* ``target``: the anchor's literal text (a number's digits);
* ``id``: ``<session>:<compaction>:<kind>:<n>``;
* ``metadata``: session, compaction, checkpoint seq, kind, status, level, born seq, anchor.

These are the fields Inspect AI's ``json_dataset`` reads by default (``input``, ``target``,
``id``, ``metadata``), so ``json_dataset("probes.jsonl")`` plus a solver and a scorer (e.g.
``includes()``) grade them. A lost anchor answered correctly means the model recovers it from
what remains; a kept one is a control.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from workbench.core.compaction.anchors import event_texts
from workbench.core.compaction.probe import message_text
from workbench.core.quality import Quality

LABELS = {"path": "file path", "command": "command", "error": "error message",
          "identifier": "identifier", "url": "URL", "number": "number",
          "constraint": "instruction"}
CONTEXT_CHARS = 240
"""Characters of the born line kept on each side of the blank."""


def _surface_text(quality: Quality, seq: int) -> str:
    parts = []
    for _, message in quality.timeline.messages_at(seq):
        role = message.get("role", "?") if isinstance(message, Mapping) else "?"
        parts.append(f"[{role}]\n{message_text(message)}")
    return "\n\n".join(parts)


def _cloze(quality: Quality, kind: str, text: str, born: int | None) -> tuple[str, str] | None:
    """(question, target) for one anchor (None without a born event): a cloze of its born line,
    or, when the anchor is that whole line or normalised (``exit code 1``), the event it was
    born in."""
    target = text.rpartition(" ")[2] if kind == "number" and " " in text else text
    if kind == "constraint":
        words = " ".join(text.split()[:4])
        return (f"Earlier in this session the user gave an instruction beginning with "
                f"\u201c{words}\u201d. Quote that instruction exactly.", text)
    if born is None or not 0 <= born < len(quality.events):
        return None
    event = quality.events[born]
    lines = [line for _, t in event_texts(event) if isinstance(event, Mapping)
             for line in t.split("\n") if target in line]
    if kind == "number":
        context = text.rpartition(" ")[0]
        lines = [line for line in lines if context in line.lower()] or lines
    label = LABELS[kind]
    article = "an" if label[0] in "aeiouAEIOU" else "a"
    cloze = "_____"
    if lines:
        line = lines[0]
        at = line.index(target)
        lo, hi = max(0, at - CONTEXT_CHARS), at + len(target) + CONTEXT_CHARS
        cloze = ("…" if lo else "") + line[lo:at] + "_____" + line[at + len(target):hi] + (
            "…" if hi < len(line) else "")
    if cloze.strip() == "_____":   # the whole line, or a normalised anchor: say where it was
        what = event.get("type", "event") if isinstance(event, Mapping) else "event"
        return (f"Earlier in this session, event {born} ({what}) contained {article} {label}. "
                f"What exactly was the {label}? Answer with the literal text only.", target)
    return (f"Earlier in this session (event {born}) this line appeared, with {article} "
            f"{label} replaced by _____:\n\n{cloze}\n\nWhat exactly was the {label}? "
            f"Answer with the literal text only.", target)


def probe_samples(quality: Quality, *, session_id: str | None, per_kind: int = 2,
                  statuses: tuple[str, ...] = ("lost", "kept")) -> Iterator[dict[str, Any]]:
    """Samples for every landed compaction (module doc), in compaction order."""
    for citation in quality.citations:
        if citation.replacement_seq is None:
            continue
        surface: str | None = None
        taken: dict[tuple[str, str], int] = {}
        for row in citation.rows:
            if row.status not in statuses:
                continue
            key = (row.kind, row.status)
            if taken.get(key, 0) >= per_kind:
                continue
            made = _cloze(quality, row.kind, row.text, row.born_seq)
            if made is None:
                continue
            taken[key] = taken.get(key, 0) + 1
            if surface is None:
                surface = _surface_text(quality, citation.replacement_seq)
            question, target = made
            n = sum(taken.values())
            yield {
                "id": f"{session_id}:{citation.compaction_id}:{row.kind}:{n}",
                "input": f"{surface}\n\n---\n\n{question}",
                "target": target,
                "metadata": {"session_id": session_id, "compaction_id": citation.compaction_id,
                             "replacement_seq": citation.replacement_seq, "kind": row.kind,
                             "status": row.status, "level": row.level,
                             "born_seq": row.born_seq, "anchor": row.text},
            }

"""How far the DSH heuristic is from a real tokenizer, by content kind. Layer: core.

The heuristic is 4 UTF-16 units per token plus overheads (spec §6), so it undercounts text that
tokenizes densely (Chinese: about half of DeepSeek's count) and is close on English. `heuristic_bias`
reports `ratio = reference_meter / real_meter` (default `dsh` / `deepseek`; < 1 means the heuristic
undercounts) per node and per session, split by content kind.

Content kind of a node (our own classification, deliberately simple and documented):

* `tool_output`: a `tool/result` node, whatever its text;
* `chinese`: at least 20 % of the non-space characters of its text are CJK ideographs, kana, hangul
  or full-width forms;
* `code`: its text holds a fenced block (```) or at least 8 % of its non-space characters are code
  punctuation (`{}[]();=<>_/\\|#$*&`), or it is mostly tool-call arguments;
* `prose`: everything else with text; `other`: no text at all (only images or other structures).

Nodes are the surface events of the log (every node that was ever placed on the surface).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.core.tokens.counts import LogTokens
from workbench.core.tokens.heuristic import derive_message
from workbench.core.tokens.meters import message_pieces

KINDS = ("chinese", "code", "prose", "tool_output", "other")
CJK_SHARE = 0.20
CODE_SHARE = 0.08

_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_CODE = re.compile(r"[{}\[\]();=<>_/\\|#$*&]")
_SPACE = re.compile(r"\s")


def content_kind(event: dict, *, version: int) -> str:
    """The content kind of one node (see the module docstring)."""
    if event.get("type") == "tool/result":
        return "tool_output"
    message = derive_message(event, version=version)
    if message is None:
        return "other"
    content = message.get("content")
    argument_chars = 0
    if type(content) is list:
        for block in content:
            if type(block) is dict and block.get("type") == "tool-call" and type(block.get("arguments")) is str:
                argument_chars += len(block["arguments"])
    text = "".join(message_pieces(message, version=version))
    visible = len(text) - len(_SPACE.findall(text))
    if visible <= 0:
        return "other"
    if len(_CJK.findall(text)) >= CJK_SHARE * visible:
        return "chinese"
    if "```" in text or len(_CODE.findall(text)) >= CODE_SHARE * visible or argument_chars * 2 >= len(text):
        return "code"
    return "prose"


class _Ratio:
    reference: int
    real: int

    @property
    def ratio(self) -> float | None:
        """Reference tokens per real token (None when the real meter counts 0)."""
        return self.reference / self.real if self.real else None


@dataclass(frozen=True)
class NodeBias(_Ratio):
    seq: Any
    kind: str
    reference: int
    real: int


@dataclass(frozen=True)
class KindBias(_Ratio):
    kind: str
    nodes: int
    reference: int
    real: int


@dataclass(frozen=True)
class BiasReport:
    reference_meter: str
    real_meter: str
    nodes: tuple[NodeBias, ...]
    by_kind: tuple[KindBias, ...]
    session: KindBias


def heuristic_bias(tokens: LogTokens, *, reference: str = "dsh", real: str = "deepseek") -> BiasReport:
    """Per-node and per-kind `reference / real` ratios over the log's surface events."""
    ref_prices = tokens.prices(reference)
    real_prices = tokens.prices(real)
    surface = tokens.shape.surface
    nodes: list[NodeBias] = []
    for position in map(int, surface.nonzero()[0]):
        event = tokens.events[position]
        nodes.append(NodeBias(tokens.seq_of(position), content_kind(event, version=tokens.version),
                              int(ref_prices[position]), int(real_prices[position])))
    by_kind = []
    for kind in KINDS:
        members = [n for n in nodes if n.kind == kind]
        if members:
            by_kind.append(KindBias(kind, len(members), sum(n.reference for n in members),
                                    sum(n.real for n in members)))
    session = KindBias("all", len(nodes), sum(n.reference for n in nodes), sum(n.real for n in nodes))
    return BiasReport(reference, real, tuple(nodes), tuple(by_kind), session)


__all__ = ["KINDS", "BiasReport", "KindBias", "NodeBias", "content_kind", "heuristic_bias"]

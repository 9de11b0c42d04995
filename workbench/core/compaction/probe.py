"""What a compaction cost the model: lost facts and the prefix-cache break. Layer: core.

* `lost_probe` — which concrete facts of the hidden span (file paths, identifiers, error strings,
  numbers, URLs) reappear in the summary. The summarizer is told to "preserve exact file paths,
  commands, error strings, identifiers, numeric values" (reference `COMPACTION_INSTRUCTION`), so a
  fact that does not occur verbatim in the summary text is reported as lost. It is a heuristic
  probe (regular expressions over message text), not a proof: paraphrases count as lost.
* `cache_break` — where the first request after the compaction stops sharing its prefix with the
  last request before it: the first differing message position and the heuristic tokens before
  it (the envelope counts when it is unchanged). Requests are rebuilt by
  `workbench.core.requests.rebuild_request` (v0 §7, v4 §7), so this reads exactly what the model
  was sent, minus provider-side rendering.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from workbench.core.compaction.anchor_texts import message_views
from workbench.core.compaction.scanning import TextPattern, plain
from workbench.core.requests import Attempt, rebuild_request
from workbench.core.timeline import SurfaceTimeline
from workbench.core.tokens.heuristic import estimate_header, estimate_message
from workbench.io.jsvalues import deep_equal

LIST_LIMIT = 50
"""At most this many kept / lost items per category in a report (counts are always complete)."""

_EXTENSIONS = ("py|js|mjs|cjs|ts|tsx|jsx|json|jsonl|md|txt|log|ya?ml|toml|sh|c|h|cc|cpp|hpp|rs|go|"
               "java|kt|rb|php|html|css|csv|tsv|ini|cfg|lock|sql|xml|zst|zstd")
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("urls", r"https?://[^\s<>\"'`)\]}]++"),
    ("paths", r"(?<![\w/.:@-])(?:~|\.{1,2})?/?(?:[\w.@+-]{1,255}+/)++[\w.@+-]*[\w@+-]"),
    ("paths", rf"\b[\w-]{{1,255}}+\.(?:{_EXTENSIONS})\b"),
    ("errors", r"\b[A-Z]\w*+(?:(?<=Error)|(?<=Exception))\b"),
    ("errors", r"\b[A-Z][A-Z0-9]++(?:_[A-Z0-9]++)++\b"),
    ("errors", r"\bexit code:? \d+"),
    ("errors", r"(?m:^[ \t]*+(?i:error|fatal|traceback)\b[^\n]{0,100})"),
    ("identifiers", r"\b(?:[a-z][a-z0-9]*+(?:[A-Z][a-z0-9]*+)++"
                    r"|[A-Z][a-z0-9]++(?:[A-Z][a-z0-9]*+)++"
                    r"|[A-Za-z][A-Za-z0-9]*+(?:_[A-Za-z0-9]++)++)\b"),
    ("numbers", r"(?<![\w.])\d{2,}+(?:\.\d+)?(?!\w)"),
)
"""Fact patterns in precedence order (possessive quantifiers: no backtracking inside a word; a
file name or directory component is read at most 255 characters from a start, so a long run of
word characters broken by ``-`` costs linear time)."""
_FAST_PATTERNS: tuple[str, ...] = (
    _PATTERNS[0][1],
    _PATTERNS[1][1],
    rf"[\w-](?<=\b[\w-])[\w-]{{0,254}}+\.(?:{_EXTENSIONS})\b",
    r"[A-Z](?<=\b[A-Z])\w*+(?:(?<=Error)|(?<=Exception))\b",
    r"[A-Z](?<=\b[A-Z])[A-Z0-9]++(?:_[A-Z0-9]++)++\b",
    r"e(?<=\be)xit code:? \d+",
    _PATTERNS[6][1],
    r"(?:[a-z](?<=\b[a-z])[a-z0-9]*+(?:[A-Z][a-z0-9]*+)++"
    r"|[A-Z](?<=\b[A-Z])[a-z0-9]++(?:[A-Z][a-z0-9]*+)++"
    r"|[A-Za-z](?<=\b[A-Za-z])[A-Za-z0-9]*+(?:_[A-Za-z0-9]++)++)\b",
    r"\d(?<![\w.]\d)\d++(?:\.\d+)?(?!\w)",
)
r"""`_PATTERNS` rewritten for speed, same matches (tested against the plain alternation): each
alternative opens with the character class it consumes first (its leading `\b` / lookbehind moved
behind that character), so the engine skips an alternative whose first character cannot match
without entering it; `\d{2,}+` is `\d\d++`."""
_START = r"(?=[\w~./@+\-](?<!\w.)|-(?<=\w-)|https?://|[ \t](?<![^\n][ \t]))"
r"""Where a fact can start at all: after a non-word character (or at the start) on a character
some pattern opens with; on a `-` right after a word (`\b[\w-]` of the second path pattern);
on a URL scheme (URLs alone may start inside a word); on a blank at a line start (the error-line
pattern). Inside a word nothing else can start, and most characters are inside a word."""
_FACTS = TextPattern(_START + "(?:" + "|".join(
    f"{p}(?P<g{i}>)" for i, p in enumerate(_FAST_PATTERNS)) + ")")
"""One scan for every category: at each position the first pattern that matches claims the
span, so a URL is not also a path and a path not also an identifier. The category is the empty
marker group closing the alternative that matched. Compiled for any text and for plain ASCII
(`scanning.TextPattern`: same matches, the ASCII compile is faster)."""
_PLAIN_FACTS = re.compile("|".join(f"(?P<g{i}>{p})" for i, (_, p) in enumerate(_PATTERNS)))
"""The readable form of `_FACTS` (same matches, several times slower); the tests compare them."""
CATEGORIES = ("paths", "identifiers", "errors", "numbers", "urls")

_GROUP_KIND: dict[int, tuple[int, Any]] = {
    i + 1: (CATEGORIES.index(name), {0: lambda v: v.rstrip(".,;:"), 6: str.strip}.get(i))
    for i, (name, _) in enumerate(_PATTERNS)}
"""Marker group number -> (category number, how the matched text is trimmed, None: as it is). A URL
loses trailing `.,;:` and an error line its surrounding blanks; no other fact can end with that
punctuation (a path ends on a word character, `@`, `+` or `-`) or start or end with a blank."""


def message_text(message: Any) -> str:
    """The text a model reads in a message: text/reasoning blocks, tool-call names and
    arguments, and (v0) the inner content of tool-result blocks, one per line."""
    return "\n".join(message_parts(message))


def message_parts(message: Any) -> list[str]:
    """The pieces `message_text` joins with newlines (`anchor_texts.message_views`)."""
    return message_views(message, pieces=False)[0]


def text_facts(text: str) -> list[tuple[str, str]]:
    """Every fact occurrence of `text` as (category, value), in order (repeats included).

    No pattern matches across a line break and a line break satisfies every boundary a text
    start does, so the facts of texts joined by newlines are the facts of each text in turn:
    hidden messages are scanned one by one (`probe_facts` merges them), a log's texts line by
    line (`textscan.TextScan`)."""
    facts: list[tuple[str, str]] = []
    return [facts[i] for i in interned_lines((text,), fact_index(), facts)[0]]


def fact_index() -> list[dict[str, int]]:
    """An empty interning index for `interned_lines`."""
    return [{} for _ in CATEGORIES]


def interned_lines(texts: Sequence[str], index: list[dict[str, int]],
                   facts: list[tuple[str, str]]) -> list[tuple[int, ...]]:
    """`text_facts` of each of `texts` as ids (one call for a batch of lines): `facts[i]` is
    the fact of id `i`, `index[c][value]` the id of a value of category `CATEGORIES[c]`; a fact
    not seen yet is added to both."""
    out = []
    kinds, categories = _GROUP_KIND, CATEGORIES
    every = _FACTS.ascii if plain(texts) else None
    for text in texts:
        ids = []
        append = ids.append
        for match in (every or _FACTS.scanner(text)).finditer(text):
            category, trim = kinds[match.lastindex]  # type: ignore[index]
            value = match.group() if trim is None else trim(match.group())
            known = index[category]
            fid = known.get(value)
            if fid is None:
                fid = known[value] = len(facts)
                facts.append((categories[category], value))
            append(fid)
        out.append(tuple(ids))
    return out


def extract_facts(text: str) -> dict[str, list[str]]:
    """Distinct facts per category, in order of first appearance (one scan, see `_FACTS`)."""
    found: dict[str, dict[str, None]] = {c: {} for c in CATEGORIES}
    for name, value in text_facts(text):
        found[name][value] = None
    return {c: list(v) for c, v in found.items()}


@dataclass(frozen=True, slots=True)
class LostProbe:
    """Facts of the hidden span and which of them occur verbatim in the summary."""

    hidden_chars: int
    summary_chars: int
    kept: Mapping[str, tuple[str, ...]]
    lost: Mapping[str, tuple[str, ...]]

    @property
    def kept_fraction(self) -> float | None:
        kept = sum(len(v) for v in self.kept.values())
        total = kept + sum(len(v) for v in self.lost.values())
        return kept / total if total else None

    def as_json(self) -> dict[str, Any]:
        return {
            "hidden_chars": self.hidden_chars, "summary_chars": self.summary_chars,
            "kept_fraction": self.kept_fraction,
            "categories": {c: {"found": len(self.kept[c]) + len(self.lost[c]),
                               "kept": list(self.kept[c][:LIST_LIMIT]),
                               "lost": list(self.lost[c][:LIST_LIMIT])} for c in CATEGORIES},
        }


def lost_probe(hidden_messages: Iterable[Any], summary: Any) -> LostProbe:
    """Probe the facts of `hidden_messages` against the logged `summary` blocks."""
    hidden = "\n".join(message_text(m) for m in hidden_messages)
    return _probe(len(hidden), extract_facts(hidden), summary)


def probe_facts(parts: Iterable[tuple[int, Sequence[tuple[str, str]]]], summary: Any
                ) -> LostProbe:
    """`lost_probe` from each hidden message's `(len(message_text), text_facts)`, in hidden
    order: the same result without joining the texts (see `text_facts`)."""
    lengths: list[int] = []
    distinct = dict.fromkeys(chain.from_iterable(
        facts for length, facts in parts if lengths.append(length) is None))
    return probe_distinct(distinct, sum(lengths) + max(len(lengths) - 1, 0), summary)


def probe_distinct(distinct: Iterable[tuple[str, str]], hidden_chars: int, summary: Any
                   ) -> LostProbe:
    """The probe of the distinct hidden facts `(category, value)` in order of first appearance
    and the length of the joined hidden text."""
    found: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    for name, value in distinct:
        found[name].append(value)
    return _probe(hidden_chars, found, summary)


def _probe(hidden_chars: int, facts: Mapping[str, list[str]], summary: Any) -> LostProbe:
    summary_text = message_text({"content": summary})
    kept = {c: tuple(f for f in facts[c] if f in summary_text) for c in CATEGORIES}
    lost = {c: tuple(f for f in facts[c] if f not in summary_text) for c in CATEGORIES}
    return LostProbe(hidden_chars, len(summary_text), kept, lost)


@dataclass(frozen=True, slots=True)
class CacheBreak:
    """Prefix shared by the last request before and the first request after a compaction.

    `position` is the index of the first message that differs (== the shorter length when one
    list is a prefix of the other); `prefix_tokens` the heuristic price of everything before it,
    the envelope (v0 system + tools, v4 tools) included. A changed envelope breaks the cache at
    the very start (position 0, no prefix)."""

    request_before_seq: int
    request_after_seq: int
    messages_before: int
    messages_after: int
    envelope_changed: bool
    position: int
    prefix_tokens: int
    tokens_before: int
    tokens_after: int

    def as_json(self) -> dict[str, Any]:
        return {"request_before_seq": self.request_before_seq,
                "request_after_seq": self.request_after_seq,
                "messages_before": self.messages_before, "messages_after": self.messages_after,
                "envelope_changed": self.envelope_changed, "position": self.position,
                "prefix_tokens": self.prefix_tokens, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after}


def _envelope(request: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k not in ("messages", "sessionId")}


def cache_break(events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
                before: Attempt, after: Attempt, *, version: int) -> CacheBreak:
    """Compare the rebuilt requests of two attempts (module doc)."""
    a = rebuild_request(events, timeline, before, version=version, session_id=None)
    b = rebuild_request(events, timeline, after, version=version, session_id=None)
    ma, mb = a["messages"], b["messages"]
    position = 0
    limit = min(len(ma), len(mb))
    while position < limit and deep_equal(ma[position], mb[position]):
        position += 1
    envelope_changed = not deep_equal(_envelope(a), _envelope(b))
    tools = {k: a[k] for k in ("system", "tools") if k in a}
    envelope_tokens = estimate_header(tools, version=version)
    prices_a = [estimate_message(m, version=version) for m in ma]
    if envelope_changed:
        position, prefix = 0, 0
    else:
        prefix = envelope_tokens + sum(prices_a[:position])
    tools_b = {k: b[k] for k in ("system", "tools") if k in b}
    total_b = estimate_header(tools_b, version=version) + sum(
        estimate_message(m, version=version) for m in mb)
    return CacheBreak(before.seq, after.seq, len(ma), len(mb), envelope_changed, position, prefix,
                      envelope_tokens + sum(prices_a), total_b)

"""Literal anchors: the concrete facts a summary should carry over. Layer: core (pure).

An anchor is a literal a later step may need verbatim: a file path, a command, an error, an
identifier, a URL, a number *with its context*, or an explicit constraint of the user. Every rule
lives in `RULES` (one row per rule: kind, regular expression, which group is the anchor, a
normaliser); `KINDS` lists the kinds in the order they claim text. To add a rule, add a row: the
scanner builds one alternation from the table, so at each position the first rule that matches
claims the span (a URL is not also a path, a path is not also an identifier).

What is scanned (`message_texts`; `anchor_texts` owns it and the vocabulary below): text and
reasoning blocks, the *values* of tool-call arguments (JSON parsed; keys dropped), and tool
results. What is never an anchor:

* tool-schema vocabulary: tool names and the parameter names of the tools the log advertises
  (`schema_words`), plus `SCHEMA_WORDS` (DSH's own argument names);
* JSON keys (``"key":`` anywhere in a text, and the keys of parsed arguments);
* the harness's boilerplate: the checkpoint framing (preamble and summary tags), runtime- and
  time-context snapshots (`BOILERPLATE_SOURCES`), the tool-result wrapper tags (``<path>``,
  ``<type>``, ``<content>``), read-tool line-number prefixes and the ``[exit code: 0]`` marker;
* enumerations (`ENUMERATION`: ``line 1``, ``line 2``, ... in one text are data);
* a bare number: a number is an anchor only after a context word (``port 8080``, ``size: 17``,
  ``exit code 2``) or with a unit (``30s``, ``512 MB``, ``15%``), and not when it opens a run
  of numbers (``1, 2, 3``: data); its text is ``"<context> <number>"``, context lower-cased.

Commands come from shell-like tool arguments (`COMMAND_KEYS`) and from ``$ ...`` lines.
Constraints are a *heuristic*: sentences of the user's own messages (role user, source ``user``) with a cue
word (`CONSTRAINT_CUES`); whether a summary states one is judged by word overlap, not literally
(`states`). Every other kind is stated when its text occurs verbatim in the summary.

Each `Anchor` keeps the seq of the event it was born at (the first event that carried it).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.compaction.anchor_texts import (
    BOILERPLATE_SOURCES,
    COMMAND_KEYS,
    SCHEMA_WORDS,
    event_texts,
    message_texts,
    schema_words,
    strip_checkpoint,
    tool_arguments,
)
from workbench.core.compaction.scanning import TextPattern, plain

__all__ = ["Anchor", "BOILERPLATE_SOURCES", "COMMAND_KEYS", "KINDS", "RULES", "Rule",
           "SCHEMA_WORDS", "anchor_keys", "event_texts", "extract_anchors", "line_anchors",
           "lines_anchors", "message_texts", "piece_anchors", "schema_words", "states",
           "strip_checkpoint", "text_anchors", "tool_arguments"]

KINDS = ("path", "command", "error", "identifier", "url", "number", "constraint")
"""Anchor kinds (the frames' `kind` column)."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """One literal: its kind, its text and the seq of the event it was born at (None for text
    given without a seq)."""

    kind: str
    text: str
    born_seq: int | None = None

    @property
    def key(self) -> tuple[str, str]:
        """Identity of an anchor: the same kind and text is the same fact."""
        return (self.kind, self.text)


@dataclass(frozen=True, slots=True)
class Rule:
    """One extraction rule: `pattern` (one line at a time, no named groups), `group` the group
    holding the anchor (0: the whole match), `normalise(match, base)` maps the match to the
    anchor text (None drops the match; in the scanner's alternation the rule's whole match is
    group `base` and its own group `n` is `base + n`), `needs` what every line it can match
    contains (a `_FEATURES` name; None: nothing known): a line without it is scanned without
    this rule."""

    kind: str
    name: str
    pattern: str
    group: int = 0
    normalise: Callable[[re.Match, int], str | None] | None = None
    needs: str | None = None


_EXT = ("py|pyi|js|mjs|cjs|ts|tsx|jsx|json|jsonl|md|rst|txt|log|ya?ml|toml|sh|bash|c|h|cc|cpp|hpp|"
        "rs|go|java|kt|rb|php|html|css|scss|csv|tsv|ini|cfg|conf|lock|sql|xml|zst|zstd|ipynb|"
        "proto|swift|cs|lua|pl|r|env|gz|tar|zip|parquet")
_UNITS = r"(?:ms|s|sec|secs|seconds?|min|minutes?|h|hours?|days?|[kKMGT]i?B|bytes?|%|px|x)"
_CONTEXT_STOP = frozenset({"the", "and", "for", "with", "from", "into", "than", "that", "this",
                           "was", "are", "were", "has", "had", "have", "but", "not", "all", "any",
                           "each", "per", "of", "to", "in", "on", "at", "by", "or", "an", "a",
                           "is", "be", "it", "as", "step"})
"""Words that give a number no context (a number after them alone is not an anchor)."""


def _number(match: re.Match, base: int) -> str | None:
    context, number, unit = match.group(base + 1, base + 2, base + 3)
    if unit:
        return f"{context.lower()} {number}{unit}" if context else f"{number}{unit}"
    if not context or context.lower() in _CONTEXT_STOP:
        return None
    return f"{context.lower()} {number}"


def _strip_url(match: re.Match, base: int) -> str:
    return match.group(base).rstrip(".,;:")


def _error_line(match: re.Match, base: int) -> str:
    return match.group(base).strip()[:160]


def _exit_code(match: re.Match, base: int) -> str | None:
    code = match.group(base + 1)
    return None if code == "0" else f"exit code {code}"


def _command_line(match: re.Match, base: int) -> str | None:
    text = match.group(base + 1).strip()
    return text[:200] if len(text) >= 2 else None


RULES: tuple[Rule, ...] = (
    Rule("url", "url", r"https?://[^\s<>\"'`)\]}]+", normalise=_strip_url, needs="://"),
    Rule("command", "shell-prompt", r"^\s*\$ (\S.*)", normalise=_command_line, needs="$"),
    Rule("error", "error-line",
         r"^[ \t]*(?i:error|fatal|panic|traceback|exception|failed)\b[^\n]{0,150}",
         normalise=_error_line),
    Rule("error", "exit-code", r"\bexit (?:code|status):? ?(\d+)", normalise=_exit_code,
         needs="exit"),
    Rule("error", "exception-name",
         r"\b[A-Z]\w*+(?:(?<=\wError)|(?<=\wException)|(?<=\wWarning)|(?<=\wFault))\b",
         needs="exception"),
    Rule("error", "error-code", r"\b(?:E[A-Z]{3,}|[A-Z][A-Z0-9]++(?:_[A-Z0-9]++)++)\b",
         needs="upper"),
    Rule("path", "dir-path",
         r"(?<![\w/.:@-])(?:~|\.{1,2})?/?(?:[\w.@+-]{1,255}+/){1,2048}[\w.@+-]*[\w@+-]", needs="/"),
    Rule("path", "file-name", rf"\b[\w-]{{1,255}}+\.(?:{_EXT})\b", needs="."),
    Rule("identifier", "uuid",
         r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", needs="-"),
    Rule("identifier", "hash", r"\b(?=[0-9]*+[a-f])(?=[a-f]*+\d)[0-9a-f]{7,64}+\b",
         needs="digit"),
    Rule("identifier", "code-symbol",
         r"\b(?:[a-z][a-z0-9]*+(?:[A-Z][a-z0-9]*+)++|[A-Z][a-z0-9]++(?:[A-Z][a-z0-9]*+)++"
         r"|[A-Za-z][A-Za-z0-9]*+(?:_[A-Za-z0-9]++)++)(?:\(\))?\b", needs="upper_"),
    Rule("number", "number-with-context",
         rf"(?:\b([A-Za-z][A-Za-z_-]{{1,30}}+)(?: ?[:=] ?| ))?(?<![\w.])(\d+(?:\.\d+)?)"
         rf"(?: ?({_UNITS})(?![A-Za-z]))?(?![\w.])(?!, ?\d)", normalise=_number, needs="digit"),
)
"""Every extraction rule, in precedence order (module doc). Constraints and tool-argument
commands are not line patterns: see `_constraints` and `COMMAND_KEYS`. Quantifiers are
possessive where giving back a character can never let the rest match (a word run followed by
a character outside its class). A path component is read at most 255 characters from each start
and a directory path has at most 2,048 components, so a match attempt reads a bounded span and
holds a bounded backtracking stack: a long run of word characters broken by ``-`` or ``/``
(a start at every break) costs linear time and constant memory."""

_FEATURES: dict[str, re.Pattern[str] | tuple[str, ...]] = {
    "digit": re.compile(r"\d"), "upper": re.compile(r"[A-Z]"), "upper_": re.compile(r"[A-Z_]"),
    "exception": ("Error", "Exception", "Warning", "Fault"),
    **{literal: (literal,) for literal in ("://", "$", "exit", "/", ".", "-")}}
"""What a rule `needs` in a line, by name: a pattern found in it, or one of some substrings."""

CONSTRAINT_CUES = re.compile(
    r"\b(?:must(?:n't| not)?|don'?t|do not|never|always|only|should(?:n't| not)|avoid|"
    r"make sure|required?|ensure|no more than|at most|at least)\b", re.IGNORECASE)
"""Cue words of an explicit constraint (heuristic)."""

_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))++[.!?]?")
"""A sentence: up to a `.`, `!` or `?` that ends a word (``setup.cfg`` does not end one)."""
_JSON_KEY = re.compile(r"\"[A-Za-z_$][\w$.-]{0,60}\"\s*:")
_TAGS = re.compile(r"</?(?:path|type|content|compacted-summary)>")
"""DSH's tool-result wrapper tags and the checkpoint's summary tags (boilerplate)."""
_LINE_NUMBER = re.compile(r"^\s*\d+: ")
"""The read tool's line-number prefix."""


class _Scanner:
    """The rules a line can match in one alternation. No rule starts inside a word, so the scan
    first checks the character before (`(?<!\\w)`): most positions fail there without trying
    any alternative. A rule whose `needs` the line lacks cannot match anywhere in it and is left
    out (the others keep their order, so each span is claimed by the same rule)."""

    _compiled: dict[int, _Scanner] = {}

    def __init__(self, rules: Sequence[int]) -> None:
        self.pattern = TextPattern(r"(?<!\w)(?:" + "|".join(
            f"(?P<r{i}>{RULES[i].pattern})" for i in rules) + ")", re.MULTILINE)
        """Compiled for any line and for plain ASCII (`scanning.TextPattern`)."""
        self.rules: list[tuple[str, int, Any, int, bool] | None] = [None] * (
            self.pattern.unicode.groups + 1)
        """A rule's enclosing group number (a match's `lastindex`: it closes last) -> the rule's
        kind, the group holding its anchor, its normaliser, that enclosing number (the rule's
        own groups follow it) and whether it is the error-line rule."""
        for i in rules:
            rule = RULES[i]
            base = self.pattern.groupindex[f"r{i}"]
            self.rules[base] = (rule.kind, base + rule.group, rule.normalise, base,
                                rule.name == "error-line")

    @classmethod
    def of(cls, mask: int) -> _Scanner:
        """The scanner of the rules in a rule mask (bit `i`: `RULES[i]`)."""
        scanner = cls._compiled.get(mask)
        if scanner is None:
            scanner = cls._compiled[mask] = cls([i for i in range(len(RULES)) if mask >> i & 1])
        return scanner


_ALWAYS = sum(1 << i for i, rule in enumerate(RULES) if rule.needs is None)
_NEEDS = tuple((_FEATURES[need], sum(1 << i for i, r in enumerate(RULES) if r.needs == need))
               for need in dict.fromkeys(r.needs for r in RULES if r.needs is not None))
_LITERAL_NEEDS = tuple((literal, bits) for feature, bits in _NEEDS
                       if isinstance(feature, tuple) for literal in feature)
_PATTERN_NEEDS = tuple((feature, bits) for feature, bits in _NEEDS
                       if not isinstance(feature, tuple))
"""Each feature a line may have, with the rules that need it (as bits of a rule mask)."""


def text_anchors(text: str, *, stop: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """Every `(kind, text)` anchor occurrence of `text` by `RULES`, in order (repeats included;
    constraints excluded: they depend on who wrote the text). `stop`: extra schema words. A text
    is scanned line by line: its anchors are those of each line in turn."""
    out: list[tuple[str, str]] = []
    for found in lines_anchors(text.split("\n"), stop):
        out += found
    return out


def line_anchors(line: str, stop: frozenset[str]) -> list[tuple[str, str]]:
    """`text_anchors` of one line (no line break)."""
    return list(lines_anchors((line,), stop)[0])


def lines_anchors(lines: Sequence[str], stop: frozenset[str]
                  ) -> list[tuple[tuple[str, str], ...]]:
    """`line_anchors` of each of `lines` (one call for a batch of lines). A line is cleaned of
    boilerplate (tags, a line-number prefix, the exit-code-0 marker, JSON keys), then scanned
    with the rules its features allow (`_Scanner`); an error line's own paths, ids, ... count
    too."""
    out = []
    every = plain(lines)   # cleaning keeps a plain line plain
    compiled, literal_needs, pattern_needs = _Scanner._compiled, _LITERAL_NEEDS, _PATTERN_NEEDS
    for line in lines:
        if "<" in line:
            line = _TAGS.sub(" ", line)
        if ": " in line:
            line = _LINE_NUMBER.sub("", line)
        if "[exit code: 0]" in line:
            line = line.replace("[exit code: 0]", " ")
        if '"' in line:
            line = _JSON_KEY.sub(" ", line)
        mask = _ALWAYS
        for literal, bits in literal_needs:
            if literal in line:
                mask |= bits
        for feature, bits in pattern_needs:
            if feature.search(line) is not None:
                mask |= bits
        scanner = compiled.get(mask) or _Scanner.of(mask)
        rules, pattern = scanner.rules, scanner.pattern
        found: list[tuple[str, str]] = []
        for match in (pattern.ascii if every else pattern.scanner(line)).finditer(line):
            kind, group, normalise, base, error_line = rules[match.lastindex]  # type: ignore
            value = match.group(group) if normalise is None else normalise(match, base)
            if not value or value in SCHEMA_WORDS or value in stop:
                continue
            found.append((kind, value))
            if error_line:
                whole = match.group()
                found += line_anchors(whole[len(whole.split(None, 1)[0]):], stop)
        out.append(tuple(found))
    return out


def _constraints(text: str) -> list[tuple[str, str]]:
    return [("constraint", s.strip()[:200]) for s in _SENTENCE.findall(text)
            if CONSTRAINT_CUES.search(s) and len(s.split()) >= 3]


ENUMERATION = 4
"""A context word followed by this many distinct numbers in one text is data (``line 1``,
``line 2``, ... of a file's content), not a fact: none of those number anchors is kept."""


def piece_anchors(how: str, text: str, stop: frozenset[str],
                  scanned: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """Anchors of one `(how, text)` piece of `message_texts`, in order (module doc);
    `scanned`: its `text_anchors` when known."""
    found = []
    if how == "command":
        first = text.strip().split("\n", 1)[0].strip()[:200]
        if first:
            found.append(("command", first))
    if scanned is None:
        scanned = text_anchors(text, stop=stop)
    if how == "command":   # a command is one anchor; inside it only paths and URLs count
        scanned = [(k, v) for k, v in scanned if k in ("path", "url")]
    contexts: dict[str, set[str]] = {}
    for kind, value in scanned:
        if kind == "number" and " " in value:
            context, _, number = value.rpartition(" ")
            contexts.setdefault(context, set()).add(number)
    data = {c for c, numbers in contexts.items() if len(numbers) >= ENUMERATION} \
        if contexts else None
    found += [(k, v) for k, v in scanned if k != "number" or v.rpartition(" ")[0] not in data] \
        if data else scanned
    if how == "user":
        found += _constraints(text)
    return found


def anchor_keys(pieces: Iterable[tuple[str, str]], stop: frozenset[str] = frozenset()
                ) -> list[tuple[str, str]]:
    """Distinct `(kind, text)` anchors of `(how, text)` pieces, in order of first appearance."""
    seen: dict[tuple[str, str], None] = {}
    for how, text in pieces:
        for key in piece_anchors(how, text, stop):
            seen.setdefault(key, None)
    return list(seen)


def extract_anchors(items: Iterable[Any], *, stop: Iterable[str] = ()) -> list[Anchor]:
    """Distinct anchors of `items`, in order of birth.

    An item is an event (a mapping with ``type``; its ``seq`` is the birth seq), a model
    message (a mapping with ``role``), a ``(seq, text)`` pair or a plain string (prose, no
    seq). `stop` adds schema words (e.g. `schema_words(header)`). The first item carrying an
    anchor is its birth."""
    words = frozenset(stop)
    born: dict[tuple[str, str], int | None] = {}
    for item in items:
        seq: int | None = None
        if isinstance(item, str):
            pieces = [("user", item)]
        elif isinstance(item, tuple) and len(item) == 2:
            seq, pieces = item[0], [("user", str(item[1]))]
        elif isinstance(item, Mapping) and "type" in item:
            seq = item.get("seq") if isinstance(item.get("seq"), int) else None
            pieces = event_texts(item)
        else:
            pieces = message_texts(item)
        for key in anchor_keys(pieces, words):
            born.setdefault(key, seq)
    return [Anchor(kind, text, seq) for (kind, text), seq in born.items()]


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{3,}")


def states(summary: str, kind: str, text: str, *, lowered: str | None = None) -> bool:
    """Whether `summary` states the anchor: verbatim for every kind but two. A number is stated
    when its number and its context word both occur on one line; a constraint (heuristic) when
    at least two thirds of its words of four or more letters occur in the summary."""
    if kind == "number":
        context, _, number = text.rpartition(" ")
        if not context:
            return number in summary
        low = summary.lower() if lowered is None else lowered
        return any(number in line and context in line for line in low.split("\n")
                   if number in line)
    if kind == "constraint":
        words = {w.lower() for w in _WORD.findall(text)}
        if not words:
            return text in summary
        low = summary.lower() if lowered is None else lowered
        return sum(w in low for w in words) * 3 >= len(words) * 2
    return text in summary

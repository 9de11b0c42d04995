"""A line-scanning regular expression compiled twice: for any text and for plain ASCII text.
Layer: core (pure).

The fact and anchor scanners (`probe`, `anchors`) read log text with Unicode-aware patterns.
Python's engine tests ``\\w``, ``\\d``, ``\\s`` and ``\\b`` faster under `re.ASCII`, and on a
text of ASCII characters other than the four information separators U+001C..U+001F the two
compiles agree on every one of those classes and on case folding (Unicode ``\\s`` also matches
the separators; the other Unicode-only members of these classes are not ASCII). So
`TextPattern.scanner(text)` hands back the ASCII compile for such a text (`plain`) and the Unicode
one for any other: the same matches either way (the tests compare both on generated texts). A
scanner of many lines checks them all at once (`plain(lines)`: true when every one is plain).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

_UNSAFE = re.compile("[\x1c-\x1f]")
"""ASCII characters the two compiles classify differently (Unicode ``\\s`` only)."""


class TextPattern:
    """`source` compiled with `flags` (`unicode`) and with `flags | re.ASCII` (`ascii`)."""

    __slots__ = ("unicode", "ascii")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.unicode = re.compile(source, flags)
        self.ascii = re.compile(source, flags | re.ASCII)

    @property
    def groupindex(self):  # noqa: ANN201 - the compiled pattern's mapping
        return self.unicode.groupindex

    def scanner(self, text: str) -> re.Pattern[str]:
        """The compile that scans `text` fastest with the Unicode pattern's matches."""
        return self.ascii if plain(text) else self.unicode


def plain(text: str | Iterable[str]) -> bool:
    """Whether a text (or every one of some texts, checked at once) is ASCII without the four
    separators: the ASCII compile scans it with the Unicode compile's matches."""
    if not isinstance(text, str):
        text = "".join(text)
    return text.isascii() and _UNSAFE.search(text) is None

"""`core.compaction.scanning.TextPattern`: the ASCII compile it picks for a plain ASCII text finds
exactly the matches of the Unicode compile, for the fact probe's scanner and the anchors'
scanner (every rule), on texts drawn from all of ASCII and a few non-ASCII characters that the
Unicode classes treat specially; a text it cannot read the same way gets the Unicode compile."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.compaction import anchors, probe
from workbench.core.compaction.scanning import TextPattern

_ALPHABET = [chr(c) for c in range(128)] + list("\u00a0\u2003\u212aıſKµé\u0660") + [
    "http://", "https://", "Error", "Exception", "exit code: ", "exit status 2", "error",
    "Traceback", "FATAL", ".py", ".json", "../", "~/", "ERR_X", "EACCES", "-a.py", "parseConfig",
    "snake_case", "port 8080", "12 ms", "$ ls -la", "deadbeef1", "0123abcd-0000-4000-8000-0123456789ab"]
_TEXTS = st.lists(st.sampled_from(_ALPHABET), max_size=60).map("".join)


def _found(pattern, text: str) -> list:
    return [(m.span(), m.lastgroup, m.groups()) for m in pattern.finditer(text)]


def _patterns() -> list[TextPattern]:
    every_rule = anchors._Scanner(list(range(len(anchors.RULES)))).pattern
    return [probe._FACTS, every_rule]


@settings(max_examples=2000, deadline=None)
@given(_TEXTS)
def test_the_chosen_compile_finds_the_unicode_matches(text: str) -> None:
    for pattern in _patterns():
        assert _found(pattern.scanner(text), text) == _found(pattern.unicode, text)


def test_separators_and_non_ascii_take_the_unicode_compile() -> None:
    pattern = probe._FACTS
    assert pattern.scanner("plain text 42") is pattern.ascii
    for text in ("a\x1cb", "x\x1f", "café", "\u2003"):
        assert pattern.scanner(text) is pattern.unicode
    # the reason: Unicode \s matches the information separators, ASCII \s does not
    assert pattern.unicode.pattern == pattern.ascii.pattern
    space = TextPattern(r"\s")
    assert space.unicode.match("\x1c") and not space.ascii.match("\x1c")

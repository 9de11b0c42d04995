"""`preview.clip`: one line of at most `PREVIEW_CHARS` characters, whitespace runs collapsed to one
space, whatever the text (its shortcut for a head that is already one clean line included)."""
from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from workbench.core.preview import PREVIEW_CHARS, clip

_SPACES = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


def _collapsed(text: str, limit: int) -> str:
    """The rule as the module states it, with no shortcut."""
    head = " ".join(text[: limit * 2].split())
    if len(head) < limit and len(text) > limit * 2:
        head = " ".join(text[: limit * 64].split())
    return head if len(head) <= limit else head[: limit - 1] + "…"


@given(st.text(st.characters(codec=None) | st.sampled_from(_SPACES), max_size=400),
       st.sampled_from([PREVIEW_CHARS, 1, 5, 40]))
@example("a" * 300, PREVIEW_CHARS)
@example(" lead", PREVIEW_CHARS)
@example("trail ", PREVIEW_CHARS)
@example("two  spaces", PREVIEW_CHARS)
@example("no\u00a0break", PREVIEW_CHARS)
@example("x" * 239 + " " + "y" * 50, PREVIEW_CHARS)
@example(" " * 250 + "late", PREVIEW_CHARS)
def test_clip_is_the_collapsed_head(text: str, limit: int) -> None:
    assert clip(text, limit) == _collapsed(text, limit)
    assert len(clip(text, limit)) <= limit


def test_every_whitespace_but_the_space_is_unprintable() -> None:
    """What the shortcut relies on (`str.split` splits on exactly `str.isspace`)."""
    assert [c for c in _SPACES if c.isprintable()] == [" "]

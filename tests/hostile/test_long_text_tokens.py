"""The real tokenizers on one very long text: counted in pieces of `meters.PIECE_CHARS`, so the
memory a tokenizer holds while it encodes (some 150 bytes a character: `workbench tokens` of a
valid 300 MB message grew past 15 GB) stays bounded; a cut falls before a space between two
words, where the encodings' pre-tokenizers start a word anyway, so such a count equals the
count of the whole text."""
from __future__ import annotations

import random
import subprocess
import sys

import pytest

from workbench.core.tokens import meters

WORDS = ["alpha", "beta", "the", "quick", "über", "数据", "x1", "foo_bar", "\n", "  ", "12", "3.5",
         "'s", "-", "()", "\t"]


@pytest.mark.parametrize("name", ["o200k", "cl100k", "deepseek"])
def test_a_text_counted_in_pieces_counts_as_a_whole(monkeypatch, name):
    meter = meters.get_meter(name, version=4)
    monkeypatch.setattr(meters, "PIECE_CHARS", 2_048)
    for seed in range(4):
        rng = random.Random(seed)
        text = " ".join(rng.choice(WORDS) for _ in range(3_000))
        assert len(text) > 4 * meters.PIECE_CHARS
        assert meter.count_text(text) == meter._encode([text])[0], seed
        assert meter._encode_lengths(["a b", text]) == [meter._encode(["a b"])[0],
                                                        meter._encode([text])[0]]


def test_pieces_cover_the_text_and_are_bounded(monkeypatch):
    monkeypatch.setattr(meters, "PIECE_CHARS", 100)
    for text in ("x" * 1_001, "ab " * 400, "a  b\n" * 300, ""):
        pieces = list(meters._pieces(text))
        assert "".join(pieces) == text
        assert all(len(p) <= 100 for p in pieces)


_COUNT = r"""
from workbench.core.tokens.meters import get_meter
for name in ("o200k", "deepseek"):
    get_meter(name, version=4).count_text("abcdefghij" * 400_000)
print(next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024)
"""


def test_a_long_text_is_counted_in_bounded_memory():
    done = subprocess.run([sys.executable, "-c", _COUNT], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) < 400, done.stdout   # 4 MB of text (whole: 570 MiB)

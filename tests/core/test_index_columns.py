"""The log index's text columns (`workbench.core.index_columns`): what is appended is what is
read back, through core and through Arrow, across flushes and sealed chunks; a column taken
earlier never changes when more rows arrive (a followed log)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.index_columns import TextColumn, safe_text
from workbench.errors import SeqOutOfRange
from workbench.frames.columns import strings

_TEXT = st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["\ud800", "a\udfffb", "", "é€😀"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(_TEXT, max_size=20), st.booleans(), st.booleans()), max_size=8))
def test_rows_read_back_across_flushes_and_chunks(batches) -> None:
    column = TextColumn()
    appended: list[str | None] = []
    taken = []
    for rows, flush, seal in batches:
        for text in rows:
            if text is not None:   # a row never put is missing
                column.put(len(appended), text)
            appended.append(None if text is None else safe_text(text))
        if flush:
            column.flush()
        if seal:
            taken.append((column.texts(len(appended)), list(appended)))
    taken.append((column.texts(len(appended)), list(appended)))
    for texts, expected in taken:   # earlier columns unchanged by later rows
        assert len(texts) == len(expected)
        assert list(texts) == expected
        assert strings(texts).to_numpy(dtype=object, na_value=None).tolist() == expected
        if expected:
            assert texts[-1] == expected[-1]


def test_a_row_past_the_end_is_out_of_range() -> None:
    column = TextColumn()
    column.put(0, "x")
    texts = column.texts(1)
    assert texts[0] == "x" and texts[-1] == "x"
    with pytest.raises(SeqOutOfRange):
        texts[1]


def test_arrow_reads_the_buffers_without_a_copy() -> None:
    column = TextColumn()
    column.put(0, "alpha")
    column.put(2, "β")
    texts = column.texts(3)
    array = strings(texts)
    assert array.isna().tolist() == [False, True, False]
    assert array[0] == "alpha" and array[2] == "β"
    data = array._pa_array.chunk(0).buffers()[2]
    assert data.address == texts.chunks[0].data.ctypes.data

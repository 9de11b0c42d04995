"""One vocabulary for what a replacement removes (frames.columns module doc): every frame, the
session ledger, the what-if comparison and the store name it the same way, with one dtype per
name."""
from __future__ import annotations

import re

import pytest

from workbench.frames.compare import COMPACTION_COLUMNS as COMPARE_COLUMNS
from workbench.frames.quality import SessionLedgerColumns
from workbench.frames.schema import SCHEMAS
from workbench.frames.store import STORE_FRAMES, store_schema

_GROUPS = {**{name: {c.name: str(c.dtype) for c in cols} for name, cols in SCHEMAS.items()},
           "ledger(per=session)": {c.name: str(c.dtype) for c in SessionLedgerColumns},
           "whatif comparison": dict(COMPARE_COLUMNS)}
_OTHER_SPELLINGS = re.compile(r"hidden|^computed_|^original_|_nodes$|shadow(?!ed)")


@pytest.mark.parametrize("name", sorted(_GROUPS))
def test_no_other_spelling_of_shadowed(name: str) -> None:
    bad = [c for c in _GROUPS[name] if _OTHER_SPELLINGS.search(c)]
    assert not bad, f"{name}: {bad} (use shadowed_* / logged_shadowed_*, frames.columns)"


def test_a_shared_name_has_one_dtype_everywhere() -> None:
    seen: dict[str, dict[str, list[str]]] = {}
    for frame, cols in _GROUPS.items():
        for col, dtype in cols.items():
            if "shadowed" in col or col in ("replacement_seq", "replacement_tokens", "saved_tokens"):
                seen.setdefault(col, {}).setdefault(dtype, []).append(frame)
    mixed = {col: by for col, by in seen.items() if len(by) > 1}
    assert not mixed
    # the comparison frame spells dtypes as strings; the frames' Int64 / list columns agree
    assert {"shadowed_seqs", "shadowed_count", "shadowed_tokens", "logged_shadowed_tokens",
            "shadowed_by"} <= set(seen)


def test_the_store_uses_the_frames_names() -> None:
    for name in STORE_FRAMES:
        if name in SCHEMAS:
            cols = [f.name for f in store_schema(name)]
            assert [c.name for c in SCHEMAS[name]] == [c for c in cols if c not in ("session", "log")]
            assert not [c for c in cols if _OTHER_SPELLINGS.search(c)]

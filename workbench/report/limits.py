"""How much of a large log the report shows (every cut is announced in the report itself).
Layer: report (no imports, so the CLI can name the defaults without loading plotly or widgets)."""
from __future__ import annotations

MAX_STEPS = 200
"""Model requests kept in the step viewer."""
MAX_BRACKETS = 300
"""Rows of the bracket chart (evenly spaced beyond that)."""
MAX_DETAILS = 60
"""Compactions that get a hidden-range / summary / lost-facts panel."""
MAX_HIDDEN_ROWS = 200
"""Hidden nodes listed per compaction panel."""
MAX_SUMMARY_CHARS = 20_000
"""Characters of a compaction summary shown in its panel."""

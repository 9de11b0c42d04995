"""How much of a large log the report shows (every cut is announced in the report itself).
Layer: report (no imports, so the CLI can name the defaults without loading plotly or widgets).
The caps the report shares with the widget (bracket chart rows, attempts and defects named) live
in `workbench.views.limits`."""
from __future__ import annotations

MAX_STEPS = 200
"""Model requests kept in the step viewer."""
MAX_DETAILS = 60
"""Compactions that get a hidden-range / summary / lost-facts panel."""
MAX_HIDDEN_ROWS = 200
"""Hidden nodes listed per compaction panel."""
MAX_SUMMARY_CHARS = 20_000
"""Characters of a compaction summary shown in its panel."""

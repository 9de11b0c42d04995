"""The static HTML report of one session log (`workbench report PATH -o report.html`).
Layer: report (imports io, core, frames and views; nothing imports it but the CLI).

    from workbench.report import write_report
    result = write_report("session.v4.jsonl", "report.html")   # ReportResult: bytes, seconds, ...

One self-contained, offline HTML file: session summary, token timeline with compaction bands,
bracket chart, audit table, per compaction the hidden range beside its summary and what it lost,
and a keyboard-driven step viewer (log versus surface at each model request). Modules:
`page` (assembly, JSON embedding, CSP), `sections` (escaped HTML sections), `steps` (step viewer
data and sampling), `assets` (our CSS and script), `limits` (how much of a large log is shown).
Attributes load lazily, so `workbench.report.limits` stays cheap to import.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.report.page import (
        ReportResult,
        json_for_script,
        render_report,
        write_report,
    )

__all__ = ["ReportResult", "json_for_script", "render_report", "write_report"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        msg = f"module 'workbench.report' has no attribute {name!r}"
        from workbench.errors import MissingAttribute
        raise MissingAttribute(msg)
    from workbench.report import page
    return getattr(page, name)

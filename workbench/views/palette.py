"""Colours and the stylesheet shared by the widgets, the figures and the static report.
Layer: views (no imports). Static text only: nothing here comes from a log."""
from __future__ import annotations

STATUS_COLORS: dict[str, str] = {
    "completed": "#2ca02c",
    "failed": "#d62728",
    "interrupted": "#ff7f0e",
    "stale": "#9467bd",
}
"""Compaction bracket status → colour (spec §5.10: ok / failed / open / open-stale)."""

STATUS_MEANING: dict[str, str] = {
    "completed": "closed by compaction/end without an error",
    "failed": "closed by compaction/end with an error; the surface kept what it had",
    "interrupted": "compaction/start never closed (the process stopped mid-compaction, or is "
                   "still running at the log's end)",
    "stale": "never closed; a later session/end-seed shows its process ended",
}
"""Each bracket status in words (legends, headers, row notes)."""

STATUS_ALIASES: dict[str, str] = {"ok": "completed", "open": "interrupted",
                                  "open-stale": "stale"}
"""The spec's episode status names, mapped to the names the views show."""


def status_name(status: object) -> str:
    """The display name of a bracket status (unknown values pass through as text)."""
    text = "" if status is None else str(status)
    return STATUS_ALIASES.get(text, text)


METER_COLORS: tuple[str, ...] = ("#1f77b4", "#17becf", "#bcbd22", "#8c564b", "#e377c2")
"""Token meters, in the order the timeline frame lists them."""

STYLE = """
.wb-root { font-size: 12px; }
.wb-table { border-collapse: collapse; width: 100%; table-layout: fixed; }
.wb-table caption { text-align: left; font-weight: bold; padding: 2px 4px; }
.wb-table th { text-align: left; position: sticky; top: 0; background: #f4f4f4; }
.wb-table td, .wb-table th { padding: 1px 4px; border-bottom: 1px solid #eee;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: top; }
.wb-table td:last-child { white-space: normal; word-break: break-word; }
.wb-audit td, .wb-audit th { white-space: normal; word-break: break-word; }
.wb-log th:nth-child(1) { width: 6px; } .wb-log th:nth-child(2) { width: 56px; }
.wb-log th:nth-child(3) { width: 170px; } .wb-log th:nth-child(4) { width: 64px; }
.wb-surface th:nth-child(1) { width: 34px; } .wb-surface th:nth-child(2) { width: 70px; }
.wb-surface th:nth-child(3) { width: 70px; } .wb-surface th:nth-child(4) { width: 60px; }
.wb-click { cursor: pointer; }
.wb-row:hover { background: #eef5ff; }
.wb-step { background: #fff3b0 !important; font-weight: bold; }
.wb-focus:not(.wb-step) { outline: 2px solid #1f5fa8; outline-offset: -2px; }
.wb-shadowed td { color: #999; text-decoration: line-through; text-decoration-color: #ccc; }
.wb-log-only td { color: #666; }
.wb-future td { color: #bbb; }
.wb-rejected td { color: #d62728; }
.wb-hidden-by { color: #b35900; font-weight: bold; display: inline-block; }
.wb-gutter { padding: 0 !important; }
.wb-bar-start { border-top: 2px solid #000; } .wb-bar-end { border-bottom: 2px solid #000; }
.wb-seq { font-family: monospace; }
.wb-num { text-align: right; font-family: monospace; }
.wb-replaces { color: #1f5fa8; font-weight: bold; }
.wb-new { color: #e6550d; }
.wb-changed { animation: wb-flash 1.2s ease-out 1; }
@keyframes wb-flash { from { background: #ffd8a8; } to { background: transparent; } }
.wb-lineage { margin: 2px 0 2px 12px; padding-left: 8px; }
.wb-more { color: #888; font-style: italic; }
.wb-error { border: 2px solid #d62728; background: #fdecea; padding: 4px; color: #8b0000; }
.wb-error pre { white-space: pre-wrap; margin: 2px 0; }
.wb-json { font-family: monospace; font-size: 11px; }
.wb-json details { display: inline; } .wb-json details[open] { display: block; }
.wb-j-body { padding-left: 14px; }
.wb-j-key { color: #881391; } .wb-j-str { color: #c41a16; white-space: pre-wrap;
  word-break: break-word; }
.wb-j-num { color: #1c00cf; } .wb-j-lit { color: #0b6e99; } .wb-j-count { color: #999;
  margin: 0 4px; }
.wb-title { font-weight: bold; margin: 2px 0; }
.wb-pre { font-size: 11px; white-space: pre-wrap; word-break: break-word; margin: 2px 0; }
.wb-log td:last-child { white-space: nowrap; }
.wb-log-pane, .wb-surface-pane { --wb-pane-height: 470px; }
.wb-controls .widget-play button:nth-child(2) { display: none; }
.wb-j-time { color: #777; font-style: italic; margin-left: 6px; }
.wb-copy { cursor: pointer; margin-left: 8px; }
.wb-copy[data-done]::after { content: " · " attr(data-done); color: #2a7d2a; }
.wb-gap td { color: #1f5fa8; font-style: italic; background: #f6f9fd; }
.wb-status-note { color: #fff; background: #b35900; border-radius: 3px; padding: 0 4px;
  font-weight: bold; }
.wb-legend { font-size: 11px; color: #444; margin: 2px 0; line-height: 1.5; }
.wb-summary, .wb-bracket-note { line-height: 1.5; }
.wb-legend-item { margin-right: 12px; white-space: nowrap; }
.wb-swatch { display: inline-block; width: 10px; height: 10px; margin-right: 3px;
  vertical-align: middle; }
.wb-summary-head-bad { color: #b00020; font-weight: bold; }
.wb-checkpoint-head { color: #1f5fa8; font-weight: bold; margin-top: 2px; }
.wb-summary-body { white-space: pre-wrap; word-break: break-word; max-height: 16em;
  overflow: auto; resize: vertical; background: #f7fbff; border: 1px solid #d5e3f5;
  padding: 4px 6px; margin: 2px 0; font-size: 12px; }
.wb-prices { font-weight: normal; color: #333; }
.wb-checkpoint pre { font-family: inherit; word-break: normal; overflow-wrap: break-word;
  max-height: 16em; overflow: auto; }
.wb-totals td, .wb-totals th { white-space: nowrap; }
.wb-diff-added b { color: #2ca02c; } .wb-diff-removed b { color: #d62728; }
"""
"""The workbench CSS, injected once per widget (class names are all prefixed ``wb-``)."""

"""Helpers shared by the conformance handlers."""
from __future__ import annotations

from typing import Any

from workbench.io.jsjson import stringify
from workbench.io.jsvalues import deep_equal


def diff(label: str, got: Any, want: Any) -> list[str]:
    """[] when `got` equals `want` with JSON semantics, else one line saying how they differ."""
    if deep_equal(got, want):
        return []
    g, w = stringify(got), stringify(want)
    if len(g) > 600:
        g = g[:600] + "..."
    if len(w) > 600:
        w = w[:600] + "..."
    return [f"{label}: got {g}, want {w}"]

"""Semantics of DSH session logs. Layer: core — may import `workbench.io`, the stdlib and numpy;
never pandas, ipywidgets or plotly (tests/test_layering.py enforces it)."""

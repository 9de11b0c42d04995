"""workbench: load DSH session logs, fold their surfaces, audit compactions, count tokens.

`import workbench` never loads widgets; views live in `workbench.views`.
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

"""Hostile-input tests: helpers in `hostile_checks` (this folder is on the import path)."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

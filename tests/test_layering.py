"""Dependencies only point downward: io → core → frames → views → cli/report.

Walks every module of each layer with `ast` and lists forbidden imports, e.g.
`{"core/classify.py": ["pandas"]}`."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "workbench"

FORBIDDEN = {
    "io": ("pandas", "numpy", "ipywidgets", "plotly", "anywidget", "workbench.core",
           "workbench.frames", "workbench.views", "workbench.cli", "workbench.report",
           "workbench.build"),
    "core": ("pandas", "ipywidgets", "plotly", "anywidget", "workbench.frames",
             "workbench.views", "workbench.cli", "workbench.report", "workbench.build"),
    "frames": ("ipywidgets", "plotly", "anywidget", "workbench.views", "workbench.cli",
               "workbench.report"),
    "views": ("workbench.cli", "workbench.report"),
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _violations(layer: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((PKG / layer).rglob("*.py")):
        bad = sorted(n for n in _imports(path)
                     if any(n == f or n.startswith(f + ".") for f in FORBIDDEN[layer]))
        if bad:
            found[str(path.relative_to(PKG))] = bad
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_point_downward(layer: str) -> None:
    assert _violations(layer) == {}


def test_import_workbench_loads_no_widgets() -> None:
    import subprocess
    import sys
    code = ("import sys, workbench; bad = [m for m in ('ipywidgets','plotly','anywidget') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0

"""The views' plotly widget is made without importing nbformat, and plotly still finds it."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import plotly.graph_objects as go
    import plotly.io as pio
    from workbench.views.plotly_widget import figure_widget

    widget = figure_widget(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])))
    assert list(widget.data[0].x) == [1, 2]
    assert "nbformat" not in sys.modules and "jsonschema" not in sys.modules
    pio.show(go.Figure(), renderer="plotly_mimetype")   # needs nbformat: imported on use
    import nbformat
    import plotly.io._renderers as renderers
    assert renderers.nbformat.__version__ == nbformat.__version__
    assert type(sys.modules["nbformat"]) is type(sys) and nbformat.v4.new_notebook().nbformat == 4
    print("ok")
""")


def test_figure_widget_defers_nbformat_until_plotly_needs_it():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")

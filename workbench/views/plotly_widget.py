"""`figure_widget(figure)`: plotly's `go.FigureWidget` of a figure. Layer: views.

The one place the views make a plotly widget. Importing `FigureWidget` imports
`plotly.io._renderers`, which imports `nbformat` eagerly, only to check its version when a
figure is *shown* through a mime renderer (`fig.show()`), which a widget never does. `nbformat`
in turn imports `jsonschema`, whose format checkers import `rfc3987_syntax`, which compiles 39
lark grammars at import: about 1 s of CPU per kernel before the first widget can be drawn.

So while plotly's widget module is imported (once per process), a not yet imported `nbformat`
is stood for by a `Deferred` module: whoever binds it then (plotly) reads the real module
through it, imported on the first attribute read. The stand-in leaves `sys.modules` when that
import is done, so any later ``import nbformat`` is the ordinary one. Nothing else of plotly or
nbformat changes.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

DEFERRED = ("nbformat",)
"""Modules plotly's widget imports eagerly but uses only outside widgets."""


class Deferred(types.ModuleType):
    """Stands for a module not imported yet: the first attribute it does not have imports the
    real module (by its name, the ordinary way) and every attribute is read from that."""

    def __getattr__(self, name: str) -> Any:
        real = self.__dict__.get("_real")
        if real is None:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
            real = self.__dict__["_real"] = importlib.import_module(self.__name__)
        return getattr(real, name)


def figure_widget(figure: Any) -> Any:
    """`go.FigureWidget(figure)`, plotly's widget class imported with the modules `DEFERRED`
    (module doc)."""
    if "plotly.graph_objs._figurewidget" not in sys.modules:
        stand_ins = {name: Deferred(name) for name in DEFERRED
                     if name not in sys.modules and importlib.util.find_spec(name) is not None}
        sys.modules.update(stand_ins)
        try:
            import plotly.graph_objs._figurewidget  # noqa: F401
        finally:
            for name, module in stand_ins.items():
                if sys.modules.get(name) is module:
                    del sys.modules[name]
    import plotly.graph_objects as go
    return go.FigureWidget(figure)

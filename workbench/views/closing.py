"""Closing widgets so their memory is released. Layer: views.

ipywidgets keeps every widget it ever created (its registry of open comms) until the widget
is closed, and a workbench's panels hold the session: a notebook that opens session after
session keeps them all unless each workbench is closed. `close_tree` closes a widget and every
widget reachable through its synced traits (children, layout, style, ...).

anywidget (0.11) also connects each instance of a widget class whose front-end module is a
file (plotly's `FigureWidget`) to that file's change signal with a closure over the instance,
a strong reference from the class that closing does not drop (manzt/anywidget#929);
`close_tree` disconnects those closures of the widgets it closes.
"""
from __future__ import annotations

from typing import Any

import ipywidgets as widgets

_FILE_KEYS = ("_esm", "_css")


def close_tree(root: widgets.Widget, keep: set[int] | None = None) -> None:
    """Close `root` and every widget below it, except the widgets whose ids are in `keep`."""
    stack, seen = [root], set(keep or ())
    while stack:
        widget = stack.pop()
        if id(widget) in seen:
            continue
        seen.add(id(widget))
        for name in widget.keys:
            value = getattr(widget, name, None)
            values = value if isinstance(value, (tuple, list)) else (value,)
            stack.extend(v for v in values if isinstance(v, widgets.Widget))
        _release_file_signals(widget)
        widget.close()


def _release_file_signals(widget: widgets.Widget) -> None:
    for klass in type(widget).__mro__:
        for key in _FILE_KEYS:
            changed = getattr(klass.__dict__.get(key), "changed", None)
            slots = getattr(changed, "_slots", None)
            if not slots:
                continue
            for slot in list(slots):
                callback = _callback(slot)
                if callback is not None and any(_holds(cell, widget) for cell in callback.__closure__ or ()):
                    changed.disconnect(callback)


def _callback(slot: Any) -> Any:
    try:
        return slot.dereference()
    except Exception:  # noqa: BLE001 - another library's private slot type changed: leave it
        return None


def _holds(cell: Any, widget: widgets.Widget) -> bool:
    try:
        return cell.cell_contents is widget
    except ValueError:  # an empty cell
        return False

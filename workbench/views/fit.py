"""`PageHelper`: what the workbench needs from the page that widgets do not do. Layer: views.

1. Figures as wide as the cell.
A `go.FigureWidget` sizes itself once, when it is first drawn (often before the output area has
its final width, so plotly's 700 px default sticks), and again only on a window ``resize``
event that JupyterLab does not always deliver to it. This invisible `anywidget` watches the
width of the enclosing ``.wb-workbench`` with a `ResizeObserver` and, when it changes (first
layout, a sidebar opened, the window resized), re-fits every autosized figure in it with
plotly.js's own ``Plots.resize`` (the page's ``window.Plotly``, which JupyterLab's plotly
extension provides), else dispatches a window ``resize`` event for the figures to act on.

2. Tooltips on the controls themselves. ipywidgets puts a `tooltip` on a control's description
label only, so hovering the input, the dropdown or the play button shows nothing; the helper
sets each control's own tooltip (`tips`: a ``wb-tip-N`` class → its text, from
`StepControls.tips`) on its inputs, dropdowns and buttons, and names the play button. Static
inline script; nothing is fetched and nothing is read from a log.
"""
from __future__ import annotations

import anywidget
import traitlets

_ESM = """
function render({ model, el }) {
  let width = -1, timer = null;
  const root = () => el.closest(".wb-workbench") || el.parentElement;
  const fire = () => {
    timer = null;
    const box = root();
    const now = box ? Math.round(box.getBoundingClientRect().width) : -1;
    if (!(now > 0 && now !== width)) return;
    width = now;
    const P = window.Plotly;
    if (P && P.Plots && box) {
      box.querySelectorAll(".js-plotly-plot").forEach((gd) => {
        if (gd._fullLayout && gd._fullLayout.autosize) P.Plots.resize(gd);
      });
    } else {
      window.dispatchEvent(new Event("resize"));
    }
  };
  const later = () => { if (timer === null) timer = setTimeout(fire, 150); };
  const observer = new ResizeObserver(later);
  const start = () => { const box = root(); if (box) observer.observe(box); else setTimeout(start, 200); };
  start();
  const titles = () => {
    const box = root();
    if (!box) return;
    const tips = model.get("tips") || {};
    Object.keys(tips).forEach((cls) => {
      box.querySelectorAll("." + cls).forEach((w) => {
        const what = w.classList.contains("wb-play") ? "input" : "input, select, textarea, button";
        w.querySelectorAll(what).forEach((c) => {
          if (!c.title) c.title = tips[cls];
        });
      });
    });
    box.querySelectorAll(".wb-play button").forEach((b, i) => {
      if (!b.title) b.title = ["play / pause (pausing keeps the step)", "rewind to seq 0",
                               "repeat"][i] || "";
    });
  };
  setTimeout(titles, 300);
  const again = setInterval(() => { width = -1; later(); titles(); }, 2000);   // late ones too
  setTimeout(() => clearInterval(again), 10000);
  return () => { observer.disconnect(); clearInterval(again); };
}
export default { render };
"""


class PageHelper(anywidget.AnyWidget):
    """Put one inside a ``.wb-workbench`` box (module doc: widths and tooltips)."""

    _esm = _ESM
    tips = traitlets.Dict({}).tag(sync=True)

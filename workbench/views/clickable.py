"""`ClickableHTML`: an HTML pane whose rows report clicks back to the kernel. Layer: views.

ipywidgets' `HTML` cannot send clicks anywhere, and one `Button` per row would cost a widget
model per visible event. This `anywidget` keeps a tiny inline ESM (no CDN, nothing fetched): it
sets the pane's ``innerHTML`` from the synced `html` trait and, on a click inside an element
carrying ``data-seq``, writes ``{"seq", "act", "n"}`` into the synced `click` trait (`n` counts
clicks, so clicking the same row twice is two changes). The markup always comes from the
formatters of `workbench.views.html`, which escape every log-derived character; the script only
reads our own ``data-seq``/``data-act`` attributes.

Expanded ``<details>`` (lineage, JSON) stay open across re-renders when they carry a
``data-key``; the row marked ``wb-focus`` (else ``wb-step``) is scrolled into the middle of the
pane (a tall one, such as a checkpoint with its summary, to the top). A ``[data-copy=ID]``
button copies the text of the element carrying ``data-copy-id=ID`` to the clipboard, in the
browser only (nothing goes to the kernel).
"""
from __future__ import annotations

from collections.abc import Callable

import anywidget
import traitlets

from workbench.views.palette import STYLE

_ESM = """
function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "wb-root wb-pane";
  el.appendChild(box);
  const paint = () => {
    const open = new Set();
    box.querySelectorAll("details[data-key][open]").forEach((d) => open.add(d.dataset.key));
    const top = box.scrollTop;
    box.innerHTML = model.get("html");
    box.querySelectorAll("details[data-key]").forEach((d) => {
      if (open.has(d.dataset.key)) d.open = true;
    });
    box.scrollTop = top;
    const focus = box.querySelector(".wb-focus") || box.querySelector(".wb-step");
    if (focus) {
      // a short row goes to the middle; a tall one (a checkpoint) to the top, under the header
      const top = focus.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
      const head = box.querySelector("thead");
      const lead = (head ? head.offsetHeight : 0) + 4;
      const room = box.clientHeight - focus.offsetHeight;
      box.scrollTop = Math.max(0, top - Math.max(lead, Math.min(box.clientHeight / 2, room / 2)));
    }
  };
  const onClick = (event) => {
    const copy = event.target.closest("[data-copy]");
    if (copy && box.contains(copy)) {
      const target = box.querySelector('[data-copy-id="' + copy.dataset.copy + '"]');
      const done = (text) => { copy.dataset.done = text; copy.title = text; };
      if (target && navigator.clipboard) {
        navigator.clipboard.writeText(target.textContent).then(
          () => done("copied"), () => done("copy refused by the browser"));
      } else { done("copy unavailable here"); }
      return;
    }
    if (event.target.closest("summary")) return;
    const hit = event.target.closest("[data-seq]");
    if (!hit || !box.contains(hit)) return;
    const n = (model.get("click").n || 0) + 1;
    model.set("click", { seq: Number(hit.dataset.seq), act: hit.dataset.act || "step", n });
    model.save_changes();
  };
  box.addEventListener("click", onClick);
  model.on("change:html", paint);
  paint();
  return () => { model.off("change:html", paint); box.removeEventListener("click", onClick); };
}
export default { render };
"""

_CSS = STYLE + """
.wb-pane { overflow: auto; max-height: var(--wb-pane-height, 420px); }
"""


class ClickableHTML(anywidget.AnyWidget):
    """HTML set from the kernel; clicks on ``[data-seq]`` elements come back as `click`."""

    _esm = _ESM
    _css = _CSS
    html = traitlets.Unicode("").tag(sync=True)
    click = traitlets.Dict({}).tag(sync=True)

    def on_click(self, callback: Callable[[int, str], None]) -> None:
        """Call `callback(seq, act)` for every click on a row (act: "step" or "select")."""
        def forward(change: dict) -> None:
            new = change["new"] or {}
            seq = new.get("seq")
            if type(seq) is int or (type(seq) is float and seq.is_integer()):
                callback(int(seq), str(new.get("act", "step")))
        self.observe(forward, names="click")

"""The report's own stylesheet and script (static text: nothing here comes from a log).
Layer: report.

The script reads every piece of data from ``<script type="application/json">`` blocks with
`JSON.parse(element.textContent)` and builds the step viewer with `document.createElement` and
`textContent` only: log text never reaches `innerHTML`, an attribute that loads or runs
anything, or a URL. Plotly draws the figures from their embedded JSON (plotly escapes nothing
itself, so figure labels were escaped in Python, `workbench.views.figures`). Keys: ←/→ previous
and next request, Home/End the first and the last; the figures' cursors follow once the keys rest
(`data-cursor` on the step viewer then names the seq they show). The URL names the step shown
(``#seq=N``) and opens there; ``#request=SEQ`` and ``#compaction=ID`` work too.
"""
from __future__ import annotations

REPORT_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
  max-width: 1500px; padding: 8px 20px 40px; color: #222; }
h1 { font-size: 20px; margin: 10px 0 4px; } h2 { font-size: 16px; margin: 26px 0 6px;
  border-bottom: 1px solid #ddd; padding-bottom: 2px; } h3 { font-size: 14px; margin: 14px 0 4px; }
nav.wb-toc a { margin-right: 12px; font-size: 13px; }
.wb-kv { border-collapse: collapse; font-size: 13px; }
.wb-kv th { text-align: left; padding: 1px 14px 1px 0; color: #555; font-weight: normal; }
.wb-kv td { padding: 1px 0; }
.wb-note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 4px 8px; margin: 6px 0;
  font-size: 13px; }
.wb-bad { color: #b00020; font-weight: bold; } .wb-ok { color: #2a7d2a; }
.wb-pre { white-space: pre-wrap; word-break: break-word; font-family: monospace; font-size: 12px;
  background: #f7f7f7; border: 1px solid #e4e4e4; padding: 6px; max-height: 420px; overflow: auto;
  margin: 0; }
.wb-split { display: flex; gap: 16px; align-items: flex-start; }
.wb-split > div { flex: 1 1 50%; min-width: 0; }
.wb-facts li { font-family: monospace; font-size: 12px; }
.wb-steps-bar { display: flex; gap: 8px; align-items: center; margin: 6px 0; font-size: 13px;
  position: sticky; top: 0; background: #fff; padding: 4px 0; z-index: 2; }
.wb-steps-bar input[type=range] { flex: 1 1 auto; }
.wb-step-label { font-weight: bold; min-width: 40%; }
.wb-steps-panes { display: flex; gap: 12px; align-items: flex-start; }
.wb-steps-panes > div { flex: 1 1 50%; min-width: 0; }
.wb-request td { color: #222 !important; }
.wb-target { outline: 3px solid #1f5fa8; }
.wb-note-inline { font-weight: normal; color: #555; font-size: 13px; }
.wb-step-link { font-size: 12px; margin-left: 8px; }
.wb-footer { color: #666; font-size: 12px; margin-top: 30px; }
"""

REPORT_JS = r"""
(function () {
  "use strict";
  var CONFIG = {displaylogo: false, responsive: true, scrollZoom: false};
  function data(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  var figures = {};
  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var fig = data(div.getAttribute("data-figure"));
    if (fig && window.Plotly) {
      window.Plotly.newPlot(div, fig.data, fig.layout, CONFIG);
      figures[div.id] = div;
    }
  });

  var S = data("wb-steps-data");
  var root = document.getElementById("wb-steps");
  if (!S || !root || !S.steps.length) { return; }
  var COLORS = S.colors;
  var STATES = ["on surface", "shadowed", "log-only", "future", "rejected"];
  var current = 0;
  var range = document.getElementById("wb-step-range");
  var label = document.getElementById("wb-step-label");
  var logPane = document.getElementById("wb-step-log");
  var surfacePane = document.getElementById("wb-step-surface");
  var stepLink = document.getElementById("wb-step-link");
  range.max = String(S.steps.length - 1);

  function ev(seq) { return S.events[String(seq)] || ["?", null, "", 0]; }

  function lineage(seq, depth) {
    var entry = S.lineage[String(seq)];
    var list = el("ul", "wb-lineage");
    if (!entry) { return list; }
    entry[0].forEach(function (child) {
      var e = ev(child);
      var li = el("li", "wb-lineage-item");
      li.appendChild(el("span", "wb-seq", "#" + child));
      li.appendChild(document.createTextNode(" " + e[0] + " " + e[2]));
      if (depth > 1 && S.lineage[String(child)]) { li.appendChild(lineage(child, depth - 1)); }
      list.appendChild(li);
    });
    if (entry[1] > 0) { list.appendChild(el("li", "wb-more", "\u2026 " + entry[1] + " more")); }
    return list;
  }

  function table(cls, caption, heads) {
    var t = el("table", "wb-table " + cls);
    t.appendChild(el("caption", null, caption));
    var tr = el("tr");
    heads.forEach(function (h) { tr.appendChild(el("th", null, h)); });
    var thead = el("thead"); thead.appendChild(tr); t.appendChild(thead);
    var body = el("tbody"); t.appendChild(body);
    return [t, body];
  }

  function renderLog(step) {
    var parts = table("wb-log", "log: seq " + step.log[0][0] + "\u2013" +
                      step.log[step.log.length - 1][0] + " of " + S.event_count +
                      " events \u00b7 model call at seq " + step.request + " (marks as of seq " +
                      step.seq + ", the state it was built from)", ["", "seq", "type", "role", "preview"]);
    step.log.forEach(function (row) {
      var e = ev(row[0]);
      var state = STATES[row[1]];
      var tr = el("tr", "wb-row wb-" + state.replace(" ", "-") +
                  (row[0] === step.request ? " wb-step wb-request" : ""));
      tr.setAttribute("data-seq", String(row[0]));
      var gutter = el("td", "wb-gutter");
      if (row[3] !== null) {
        gutter.className = "wb-gutter wb-bar wb-bar-" + row[4];
        gutter.style.background = COLORS[row[3]] || "#888";
        gutter.title = "compaction " + row[3];
      }
      tr.appendChild(gutter);
      tr.appendChild(el("td", "wb-seq", row[0]));
      tr.appendChild(el("td", null, e[0]));
      tr.appendChild(el("td", null, e[1] || ""));
      var cell = el("td");
      if (row[2] >= 0) { cell.appendChild(el("span", "wb-hidden-by", "hidden by #" + row[2])); cell.appendChild(document.createTextNode(" ")); }
      cell.appendChild(document.createTextNode(e[2]));
      tr.appendChild(cell);
      parts[1].appendChild(tr);
    });
    logPane.replaceChildren(parts[0]);
  }

  function renderSurface(step) {
    var shown = step.surface.length ? " \u00b7 showing #" + step.surface[0][0] + "\u2013#" +
      step.surface[step.surface.length - 1][0] : "";
    var parts = table("wb-surface", "surface the request saw (after seq " + step.seq + "): " +
                      step.surface_count + " nodes, " + step.surface_tokens.toLocaleString("en-US") +
                      " tokens (dsh)" + (step.measured === null ? "" : " \u00b7 with the tools DSH " +
                      "measured " + step.measured.toLocaleString("en-US")) + shown,
                      ["#", "seq", "role", "tokens", "message"]);
    step.surface.forEach(function (row) {
      var e = ev(row[1]);
      var tr = el("tr", "wb-row wb-node" + (row[2] ? " wb-changed" : ""));
      tr.setAttribute("data-seq", String(row[1]));
      tr.appendChild(el("td", null, row[0]));
      var seqCell = el("td", "wb-seq");
      if (row[2]) { seqCell.appendChild(el("span", "wb-new", "\u25cf ")); }
      seqCell.appendChild(document.createTextNode(String(row[1])));
      tr.appendChild(seqCell);
      tr.appendChild(el("td", null, e[1] || e[0]));
      tr.appendChild(el("td", "wb-num", e[3] === null ? "" : e[3].toLocaleString("en-US")));
      var cell = el("td");
      var rep = S.replaces[String(row[1])];
      if (rep) {
        var det = el("details");
        var sum = el("summary");
        sum.appendChild(el("span", "wb-replaces", "replaces #" + rep[0] + "\u2026#" + rep[1] +
                           " (" + rep[2] + " node" + (rep[2] === 1 ? "" : "s") + ") "));
        sum.appendChild(document.createTextNode(e[2]));
        det.appendChild(sum);
        det.appendChild(lineage(row[1], 3));
        cell.appendChild(det);
      } else {
        cell.textContent = e[2];
      }
      tr.appendChild(cell);
      parts[1].appendChild(tr);
    });
    surfacePane.replaceChildren(parts[0]);
  }

  var cursorTimer = null;
  function moveCursor(seq) {
    // Redrawing a figure's shapes costs up to a second on a huge log: move the cursors once
    // the keys rest, so holding an arrow key steps through the tables without waiting.
    if (cursorTimer !== null) { window.clearTimeout(cursorTimer); }
    cursorTimer = window.setTimeout(function () {
      cursorTimer = null;
      Object.keys(figures).forEach(function (id) {
        window.Plotly.relayout(figures[id], {"shapes[0].x0": seq, "shapes[0].x1": seq,
                                             "shapes[0].visible": true});
      });
      root.setAttribute("data-cursor", String(seq));
    }, 120);
  }

  function show(index) {
    current = Math.max(0, Math.min(S.steps.length - 1, index));
    var step = S.steps[current];
    range.value = String(current);
    label.textContent = "request " + (current + 1) + " of " + S.steps.length + " \u00b7 " + step.label;
    root.setAttribute("data-step", String(current));
    root.setAttribute("data-seq", String(step.seq));
    renderLog(step);
    renderSurface(step);
    moveCursor(step.seq);
    var link = "#seq=" + step.request;
    stepLink.setAttribute("href", link);
    stepLink.textContent = "link to this step (" + link + ")";
    if (window.location.hash !== link && history.replaceState) {
      history.replaceState(null, "", link);
    }
  }

  // Deep links: #seq=N (the last request step at or before N), #request=SEQ (that model call,
  // else the nearest), #compaction=ID (its panel). Values are parsed as integers or looked up in
  // our own table: nothing from the URL reaches the page as markup.
  function stepAtOrBefore(seq) {
    var best = 0;
    S.steps.forEach(function (step, i) { if (step.request <= seq) { best = i; } });
    return best;
  }
  function followHash() {
    var hash = decodeURIComponent(window.location.hash.replace(/^#/, ""));
    var match = /^(seq|request|compaction)=(.+)$/.exec(hash);
    if (!match) { return false; }
    if (match[1] === "compaction") {
      var own = Object.prototype.hasOwnProperty.call(S.compactions, match[2]);
      var number = own ? S.compactions[match[2]] : (/^\d+$/.test(match[2]) ? Number(match[2]) : 0);
      var panel = number ? document.getElementById("wb-compaction-" + number) : null;
      if (panel) { panel.scrollIntoView(); panel.classList.add("wb-target"); }
      return Boolean(panel);
    }
    var seq = parseInt(match[2], 10);
    if (isNaN(seq)) { return false; }
    show(stepAtOrBefore(seq));
    root.setAttribute("data-linked", String(seq));
    root.scrollIntoView();
    return true;
  }

  document.getElementById("wb-step-prev").addEventListener("click", function () { show(current - 1); });
  document.getElementById("wb-step-next").addEventListener("click", function () { show(current + 1); });
  range.addEventListener("input", function () { show(parseInt(range.value, 10)); });
  document.addEventListener("keydown", function (event) {
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.altKey ||
        event.ctrlKey || event.metaKey) { return; }
    var moves = {ArrowLeft: current - 1, ArrowRight: current + 1, Home: 0, End: S.steps.length - 1};
    if (Object.prototype.hasOwnProperty.call(moves, event.key)) {
      event.preventDefault();
      show(moves[event.key]);
    }
  });
  window.addEventListener("hashchange", followHash);
  if (!followHash()) { show(0); }
})();
"""

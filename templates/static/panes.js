// The image panes every annotator screen shares (comparison, gate review, rating, calibration): one zoom and pan
// applied to every `.viewport .frame` of the page, so that all images show the same region; the full-screen buttons
// (`button.fs[data-fs]`); the common frame's aspect ratio (the slide's, as slide "a" loads); and the object summary
// table. Reads `#zoom-level` and `#zoom-reset` when the page has them.
window.RefigPanes = (function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const $$ = (sel) => Array.from(document.querySelectorAll(sel));
  const view = { s: 1, x: 0, y: 0 };

  function apply() {
    $$(".viewport .frame").forEach((frame) => { frame.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.s})`; });
    const level = $("#zoom-level");
    if (level) level.textContent = `zoom ${Math.round(view.s * 100)} %`;
  }
  // Far enough to see the source figure pixel for pixel (small labels of wide figures), and at least 12×.
  function maxZoom() {
    const img = $('img[data-img="source"]'), frame = img && img.parentElement;
    const natural = img && img.naturalWidth && frame.offsetWidth ? (2 * img.naturalWidth) / frame.offsetWidth : 0;
    return Math.max(12, natural);
  }
  // The common frame takes the slides' aspect ratio (a slide is a fixed canvas the figure is fitted into); on a page
  // without a slide (screening) the figure's own.
  function frameTo(img) {
    const framing = $('img[data-img="a"]') ? "a" : "source";
    if (img.dataset.img !== framing || !img.naturalWidth || !img.naturalHeight) return;
    $(".panes").style.setProperty("--frame-aspect", String(img.naturalWidth / img.naturalHeight));
  }
  function reset() { view.s = 1; view.x = 0; view.y = 0; apply(); }

  function attach() {
    $$(".viewport").forEach((vp) => {
      vp.addEventListener("wheel", (event) => {
        event.preventDefault();
        const rect = vp.getBoundingClientRect(), frame = vp.querySelector(".frame");
        // in the frame's own (untransformed) coordinates: the frames have the same size and offset
        const px = event.clientX - rect.left - frame.offsetLeft, py = event.clientY - rect.top - frame.offsetTop;
        const factor = Math.exp(-event.deltaY * 0.0015);
        const s = Math.min(maxZoom(), Math.max(1, view.s * factor));
        // keep the point under the cursor fixed
        view.x = px - (px - view.x) * (s / view.s);
        view.y = py - (py - view.y) * (s / view.s);
        view.s = s;
        if (s === 1) { view.x = 0; view.y = 0; }
        apply();
      }, { passive: false });
      let drag = null;
      vp.addEventListener("pointerdown", (event) => {
        drag = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y };
        vp.setPointerCapture(event.pointerId);
        vp.classList.add("dragging");
      });
      vp.addEventListener("pointermove", (event) => {
        if (!drag) return;
        view.x = drag.vx + (event.clientX - drag.x);
        view.y = drag.vy + (event.clientY - drag.y);
        apply();
      });
      const end = () => { drag = null; vp.classList.remove("dragging"); };
      vp.addEventListener("pointerup", end);
      vp.addEventListener("pointercancel", end);
    });
    $$("button.fs").forEach((button) => button.addEventListener("click", () => {
      const pane = document.querySelector(`.pane[data-side="${button.dataset.fs}"]`);
      if (document.fullscreenElement) { document.exitFullscreen().catch(() => {}); }
      else if (pane.requestFullscreen) { pane.requestFullscreen().catch(() => {}); }
    }));
    const resetButton = $("#zoom-reset");
    if (resetButton) resetButton.addEventListener("click", reset);
  }

  // The object summary in two columns (read down the left, then down the right) to keep it short.
  function auditTable(el, rows) {
    const half = Math.ceil(rows.length / 2);
    const cell = (text, className) => {
      const td = document.createElement("td");
      td.className = className;
      td.textContent = text;
      return td;
    };
    el.replaceChildren(...rows.slice(0, half).map((first, i) => {
      const tr = document.createElement("tr");
      [first, rows[i + half]].forEach((pair, column) => {
        const [key, value] = pair || ["", ""];
        const shown = pair ? (value === null ? "–" : String(value)) : "";
        const k = cell(key, column ? "key second" : "key");
        if (key) k.title = key;  // in case a narrow pane cuts it short
        tr.append(k, cell(shown, "num"));
      });
      return tr;
    }));
  }

  return { attach, reset, frameTo, auditTable };
})();

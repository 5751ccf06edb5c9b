/* Keyboard for the single-form annotator screens (gate review, rating, calibration).
   - An element with data-key="k" is clicked when k is pressed (outside text boxes).
   - Rating: digits set the current axis (highlighted) and move to the next; Backspace goes back a row.
   - Enter submits the form (Ctrl+Enter inside the reason box); Esc leaves a text box. */
(function () {
  "use strict";
  const form = document.querySelector("form.keyboard");  // none once a calibration answer is shown
  const rows = form ? Array.from(form.querySelectorAll("[data-axis]")) : [];
  let current = 0;
  function mark() {
    rows.forEach((row, i) => row.classList.toggle("current", i === current));
  }
  mark();
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"));
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.metaKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();
      if (event.key === "Enter" && event.ctrlKey && form) { event.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (event.ctrlKey) return;
    if (event.key === "Enter" && form) { event.preventDefault(); form.requestSubmit(); return; }
    if (rows.length && /^[0-9]$/.test(event.key)) {
      const radio = rows[current].querySelector(`input[value="${event.key}"]`);
      if (radio) {
        radio.checked = true;
        current = Math.min(current + 1, rows.length - 1);
        mark();
        event.preventDefault();
      }
      return;
    }
    if (rows.length && event.key === "Backspace") { current = Math.max(0, current - 1); mark(); event.preventDefault(); return; }
    const target = document.querySelector(`[data-key="${event.key.toLowerCase()}"]`);
    if (target) {
      event.preventDefault();
      target.click();
      const focus = target.dataset.focus && document.getElementById(target.dataset.focus);
      if (focus) focus.focus();
    }
  });
})();

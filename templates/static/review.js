// The blinded single-item screens: gate review, rating and calibration (<body data-screen>), and the screening screen
// (a candidate figure with its title, caption, field and licence: accept or reject). Built like the comparison
// screen (annotate.js) and talking only to their API, whose URLs the page passes on <body> (data-api-next,
// data-api-submit, data-api-skip, data-api-undo, and data-study: the study worked in); every item is an opaque token.
// Zoom, pan, full screen and the object summary are panes.js's, shared with the comparison screen.
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const $$ = (sel) => Array.from(document.querySelectorAll(sel));
  const csrf = $("input[name=csrfmiddlewaretoken]").value;
  const SCREEN = document.body.dataset.screen;  // gate_review | rating | calibration | screening
  const STUDY = document.body.dataset.study || null;
  const PINNED = document.body.dataset.pinned === "1"; // opened for one study: its items, not every study's in turn
  const URLS = {
    next: document.body.dataset.apiNext, submit: document.body.dataset.apiSubmit,
    skip: document.body.dataset.apiSkip, undo: document.body.dataset.apiUndo,
  };
  const SCALE = (document.body.dataset.scale || "").split(",").filter((n) => n !== "");  // rating: "0".."5"
  const ZOOM_RESET_KEY = SCREEN === "rating" ? "z" : "0";  // digits are ratings on the rating screen
  const WAITING_RETRY_MS = 30000;  // renderings pending: ask again this often
  const WORDS = {
    a: "A better", b: "B better", tie_success: "tie, shared success", tie_failure: "tie, shared failure",
    pass: "passes", semantic: "fails the semantic gate", rendering: "fails the rendering gate",
  };
  const NOUNS = {  // [one, many, verb]
    gate_review: ["slide", "slides", "reviewed"], rating: ["slide", "slides", "rated"],
    calibration: ["practice item", "practice items", "answered"], screening: ["figure", "figures", "screened"],
  };
  const panes = window.RefigPanes;
  panes.attach();

  const state = {
    item: null, choice: null, ratings: {}, axis: 0, loaded: 0, generation: 0,
    ready: false, busy: false, restore: null, retry: null, lastStudy: null,
  };

  // Calibration works in the page's study. A gate-review or rating screen serves the annotator's studies of its kind
  // in turn, so the server picks the study of the next item, and an undo goes to the study of the last judgement.
  async function api(endpoint, body) {
    const study =
      endpoint === "undo" ? state.lastStudy || STUDY : (SCREEN === "calibration" || PINNED) && endpoint === "next" ? STUDY : null;
    if (study) body = { ...body, study };
    const response = await fetch(URLS[endpoint], {
      method: "POST",
      credentials: "same-origin",
      referrerPolicy: "same-origin",  // see annotate.js: keeps the Origin Django's CSRF check needs
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, "Accept": "application/json" },
      body: JSON.stringify(body),
    });
    let data = {};
    try { data = await response.json(); } catch (e) { /* empty body */ }
    return { ok: response.ok, status: response.status, data };
  }

  function say(text, ok) {
    const el = $("#status");
    el.textContent = text || "";
    el.classList.toggle("ok", !!ok);
  }
  function plural(n, noun) { return `${n} ${n === 1 ? NOUNS[noun][0] : NOUNS[noun][1]}`; }
  function axisName(axis) { const words = axis.replace(/_/g, " "); return words.charAt(0).toUpperCase() + words.slice(1); }

  // --- the choice ------------------------------------------------------------------------------
  function complete() {
    if (!state.item) return false;
    if (SCREEN === "rating") return state.item.axes.every((axis) => axis in state.ratings);
    return !!state.choice && state.choice !== "tie";
  }

  function setEnabled() {
    const on = state.ready && !state.busy;
    $$(".choice, .rate").forEach((b) => { b.disabled = !on; });
    $("#submit").disabled = !on || !complete();
  }

  function choose(choice) {
    if (!state.ready || state.busy) return;
    state.choice = choice;
    const tie = choice.startsWith("tie");
    if ($("#tie-kind")) $("#tie-kind").hidden = !tie;
    $$(".choice").forEach((b) => b.classList.toggle("selected", b.dataset.choice === choice ||
      (b.dataset.choice === "tie" && tie)));
    setEnabled();
    // Focus follows the decision: a failure needs its reason, a tie its kind; otherwise Submit, so Enter sends it.
    // Screening: the reason box either way (required to reject, optional to accept: Enter sends it as it is).
    if (choice === "semantic" || choice === "rendering" || SCREEN === "screening") $("#reason").focus();
    else if (choice === "tie") $('.choice[data-choice="tie_success"]').focus();
    else $("#submit").focus();
  }

  // Rating: one row per axis, one button per value; typing a digit rates the highlighted axis and moves on.
  function buildRatings(axes) {
    $("#ratings").replaceChildren(...axes.map((axis, row) => {
      const tr = document.createElement("tr");
      tr.dataset.axis = axis;
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = axisName(axis);
      tr.append(th);
      SCALE.forEach((value) => {
        const td = document.createElement("td"), button = document.createElement("button");
        button.type = "button";
        button.className = "rate";
        button.dataset.value = value;
        button.disabled = true;
        button.setAttribute("aria-label", `${axisName(axis)}: ${value}`);
        const kbd = document.createElement("kbd");
        kbd.textContent = value;
        button.append(kbd);
        button.addEventListener("click", () => { state.axis = row; rate(value); });
        td.append(button);
        tr.append(td);
      });
      return tr;
    }));
    markAxis();
  }
  function markAxis() {
    $$("#ratings tr").forEach((tr, i) => tr.classList.toggle("current", i === state.axis));
  }
  function moveAxis(step) {
    const last = state.item.axes.length - 1;
    state.axis = Math.min(last, Math.max(0, state.axis + step));
    markAxis();
  }
  function rate(value) {
    if (!state.ready || state.busy) return;
    const axis = state.item.axes[state.axis];
    state.ratings[axis] = Number(value);
    $$(`#ratings tr[data-axis="${axis}"] .rate`).forEach((b) => {
      const on = b.dataset.value === String(value);
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", String(on));
    });
    if (state.axis < state.item.axes.length - 1) moveAxis(1);
    setEnabled();
    if (complete() && document.activeElement && document.activeElement.classList.contains("rate")) $("#submit").focus();
  }

  // --- showing an item ---------------------------------------------------------------------------
  // A rating item's instruction and style target (task text from the import, never who made the slide): shown
  // above the ratings when present, as text only.
  function showTaskText(item) {
    const box = $("#task-text");
    if (!box) return;
    let shown = false;
    [["instruction", "#task-instruction"], ["style_target", "#task-style-target"]].forEach(([key, selector]) => {
      const text = item[key] || "";
      $(selector).textContent = text;
      $(selector).closest("div").hidden = !text;
      shown = shown || !!text;
    });
    box.hidden = !shown;
  }

  function showItem(item) {
    clearTimeout(state.retry);
    state.generation += 1;
    const generation = state.generation;
    Object.assign(state, { item, choice: null, ratings: {}, axis: 0, loaded: 0, ready: false, restore: null });
    const progress = item.progress || {};
    if (item.study) $("#study-name").textContent = item.study.name;
    $("#progress").textContent = progress.total ? `${progress.position} of ${progress.total}` : "–";
    if ($("#reason")) $("#reason").value = "";
    if ($("#tie-kind")) $("#tie-kind").hidden = true;
    $$(".choice").forEach((b) => b.classList.remove("selected"));
    if (SCREEN === "rating") { showTaskText(item); buildRatings(item.axes); }
    if (SCREEN === "calibration") {
      panes.auditTable($("#audit-a"), item.audit_a);
      panes.auditTable($("#audit-b"), item.audit_b);
      $("#ask").hidden = !!item.answered;
      $("#expert").hidden = !item.answered;
      if (item.answered) showExpert(item);
    } else if (SCREEN === "screening") {
      showFigure(item.figure);
    } else {
      panes.auditTable($("#audit-a"), item.audit);
    }
    panes.reset();
    $("#summary").hidden = true;
    $("#instructions").hidden = true;
    $("#work").hidden = false;
    if (!document.activeElement || document.activeElement === document.body || document.activeElement.disabled ||
        document.activeElement.closest("[hidden]")) {
      $("#work").focus({ preventScroll: true });
    }
    $("#wait").textContent = "loading images…";
    setEnabled();
    const images = $$(".viewport img");
    images.forEach((img) => {
      img.onload = () => {
        if (generation !== state.generation) return;
        panes.frameTo(img);
        state.loaded += 1;
        if (state.loaded === images.length) imagesLoaded();
      };
      img.onerror = () => { if (generation === state.generation) say("an image failed to load; reload the page"); };
      img.src = item.images[img.dataset.img];
    });
  }

  function imagesLoaded() {
    state.ready = true;
    $("#wait").textContent = "";
    setEnabled();
    const previous = state.restore;
    state.restore = null;
    if (!previous) return;
    if (SCREEN === "rating") {
      state.item.axes.forEach((axis, row) => {
        if (axis in (previous.ratings || {})) { state.axis = row; rate(previous.ratings[axis]); }
      });
      state.axis = 0; markAxis();
      $("#submit").focus();
    } else if (SCREEN === "gate_review" || SCREEN === "screening") {
      $("#reason").value = previous.reason || "";
      const choice = previous.verdict || previous.decision;
      if (choice) choose(choice);
    } else if (previous.outcome) {
      choose(previous.outcome);
    }
  }

  // Screening: what is known of the candidate figure, beside it (text only; the licence links to its terms).
  function showFigure(figure) {
    $("#figure-title").textContent = figure.title || "–";
    $("#figure-caption").textContent = figure.caption || "–";
    $("#figure-field").textContent = figure.field || "–";
    const license = $("#figure-license");
    license.replaceChildren();
    if (/^https?:\/\//.test(figure.license_url || "")) {
      const link = document.createElement("a");
      Object.assign(link, { href: figure.license_url, rel: "noopener noreferrer", target: "_blank" });
      link.textContent = figure.license || figure.license_url;
      license.append(link);
    } else {
      license.textContent = figure.license || "–";
    }
  }

  function showExpert(item) {
    $("#ask").hidden = true;
    $("#expert").hidden = false;
    $("#expert-verdict").textContent = item.correct ? "You agree with the expert." : "The expert chose differently.";
    $("#expert").classList.toggle("agree", !!item.correct);
    $("#yours").textContent = WORDS[item.outcome] || item.outcome;
    $("#expert-answer").textContent = WORDS[item.expert] || item.expert;
    $("#explanation").textContent = item.explanation || "";
    $("#next").focus();
  }

  // The end of the work for now: all done, renderings still pending, the study paused, or no practice items at all.
  function showSummary(data) {
    state.item = null;
    $("#work").hidden = true;
    $("#instructions").hidden = true;
    $("#summary").hidden = false;
    const s = data.summary || {};
    if (data.study) $("#study-name").textContent = data.study.name;
    let heading, text;
    if (data.state === "paused") {
      heading = "This study is paused";
      text = data.detail || "No new items are handed out for now.";
      $("#progress").textContent = "paused";
    } else if (SCREEN === "calibration") {
      if (!s.items) {
        heading = "This study has no practice items";
        text = "The coordinator has not added practice items to this study yet. You can start comparing right away.";
      } else {
        heading = "You have seen every practice item";
        text = `You answered ${plural(s.answered, SCREEN)} of ${s.items} and agreed with the expert on ${s.correct}` +
          (s.skipped ? `; you set ${s.skipped} aside.` : ".");
      }
      $("#progress").textContent = `${s.answered || 0} answered`;
    } else {
      const did = `You ${NOUNS[SCREEN][2]} ${plural(s.done, SCREEN)}` + (s.skipped ? ` and skipped ${s.skipped}.` : ".");
      if (data.state === "waiting") {
        heading = `${plural(s.pending, SCREEN)} ${s.pending === 1 ? "is" : "are"} waiting for ${s.pending === 1 ? "its" : "their"} rendering`;
        text = `Nothing else is left for you for now: those will come here once they are rendered (this page asks again every ${WAITING_RETRY_MS / 1000} s). ${did}`;
        state.retry = setTimeout(next, WAITING_RETRY_MS);
      } else {
        heading = "All done — thank you";
        text = `${did} There is nothing more for you in this study. (U takes back your last one.)`;
      }
      $("#progress").textContent = `${s.done || 0} done`;
    }
    $("#summary-heading").textContent = heading;
    $("#summary-text").textContent = text;
    $("#summary-heading").focus();
  }

  async function next() {
    clearTimeout(state.retry);
    const { ok, data } = await api("next", {});
    if (!ok) { say(data.detail || "could not fetch the next item"); return; }
    if (data.state === "item") showItem(data.item);
    else showSummary(data);
  }

  // --- submit, undo, skip --------------------------------------------------------------------------
  async function submit() {
    if (!state.ready || state.busy || !state.item) return;
    if (SCREEN === "calibration" && state.item.answered) { next(); return; }
    if (!complete()) {
      say(SCREEN === "rating" ? "rate every axis first" : state.choice === "tie" ?
        "a tie is a shared success (S) or a shared failure (F)" : "choose first");
      return;
    }
    let body;
    if (SCREEN === "gate_review") {
      const reason = $("#reason").value.trim();
      if (state.choice !== "pass" && !reason) { say("a gate failure needs a short reason"); $("#reason").focus(); return; }
      body = { token: state.item.token, verdict: state.choice, reason };
    } else if (SCREEN === "screening") {
      const reason = $("#reason").value.trim();
      if (state.choice === "reject" && !reason) { say("a rejection needs a short reason"); $("#reason").focus(); return; }
      body = { token: state.item.token, decision: state.choice, reason };
    } else if (SCREEN === "rating") {
      body = { token: state.item.token, ratings: state.ratings };
    } else {
      body = { token: state.item.token, outcome: state.choice };
    }
    state.busy = true; setEnabled();
    const { ok, status, data } = await api("submit", body);
    state.busy = false;
    if (ok) state.lastStudy = state.item.study ? state.item.study.name : STUDY;
    if (ok && SCREEN === "calibration") { say(""); state.item = data.item; showExpert(data.item); return; }
    if (ok) { say({ rating: "rating stored", screening: "decision stored" }[SCREEN] || "review stored", true); if ($("#reason")) $("#reason").blur(); await next(); return; }
    say(data.detail || `refused (${status})`);
    if (status === 409 || status === 404) await next(); else setEnabled();
  }

  async function undo() {
    if (state.busy) return;
    state.busy = true;
    const { ok, data } = await api("undo", {});
    state.busy = false;
    if (!ok) { say(data.detail || "nothing to undo"); return; }
    showItem(data.item);
    state.restore = data.previous || null;  // put back once the images are in (imagesLoaded)
    say(SCREEN === "calibration" ? "last answer withdrawn: change it or answer again" :
      "last judgement withdrawn: it is back on screen, change it or submit again", true);
  }

  function skipBoxOpen(open) {
    $("#skip-box").hidden = !open;
    $("#skip-open").setAttribute("aria-expanded", String(open));
    if (open) ($("#skip-reason") || $("#skip-confirm")).focus();
  }

  async function skip() {
    if (!state.item || (SCREEN === "calibration" && state.item.answered)) { skipBoxOpen(false); return; }
    const input = $("#skip-reason");
    const reason = input ? input.value.trim() : "";
    if (input && !reason) { say("say briefly why you skip"); input.focus(); return; }
    const { ok, data } = await api("skip", { token: state.item.token, reason });
    if (input) input.value = "";
    skipBoxOpen(false);
    if (ok) { await next(); say("item skipped", true); } else say(data.detail || "could not skip");
  }

  // --- controls --------------------------------------------------------------------------------
  $$(".choice").forEach((b) => b.addEventListener("click", () => choose(b.dataset.choice)));
  $("#submit").addEventListener("click", submit);
  $("#undo").addEventListener("click", undo);
  $("#skip-open").addEventListener("click", () => skipBoxOpen($("#skip-box").hidden));
  $("#skip-confirm").addEventListener("click", skip);
  if ($("#next")) $("#next").addEventListener("click", next);
  function instructions(show) {
    $("#instructions").hidden = !show;
    if (show) $("#start").focus();
    else if (!$("#work").hidden) $("#work").focus({ preventScroll: true });
  }
  $("#show-instructions").addEventListener("click", () => instructions($("#instructions").hidden));
  const SEEN = `refig-instructions-seen-${SCREEN}`;
  $("#start").addEventListener("click", () => {
    instructions(false);
    try { localStorage.setItem(SEEN, "1"); } catch (e) { /* private mode */ }
    if (!state.item) next();
  });

  const CHOICE_KEYS = SCREEN === "gate_review" ? { "1": "pass", "2": "semantic", "3": "rendering" } :
    SCREEN === "screening" ? { a: "accept", r: "reject" } :
    SCREEN === "calibration" ? { "1": "a", "2": "b", "3": "tie", "s": "tie_success", "f": "tie_failure" } : {};

  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("textarea, input, select, [contenteditable]");
    if (typing) {
      if (event.key === "Escape" && event.target.id === "skip-reason") { event.preventDefault(); skipBoxOpen(false); $("#skip-open").focus(); }
      else if (event.key === "Escape") { event.preventDefault(); event.target.blur(); $("#work").focus({ preventScroll: true }); }
      else if (event.key === "Enter" && !event.shiftKey && event.target.id === "reason") { event.preventDefault(); submit(); }
      else if (event.key === "Enter" && event.target.id === "skip-reason") { event.preventDefault(); skip(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?") { event.preventDefault(); instructions($("#instructions").hidden); return; }
    if (event.key === "Escape" && !$("#skip-box").hidden) { event.preventDefault(); skipBoxOpen(false); return; }
    // A focused button answers Enter / Space itself (Start, Skip, Undo, a choice, Next...): never swallow it.
    const onControl = event.target.closest && event.target.closest("button, a[href], summary");
    if (onControl && (event.key === "Enter" || event.key === " ")) return;
    const key = event.key.toLowerCase();
    if (key === "u") { event.preventDefault(); undo(); return; }
    if ($("#work").hidden) return;
    if (SCREEN === "calibration" && state.item && state.item.answered) {
      if (event.key === "Enter" || key === "n") { event.preventDefault(); next(); }
      return;
    }
    if (key in CHOICE_KEYS) {
      if ((key === "s" || key === "f") && !(state.choice || "").startsWith("tie")) return;
      event.preventDefault(); choose(CHOICE_KEYS[key]);
    } else if (SCREEN === "rating" && SCALE.includes(event.key)) { event.preventDefault(); rate(event.key); }
    else if (SCREEN === "rating" && (event.key === "ArrowUp" || event.key === "Backspace")) { event.preventDefault(); moveAxis(-1); }
    else if (SCREEN === "rating" && event.key === "ArrowDown") { event.preventDefault(); moveAxis(1); }
    else if (event.key === "Enter") { event.preventDefault(); submit(); }
    else if (key === "k") { event.preventDefault(); skipBoxOpen(true); }
    else if (key === "r" && $("#reason")) { event.preventDefault(); $("#reason").focus(); }
    else if (key === ZOOM_RESET_KEY) { event.preventDefault(); panes.reset(); }
  });

  let seen = false;
  try { seen = localStorage.getItem(SEEN) === "1"; } catch (e) { /* private mode */ }
  if (seen) next(); else instructions(true);
})();

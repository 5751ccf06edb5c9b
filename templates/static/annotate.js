// The blinded comparison screen. Talks only to the annotator API, whose URLs the page passes in on <body>
// (data-api-next, data-api-submit, data-api-skip, data-api-undo, and data-study: the study worked in, by name);
// every item is an opaque token.
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const $$ = (sel) => Array.from(document.querySelectorAll(sel));
  const csrf = $("input[name=csrfmiddlewaretoken]").value;

  const state = {
    item: null, choice: null, loaded: 0, loadedAt: null, shownAt: null, firstChoiceAt: null,
    dwellTimer: null, ready: false, busy: false,
  };

  // {next: "/api/annotate/next/", ...}, rendered with {% url %} by annotation/annotate.html
  const URLS = {
    next: document.body.dataset.apiNext, submit: document.body.dataset.apiSubmit,
    skip: document.body.dataset.apiSkip, undo: document.body.dataset.apiUndo,
  };

  const STUDY = document.body.dataset.study || null;

  async function api(endpoint, body) {
    if (body !== undefined && STUDY && (endpoint === "next" || endpoint === "undo")) body = { ...body, study: STUDY };
    const response = await fetch(URLS[endpoint], {
      method: body === undefined ? "GET" : "POST",
      credentials: "same-origin",
      // The site-wide policy is no-referrer, under which browsers send "Origin: null" on POST and
      // Django's CSRF origin check refuses it; same-origin keeps the Origin for our own server only.
      referrerPolicy: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, "Accept": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
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

  // --- zoom and pan, the same transform on all three images; the object summary (panes.js) -------
  const panes = window.RefigPanes;
  panes.attach();
  const resetView = panes.reset, frameTo = panes.frameTo, auditTable = panes.auditTable;

  // --- showing an item ------------------------------------------------------------------------
  function setEnabled() {
    const on = state.ready && !state.busy;
    $$(".choice").forEach((b) => { b.disabled = !on; });
    $("#submit").disabled = !on || !state.choice || state.choice === "tie";
  }

  function choose(choice) {
    if (!state.ready || state.busy) return;
    if (state.firstChoiceAt === null) state.firstChoiceAt = performance.now();
    state.choice = choice;
    $("#tie-kind").hidden = !(choice === "tie" || choice === "tie_success" || choice === "tie_failure");
    $$(".choice").forEach((b) => b.classList.toggle("selected", b.dataset.choice === choice ||
      (b.dataset.choice === "tie" && choice.startsWith("tie"))));
    setEnabled();
    // Focus follows the decision: the tie kind after "tie", the reason box after a tie kind (required there),
    // otherwise Submit, so that Enter on the focused button sends the vote.
    if (choice === "tie") $('.choice[data-choice="tie_success"]').focus();
    else if (choice === "tie_success" || choice === "tie_failure") $("#reason").focus();
    else $("#submit").focus();
  }

  function showItem(item) {
    state.item = item;
    state.restore = null;
    state.choice = null; state.loaded = 0; state.loadedAt = null; state.firstChoiceAt = null; state.ready = false;
    state.shownAt = performance.now();
    clearInterval(state.dwellTimer);
    $("#reason").value = "";
    $("#tie-kind").hidden = true;
    if (item.study && $("#study-name")) $("#study-name").textContent = item.study.name;
    $$(".choice").forEach((b) => b.classList.remove("selected"));
    $("#reason-hint").textContent = item.rules.reason_decisive ? "(required)" : "(optional for A / B, required for ties)";
    $("#progress").textContent = `${item.progress.position} of ${item.progress.quota}`;
    auditTable($("#audit-a"), item.audit_a);
    auditTable($("#audit-b"), item.audit_b);
    resetView();
    $("#summary").hidden = true;
    $("#work").hidden = false;
    $("#instructions").hidden = true;
    if (!document.activeElement || document.activeElement === document.body || document.activeElement.disabled) {
      $("#work").focus({ preventScroll: true });
    }
    $("#wait").textContent = "loading images…";
    setEnabled();
    $$(".viewport img").forEach((img) => {
      img.onload = () => {
        frameTo(img);
        state.loaded += 1;
        if (state.loaded === 3) imagesLoaded();
      };
      img.onerror = () => say("an image failed to load; reload the page");
      img.src = item.images[img.dataset.img];
    });
  }

  function imagesLoaded() {
    state.loadedAt = performance.now();
    const min = state.item.rules.min_dwell_ms;
    const tick = () => {
      const left = min - (performance.now() - state.loadedAt);
      if (left <= 0) {
        clearInterval(state.dwellTimer);
        state.ready = true;
        $("#wait").textContent = "";
        setEnabled();
        if (state.restore) { const r = state.restore; state.restore = null; $("#reason").value = r.reason || ""; choose(r.outcome); }
      } else {
        $("#wait").textContent = `look closely… voting opens in ${Math.ceil(left / 1000)} s`;
      }
    };
    tick();
    if (!state.ready) state.dwellTimer = setInterval(tick, 200);
  }

  function showSummary(summary) {
    $("#work").hidden = true;
    $("#summary").hidden = false;
    $("#summary-heading").focus();
    $("#progress").textContent = `${summary.votes} done`;
    $("#summary-text").textContent = `You compared ${summary.votes} pairs and skipped ${summary.skipped}.` +
      (summary.median_dwell_s !== null ? ` Median time per pair: ${summary.median_dwell_s} s.` : "");
    const labels = { a: "A better", b: "B better", tie_success: "tie — shared success", tie_failure: "tie — shared failure" };
    $("#summary-table").replaceChildren(...Object.entries(summary.outcomes).map(([k, n]) => {
      const tr = document.createElement("tr");
      tr.innerHTML = "<td></td><td></td>";
      tr.children[0].textContent = labels[k]; tr.children[1].textContent = n;
      return tr;
    }));
  }

  async function next() {
    const { ok, data } = await api("next", {});
    if (!ok) { say(data.detail || "could not fetch the next item"); return; }
    if (data.state === "item") showItem(data.item);
    else if (data.state === "done") showSummary(data.summary);
    else { $("#work").hidden = true; say(data.detail || "nothing to compare right now"); }
  }

  async function submit() {
    if (!state.ready || state.busy || !state.choice || state.choice === "tie") {
      if (state.choice === "tie") say("a tie is a shared success (S) or a shared failure (F)");
      return;
    }
    const reason = $("#reason").value.trim();
    const needReason = state.choice.startsWith("tie") || state.item.rules.reason_decisive;
    if (needReason && !reason) { say("please write a short reason"); $("#reason").focus(); return; }
    const now = performance.now();
    state.busy = true; setEnabled();
    const { ok, status, data } = await api("submit", {
      token: state.item.token, outcome: state.choice, reason,
      dwell_ms: Math.round(now - state.loadedAt), decision_ms: Math.round((state.firstChoiceAt || now) - state.shownAt),
    });
    state.busy = false;
    if (ok) { say("vote stored", true); $("#reason").blur(); await next(); return; }
    say(data.detail || `vote refused (${status})`);
    if (status === 409 || status === 403 || status === 404) await next(); else setEnabled();
  }

  async function undo() {
    if (state.busy) return;
    state.busy = true;
    const { ok, data } = await api("undo", {});
    state.busy = false;
    if (ok) {
      say("last vote withdrawn: your choice is back, change it or submit again", true);
      showItem(data.item);
      state.restore = data.previous || null;  // put back once voting opens (the dwell rule applies again)
    }
    else say(data.detail || "nothing to undo");
  }

  async function skip() {
    if (!state.item) { $("#skip-box").hidden = true; return; }  // nothing on screen to skip (session over, study paused)
    const reason = $("#skip-reason").value.trim();
    if (!reason) { say("say briefly why you skip"); $("#skip-reason").focus(); return; }
    const { ok, data } = await api("skip", { token: state.item.token, reason });
    $("#skip-reason").value = ""; $("#skip-box").hidden = true; $("#skip-open").setAttribute("aria-expanded", "false");
    if (ok) { await next(); say("item skipped", true); } else say(data.detail || "could not skip");
  }

  // --- controls -------------------------------------------------------------------------------
  $$(".choice").forEach((b) => b.addEventListener("click", () => choose(b.dataset.choice)));
  $("#submit").addEventListener("click", submit);
  $("#undo").addEventListener("click", undo);
  function skipOpen() {
    const box = $("#skip-box");
    box.hidden = !box.hidden;
    $("#skip-open").setAttribute("aria-expanded", String(!box.hidden));
    if (!box.hidden) $("#skip-reason").focus();
  }
  $("#skip-open").addEventListener("click", skipOpen);
  $("#skip-confirm").addEventListener("click", skip);
  function instructions(show) {
    $("#instructions").hidden = !show;
    if (show) $("#start").focus();
  }
  $("#show-instructions").addEventListener("click", () => instructions($("#instructions").hidden));
  $("#start").addEventListener("click", () => {
    instructions(false);
    try { localStorage.setItem("refig-instructions-seen", "1"); } catch (e) { /* private mode */ }
    if (!state.item) next(); else $("#work").focus({ preventScroll: true });
  });

  const KEYS = { "1": "a", "2": "b", "3": "tie", "s": "tie_success", "f": "tie_failure" };
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("textarea, input, select, [contenteditable]");
    if (typing) {
      if (event.key === "Escape" && event.target.id === "skip-reason") {
        event.preventDefault(); $("#skip-box").hidden = true; $("#skip-open").focus();
      } else if (event.key === "Escape") { event.target.blur(); event.preventDefault(); $("#work").focus({ preventScroll: true }); }
      else if (event.key === "Enter" && !event.shiftKey && event.target.id === "reason") { event.preventDefault(); submit(); }
      else if (event.key === "Enter" && event.target.id === "skip-reason") { event.preventDefault(); skip(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?") { event.preventDefault(); instructions($("#instructions").hidden); return; }
    // A focused button or link answers Enter / Space itself (Skip, Start, Undo, a choice...): never swallow it.
    const onControl = event.target.closest && event.target.closest("button, a[href], summary");
    if (onControl && (event.key === "Enter" || event.key === " ")) return;
    if ($("#work").hidden) return;
    const key = event.key.toLowerCase();
    if (key in KEYS) {
      if ((key === "s" || key === "f") && !(state.choice || "").startsWith("tie")) return;
      event.preventDefault(); choose(KEYS[key]);
    } else if (event.key === "Enter") { event.preventDefault(); submit(); }
    else if (key === "u") { event.preventDefault(); undo(); }
    else if (key === "k") { event.preventDefault(); if ($("#skip-box").hidden) skipOpen(); else $("#skip-reason").focus(); }
    else if (key === "r") { event.preventDefault(); $("#reason").focus(); }
    else if (key === "0") { event.preventDefault(); resetView(); }
  });

  let seen = false;
  try { seen = localStorage.getItem("refig-instructions-seen") === "1"; } catch (e) { /* private mode */ }
  if (seen) next(); else instructions(true);
})();

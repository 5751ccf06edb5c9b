// The coordinator dashboard (templates/annotation/dashboard.html), as a file: the page's content security policy allows
// no inline script. The coverage cells take their colour from data-colour (a style attribute would need
// 'unsafe-inline'; setting element.style from a script does not).
document.querySelectorAll("td[data-colour]").forEach((td) => { td.style.background = td.dataset.colour; });
if (document.getElementById("live")) {
(function () {
  // The study's one Elo computation (the numbers of /api/tables/elo/), re-read every 15 s (every 2 s while a refresh
  // is being computed); with too few votes or a graph that is not connected it says so instead of ranking.
  const table = document.getElementById("live"), status = document.getElementById("live-status");
  const note = document.getElementById("live-note");
  const fixed = (v) => (typeof v === "number" ? v.toFixed(1) : "–");
  function draw(data) {
    const rows = data.rows || [];
    const asOf = data.as_of ? new Date(data.as_of).toLocaleTimeString() : "";
    const votes = `${data.votes} vote${data.votes === 1 ? "" : "s"}`;
    status.textContent = data.status === "computing" ? "computing…" : (data.as_of ? `as of ${asOf}, ${votes}` : "");
    note.hidden = data.status !== "insufficient";
    note.textContent = data.detail || "";
    const ranked = data.status === "ok";
    table.tBodies[0].replaceChildren(...rows.map((r) => {
      const tr = document.createElement("tr");
      const cells = ranked ? [r.configuration, fixed(r.elo), `${fixed(r.ci_low)} – ${fixed(r.ci_high)}`, r.n]
                           : [r.configuration, "–", "–", r.n];
      cells.forEach((v) => { const td = document.createElement("td"); td.textContent = v; tr.append(td); });
      return tr;
    }));
    return data.status === "computing" ? 2000 : Number(table.dataset.refreshMs);
  }
  function load() {
    fetch(table.dataset.source, { credentials: "same-origin" })
      .then((r) => r.json())
      .then((data) => setTimeout(load, draw(data)))
      .catch(() => { status.textContent = "not available, retrying"; setTimeout(load, Number(table.dataset.refreshMs)); });
  }
  load();
})();
(function () {
  // Adjacent pairs of the Elo order and the stopping rule (table `elo-adjacent`; the rule is decided server-side).
  const table = document.getElementById("stability"), status = document.getElementById("stability-status");
  const fixed = (v, d) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));
  fetch(table.dataset.source, { credentials: "same-origin" })
    .then((r) => r.ok ? r.json() : Promise.reject(r.status))
    .then((data) => {
      const rows = data.rows || [];
      status.textContent = !rows.length ? "no ratings yet"
        : (data.stopping_rule_met ? `stopping rule met: largest flip probability ${fixed(data.max_flip_probability, 3)} < ${data.threshold}`
          : `not settled: largest flip probability ${fixed(data.max_flip_probability, 3)} ≥ ${data.threshold}`);
      status.className = data.stopping_rule_met ? "good" : "";
      table.tBodies[0].replaceChildren(...rows.map((r) => {
        const tr = document.createElement("tr");
        [r.upper, r.lower, fixed(r.elo_gap, 1), `${fixed(r.difference_ci_low, 1)} – ${fixed(r.difference_ci_high, 1)}`,
         fixed(r.rank_flip_probability, 3), r.votes_to_separate === null ? "∞" : r.votes_to_separate, r.pair_votes]
          .forEach((v) => { const td = document.createElement("td"); td.textContent = v; tr.append(td); });
        return tr;
      }));
    })
    .catch(() => { status.textContent = "not available yet"; });
})();
(function () {
  // Agreement on the items shown to several annotators (table `iaa`, same numbers as manage.py export iaa).
  const table = document.getElementById("iaa"), status = document.getElementById("iaa-status");
  fetch(table.dataset.source, { credentials: "same-origin" })
    .then((r) => r.ok ? r.json() : Promise.reject(r.status))
    .then((data) => {
      const columns = data.columns || [], rows = data.rows || [];
      status.textContent = rows.length ? "" : "no overlapping items yet";
      table.tHead.rows[0].replaceChildren(...columns.map((c) => { const th = document.createElement("th"); th.textContent = c; return th; }));
      table.tBodies[0].replaceChildren(...rows.map((r) => {
        const tr = document.createElement("tr");
        (Array.isArray(r) ? r : columns.map((c) => r[c])).forEach((v) => {
          const td = document.createElement("td");
          td.textContent = typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : (v === null ? "–" : v);
          tr.append(td);
        });
        return tr;
      }));
    })
    .catch(() => { status.textContent = "not available"; });
})();
}

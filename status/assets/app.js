// The baton status page. Plain JavaScript, no build step: it polls the
// handler's JSON endpoints (relative URLs, so the page works under any
// prefix) and draws the timeline as SVG. Every filter lives in the
// address (#view?...), so a link shows what its sender saw.
"use strict";

(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  const state = {
    info: null,
    view: "jobs",
    skew: 0, // server now - local now, ms
    local: false, // times in the browser's zone instead of UTC
    armed: new Map(), // confirm-button key -> disarm time (local ms); survives redraws
    order: {}, // view -> row keys in the order last drawn, kept while a button is armed
    runs: new Map(), // "backend/job" -> a run-now being followed
    openStacks: new Set(), // "job/token" of stacks shown on the job page
    lastGood: {}, // view -> server time of its last read without error
    jobs: { state: "", backend: "", q: "" },
    job: { name: "", backend: "", run: "" },
    tl: { range: 3600000, to: 0, live: true, offset: 0, limit: 20, filter: "", backend: "", problems: false, data: null },
  };
  const ARM_MS = 20000; // an armed button disarms after this long unclicked

  // A redraw between a button's press and its release would eat the
  // click: while a pointer is down, redraws wait until just after the
  // click it makes.
  let pressed = false, waiting = [];
  document.addEventListener("pointerdown", () => { pressed = true; }, true);
  document.addEventListener("pointerup", () => setTimeout(() => {
    pressed = false;
    for (const w of waiting.splice(0)) w();
  }, 0), true);
  function settled() { return pressed ? new Promise((r) => waiting.push(r)) : Promise.resolve(); }

  // ---- helpers --------------------------------------------------------

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids) if (k !== null && k !== undefined && k !== false) e.append(k);
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null) e.setAttribute(k, v);
    }
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function serverNow() { return Date.now() + state.skew; }

  function ms(t) { return typeof t === "number" ? t : t ? Date.parse(t) : 0; }

  function pad(n) { return String(n).padStart(2, "0"); }

  // parts splits a time into its fields in the zone shown.
  function parts(t) {
    const d = new Date(t);
    return state.local
      ? { y: d.getFullYear(), mo: d.getMonth() + 1, d: d.getDate(), h: d.getHours(), mi: d.getMinutes(), s: d.getSeconds() }
      : { y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds() };
  }

  function zone() { return state.local ? "" : "Z"; }

  function fmtTime(t) {
    t = ms(t);
    if (!t) return "-";
    const p = parts(t);
    return p.y + "-" + pad(p.mo) + "-" + pad(p.d) + " " + pad(p.h) + ":" + pad(p.mi) + ":" + pad(p.s) + zone();
  }

  // fmtShort is a time without its date when it is today.
  function fmtShort(t) {
    t = ms(t);
    if (!t) return "-";
    const p = parts(t), n = parts(serverNow());
    const hm = pad(p.h) + ":" + pad(p.mi) + ":" + pad(p.s) + zone();
    return p.y === n.y && p.mo === n.mo && p.d === n.d ? hm : pad(p.mo) + "-" + pad(p.d) + " " + hm;
  }

  function fmtDur(d) {
    if (d < 0) d = 0;
    if (d < 1000) return Math.round(d) + "ms";
    if (d < 60000) return (d / 1000).toFixed(d < 10000 ? 1 : 0) + "s";
    const s = Math.round(d / 1000);
    if (s < 3600) return Math.floor(s / 60) + "m" + pad(s % 60) + "s";
    if (s < 86400) return Math.floor(s / 3600) + "h" + pad(Math.floor(s % 3600 / 60)) + "m";
    return Math.floor(s / 86400) + "d" + pad(Math.floor(s % 86400 / 3600)) + "h";
  }

  function rel(t) {
    t = ms(t);
    if (!t) return "-";
    const d = t - serverNow();
    return d >= 0 ? "in " + fmtDur(d) : fmtDur(-d) + " ago";
  }

  async function api(path) {
    const r = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) {
      const e = new Error(body.error || r.statusText);
      e.status = r.status;
      throw e;
    }
    return body;
  }

  async function post(path, payload) {
    const r = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(payload),
    });
    const body = await r.json().catch(() => ({}));
    return { ok: r.ok, status: r.status, body };
  }

  function showErrors(errs) {
    const box = document.getElementById("errors");
    box.replaceChildren(...(errs || []).map((e) => el("div", { text: e.backend ? e.backend + ": " + e.error : e })));
  }

  function notice(msg, keep) {
    const box = document.getElementById("notice");
    box.replaceChildren(el("div", { text: msg, id: "notice-text" }));
    if (!keep) setTimeout(() => { if (box.firstChild && box.firstChild.textContent === msg) box.replaceChildren(); }, 8000);
  }

  function outcomeTag(o) { return el("span", { class: "tag o-" + o, text: o.replace("_", " ") }); }

  function stateTag(s, title) { return el("span", { class: "tag s-" + s, text: s, title: title }); }

  // where names the backends a view read, with what each reads.
  function where(sources) {
    const s = (sources || []).map((x) => x.backend + (x.source ? " (" + x.source + ")" : ""));
    return s.length ? s.join(" and ") : "no backend with this capability";
  }

  // unknownRows are the rows of backends a view could not read: what
  // they hold is unknown, which is neither "none" nor "all is well".
  // A stale backend could not be read either, but the view shows what it
  // held when last read, with that time, under a row that says so.
  function unknownRows(sources, cols) {
    return (sources || []).filter((x) => x.unknown || x.stale).map((x) => {
      const name = x.backend + (x.source ? " (" + x.source + ")" : "");
      if (x.stale) {
        return el("tr", { class: "unknown", "data-stale": x.backend },
          el("td", { colspan: cols }, stateTag("stale"), " " + name + " could not be read: showing what it held " + rel(x.as_of) + ", at " + fmtTime(x.as_of) + " (see the error above)."));
      }
      return el("tr", { class: "unknown", "data-unknown": x.backend },
        el("td", { colspan: cols }, stateTag("unknown"), " " + name + " could not be read: its state is unknown (see the error above)."));
    });
  }

  // A button that asks for a second click before it acts. Its armed state
  // is kept by key outside the button, so a redraw of the table (every
  // refresh) shows it still armed.
  function confirmButton(key, label, action, cls) {
    const armedUntil = state.armed.get(key);
    const armed = armedUntil && armedUntil > Date.now();
    if (!armed) state.armed.delete(key);
    const b = el("button", { class: (cls || "danger") + (armed ? " confirm" : ""), text: armed ? "confirm " + label + "?" : label, "data-action": key });
    b.addEventListener("click", async () => {
      if (!state.armed.has(key)) {
        state.armed.set(key, Date.now() + ARM_MS);
        b.textContent = "confirm " + label + "?";
        b.classList.add("confirm");
        setTimeout(() => { if ((state.armed.get(key) || 0) <= Date.now()) { state.armed.delete(key); disarm(key, label); } }, ARM_MS + 50);
        return;
      }
      state.armed.delete(key);
      b.disabled = true;
      await action();
    });
    return b;
  }

  function disarm(key, label) {
    for (const b of document.querySelectorAll("button[data-action]")) {
      if (b.dataset.action === key) { b.textContent = label; b.classList.remove("confirm"); }
    }
  }

  // act posts an action and says how it went: done(body) words a success
  // when given, else "done".
  async function act(path, payload, what, done) {
    const r = await post(path, payload);
    notice(r.ok ? what + ": " + (done ? done(r.body) : "done") : what + ": refused (" + r.status + "): " + (r.body.error || ""), r.ok && done);
    refresh();
    return r;
  }

  // releasedText says whose lease a force-release freed and what its
  // holder does next: the lease is gone at once, but a holder that does
  // not renew learns of it only when its trust window ends.
  function releasedText(b) {
    return "freed the lease of " + (b.locked_by || "an unnamed holder") + " (token " + b.token + "). It may go on working until its trust window ends" +
      (b.until ? ", by " + fmtTime(b.until) + " at the latest" : "") + " (one that renews learns of the loss at its next renewal); its writes through a fence guard are refused once the next holder has written.";
  }

  // ---- run-now: requested -> started on replica X -> outcome ----------

  async function runNow(j) {
    const key = j.backend + "/" + j.name;
    const r = await post("api/actions/job", { backend: j.backend, job: j.name, action: "run" });
    if (!r.ok) {
      notice("run " + j.name + ": refused (" + r.status + "): " + (r.body.error || ""));
      return;
    }
    state.runs.set(key, { backend: j.backend, job: j.name, requested: ms(r.body.requested), phase: "requested", text: "requested at " + fmtShort(r.body.requested) });
    runNotice(state.runs.get(key));
    refresh();
  }

  function runText(f) { return "run " + f.job + " (" + f.backend + "): " + f.text; }

  function runNotice(f) {
    notice(runText(f), f.phase !== "done");
    document.body.dataset.runFollowed = runText(f); // the latest, after the notice is gone
  }

  // followRuns reads the job page of each run-now followed, and moves it
  // on when the ledger has a manual run that started after the request.
  async function followRuns() {
    for (const [key, f] of state.runs) {
      if (f.phase === "done") {
        if (serverNow() - f.done > 60000) state.runs.delete(key);
        continue;
      }
      if (serverNow() - f.requested > 10 * 60000) { state.runs.delete(key); continue; }
      let d;
      try {
        d = await api("api/job?" + new URLSearchParams({ backend: f.backend, name: f.job, limit: 20 }));
      } catch (err) {
        continue;
      }
      const run = d.runs.filter((r) => r.manual && ms(r.started) >= f.requested - 5000).pop();
      if (!run) continue;
      run.outcome = run.outcome || "running"; // the ledger's running outcome is empty
      const started = "requested → started on " + run.locked_by + " (token " + run.token + ")";
      if (run.outcome === "running") {
        f.phase = "started";
        f.text = started;
        f.short = "started on " + run.locked_by;
      } else {
        f.short = run.outcome.replace("_", " ") + " on " + run.locked_by;
        f.phase = "done";
        f.done = serverNow();
        f.text = started + " → " + run.outcome.replace("_", " ") + " in " + fmtDur(ms(run.finished) - ms(run.started)) + (run.error ? ": " + run.error : "");
      }
      f.token = run.token;
      runNotice(f);
    }
  }

  // jobActions are a job's buttons: run now and one pause/resume toggle,
  // each asking for a second click.
  function jobActions(j) {
    const box = el("span", { class: "acts" });
    if (!j.control) return box;
    const id = j.backend + "/" + j.name;
    box.append(confirmButton("run|" + id, "run now", () => runNow(j), "act"));
    if (j.paused === "cluster") {
      box.append(confirmButton("resume|" + id, "resume", () => act("api/actions/job", { backend: j.backend, job: j.name, action: "resume" }, "resume " + j.name), "act"));
    } else {
      box.append(confirmButton("pause|" + id, "pause", () => act("api/actions/job", { backend: j.backend, job: j.name, action: "pause" }, "pause " + j.name), "act"));
    }
    const f = state.runs.get(id);
    if (f) box.append(el("div", { class: "run-follow dim", text: f.short || "requested", title: f.text, "data-phase": f.phase }));
    return box;
  }

  // ---- Jobs -----------------------------------------------------------

  // Problems first: a state's rank in the Jobs view.
  const RANK = { unknown: 0, missed: 1, failed: 2, unfinished: 3, paused: 4, running: 5, ok: 6, unlocked: 7 };
  const PROBLEMS = ["unknown", "missed", "failed", "unfinished"];

  function jobHref(j, run) {
    return "#job/" + encodeURIComponent(j.name) + "?" + new URLSearchParams(run ? { backend: j.backend, run } : { backend: j.backend });
  }

  // What kept a missed tick from being claimed (jobstate.Problem's
  // blocker and holder), for a job (j.problem_tick) or a problem (p.tick).
  function blame(p) {
    const tick = ms(p.problem_tick || p.tick);
    const r = p.blocker, h = p.holder;
    if (r) return ": the run of " + r.locked_by + " started " + fmtTime(r.started) + " (token " + r.token + ") held the lock" + (r.finished ? " until " + fmtTime(r.finished) : " and never ended");
    if (h && h.granted_at && ms(h.granted_at) > tick) return ": no replica claimed it; the lock is held since " + fmtTime(h.granted_at) + " (after the tick) by " + h.locked_by + " (token " + h.token + ")";
    if (h) return ": lock held by " + h.locked_by + " (token " + h.token + ")";
    return p.kind === "missed" || p.problem === "missed" ? ": no replica claimed it" : "";
  }

  function stateTitle(j) {
    if (j.state === "paused") return j.paused === "cluster" ? "paused cluster-wide" : "paused on every replica: " + (j.paused_on || []).join(", ");
    if (j.problem) return j.problem + " tick " + fmtTime(j.problem_tick) + blame(j);
    if (j.state === "unfinished") return "the last run never ended although its lease did: " + (j.last_run ? j.last_run.locked_by + " died or lost it" : "its process died");
    if (j.state === "unknown") return "the backend could not be read";
    if (j.state === "unlocked") return "runs on every replica; the ledger records locked jobs only";
    return "";
  }

  function runCell(r, j) {
    if (!r) return el("td", { class: "empty", text: "never" });
    const open = r === j.last_run && j.last_run_unfinished ? "unfinished" : "running";
    const dur = r.finished ? fmtDur(ms(r.finished) - ms(r.started)) : open;
    // An unlocked job: each replica's latest run, from the registry.
    const per = (j.replica_runs || []).map((x) => x.locked_by + ": " + (x.outcome || "running") + " " + rel(x.started) + (x.error ? " (" + firstLine(x.error) + ")" : "")).join("\n");
    return el("td", { class: "last", title: (j.locked ? "token " + r.token + ", started " + fmtTime(r.started) : per) + (r.error && j.locked ? "\n" + r.error : "") },
      outcomeTag(r.outcome || open), " ", el("span", { class: "dim", text: rel(r.started) + " · " + dur + " · " + r.locked_by }));
  }

  function jobsFiltered(d) {
    const f = state.jobs;
    return d.jobs.filter((j) => (!f.backend || j.backend === f.backend) &&
      (!f.q || j.name.includes(f.q)) &&
      (!f.state || (f.state === "problems" ? PROBLEMS.includes(j.state) : j.state === f.state)))
      .sort((a, b) => (RANK[a.state] ?? 9) - (RANK[b.state] ?? 9) || a.name.localeCompare(b.name) || a.backend.localeCompare(b.backend));
  }

  async function renderJobs() {
    const d = await api("api/jobs");
    await settled();
    showErrors(d.errors);
    syncSelect("jobs-backend", (d.sources || []).map((s) => s.backend), state.jobs.backend);
    const body = document.querySelector("#jobs-table tbody");
    const list = steady("jobs", jobsFiltered(d), (j) => j.backend + "/" + j.name);
    const rows = list.map((j) => {
      const reps = j.replicas || [];
      return el("tr", { class: PROBLEMS.includes(j.state) ? "problem" : j.state === "paused" ? "paused" : "", "data-job": j.name, "data-backend": j.backend, "data-problem": j.problem || "", "data-state": j.state },
        el("td", { class: "name" }, el("a", { href: jobHref(j), text: j.name, title: j.name })),
        el("td", { text: j.backend }),
        el("td", { class: "sched", text: j.schedule + (j.time_zone && j.time_zone !== "UTC" ? " " + j.time_zone : ""), title: (j.options || []).join(", ") }),
        el("td", { class: "next", text: j.next_tick ? fmtShort(j.next_tick) : "-", title: j.next_tick ? fmtTime(j.next_tick) + " (" + rel(j.next_tick) + ")" : "" }),
        runCell(j.last_run, j),
        j.last_success ? el("td", { text: rel(j.last_success.started), title: fmtTime(j.last_success.started) + " on " + j.last_success.locked_by }) : el("td", { class: "empty", text: "never" }),
        el("td", { class: "replicas", text: reps.length + "/" + j.instances + (j.paused === "some" ? " (" + j.paused_on.length + " paused)" : "") + (j.gone ? " (" + j.gone.join(", ") + " gone)" : ""), title: reps.join(", ") + (j.paused_on && j.paused_on.length ? "\npaused on " + j.paused_on.join(", ") : "") }),
        el("td", {}, stateTag(j.state, stateTitle(j))),
        el("td", {}, jobActions(j)));
    });
    const unknown = unknownRows(d.sources, 9);
    const empty = d.jobs.length ? "No job matches the filter." : "No scheduler instance is registered in " + where((d.sources || []).filter((s) => !s.unknown)) + ".";
    body.replaceChildren(...unknown, ...(rows.length ? rows : unknown.length && !d.jobs.length ? [] : [el("tr", {}, el("td", { class: "empty", colspan: 9, text: empty }))]));
    label(body);
    document.getElementById("jobs-count").textContent = list.length + " of " + d.jobs.length + " jobs";
    const ib = document.querySelector("#instances-table tbody");
    const departed = { gone: "died at ", left: "shut down at " };
    ib.replaceChildren(...d.instances.map((i) => el("tr", { "data-instance": i.locked_by, "data-state": i.state || "", class: i.state === "gone" ? "problem" : "" },
      el("td", { text: i.locked_by }), el("td", { text: i.backend }),
      el("td", {}, el("span", { class: "tag r-" + (i.state || "alive"), text: i.state || "alive", title: departed[i.state] ? departed[i.state] + fmtTime(i.until) : "" })),
      el("td", { text: i.version || "-" }),
      el("td", { text: rel(i.started), title: fmtTime(i.started) }), el("td", { text: rel(i.heartbeat), title: fmtTime(i.heartbeat) }),
      el("td", { text: String(i.jobs) }))));
    label(ib);
    return d.errors;
  }

  // ---- Job page -------------------------------------------------------

  function firstLine(s) {
    s = s.split("\n")[0];
    return s.length > 100 ? s.slice(0, 99) + "…" : s;
  }

  function attempts(r) {
    const m = /attempt (\d+) of (\d+)/.exec(r.error || "");
    return m ? m[1] + "/" + m[2] : "1";
  }

  async function renderJob() {
    const p = state.job;
    let d;
    try {
      d = await api("api/job?" + new URLSearchParams({ backend: p.backend, name: p.name, limit: 100 }));
      await settled();
    } catch (err) {
      if (err.status === 404) {
        document.getElementById("job-title").replaceChildren(el("span", { text: p.name }), " ", stateTag("unknown"));
        document.getElementById("job-facts").replaceChildren(el("p", { class: "empty", id: "job-missing", text: err.message }));
        document.querySelector("#runs-table tbody").replaceChildren();
        return [];
      }
      throw err;
    }
    showErrors(d.errors);
    const j = d.job;
    document.getElementById("job-title").replaceChildren(el("span", { text: j.name }), " ", stateTag(j.state, stateTitle(j)), " ", jobActions(j));
    const fact = (k, v, attrs) => [el("dt", { text: k }), el("dd", attrs || {}, v)];
    const lease = d.lease;
    const facts = [
      ...fact("Schedule", j.schedule + (j.time_zone ? " (" + j.time_zone + ")" : "")),
      ...fact("Next tick", j.next_tick ? fmtTime(j.next_tick) + " (" + rel(j.next_tick) + ")" : "-", { id: "job-next" }),
      ...fact("Backend", j.backend + (d.source ? " (" + d.source + ")" : "")),
      ...fact("State", stateTitle(j) || j.state),
      ...fact("Replicas", (j.replicas || []).length + "/" + j.instances + ": " + (j.replicas || []).join(", ") + (j.paused_on && j.paused_on.length ? "; paused on " + j.paused_on.join(", ") : "")),
      ...fact("Lease", j.locked ? "at most " + fmtDur(j.at_most_for_ms || 0) + ", at least " + fmtDur(j.at_least_for_ms || 0) + ((j.options || []).length ? "; " + j.options.join(", ") : "") : "unlocked: runs on every replica; below, each replica's latest run as its instance published it"),
      ...fact("Lock now", !lease ? "-" : lease.held ? "held by " + lease.locked_by + " (token " + lease.token + ") until " + fmtTime(lease.until) : "free"),
    ];
    if (d.requests.length) facts.push(...fact("Run requests", d.requests.map((r) => "requested " + fmtShort(r.requested) + (r.requested_by ? " by " + r.requested_by : "") + ", lapses " + rel(r.until)).join("; ")));
    if (d.problems.length) {
      facts.push(...fact("Last 24 h", el("ul", { class: "problems" }, ...d.problems.slice(0, 20).map((pr) => el("li", { "data-kind": pr.kind },
        stateTag(pr.kind), " tick " + fmtTime(pr.tick) + blame(pr) + (pr.run ? ": " + firstLine(pr.run.error || pr.run.outcome || "running") : ""))))));
    }
    if ((j.skips || []).length) {
      // What each replica published of the ticks it did not run (since it started).
      const reasons = ["held", "stale_tick", "still_running", "paused", "missed"];
      facts.push(...fact("Skipped ticks", el("ul", { class: "skips", id: "job-skips" }, ...j.skips.map((s) => el("li", { "data-replica": s.locked_by },
        s.locked_by + ": " + reasons.filter((r) => s[r]).map((r) => r.replace("_", " ") + " " + s[r]).join(", ") +
        "; latest " + s.last.reason.replace("_", " ") + " at tick " + fmtTime(s.last.tick) + (s.last.holder ? " (held by " + s.last.holder + ")" : ""))))));
    }
    document.getElementById("job-facts").replaceChildren(el("dl", {}, ...facts));

    const body = document.querySelector("#runs-table tbody");
    const rows = [];
    const dead = new Set(d.unfinished || []);
    for (const r of d.runs) {
      r.outcome = r.outcome || (dead.has(r.token) ? "unfinished" : "running"); // the ledger's running outcome is empty
      const key = j.name + "/" + r.token;
      const errCell = el("td", { class: "err" });
      if (r.error) errCell.append(el("div", { class: "error-text", text: r.error }));
      if (r.released_at) errCell.append(el("div", { class: "released", text: "lock force-released by " + (r.released_by || "an unnamed operator") + " at " + fmtTime(r.released_at) }));
      if (r.stack) {
        const det = el("details", { class: "stack", open: state.openStacks.has(key) || p.run === String(r.token) }, el("summary", { text: "stack" }), el("pre", { text: r.stack }));
        det.addEventListener("toggle", () => { if (det.open) state.openStacks.add(key); else state.openStacks.delete(key); });
        errCell.append(det);
      }
      const flags = [r.catch_up ? "catch-up" : "", r.manual ? "manual" : ""].filter(Boolean).join(", ");
      rows.push(el("tr", { id: r.token ? "run-" + r.token : null, class: p.run === String(r.token) && r.token ? "linked" : "", "data-token": String(r.token), "data-outcome": r.outcome, "data-replica": r.locked_by },
        el("td", {}, r.token ? el("a", { href: jobHref(j, String(r.token)), text: r.tick ? fmtTime(r.tick) : "(no tick)", title: "link to this run" }) : r.tick ? fmtTime(r.tick) : "(no tick)"),
        el("td", { text: r.locked_by }), el("td", { text: r.token ? String(r.token) : "unlocked" }), el("td", { text: fmtTime(r.started) }),
        el("td", { text: r.finished ? fmtDur(ms(r.finished) - ms(r.started)) : "running " + fmtDur(serverNow() - ms(r.started)) }),
        el("td", {}, outcomeTag(r.outcome), flags ? el("span", { class: "dim", text: " " + flags }) : null),
        el("td", { text: attempts(r) }), errCell));
    }
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: 8, text: j.locked ? "The ledger of " + j.backend + (d.source ? " (" + d.source + ")" : "") + " holds no run of this job (is Config.Ledger on?)." : "No replica has published a run of this unlocked job yet." }))]));
    label(body);
    if (p.run && !state.job.scrolled) {
      const row = document.getElementById("run-" + p.run);
      if (row) { row.scrollIntoView({ block: "center" }); state.job.scrolled = true; }
    }
    return d.errors;
  }

  // ---- Locks ----------------------------------------------------------

  async function renderLocks() {
    const all = document.getElementById("locks-all").checked;
    const d = await api("api/locks" + (all ? "?all=1" : ""));
    await settled();
    showErrors(d.errors);
    const body = document.querySelector("#locks-table tbody");
    const rows = d.locks.map((l) => {
      const acts = el("td");
      if (state.info.actions && l.held) {
        acts.append(confirmButton("force-release|" + l.backend + "/" + l.name + "/" + l.token, "force release", () => act("api/actions/force-release", { backend: l.backend, name: l.name, token: l.token }, "force-release " + l.name, releasedText)));
      }
      return el("tr", { "data-lock": l.name, "data-backend": l.backend, "data-token": String(l.token), "data-held": String(l.held) },
        el("td", { class: "name" }, l.job ? el("a", { href: jobHref({ name: l.name, backend: l.backend }), text: l.name }) : l.name), el("td", { text: l.backend }), el("td", { text: l.held ? l.locked_by : "(free) " + (l.locked_by || "") }),
        el("td", { text: String(l.token) }), el("td", { text: rel(l.granted_at), title: fmtTime(l.granted_at) }),
        el("td", { class: "countdown", "data-until": l.held ? String(ms(l.until)) : "", text: l.held ? "" : "released/expired", title: fmtTime(l.until) }),
        el("td", { class: "countdown-least", "data-until": l.at_least_until ? String(ms(l.at_least_until)) : "", text: l.at_least_until ? fmtTime(l.at_least_until) : "-" }),
        el("td", { text: l.last_tick ? fmtTime(l.last_tick) : "-" }), acts);
    });
    const unknown = unknownRows(d.sources, 9);
    const read = (d.sources || []).filter((s) => !s.unknown);
    const empty = !rows.length && read.length ? [el("tr", {}, el("td", { class: "empty", colspan: 9, text: "No lock is held in " + where(read) + "." + (unknown.length ? " The other backends are unknown." : "") }))] : [];
    body.replaceChildren(...unknown, ...rows, ...empty);
    label(body);
    tickCountdowns();
    return d.errors;
  }

  // steady returns list in the order view last drew it while a button is
  // armed, so the row under the pointer does not move between the arm and
  // the confirm click; new rows go last. It remembers the order drawn.
  function steady(view, list, key) {
    const armed = [...state.armed.values()].some((until) => until > Date.now());
    const prev = state.order[view] || [];
    if (armed && prev.length) {
      const at = new Map(prev.map((k, i) => [k, i]));
      list = list.map((x, i) => [x, at.has(key(x)) ? at.get(key(x)) : prev.length + i]).sort((a, b) => a[1] - b[1]).map((p) => p[0]);
    }
    state.order[view] = list.map(key);
    return list;
  }

  // label names each cell of body's rows after its column, for the phone
  // layout (style.css), where each row is a card.
  function label(body) {
    const heads = [...body.closest("table").querySelectorAll("thead th")].map((th) => th.textContent);
    for (const tr of body.rows) {
      let i = 0;
      for (const td of tr.cells) {
        if (td.colSpan === 1) td.dataset.label = heads[i] || "";
        i += td.colSpan;
      }
    }
  }

  function tickCountdowns() {
    for (const td of document.querySelectorAll("td.countdown")) {
      const u = Number(td.dataset.until);
      if (!u) continue;
      const left = u - serverNow();
      td.textContent = left > 0 ? fmtDur(left) : "expired";
    }
    for (const td of document.querySelectorAll("td.countdown-least")) {
      const u = Number(td.dataset.until);
      if (!u) continue;
      const left = u - serverNow();
      td.textContent = left > 0 ? fmtTime(u) + " (" + fmtDur(left) + ")" : fmtTime(u) + " (passed)";
    }
    for (const td of document.querySelectorAll("td.reset-countdown")) {
      const u = Number(td.dataset.until);
      if (u) td.textContent = u > serverNow() ? "in " + fmtDur(u - serverNow()) : "now";
    }
  }

  // ---- Rate limits ----------------------------------------------------

  async function renderLimits() {
    const d = await api("api/limits");
    await settled();
    showErrors(d.errors);
    const body = document.querySelector("#limits-table tbody");
    const rows = steady("limits", d.limits, (l) => l.backend + "/" + l.key).map((l) => {
      let rem = el("td", { class: "dim", text: "-" });
      if (l.remaining !== undefined) {
        const bar = el("span", { class: "bar " + l.state }, el("span"));
        bar.firstChild.style.width = Math.round(100 * l.remaining / l.capacity) + "%";
        rem = el("td", {}, bar, l.remaining + " / " + l.capacity);
      } else if (l.state === "unknown") {
        rem = el("td", { class: "dim", text: "unknown" });
      }
      const acts = el("td");
      if (state.info.actions) {
        acts.append(confirmButton("reset|" + l.backend + "/" + l.key, "reset", () => act("api/actions/reset-rate", { backend: l.backend, key: l.key }, "reset " + l.key)));
      }
      return el("tr", { "data-key": l.key, "data-state": l.state || "" },
        el("td", { class: "name", text: l.key }), el("td", { text: l.backend }), el("td", { text: l.algorithm }),
        el("td", { text: fmtDur(l.period_ms) }), rem,
        el("td", {}, l.state ? el("span", { class: "tag " + l.state + " s-" + l.state, text: l.state }) : el("span", { class: "dim", text: "-" })),
        el("td", { class: "reset-countdown", "data-until": String(ms(l.reset_at)), title: fmtTime(l.reset_at) }), acts);
    });
    const unknown = unknownRows(d.sources, 8);
    const read = (d.sources || []).filter((s) => !s.unknown);
    const empty = !rows.length && read.length ? [el("tr", {}, el("td", { class: "empty", colspan: 8, text: "No rate-limit key has state in " + where(read) + ": every key there is at full capacity." }))] : [];
    body.replaceChildren(...unknown, ...rows, ...empty);
    label(body);
    document.getElementById("limits-note").textContent = d.peeked ? "" :
      "The backends store state, not limits: pass status.Config.Limits (baton serve --limit) to show what remains.";
    tickCountdowns();
    return d.errors;
  }

  // ---- Timeline -------------------------------------------------------

  // About 20 jobs of three replicas fit a 900 px high window: the job's
  // name sits beside its tick row, replica names beside their lanes.
  const LABEL_W = 200, AXIS_H = 22, TICK_H = 8, LANE_H = 8, GAP = 5;

  function niceStep(span, n) {
    const steps = [1e3, 5e3, 15e3, 3e4, 6e4, 3e5, 6e5, 9e5, 18e5, 36e5, 108e5, 216e5, 432e5, 864e5, 1728e5];
    for (const s of steps) if (span / s <= n) return s;
    return 6048e5;
  }

  async function renderTimeline() {
    const t = state.tl;
    const wrap = document.getElementById("tl-wrap");
    const width = Math.max(600, wrap.clientWidth);
    const plotW = width - LABEL_W - 12;
    const buckets = Math.max(10, Math.min(2000, Math.floor(plotW / 3)));
    // Following now, the end is rounded up to the refresh period, so
    // every open page asks for the same range and shares the server's
    // cached answer.
    const per = poll();
    if (t.live || !t.to) t.to = Math.ceil(serverNow() / per) * per;
    const from = Math.round(t.to - t.range), to = Math.round(t.to);
    const q = new URLSearchParams({ from, to, buckets, offset: t.offset, limit: t.limit });
    if (t.filter) q.set("q", t.filter);
    if (t.backend) q.set("backend", t.backend);
    if (t.problems) q.set("problems", "1");
    const d = await api("api/timeline?" + q);
    await settled();
    showErrors(d.errors);
    t.data = d;
    const t0 = performance.now();
    drawTimeline(d, width, plotW);
    const renderMs = performance.now() - t0;
    const root = document.getElementById("timeline");
    root.dataset.renderMs = renderMs.toFixed(1);
    root.dataset.serverMs = d.elapsed_ms.toFixed(1);
    const runs = d.jobs.reduce((n, j) => n + Object.entries(j.counts).filter(([k]) => !["missed", "paused", "catch_up", "manual"].includes(k)).reduce((a, [, v]) => a + v, 0), 0);
    document.getElementById("tl-stats").textContent = runs + " runs · server " + d.elapsed_ms.toFixed(0) + " ms · render " + renderMs.toFixed(0) + " ms";
    document.getElementById("tl-page").textContent = d.total ? "jobs " + (d.offset + 1) + "–" + Math.min(d.offset + t.limit, d.total) + " of " + d.total : d.errors.length ? "jobs unknown" : t.problems ? "no job with a problem in the range" : "no locked job";
    document.getElementById("tl-prev").disabled = d.offset === 0;
    document.getElementById("tl-next").disabled = d.offset + t.limit >= d.total;
    return d.errors;
  }

  function axisLabel(g, step, span) {
    const p = parts(g);
    const date = pad(p.mo) + "-" + pad(p.d);
    const hm = pad(p.h) + ":" + pad(p.mi);
    if (step >= 864e5) return date;
    // Beyond a day, or at midnight, a label carries its date.
    const t = step >= 6e4 ? hm : hm + ":" + pad(p.s);
    return (span > 864e5 || (p.h === 0 && p.mi === 0 && p.s === 0) ? date + " " : "") + t + zone();
  }

  function drawTimeline(d, width, plotW) {
    const root = document.getElementById("timeline");
    const span = d.to - d.from;
    const x = (tm) => LABEL_W + Math.max(0, Math.min(plotW, (tm - d.from) / span * plotW));
    const bw = plotW / d.buckets;
    const frag = document.createDocumentFragment();
    let y = AXIS_H;
    const height = AXIS_H + d.jobs.reduce((h, j) => h + TICK_H + Math.max(1, j.lanes.length) * LANE_H + GAP, 0) + 4;

    // Axis and grid; the grid step in local time is the same, so the
    // lines fall on whole hours of the zone shown.
    const off = state.local ? -new Date(d.from).getTimezoneOffset() * 60000 : 0;
    const step = niceStep(span, Math.max(3, Math.floor(plotW / (span > 864e5 ? 130 : 90))));
    for (let g = Math.ceil((d.from + off) / step) * step - off; g <= d.to; g += step) {
      const gx = x(g);
      frag.append(svg("line", { class: "grid", x1: gx, x2: gx, y1: AXIS_H - 6, y2: height }));
      if (gx < width - 70) frag.append(svg("text", { class: "axis", x: gx + 2, y: 12 }, axisLabel(g, step, span)));
    }

    for (const j of d.jobs) {
      const g = svg("g", { class: "job", "data-job": j.job, "data-backend": j.backend, "data-mode": j.mode, "data-paused": j.paused || "" });
      const c = j.counts;
      const bad = (c.failed || 0) + (c.panicked || 0) + (c.unfinished || 0) + (c.lock_lost || 0);
      const title = j.backend + " · " + j.schedule + " · " + (c.succeeded || 0) + " ok" + (bad ? " · " + bad + " failed" : "") + (c.missed ? " · " + c.missed + " missed" : "") +
        (c.paused ? " · " + c.paused + " paused" : "") + (c.catch_up ? " · " + c.catch_up + " catch-up" : "") + (c.manual ? " · " + c.manual + " manual" : "");
      const name = svg("text", { class: "job", x: 4, y: y + 9, "data-kind": "job", "data-job": j.job, "data-backend": j.backend }, j.job.length > 24 ? j.job.slice(0, 23) + "…" : j.job);
      name.append(svg("title", {}, j.job + "\n" + title));
      g.append(name);
      const summary = [j.paused ? "paused" + (j.paused === "replicas" ? " on every replica" : "") : "", bad ? bad + " failed" : "", c.missed ? c.missed + " missed" : ""].filter(Boolean).join(" · ");
      if (summary) g.append(svg("text", { class: "counts" + (j.paused ? " paused" : " bad"), x: 4, y: y + TICK_H + 9 }, summary));

      // The tick row: every tick when few, missed and paused ticks.
      const tr = svg("g", { class: "ticks" });
      for (const tk of j.ticks || []) tr.append(svg("line", { class: "tick", x1: x(tk), x2: x(tk), y1: y + 1, y2: y + TICK_H - 1 }));
      for (const tk of j.paused_ticks || []) {
        tr.append(svg("rect", { class: "paused", x: x(tk) - 1.5, y: y, width: 3, height: TICK_H, "data-kind": "paused", "data-tick": tk, "data-job": j.job }));
      }
      for (const s of j.paused_segments || []) {
        tr.append(svg("rect", { class: "paused seg", x: LABEL_W + s.b0 * bw, y: y, width: Math.max(2, (s.b1 - s.b0 + 1) * bw), height: TICK_H,
          "data-kind": "paused-seg", "data-b0": s.b0, "data-b1": s.b1, "data-count": s.counts.paused, "data-job": j.job }));
      }
      for (const tk of j.missed || []) {
        tr.append(svg("rect", { class: "missed", x: x(tk) - 1.5, y: y, width: 3, height: TICK_H, "data-kind": "missed", "data-tick": tk, "data-job": j.job }));
      }
      for (const s of j.missed_segments || []) {
        tr.append(svg("rect", { class: "missed seg", x: LABEL_W + s.b0 * bw, y: y, width: Math.max(2, (s.b1 - s.b0 + 1) * bw), height: TICK_H,
          "data-kind": "missed-seg", "data-b0": s.b0, "data-b1": s.b1, "data-count": s.counts.missed, "data-job": j.job }));
      }
      g.append(tr);
      y += TICK_H;

      const lanes = j.lanes.map((r, i) => {
        const lg = svg("g", { class: "lane", "data-job": j.job, "data-backend": j.backend, "data-replica": r });
        lg.append(svg("rect", { class: "lane-bg", x: LABEL_W, y: y + i * LANE_H + 1, width: plotW, height: LANE_H - 1 }));
        lg.append(svg("text", { class: "lane-label", x: LABEL_W - 4, y: y + i * LANE_H + 7, "text-anchor": "end" }, r.length > 16 ? r.slice(0, 15) + "…" : r));
        g.append(lg);
        return lg;
      });
      for (const r of j.runs || []) {
        const end = r.end || r.lease_end || d.now;
        const x0 = x(r.start), x1 = x(end);
        const cls = "run o-" + r.outcome + (r.catch_up ? " catch-up" : "") + (r.manual ? " manual" : "");
        lanes[r.lane].append(svg("rect", {
          class: cls, x: x0, y: y + r.lane * LANE_H + 1.5, width: Math.max(2, x1 - x0), height: LANE_H - 2, rx: 1,
          "data-kind": "run", "data-job": j.job, "data-backend": j.backend, "data-replica": j.lanes[r.lane], "data-outcome": r.outcome, "data-token": r.token,
          "data-tick": r.tick || "", "data-start": r.start, "data-end": r.end || "", "data-lease-end": r.lease_end || "", "data-error": r.error || "",
          "data-catch-up": r.catch_up ? "true" : "", "data-manual": r.manual ? "true" : "",
        }));
      }
      for (const s of j.segments || []) {
        lanes[s.lane].append(svg("rect", {
          class: "seg o-" + s.worst, x: LABEL_W + s.b0 * bw, y: y + s.lane * LANE_H + 1.5, width: Math.max(1, (s.b1 - s.b0 + 1) * bw), height: LANE_H - 2,
          "data-kind": "seg", "data-job": j.job, "data-replica": j.lanes[s.lane], "data-outcome": s.worst, "data-b0": s.b0, "data-b1": s.b1,
          "data-counts": JSON.stringify(s.counts),
        }));
      }
      y += Math.max(1, j.lanes.length) * LANE_H + GAP;
      frag.append(g);
    }
    if (d.now >= d.from && d.now <= d.to) frag.append(svg("line", { class: "now", x1: x(d.now), x2: x(d.now), y1: AXIS_H - 6, y2: height }));
    root.dataset.from = d.from;
    root.dataset.to = d.to;
    root.dataset.now = d.now;
    root.setAttribute("viewBox", "0 0 " + width + " " + height);
    root.setAttribute("height", height);
    root.replaceChildren(frag);
  }

  function bucketRange(e) {
    const d = state.tl.data;
    const bms = (d.to - d.from) / d.buckets;
    return [d.from + Number(e.dataset.b0) * bms, d.from + (Number(e.dataset.b1) + 1) * bms];
  }

  // detail shows what is under the cursor in a box beside it.
  function detail(e) {
    const t = e.target;
    const out = document.getElementById("tl-detail");
    if (!t.dataset || !t.dataset.kind) return;
    const k = t.dataset.kind;
    let text = "";
    if (k === "run") {
      const s = Number(t.dataset.start), en = Number(t.dataset.end);
      text = [
        t.dataset.job + " on " + t.dataset.replica + ": " + t.dataset.outcome + (t.dataset.catchUp ? " (catch-up)" : "") + (t.dataset.manual ? " (manual)" : ""),
        "token    " + t.dataset.token,
        "tick     " + (t.dataset.tick ? fmtTime(Number(t.dataset.tick)) : "-"),
        "started  " + fmtTime(s),
        "duration " + (en ? fmtDur(en - s) : t.dataset.outcome === "unfinished" ? "never ended" + (t.dataset.leaseEnd ? "; its lease ran out by " + fmtTime(Number(t.dataset.leaseEnd)) : "") : "still running for " + fmtDur(serverNow() - s)),
        t.dataset.error ? "error    " + t.dataset.error : "",
        "(click for the job page)",
      ].filter(Boolean).join("\n");
    } else if (k === "seg" || k === "missed-seg" || k === "paused-seg") {
      const [a, b] = bucketRange(t);
      const counts = k === "seg" ? JSON.parse(t.dataset.counts) : { [k === "missed-seg" ? "missed" : "paused"]: Number(t.dataset.count) };
      text = t.dataset.job + (t.dataset.replica ? " on " + t.dataset.replica : "") + ", " + fmtTime(a) + " – " + fmtTime(b) + "\n" +
        Object.entries(counts).map(([o, n]) => n + " " + o.replace("_", " ")).join(", ") + "\n(click to zoom in)";
    } else if (k === "missed") {
      text = t.dataset.job + ": tick " + fmtTime(Number(t.dataset.tick)) + " was missed: no replica claimed it.";
    } else if (k === "paused") {
      text = t.dataset.job + ": tick " + fmtTime(Number(t.dataset.tick)) + " skipped: the job is paused.";
    } else {
      return;
    }
    out.textContent = text;
    out.hidden = false;
    // Beside the cursor, kept inside the window.
    const w = out.offsetWidth, h = out.offsetHeight;
    let left = e.clientX + 14, top = e.clientY + 14;
    if (left + w > window.innerWidth - 8) left = Math.max(8, e.clientX - w - 14);
    if (top + h > window.innerHeight - 8) top = Math.max(8, e.clientY - h - 14);
    out.style.left = left + "px";
    out.style.top = top + "px";
  }

  function timelineClick(e) {
    const t = e.target;
    if (!t.dataset) return;
    if (t.dataset.kind === "run" || t.dataset.kind === "job") {
      location.hash = jobHref({ name: t.dataset.job, backend: t.dataset.backend }, t.dataset.kind === "run" ? t.dataset.token : "");
      return;
    }
    if (t.dataset.kind !== "seg" && t.dataset.kind !== "missed-seg" && t.dataset.kind !== "paused-seg") return;
    const [a, b] = bucketRange(t);
    const mid = (a + b) / 2;
    const range = Math.max(60000, (b - a) * 4);
    state.tl.live = false;
    document.getElementById("tl-live").checked = false;
    state.tl.range = range;
    state.tl.to = mid + range / 2;
    syncRange();
    writeHash();
    refresh();
  }

  // ---- wiring ---------------------------------------------------------

  const renderers = { jobs: renderJobs, job: renderJob, timeline: renderTimeline, locks: renderLocks, limits: renderLimits };
  let inflight = false;

  // refresh redraws the view shown. "updated" advances only when every
  // backend answered: after a failed read it says since when it is stale.
  async function refresh() {
    if (inflight) return;
    inflight = true;
    const view = state.view;
    const upd = document.getElementById("updated");
    try {
      const errs = await renderers[view]();
      await followRuns();
      if (errs && errs.length) {
        upd.textContent = "read failed at " + fmtShort(serverNow()) + (state.lastGood[view] ? "; last complete " + fmtShort(state.lastGood[view]) : "; never complete");
        upd.classList.add("stale");
      } else {
        state.lastGood[view] = serverNow();
        upd.textContent = "updated " + fmtShort(state.lastGood[view]);
        upd.classList.remove("stale");
      }
      document.body.dataset.loaded = view;
    } catch (err) {
      showErrors([String(err.message || err)]);
      upd.textContent = "read failed at " + fmtShort(serverNow()) + (state.lastGood[view] ? "; last complete " + fmtShort(state.lastGood[view]) : "");
      upd.classList.add("stale");
      document.body.dataset.loaded = view;
    } finally {
      inflight = false;
      document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
    }
  }

  function show(view) {
    if (!renderers[view]) view = "jobs";
    const changed = state.view !== view;
    state.view = view;
    for (const v of Object.keys(renderers)) {
      document.getElementById("view-" + v).hidden = v !== view;
      const nav = document.getElementById("nav-" + v);
      if (nav) nav.classList.toggle("active", v === view || (v === "jobs" && view === "job"));
    }
    if (changed) showErrors([]);
    delete document.body.dataset.loaded;
    refresh();
  }

  // writeHash puts the view's filters in the address without a reload
  // or a hashchange.
  function writeHash() {
    let h = "#" + state.view;
    const p = new URLSearchParams();
    if (state.view === "jobs") {
      for (const k of ["state", "backend", "q"]) if (state.jobs[k]) p.set(k, state.jobs[k]);
    } else if (state.view === "timeline") {
      const t = state.tl;
      if (t.range !== 3600000) p.set("range", Math.round(t.range));
      if (!t.live) p.set("to", Math.round(t.to));
      if (t.limit !== 20) p.set("limit", t.limit);
      if (t.offset) p.set("offset", t.offset);
      if (t.filter) p.set("q", t.filter);
      if (t.backend) p.set("backend", t.backend);
      if (t.problems) p.set("problems", "1");
    } else if (state.view === "locks") {
      if (document.getElementById("locks-all").checked) p.set("all", "1");
    } else if (state.view === "job") {
      h = "#job/" + encodeURIComponent(state.job.name);
      p.set("backend", state.job.backend);
      if (state.job.run) p.set("run", state.job.run);
    }
    if (state.local) p.set("tz", "local");
    const s = p.toString();
    history.replaceState(null, "", h + (s ? "?" + s : ""));
  }

  function route() {
    const raw = location.hash.slice(1);
    const i = raw.indexOf("?");
    const path = i < 0 ? raw : raw.slice(0, i);
    const p = new URLSearchParams(i < 0 ? "" : raw.slice(i + 1));
    let view = path;
    if (path.startsWith("job/")) {
      view = "job";
      const name = decodeURIComponent(path.slice(4));
      if (name !== state.job.name || p.get("backend") !== state.job.backend) state.job.scrolled = false;
      state.job = { name, backend: p.get("backend") || "", run: p.get("run") || "", scrolled: state.job.scrolled };
    }
    state.local = p.get("tz") === "local" || (p.get("tz") === null && localStorage.getItem("baton-tz") === "local");
    document.getElementById("tz-local").checked = state.local;
    if (view === "jobs") {
      for (const k of ["state", "backend", "q"]) state.jobs[k] = p.get(k) || "";
      document.getElementById("jobs-state").value = state.jobs.state;
      document.getElementById("jobs-q").value = state.jobs.q;
      syncSelect("jobs-backend", [], state.jobs.backend);
    }
    if (view === "locks") document.getElementById("locks-all").checked = p.get("all") === "1";
    if (view === "timeline") {
      const t = state.tl;
      t.limit = Math.max(1, Math.min(200, Number(p.get("limit")) || 20));
      t.range = Number(p.get("range")) || 3600000;
      t.offset = Math.max(0, Number(p.get("offset")) || 0);
      t.filter = p.get("q") || "";
      t.backend = p.get("backend") || "";
      t.problems = p.get("problems") === "1";
      t.live = !p.get("to");
      if (!t.live) t.to = Number(p.get("to"));
      document.getElementById("tl-filter").value = t.filter;
      document.getElementById("tl-live").checked = t.live;
      document.getElementById("tl-problems").checked = t.problems;
      syncRange();
    }
    show(view || "jobs");
  }

  // syncSelect offers the backends seen in a select, keeping the choice.
  function syncSelect(id, names, value) {
    const sel = document.getElementById(id);
    for (const n of names) if (![...sel.options].some((o) => o.value === n)) sel.append(el("option", { value: n, text: n }));
    if (value && ![...sel.options].some((o) => o.value === value)) sel.append(el("option", { value, text: value }));
    sel.value = value;
  }

  // syncRange shows the timeline's range in its menu, adding it when it
  // is none of the presets.
  function syncRange() {
    const sel = document.getElementById("tl-range");
    const r = String(Math.round(state.tl.range));
    if (![...sel.options].some((o) => o.value === r)) sel.append(el("option", { value: r, text: fmtDur(state.tl.range) }));
    sel.value = r;
  }

  // poll is the polling period: the server's Refresh, at least a second.
  function poll() { return Math.max(1000, state.info.refresh_ms); }

  async function start() {
    try {
      const sent = Date.now();
      state.info = await api("api/info");
      // Views may come from the server's cache; the info is never cached,
      // so its time sets the offset that countdowns use.
      state.skew = ms(state.info.now) - (sent + Date.now()) / 2;
    } catch (err) {
      showErrors([String(err.message || err)]);
      document.getElementById("updated").textContent = "never read";
      return;
    }
    const mode = document.getElementById("mode");
    mode.textContent = state.info.actions ? "actions enabled" : "read-only";
    mode.classList.toggle("actions", state.info.actions);
    const tl = state.tl;
    const tlChanged = () => { writeHash(); refresh(); };
    document.getElementById("tl-range").addEventListener("change", (e) => { tl.range = Number(e.target.value); tlChanged(); });
    document.getElementById("tl-live").addEventListener("change", (e) => { tl.live = e.target.checked; tlChanged(); });
    document.getElementById("tl-problems").addEventListener("change", (e) => { tl.problems = e.target.checked; tl.offset = 0; tlChanged(); });
    document.getElementById("tl-back").addEventListener("click", () => { tl.live = false; document.getElementById("tl-live").checked = false; tl.to -= tl.range / 2; tlChanged(); });
    document.getElementById("tl-fwd").addEventListener("click", () => { tl.to += tl.range / 2; if (tl.to >= serverNow()) { tl.live = true; document.getElementById("tl-live").checked = true; } tlChanged(); });
    document.getElementById("tl-prev").addEventListener("click", () => { tl.offset = Math.max(0, tl.offset - tl.limit); tlChanged(); });
    document.getElementById("tl-next").addEventListener("click", () => { tl.offset += tl.limit; tlChanged(); });
    let debounce = null;
    document.getElementById("tl-filter").addEventListener("input", (e) => {
      clearTimeout(debounce);
      debounce = setTimeout(() => { tl.filter = e.target.value; tl.offset = 0; tlChanged(); }, 250);
    });
    const jobsChanged = () => { writeHash(); refresh(); };
    document.getElementById("jobs-state").addEventListener("change", (e) => { state.jobs.state = e.target.value; jobsChanged(); });
    document.getElementById("jobs-backend").addEventListener("change", (e) => { state.jobs.backend = e.target.value; jobsChanged(); });
    let jdebounce = null;
    document.getElementById("jobs-q").addEventListener("input", (e) => {
      clearTimeout(jdebounce);
      jdebounce = setTimeout(() => { state.jobs.q = e.target.value; jobsChanged(); }, 250);
    });
    document.getElementById("tz-local").addEventListener("change", (e) => {
      state.local = e.target.checked;
      localStorage.setItem("baton-tz", state.local ? "local" : "utc");
      writeHash();
      refresh();
    });
    document.getElementById("locks-all").addEventListener("change", () => { writeHash(); refresh(); });
    const root = document.getElementById("timeline");
    root.addEventListener("mousemove", detail);
    root.addEventListener("mouseleave", () => { document.getElementById("tl-detail").hidden = true; });
    root.addEventListener("click", timelineClick);
    window.addEventListener("hashchange", route);
    route();
    setInterval(() => { if (state.view !== "timeline" || state.tl.live) refresh(); }, poll());
    setInterval(tickCountdowns, 250);
  }

  start();
})();

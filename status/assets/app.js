// The baton status page. Plain JavaScript, no build step: it polls the
// handler's JSON endpoints (relative URLs, so the page works under any
// prefix) and draws the timeline as SVG.
"use strict";

(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  const state = {
    info: null,
    view: "jobs",
    timer: null,
    skew: 0, // server now - local now, ms
    tl: { range: 3600000, to: 0, live: true, offset: 0, limit: 20, filter: "", data: null },
  };

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
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
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

  function fmtTime(t) {
    t = ms(t);
    if (!t) return "-";
    const d = new Date(t);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + "Z";
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
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
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

  function notice(msg) {
    const box = document.getElementById("notice");
    box.replaceChildren(el("div", { text: msg, id: "notice-text" }));
    setTimeout(() => { if (box.firstChild && box.firstChild.textContent === msg) box.replaceChildren(); }, 6000);
  }

  function outcomeTag(o) { return el("span", { class: "tag o-" + o, text: o.replace("_", " ") }); }

  // A button that asks for a second click before it acts.
  function confirmButton(label, action) {
    let armed = null;
    const b = el("button", { class: "danger", text: label });
    b.addEventListener("click", async () => {
      if (!armed) {
        b.textContent = "confirm " + label.toLowerCase() + "?";
        b.classList.add("confirm");
        armed = setTimeout(() => { armed = null; b.textContent = label; b.classList.remove("confirm"); }, 5000);
        return;
      }
      clearTimeout(armed);
      armed = null;
      b.disabled = true;
      await action();
    });
    return b;
  }

  async function act(path, payload, what) {
    const r = await post(path, payload);
    notice(r.ok ? what + ": done" : what + ": refused (" + r.status + "): " + (r.body.error || ""));
    refresh();
  }

  // ---- Jobs -----------------------------------------------------------

  function runCell(r) {
    if (!r) return el("td", { class: "empty", text: "never" });
    const dur = r.finished ? fmtDur(ms(r.finished) - ms(r.started)) : "running";
    return el("td", { title: "token " + r.token + (r.error ? "\n" + r.error : "") },
      outcomeTag(r.outcome || "running"), " ", r.locked_by, " ", el("span", { class: "dim", text: rel(r.started) + " · " + dur }));
  }

  async function renderJobs() {
    const d = await api("api/jobs");
    showErrors(d.errors);
    const body = document.querySelector("#jobs-table tbody");
    const rows = d.jobs.map((j) => {
      const st = j.problem ? el("span", { class: "tag " + (j.problem === "missed" ? "missed" : j.problem === "failed" ? "o-failed" : "unfinished"), text: j.problem, title: "tick " + fmtTime(j.problem_tick) })
        : j.locked ? el("span", { class: "tag ok", text: "ok" }) : el("span", { class: "dim", text: "unlocked" });
      const acts = el("td");
      if (j.control) {
        for (const a of ["run", "pause", "resume"]) {
          acts.append(el("button", { text: a === "run" ? "run now" : a, onclick: () => act("api/actions/job", { backend: j.backend, job: j.name, action: a }, a + " " + j.name) }), " ");
        }
      }
      return el("tr", { class: j.problem ? "problem" : "", "data-job": j.name, "data-backend": j.backend, "data-problem": j.problem || "" },
        el("td", { text: j.name }), el("td", { text: j.backend }),
        el("td", { text: j.schedule + (j.time_zone && j.time_zone !== "UTC" ? " " + j.time_zone : ""), title: (j.options || []).join(", ") }),
        el("td", { text: j.next_tick ? rel(j.next_tick) : "-", title: fmtTime(j.next_tick) }),
        j.locked ? runCell(j.last_run) : el("td", { class: "empty", text: "not recorded" }),
        j.locked ? (j.last_success ? el("td", { text: rel(j.last_success.started) + " on " + j.last_success.locked_by, title: fmtTime(j.last_success.started) }) : el("td", { class: "empty", text: "never" })) : el("td"),
        el("td", { text: (j.replicas || []).join(", ") }),
        el("td", {}, st), acts);
    });
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: 9, text: "No scheduler instance is registered." }))]));
    const ib = document.querySelector("#instances-table tbody");
    ib.replaceChildren(...d.instances.map((i) => el("tr", { "data-instance": i.locked_by },
      el("td", { text: i.locked_by }), el("td", { text: i.backend }), el("td", { text: i.version || "-" }),
      el("td", { text: rel(i.started), title: fmtTime(i.started) }), el("td", { text: rel(i.heartbeat), title: fmtTime(i.heartbeat) }),
      el("td", { text: String(i.jobs) }))));
  }

  // ---- Locks ----------------------------------------------------------

  async function renderLocks() {
    const all = document.getElementById("locks-all").checked;
    const d = await api("api/locks" + (all ? "?all=1" : ""));
    showErrors(d.errors);
    const body = document.querySelector("#locks-table tbody");
    const rows = d.locks.map((l) => {
      const acts = el("td");
      if (state.info.actions && l.held) {
        acts.append(confirmButton("Force release", () => act("api/actions/force-release", { backend: l.backend, name: l.name, token: l.token }, "force-release " + l.name)));
      }
      return el("tr", { "data-lock": l.name, "data-backend": l.backend, "data-token": String(l.token), "data-held": String(l.held) },
        el("td", { text: l.name }), el("td", { text: l.backend }), el("td", { text: l.held ? l.locked_by : "(free) " + (l.locked_by || "") }),
        el("td", { text: String(l.token) }), el("td", { text: rel(l.granted_at), title: fmtTime(l.granted_at) }),
        el("td", { class: "countdown", "data-until": l.held ? String(ms(l.until)) : "", text: l.held ? "" : "released/expired", title: fmtTime(l.until) }),
        el("td", { class: "countdown-least", "data-until": l.at_least_until ? String(ms(l.at_least_until)) : "", text: l.at_least_until ? fmtTime(l.at_least_until) : "-" }),
        el("td", { text: l.last_tick ? fmtTime(l.last_tick) : "-" }), acts);
    });
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: 9, text: "No lock is held." }))]));
    tickCountdowns();
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
    showErrors(d.errors);
    const body = document.querySelector("#limits-table tbody");
    const rows = d.limits.map((l) => {
      let rem = el("td", { class: "dim", text: "-" });
      if (l.remaining !== undefined) {
        const bar = el("span", { class: "bar " + l.state }, el("span"));
        bar.firstChild.style.width = Math.round(100 * l.remaining / l.capacity) + "%";
        rem = el("td", {}, bar, l.remaining + " / " + l.capacity);
      }
      const acts = el("td");
      if (state.info.actions) {
        acts.append(confirmButton("Reset", () => act("api/actions/reset-rate", { backend: l.backend, key: l.key }, "reset " + l.key)));
      }
      return el("tr", { "data-key": l.key, "data-state": l.state || "" },
        el("td", { text: l.key }), el("td", { text: l.backend }), el("td", { text: l.algorithm }),
        el("td", { text: fmtDur(l.period_ms) }), rem,
        el("td", {}, l.state ? el("span", { class: "tag " + l.state, text: l.state }) : el("span", { class: "dim", text: "-" })),
        el("td", { class: "reset-countdown", "data-until": String(ms(l.reset_at)), title: fmtTime(l.reset_at) }), acts);
    });
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: 8, text: "No rate-limit key has state: every key is at full capacity." }))]));
    document.getElementById("limits-note").textContent = d.peeked ? "" :
      "The backends store state, not limits: the application passes status.Config.Limits to show what remains.";
    tickCountdowns();
  }

  // ---- Timeline -------------------------------------------------------

  const LABEL_W = 190, AXIS_H = 26, JOB_H = 18, TICK_H = 10, LANE_H = 16, GAP = 8;

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
    const d = await api("api/timeline?" + q);
    showErrors(d.errors);
    t.data = d;
    const t0 = performance.now();
    drawTimeline(d, width, plotW);
    const renderMs = performance.now() - t0;
    const root = document.getElementById("timeline");
    root.dataset.renderMs = renderMs.toFixed(1);
    root.dataset.serverMs = d.elapsed_ms.toFixed(1);
    const runs = d.jobs.reduce((n, j) => n + Object.entries(j.counts).filter(([k]) => k !== "missed" && k !== "catch_up" && k !== "manual").reduce((a, [, v]) => a + v, 0), 0);
    document.getElementById("tl-stats").textContent = runs + " runs · server " + d.elapsed_ms.toFixed(0) + " ms · render " + renderMs.toFixed(0) + " ms";
    document.getElementById("tl-page").textContent = d.total ? "jobs " + (d.offset + 1) + "–" + Math.min(d.offset + t.limit, d.total) + " of " + d.total : "no locked job";
    document.getElementById("tl-prev").disabled = d.offset === 0;
    document.getElementById("tl-next").disabled = d.offset + t.limit >= d.total;
  }

  function drawTimeline(d, width, plotW) {
    const root = document.getElementById("timeline");
    const span = d.to - d.from;
    const x = (tm) => LABEL_W + Math.max(0, Math.min(plotW, (tm - d.from) / span * plotW));
    const bw = plotW / d.buckets;
    const frag = document.createDocumentFragment();
    let y = AXIS_H;
    const height = AXIS_H + d.jobs.reduce((h, j) => h + JOB_H + TICK_H + j.lanes.length * LANE_H + GAP, 0) + 4;

    // Axis and grid.
    const step = niceStep(span, Math.max(3, Math.floor(plotW / 110)));
    for (let g = Math.ceil(d.from / step) * step; g <= d.to; g += step) {
      const gx = x(g);
      frag.append(svg("line", { class: "grid", x1: gx, x2: gx, y1: AXIS_H - 6, y2: height }));
      const dt = new Date(g);
      const label = step >= 864e5 ? dt.toISOString().slice(5, 10) : step >= 6e4 ? dt.toISOString().slice(11, 16) : dt.toISOString().slice(11, 19);
      frag.append(svg("text", { class: "axis", x: gx + 2, y: 14 }, label + (step >= 864e5 ? "" : "Z")));
    }

    for (const j of d.jobs) {
      const g = svg("g", { class: "job", "data-job": j.job, "data-backend": j.backend, "data-mode": j.mode });
      const c = j.counts;
      const bad = (c.failed || 0) + (c.panicked || 0) + (c.unfinished || 0) + (c.lock_lost || 0);
      g.append(svg("text", { class: "job", x: 4, y: y + 13 }, j.job));
      g.append(svg("text", { class: "counts", x: LABEL_W, y: y + 13 },
        j.backend + " · " + j.schedule + " · " + (c.succeeded || 0) + " ok" + (bad ? " · " + bad + " failed" : "") + (c.missed ? " · " + c.missed + " missed" : "") +
        (c.catch_up ? " · " + c.catch_up + " catch-up" : "") + (c.manual ? " · " + c.manual + " manual" : "")));
      y += JOB_H;

      // The tick row: every tick when few, and missed ticks.
      const tr = svg("g", { class: "ticks" });
      tr.append(svg("text", { class: "lane-label", x: 14, y: y + 8 }, "ticks"));
      for (const tk of j.ticks || []) tr.append(svg("line", { class: "tick", x1: x(tk), x2: x(tk), y1: y + 2, y2: y + TICK_H - 1 }));
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
        lg.append(svg("rect", { class: "lane-bg", x: LABEL_W, y: y + i * LANE_H + 1, width: plotW, height: LANE_H - 2 }));
        lg.append(svg("text", { class: "lane-label", x: 14, y: y + i * LANE_H + 12 }, r));
        g.append(lg);
        return lg;
      });
      for (const r of j.runs || []) {
        const end = r.end || d.now;
        const x0 = x(r.start), x1 = x(end);
        const cls = "run o-" + r.outcome + (r.catch_up ? " catch-up" : "") + (r.manual ? " manual" : "");
        lanes[r.lane].append(svg("rect", {
          class: cls, x: x0, y: y + r.lane * LANE_H + 2, width: Math.max(2, x1 - x0), height: LANE_H - 4, rx: 1,
          "data-kind": "run", "data-job": j.job, "data-replica": j.lanes[r.lane], "data-outcome": r.outcome, "data-token": r.token,
          "data-tick": r.tick || "", "data-start": r.start, "data-end": r.end || "", "data-error": r.error || "",
          "data-catch-up": r.catch_up ? "true" : "", "data-manual": r.manual ? "true" : "",
        }));
      }
      for (const s of j.segments || []) {
        lanes[s.lane].append(svg("rect", {
          class: "seg o-" + s.worst, x: LABEL_W + s.b0 * bw, y: y + s.lane * LANE_H + 2, width: Math.max(1, (s.b1 - s.b0 + 1) * bw), height: LANE_H - 4,
          "data-kind": "seg", "data-job": j.job, "data-replica": j.lanes[s.lane], "data-outcome": s.worst, "data-b0": s.b0, "data-b1": s.b1,
          "data-counts": JSON.stringify(s.counts),
        }));
      }
      y += j.lanes.length * LANE_H + GAP;
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

  function bucketRange(el) {
    const d = state.tl.data;
    const bms = (d.to - d.from) / d.buckets;
    return [d.from + Number(el.dataset.b0) * bms, d.from + (Number(el.dataset.b1) + 1) * bms];
  }

  function detail(e) {
    const t = e.target;
    const out = document.getElementById("tl-detail");
    if (!t.dataset || !t.dataset.kind) return;
    const k = t.dataset.kind;
    if (k === "run") {
      const s = Number(t.dataset.start), en = Number(t.dataset.end);
      out.textContent = [
        t.dataset.job + " on " + t.dataset.replica + ": " + t.dataset.outcome + (t.dataset.catchUp ? " (catch-up)" : "") + (t.dataset.manual ? " (manual)" : ""),
        "token    " + t.dataset.token,
        "tick     " + (t.dataset.tick ? fmtTime(Number(t.dataset.tick)) : "-"),
        "started  " + fmtTime(s),
        "duration " + (en ? fmtDur(en - s) : "still running for " + fmtDur(serverNow() - s)),
        t.dataset.error ? "error    " + t.dataset.error : "",
      ].filter(Boolean).join("\n");
    } else if (k === "seg" || k === "missed-seg") {
      const [a, b] = bucketRange(t);
      const counts = k === "seg" ? JSON.parse(t.dataset.counts) : { missed: Number(t.dataset.count) };
      out.textContent = t.dataset.job + (t.dataset.replica ? " on " + t.dataset.replica : "") + ", " + fmtTime(a) + " – " + fmtTime(b) + "\n" +
        Object.entries(counts).map(([o, n]) => n + " " + o.replace("_", " ")).join(", ") + "\n(click to zoom in)";
    } else if (k === "missed") {
      out.textContent = t.dataset.job + ": tick " + fmtTime(Number(t.dataset.tick)) + " was missed: no replica claimed it.";
    }
  }

  function zoom(e) {
    const t = e.target;
    if (!t.dataset || (t.dataset.kind !== "seg" && t.dataset.kind !== "missed-seg")) return;
    const [a, b] = bucketRange(t);
    const mid = (a + b) / 2;
    const range = Math.max(60000, (b - a) * 4);
    state.tl.live = false;
    document.getElementById("tl-live").checked = false;
    state.tl.range = range;
    state.tl.to = mid + range / 2;
    syncRange();
    refresh();
  }

  // ---- wiring ---------------------------------------------------------

  const renderers = { jobs: renderJobs, timeline: renderTimeline, locks: renderLocks, limits: renderLimits };
  let inflight = false;

  async function refresh() {
    if (inflight) return;
    inflight = true;
    try {
      await renderers[state.view]();
      document.getElementById("updated").textContent = "updated " + fmtTime(serverNow());
      document.body.dataset.loaded = state.view;
    } catch (err) {
      showErrors([String(err.message || err)]);
    } finally {
      inflight = false;
    }
  }

  function show(view) {
    if (!renderers[view]) view = "jobs";
    state.view = view;
    for (const v of Object.keys(renderers)) {
      document.getElementById("view-" + v).hidden = v !== view;
      document.getElementById("nav-" + v).classList.toggle("active", v === view);
    }
    delete document.body.dataset.loaded;
    refresh();
  }

  async function start() {
    try {
      const sent = Date.now();
      state.info = await api("api/info");
      // Views may come from the server's cache; the info is never cached,
      // so its time sets the offset that countdowns use.
      state.skew = ms(state.info.now) - (sent + Date.now()) / 2;
    } catch (err) {
      showErrors([String(err.message || err)]);
      return;
    }
    const mode = document.getElementById("mode");
    mode.textContent = state.info.actions ? "actions enabled" : "read-only";
    mode.classList.toggle("actions", state.info.actions);
    const tl = state.tl;
    document.getElementById("tl-range").addEventListener("change", (e) => { tl.range = Number(e.target.value); refresh(); });
    document.getElementById("tl-live").addEventListener("change", (e) => { tl.live = e.target.checked; refresh(); });
    document.getElementById("tl-back").addEventListener("click", () => { tl.live = false; document.getElementById("tl-live").checked = false; tl.to -= tl.range / 2; refresh(); });
    document.getElementById("tl-fwd").addEventListener("click", () => { tl.to += tl.range / 2; if (tl.to >= serverNow()) { tl.live = true; document.getElementById("tl-live").checked = true; } refresh(); });
    document.getElementById("tl-prev").addEventListener("click", () => { tl.offset = Math.max(0, tl.offset - tl.limit); refresh(); });
    document.getElementById("tl-next").addEventListener("click", () => { tl.offset += tl.limit; refresh(); });
    let debounce = null;
    document.getElementById("tl-filter").addEventListener("input", (e) => {
      clearTimeout(debounce);
      debounce = setTimeout(() => { tl.filter = e.target.value; tl.offset = 0; refresh(); }, 250);
    });
    document.getElementById("locks-all").addEventListener("change", refresh);
    const root = document.getElementById("timeline");
    root.addEventListener("mouseover", detail);
    root.addEventListener("click", zoom);
    // Page size and range from the address, e.g. #timeline?limit=100&range=604800000.
    window.addEventListener("hashchange", route);
    route();
    setInterval(() => { if (state.view !== "timeline" || state.tl.live) refresh(); }, poll());
    setInterval(tickCountdowns, 250);
  }

  // poll is the polling period: the server's Refresh, at least a second.
  function poll() { return Math.max(1000, state.info.refresh_ms); }

  function route() {
    const [view, qs] = location.hash.slice(1).split("?");
    const p = new URLSearchParams(qs || "");
    if (p.get("limit")) state.tl.limit = Math.max(1, Math.min(200, Number(p.get("limit")) || 20));
    if (p.get("range")) state.tl.range = Number(p.get("range")) || state.tl.range;
    if (p.get("q") !== null) { state.tl.filter = p.get("q"); document.getElementById("tl-filter").value = state.tl.filter; }
    syncRange();
    show(view || "jobs");
  }

  // syncRange shows the timeline's range in its menu, adding it when it
  // is none of the presets.
  function syncRange() {
    const sel = document.getElementById("tl-range");
    const r = String(Math.round(state.tl.range));
    if (![...sel.options].some((o) => o.value === r)) sel.append(el("option", { value: r, text: fmtDur(state.tl.range) }));
    sel.value = r;
  }

  start();
})();

// rdmamesh UI: one page over /api/v1, no dependencies, no build step.
// Everything from the API (node names, reasons, fixes) reaches the DOM via
// textContent, never innerHTML: those strings come from remote workers.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  // Okabe-Ito colours: distinguishable with the common colour-vision
  // deficiencies, and the failed/slow/low-bw hues differ in lightness too.
  const VERDICTS = [
    { key: "ok", label: "ok", color: "#0072B2" },
    { key: "failed", label: "failed", color: "#D55E00" },
    { key: "slow-latency", label: "slow latency", color: "#F0E442" },
    { key: "low-bandwidth", label: "low bandwidth", color: "#CC79A7" },
    { key: "untested", label: "untested", color: "#DDDDDD" },
  ];
  const COLOR = Object.fromEntries(VERDICTS.map((v) => [v.key, v.color]));
  // "worst" across rails: a failure hides nothing behind a healthy rail.
  const SEVERITY = { ok: 0, untested: 1, "slow-latency": 2, "low-bandwidth": 3, failed: 4 };

  const METRICS = {
    status: { label: "status" },
    p50: { label: "p50 latency", unit: "µs", better: "lower", get: (c) => c.latency && c.latency.p50_ns / 1000, worst: Math.max },
    p99: { label: "p99 latency", unit: "µs", better: "lower", get: (c) => c.latency && c.latency.p99_ns / 1000, worst: Math.max },
    bw: { label: "bandwidth", unit: "Gb/s", better: "higher", get: (c) => c.bandwidth && c.bandwidth.gbps, worst: Math.min },
  };

  // Viridis, sampled at nine stops: perceptually uniform and readable in
  // greyscale, so a numeric heatmap needs no colour vision at all.
  const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#fde725"]
    .map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));

  const POLL_RUNNING_MS = 1000;
  const POLL_IDLE_MS = 5000;

  const state = {
    sweeps: [],
    sweepID: "",
    follow: true, // track the newest sweep until the user picks an older one
    matrix: null,
    matrixETag: "",
    grid: null,
    nodesJSON: "",
    suspectsJSON: "",
    rail: "all",
    metric: "status",
    hover: null, // {src, dst, x, y}
    pinned: false,
    layout: null,
    gen: 0,
    timer: 0,
  };

  // ---- API ---------------------------------------------------------------

  class APIError extends Error {
    constructor(status, body, fallback) {
      super((body && body.error) || fallback);
      this.status = status;
      this.field = (body && body.field) || "";
    }
  }

  // With auth.token set on the coordinator the API wants a bearer token; the
  // operator types it once and it stays in this browser's localStorage.
  const tokenKey = "rdmamesh.token";
  let tokenDeclined = false;

  async function request(path, opts) {
    // no-cache: revalidate every poll; the server's ETag turns an unchanged
    // answer into a 304 the browser serves from its cache.
    const send = () => {
      const o = Object.assign({ cache: "no-cache" }, opts);
      const token = localStorage.getItem(tokenKey);
      if (token) o.headers = Object.assign({}, o.headers, { Authorization: "Bearer " + token });
      return fetch(path, o);
    };
    let res = await send();
    if (res.status === 401 && !tokenDeclined) {
      const token = window.prompt("This rdmamesh coordinator needs its API token (auth.token):");
      if (token) {
        localStorage.setItem(tokenKey, token.trim());
        res = await send();
      } else {
        tokenDeclined = true; // do not nag on every poll; reload to try again
      }
    }
    return res;
  }

  async function readJSON(res) {
    const text = await res.text();
    let body = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch (e) {
        body = null;
      }
    }
    if (!res.ok) throw new APIError(res.status, body, `${res.status} ${res.statusText}`);
    return body;
  }

  const getJSON = async (path) => readJSON(await request(path));

  // loadMatrix skips parsing when the ETag is the one already shown: a
  // 64-node sweep's matrix is megabytes of JSON.
  async function loadMatrix(id) {
    const res = await request(`api/v1/sweeps/${encodeURIComponent(id)}/matrix`);
    if (res.status === 404) {
      return { matrix: null, etag: "" };
    }
    const etag = res.headers.get("ETag") || "";
    if (etag && etag === state.matrixETag && state.matrix) {
      res.body && res.body.cancel && res.body.cancel().catch(() => {});
      return { matrix: state.matrix, etag };
    }
    return { matrix: await readJSON(res), etag };
  }

  // ---- polling -------------------------------------------------------------

  async function refresh() {
    clearTimeout(state.timer);
    const gen = ++state.gen; // a newer refresh supersedes this one
    try {
      const [sweeps, nodes] = await Promise.all([getJSON("api/v1/sweeps"), getJSON("api/v1/nodes")]);
      if (gen !== state.gen) return;
      state.sweeps = sweeps || [];
      if (state.follow || !state.sweeps.some((s) => s.id === state.sweepID)) {
        state.sweepID = state.sweeps.length ? state.sweeps[0].id : "";
      }
      renderSweeps();
      renderNodes(nodes || []);

      let m = null;
      let etag = "";
      if (state.sweepID) {
        ({ matrix: m, etag } = await loadMatrix(state.sweepID));
        if (gen !== state.gen) return;
      }
      if (m !== state.matrix) {
        state.matrix = m;
        state.grid = m ? indexMatrix(m) : null;
      }
      state.matrixETag = etag;
      renderMatrix();
      setConn("");
    } catch (e) {
      if (gen !== state.gen) return;
      setConn(`connection problem: ${e.message}; retrying`);
    }
    schedule();
  }

  function schedule() {
    clearTimeout(state.timer);
    const sw = currentSweep();
    let delay = sw && sw.state === "running" ? POLL_RUNNING_MS : POLL_IDLE_MS;
    if (document.hidden) delay = Math.max(delay, POLL_IDLE_MS);
    state.timer = setTimeout(refresh, delay);
  }

  const currentSweep = () => state.sweeps.find((s) => s.id === state.sweepID) || null;

  function setConn(msg) {
    $("conn").textContent = msg;
  }

  function showError(msg) {
    const el = $("error");
    el.textContent = msg;
    el.hidden = !msg;
  }

  // ---- matrix model --------------------------------------------------------

  function indexMatrix(m) {
    const names = (m.nodes || []).map((n) => n.name);
    const pos = new Map(names.map((name, i) => [name, i]));
    const n = names.length;
    const rails = Math.max(m.rails || 0, 0);
    const cells = new Array(rails * n * n).fill(null);
    for (const c of m.cells || []) {
      const i = pos.get(c.src);
      const j = pos.get(c.dst);
      if (i === undefined || j === undefined || !(c.rail >= 0 && c.rail < rails)) continue;
      cells[(c.rail * n + i) * n + j] = c;
    }
    return { names, pos, n, rails, cells };
  }

  const verdictOf = (c) => (c && c.verdict) || "untested";

  // cellsAt lists the cells of pair (i, j) under the rail selection.
  function cellsAt(i, j) {
    const g = state.grid;
    const out = [];
    if (!g) return out;
    const rails = state.rail === "all" ? [...Array(g.rails).keys()] : [Number(state.rail)];
    for (const r of rails) {
      const c = r < g.rails ? g.cells[(r * g.n + i) * g.n + j] : null;
      out.push(c || { src: g.names[i], dst: g.names[j], rail: r, verdict: "untested" });
    }
    return out;
  }

  // shade decides what one pair looks like: a colour and, for numeric
  // metrics, the value it stands for.
  function shade(i, j, domain) {
    const cells = cellsAt(i, j);
    let worst = "untested";
    if (cells.length) {
      worst = cells.reduce((w, c) => (SEVERITY[verdictOf(c)] > SEVERITY[w] ? verdictOf(c) : w), "ok");
    }
    if (state.metric === "status") return { color: COLOR[worst] || COLOR.untested };
    // A failed rail has no number; letting its healthy siblings speak for
    // the pair would hide exactly the fault the operator is looking for.
    if (worst === "failed") return { color: COLOR.failed };
    const v = pairValue(cells);
    if (v === null) return { color: COLOR.untested };
    return { color: ramp(domain, v), value: v };
  }

  function pairValue(cells) {
    const m = METRICS[state.metric];
    const vals = cells.map(m.get).filter((v) => typeof v === "number" && isFinite(v));
    return vals.length ? m.worst(...vals) : null;
  }

  function valueDomain() {
    const g = state.grid;
    let lo = Infinity;
    let hi = -Infinity;
    if (!g || state.metric === "status") return null;
    for (let i = 0; i < g.n; i++) {
      for (let j = 0; j < g.n; j++) {
        if (i === j) continue;
        const v = pairValue(cellsAt(i, j));
        if (v === null) continue;
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
    return lo <= hi ? { lo, hi } : null;
  }

  function ramp(domain, v) {
    const t = !domain || domain.hi === domain.lo ? 0.5 : (v - domain.lo) / (domain.hi - domain.lo);
    return rampAt(Math.min(1, Math.max(0, t)));
  }

  function rampAt(t) {
    const x = t * (VIRIDIS.length - 1);
    const k = Math.min(VIRIDIS.length - 2, Math.floor(x));
    const f = x - k;
    const a = VIRIDIS[k];
    const b = VIRIDIS[k + 1];
    const ch = (n) => Math.round(a[n] + (b[n] - a[n]) * f);
    return `rgb(${ch(0)},${ch(1)},${ch(2)})`;
  }

  // ---- rendering: header -----------------------------------------------------

  function sweepLabel(s) {
    let health = "";
    if (s.state !== "running" && s.healthy !== undefined && s.healthy !== null) {
      health = s.healthy ? ", healthy" : ", UNHEALTHY";
    }
    const started = s.started ? new Date(s.started).toLocaleString() : "";
    return `${s.id} · ${s.state}${health} · round ${s.rounds_done}/${s.rounds} · ${s.mode || "default"} · ${started}`;
  }

  // renderSweeps updates options in place when the list is unchanged, so a
  // poll does not close the dropdown under the user's pointer.
  function renderSweeps() {
    const sel = $("sweep");
    const ids = state.sweeps.map((s) => s.id);
    const have = [...sel.options].map((o) => o.value);
    if (ids.length === 0) {
      if (have.length !== 1 || have[0] !== "") {
        sel.replaceChildren(new Option("no sweeps yet", ""));
      }
      return;
    }
    if (ids.join("\n") !== have.join("\n")) {
      sel.replaceChildren(...state.sweeps.map((s) => new Option(sweepLabel(s), s.id)));
    } else {
      state.sweeps.forEach((s, k) => {
        const label = sweepLabel(s);
        if (sel.options[k].text !== label) sel.options[k].text = label;
      });
    }
    sel.value = state.sweepID;
  }

  function renderRails() {
    const sel = $("rail");
    const g = state.grid;
    const m = state.matrix;
    const opts = [["all", "all rails (worst)"]];
    for (let r = 0; g && r < g.rails; r++) {
      const port = m.nodes && m.nodes[0] && m.nodes[0].ports && m.nodes[0].ports[r];
      opts.push([String(r), port && port.device ? `rail ${r} (${port.device})` : `rail ${r}`]);
    }
    const key = opts.map((o) => o.join("=")).join("\n");
    if (sel.dataset.key !== key) {
      sel.replaceChildren(...opts.map(([v, t]) => new Option(t, v)));
      sel.dataset.key = key;
    }
    if (!opts.some(([v]) => v === state.rail)) state.rail = "all";
    sel.value = state.rail;
  }

  // ---- rendering: summary, legend, suspects --------------------------------

  function renderSummary() {
    const el = $("summary");
    const sw = currentSweep();
    const m = state.matrix;
    el.replaceChildren();
    if (!sw) {
      el.textContent = "No sweeps yet. Press “Start sweep” to measure every node pair.";
      return;
    }
    const badge = document.createElement("span");
    badge.className = "badge";
    const healthy = sw.healthy !== undefined && sw.healthy !== null ? sw.healthy : m ? m.healthy : null;
    if (sw.state === "running") {
      badge.classList.add("running");
      badge.textContent = "RUNNING";
    } else if (sw.state === "failed") {
      badge.classList.add("unhealthy");
      badge.textContent = "SWEEP FAILED";
    } else if (healthy === true) {
      badge.classList.add("healthy");
      badge.textContent = "HEALTHY";
    } else {
      badge.classList.add("unhealthy");
      badge.textContent = "UNHEALTHY";
    }
    el.append(badge, " ");

    const parts = [`round ${sw.rounds_done}/${sw.rounds}`, `cells ${sw.cells_done}/${sw.cells}`];
    if (m) {
      parts.unshift(`${(m.nodes || []).length} nodes × ${m.rails} rails`);
      const counts = m.counts || {};
      parts.push(VERDICTS.map((v) => `${counts[v.key] || 0} ${v.label}`).join(", "));
      if (sw.state === "running") parts.push(m.healthy ? "no problems so far" : "problems found so far");
    } else {
      parts.push("no matrix yet");
    }
    if (sw.error) parts.push(`error: ${sw.error}`);
    el.append(parts.join(" · "));
  }

  function swatch(color, label) {
    const s = document.createElement("span");
    s.className = "swatch";
    const i = document.createElement("i");
    i.style.background = color;
    s.append(i, label);
    return s;
  }

  function renderLegend(domain) {
    const el = $("legend");
    el.replaceChildren();
    if (state.metric === "status") {
      el.append(...VERDICTS.map((v) => swatch(v.color, v.label)));
      return;
    }
    const m = METRICS[state.metric];
    const box = document.createElement("span");
    box.className = "ramp";
    const c = document.createElement("canvas");
    c.width = 160;
    c.height = 12;
    const ctx = c.getContext("2d");
    for (let x = 0; x < c.width; x++) {
      ctx.fillStyle = rampAt(x / (c.width - 1));
      ctx.fillRect(x, 0, 1, c.height);
    }
    const lo = domain ? fmtNum(domain.lo) : "–";
    const hi = domain ? fmtNum(domain.hi) : "–";
    box.append(`${lo} ${m.unit}`, c, `${hi} ${m.unit}`);
    const note = document.createElement("span");
    note.className = "legend-note";
    note.textContent = `${m.label}, ${m.better} is better${state.rail === "all" ? "; worst rail per pair" : ""}`;
    el.append(box, note, swatch(COLOR.failed, "failed"), swatch(COLOR.untested, "not measured"));
  }

  function suspectTarget(s) {
    const rail = `rail ${s.rail}`;
    switch (s.kind) {
      case "hca":
        return `HCA ${s.node}/${s.device || "?"} (${rail})`;
      case "node":
        return `node ${s.node}`;
      case "rail":
        return `${rail} (all nodes)`;
      case "pair":
        return `pair ${s.node} ↔ ${s.peer} (${rail})`;
      default:
        return `${s.kind} ${s.node || ""} ${rail}`.trim();
    }
  }

  function renderSuspects() {
    const list = (state.matrix && state.matrix.suspects) || [];
    const key = JSON.stringify(list);
    if (key === state.suspectsJSON) return; // keep text selectable between polls
    state.suspectsJSON = key;
    const ol = $("suspects");
    if (!list.length) {
      const li = document.createElement("li");
      li.textContent = state.matrix ? "No suspects." : "No matrix yet.";
      ol.replaceChildren(li);
      return;
    }
    ol.replaceChildren(
      ...list.map((s) => {
        const li = document.createElement("li");
        li.append(el("span", "what", suspectTarget(s)), " ");
        if (s.class) li.append(el("span", "class", s.class), " ");
        li.append(el("span", "sub", `${s.bad}/${s.total} cells bad`));
        li.append(el("div", "", s.reason));
        if (s.fix) li.append(el("div", "fix", `Fix: ${s.fix}`));
        if (s.evidence) li.append(el("div", "evidence", s.evidence));
        return li;
      }),
    );
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // ---- rendering: heatmap ----------------------------------------------------

  const canvas = $("heatmap");
  const ctx = canvas.getContext("2d");
  const FONT = (px, bold) => `${bold ? "bold " : ""}${px}px system-ui, sans-serif`;

  function ellipsize(text, maxW) {
    if (ctx.measureText(text).width <= maxW) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + "…").width <= maxW) lo = mid;
      else hi = mid - 1;
    }
    return text.slice(0, lo) + "…";
  }

  // computeLayout fits the grid to the panel width and the window height:
  // 64 nodes get ~10 px cells, and labels thin out rather than overlap.
  function computeLayout(names) {
    const n = names.length;
    const availW = Math.max(240, $("heatmap-wrap").clientWidth - 2);
    const availH = Math.max(320, window.innerHeight * 0.8);
    const labelCap = 160;
    const measure = (px) => {
      ctx.font = FONT(px, true); // the hovered row and column are drawn bold
      return Math.min(labelCap, Math.ceil(Math.max(0, ...names.map((s) => ctx.measureText(s).width)))) + 8;
    };
    let font = 12;
    let label = measure(font);
    const fit = (lbl) => Math.floor(Math.min((availW - lbl) / n, (availH - lbl) / n));
    let cell = Math.max(3, Math.min(32, fit(label)));
    const want = Math.max(7, Math.min(12, cell - 2));
    if (want !== font) {
      font = want;
      label = measure(font);
      cell = Math.max(3, Math.min(32, fit(label)));
    }
    // Show every step-th label so glyphs (font + 2 px) never overlap.
    const step = Math.max(1, Math.ceil((font + 2) / cell));
    return { n, cell, font, step, left: label, top: label, width: label + n * cell + 1, height: label + n * cell + 1 };
  }

  function drawHeatmap() {
    const g = state.grid;
    const wrap = $("heatmap-wrap");
    const dpr = window.devicePixelRatio || 1;
    if (!g || g.n === 0) {
      state.layout = null;
      Object.assign(canvas.dataset, { n: 0, cell: 0, left: 0, top: 0 });
      canvas.width = 300 * dpr;
      canvas.height = 60 * dpr;
      canvas.style.width = "300px";
      canvas.style.height = "60px";
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, 300, 60);
      ctx.fillStyle = "#5a5a5a";
      ctx.font = FONT(13);
      ctx.fillText(state.sweepID ? "No matrix for this sweep yet." : "No sweep selected.", 8, 30);
      renderLegend(null);
      return;
    }
    const L = computeLayout(g.names);
    state.layout = L;
    canvas.width = Math.round(L.width * dpr);
    canvas.height = Math.round(L.height * dpr);
    canvas.style.width = `${L.width}px`;
    canvas.style.height = `${L.height}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, L.width, L.height);

    const domain = valueDomain();
    const gap = L.cell >= 6 ? 1 : 0;
    for (let i = 0; i < g.n; i++) {
      for (let j = 0; j < g.n; j++) {
        if (i === j) continue; // a node does not test itself
        ctx.fillStyle = shade(i, j, domain).color;
        ctx.fillRect(L.left + j * L.cell, L.top + i * L.cell, L.cell - gap, L.cell - gap);
      }
    }

    const hi = hoverIndex();
    if (hi) {
      ctx.fillStyle = "rgba(0,0,0,0.06)";
      ctx.fillRect(L.left, L.top + hi.i * L.cell, g.n * L.cell, L.cell);
      ctx.fillRect(L.left + hi.j * L.cell, L.top, L.cell, g.n * L.cell);
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 2;
      ctx.strokeRect(L.left + hi.j * L.cell - 1, L.top + hi.i * L.cell - 1, L.cell + 1, L.cell + 1);
    }

    ctx.fillStyle = "#1b1b1b";
    ctx.textBaseline = "middle";
    for (let k = 0; k < g.n; k++) {
      const bold = hi && (hi.i === k || hi.j === k);
      if (k % L.step !== 0 && !bold) continue;
      ctx.font = FONT(L.font, bold);
      const name = ellipsize(g.names[k], L.left - 8);
      // Row label, right-aligned against the grid.
      ctx.textAlign = "right";
      ctx.fillText(name, L.left - 4, L.top + k * L.cell + L.cell / 2);
      // Column label, rotated to read bottom-up.
      ctx.save();
      ctx.translate(L.left + k * L.cell + L.cell / 2, L.top - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "left";
      ctx.fillText(name, 0, 0);
      ctx.restore();
    }
    ctx.textAlign = "start";
    // Published so browser tests (and anyone scripting the page) can aim
    // at a cell: cell (i, j) spans left + j*cell .. +cell, top + i*cell.
    Object.assign(canvas.dataset, { n: L.n, cell: L.cell, left: L.left, top: L.top });
    canvas.setAttribute("aria-label", `${g.n} by ${g.n} node heatmap of ${METRICS[state.metric].label}`);
    renderLegend(domain);
  }

  function hoverIndex() {
    const g = state.grid;
    if (!g || !state.hover) return null;
    const i = g.pos.get(state.hover.src);
    const j = g.pos.get(state.hover.dst);
    return i === undefined || j === undefined ? null : { i, j };
  }

  function pairAt(ev) {
    const L = state.layout;
    if (!L) return null;
    const rect = canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left - L.left;
    const y = ev.clientY - rect.top - L.top;
    if (x < 0 || y < 0) return null;
    const i = Math.floor(y / L.cell);
    const j = Math.floor(x / L.cell);
    if (i >= L.n || j >= L.n || i === j) return null;
    return { i, j };
  }

  // ---- tooltip ---------------------------------------------------------------

  const fmtNum = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
  const fmtUs = (ns) => (typeof ns === "number" ? `${fmtNum(ns / 1000)} µs` : "–");
  const fmtGbps = (g) => (typeof g === "number" ? `${fmtNum(g)} Gb/s` : "–");

  function kv(parent, key, value, cls) {
    const line = el("div", cls || "");
    line.append(el("span", "k", `${key}: `), String(value));
    parent.append(line);
  }

  function renderTooltip() {
    const tip = $("tooltip");
    const hi = hoverIndex();
    if (!hi) {
      tip.hidden = true;
      tip.classList.remove("pinned");
      state.pinned = false;
      return;
    }
    const g = state.grid;
    const cells = cellsAt(hi.i, hi.j);
    const all = state.rail === "all";
    const head = el("div", "tt-head", `${g.names[hi.i]} → ${g.names[hi.j]}`);
    const blocks = cells.map((c) => {
      const b = el("div", "tt-rail");
      const v = verdictOf(c);
      const title = el("div");
      const dev = c.src_device || c.dst_device ? ` ${c.src_device || "?"} → ${c.dst_device || "?"}` : "";
      title.append(el("span", "k", `rail ${c.rail}${dev} `), el("span", `verdict v-${v}`, v));
      if (c.class && c.class !== "ok") title.append(` (${c.class})`);
      b.append(title);
      if (c.latency || c.bandwidth) {
        b.append(el("div", "", `p50 ${fmtUs(c.latency && c.latency.p50_ns)} · p99 ${fmtUs(c.latency && c.latency.p99_ns)} · ${fmtGbps(c.bandwidth && c.bandwidth.gbps)}`));
      }
      // In the all-rails view healthy rails stay one line so 8 rails fit.
      if (!all || v !== "ok") {
        if (c.reason) kv(b, "reason", c.reason);
        if (c.error) {
          const e = c.error;
          const where = [e.verb, e.errno ? `errno ${e.errno}` : "", e.wc_status ? `wc status ${e.wc_status}` : ""].filter(Boolean).join(", ");
          kv(b, "cause", where ? `${e.cause} [${where}]` : e.cause);
          if (e.fix) kv(b, "fix", e.fix, "fix");
        }
        if (c.round) kv(b, "round", c.round);
      }
      return b;
    });
    tip.replaceChildren(head, ...blocks);
    tip.hidden = false;
    tip.classList.toggle("pinned", state.pinned);
    placeTooltip();
  }

  function placeTooltip() {
    const tip = $("tooltip");
    if (tip.hidden || !state.hover) return;
    const pad = 14;
    const w = tip.offsetWidth;
    const h = tip.offsetHeight;
    let x = state.hover.x + pad;
    let y = state.hover.y + pad;
    if (x + w > window.innerWidth - 4) x = Math.max(4, state.hover.x - pad - w);
    if (y + h > window.innerHeight - 4) y = Math.max(4, window.innerHeight - 4 - h);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
  }

  function onMove(ev) {
    if (state.pinned) return;
    const p = pairAt(ev);
    const g = state.grid;
    const before = state.hover ? `${state.hover.src}\n${state.hover.dst}` : "";
    state.hover = p ? { src: g.names[p.i], dst: g.names[p.j], x: ev.clientX, y: ev.clientY } : null;
    const after = state.hover ? `${state.hover.src}\n${state.hover.dst}` : "";
    if (before !== after) {
      drawHeatmap();
      renderTooltip();
    } else {
      placeTooltip();
    }
  }

  function onClick(ev) {
    if (state.pinned) {
      state.pinned = false;
      onMove(ev);
      return;
    }
    if (pairAt(ev)) {
      onMove(ev);
      state.pinned = true;
      renderTooltip();
    }
  }

  function unpin() {
    state.pinned = false;
    state.hover = null;
    drawHeatmap();
    renderTooltip();
  }

  // ---- nodes table -------------------------------------------------------------

  function checkItem(c, prefix) {
    const d = el("span", "check");
    d.append(el("span", c.status === "fail" ? "port-bad" : "", `${prefix}${c.name} ${c.status}`));
    const text = [c.cause || c.evidence, c.fix ? `Fix: ${c.fix}` : ""].filter(Boolean).join(" · ");
    if (text) d.append(el("span", "sub", ` ${text}`));
    if (c.evidence) d.title = c.evidence;
    return d;
  }

  function renderNodes(nodes) {
    const key = JSON.stringify(nodes);
    if (key === state.nodesJSON) return;
    state.nodesJSON = key;
    const rows = [];
    const sorted = [...nodes].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
    for (const n of sorted) {
      const inv = n.inventory || {};
      const ports = inv.ports && inv.ports.length ? inv.ports : [null];
      const hostChecks = (inv.checks || []).filter((c) => c.status !== "ok");
      ports.forEach((p, k) => {
        const tr = document.createElement("tr");
        if (k === 0) tr.className = "node-first";
        const td = (text, cls) => {
          const c = el("td", cls || "", text);
          tr.append(c);
          return c;
        };
        if (k === 0) {
          td(n.name, "mono");
          td(n.role);
          td(n.state, `state-${n.state}`);
          td(n.api_addr, "mono");
        } else {
          td("");
          td("");
          td("");
          td("");
        }
        if (!p) {
          td(n.inventory ? "no HCA ports" : "no inventory yet", "sub");
          for (let x = 0; x < 7; x++) td("");
        } else {
          td(`${p.device}:${p.port}`, "mono");
          td(p.rail, "num");
          td(p.link_layer);
          const st = td(p.state, p.state === "ACTIVE" && p.usable ? "" : "port-bad");
          if (!p.usable && p.unusable_why) st.append(el("div", "sub", `unusable: ${p.unusable_why}`));
          td(p.rate_gbps ? `${p.rate_gbps} Gb/s` : "–", "num");
          td(p.mtu || "–", "num");
          const gid = td(`${p.gid_index}${p.gid_type ? ` (${p.gid_type})` : ""}`);
          if (p.gid_reason) gid.append(el("div", "sub", p.gid_reason));
          if (p.gid) gid.title = p.gid;
          td([p.netdev, p.ip].filter(Boolean).join(" / ") || "–", "mono");
        }
        const checks = td("");
        for (const c of (p && p.failed_checks) || []) checks.append(checkItem(c, ""));
        if (k === 0) for (const c of hostChecks) checks.append(checkItem(c, "host: "));
        rows.push(tr);
      });
    }
    if (!rows.length) {
      const tr = document.createElement("tr");
      const c = el("td", "sub", "No members known yet.");
      c.colSpan = 13;
      tr.append(c);
      rows.push(tr);
    }
    $("nodes").tBodies[0].replaceChildren(...rows);
  }

  // ---- wiring ------------------------------------------------------------------

  function renderMatrix() {
    renderRails();
    renderSummary();
    renderSuspects();
    drawHeatmap();
    if (state.hover) renderTooltip();
  }

  async function startSweep() {
    const btn = $("start");
    btn.disabled = true;
    showError("");
    try {
      const res = await request("api/v1/sweeps", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ mode: "quick" }),
      });
      const info = await readJSON(res);
      state.sweepID = info.id;
      state.follow = true;
    } catch (e) {
      const field = e.field ? ` (field: ${e.field})` : "";
      showError(`Could not start a sweep: ${e.message}${field}`);
    } finally {
      btn.disabled = false;
    }
    refresh();
  }

  $("sweep").addEventListener("change", (ev) => {
    state.sweepID = ev.target.value;
    state.follow = ev.target.selectedIndex === 0;
    state.matrixETag = "";
    state.hover = null;
    refresh();
  });
  $("rail").addEventListener("change", (ev) => {
    state.rail = ev.target.value;
    drawHeatmap();
    if (state.hover) renderTooltip();
  });
  $("metric").addEventListener("change", (ev) => {
    state.metric = ev.target.value;
    drawHeatmap();
  });
  $("start").addEventListener("click", startSweep);
  canvas.addEventListener("mousemove", onMove);
  canvas.addEventListener("click", onClick);
  canvas.addEventListener("mouseleave", () => {
    if (!state.pinned && state.hover) unpin();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && state.hover) unpin();
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });
  let lastWidth = 0;
  new ResizeObserver(() => {
    const w = $("heatmap-wrap").clientWidth;
    if (w !== lastWidth) {
      lastWidth = w;
      drawHeatmap();
    }
  }).observe($("heatmap-wrap"));
  window.addEventListener("resize", () => drawHeatmap());

  state.metric = $("metric").value;
  refresh();
})();

// rdmamesh UI: one page over /api/v1, no dependencies, no build step. This
// module wires the views together; js/ holds the parts. The heatmap reads
// the compact API (grid + one-byte-per-pair layers), never the full matrix
// JSON, which is hundreds of MB at 1,024 nodes x 8 rails.

import { request, readJSON, getJSON, getLayer, events, sweepPath, APIError } from "./js/api.js";
import { Heatmap } from "./js/heatmap.js";
import { renderLegend } from "./js/legend.js";
import { renderDrill } from "./js/drill.js";
import { renderNodes, bindNodes } from "./js/nodes.js";
import { renderHistory, bindSweeps } from "./js/sweeps.js";
import { showPair, showText, hideTooltip, place, codeText } from "./js/tooltip.js";
import { renderPanels } from "./js/panels.js";
import { $, el } from "./js/util.js";

const LIST_POLL_MS = 5000;
const RELOAD_MIN_MS = 700; // at most this often while results stream in

const state = {
  sweeps: [],
  nodes: [],
  sweepID: "",
  follow: true, // track the newest sweep until the user picks an older one
  grid: null,
  layer: null,
  metric: "status",
  rail: "all",
  mode: "pairs",
  loading: false,
  reloadAgain: false,
  lastLoad: 0,
  stream: null, // {id, abort}
  progress: [], // progress events seen, for the page's own tests
  loads: [], // status layers shown: sweep and untested pairs, likewise
  pairs: new Map(), // pair answers of the current grid
  hover: null,
  hoverEv: null,
  timer: 0,
  firstPaintMs: 0,
};

// ---- heatmap ------------------------------------------------------------------

const heatmap = new Heatmap($("heatmap"), $("heatmap-wrap"), {
  onHover,
  onClick,
  onPaint() {
    const h = state.layer && state.layer.header;
    if (h) $("heatmap").dataset.layer = `${h.metric}:${h.rail < 0 ? "all" : h.rail}`;
    renderLegend($("legend"), state.layer, heatmap.mode, Number($("heatmap").dataset.pool || 1), state.grid);
    if (!state.firstPaintMs && state.layer) {
      // The frame after the draw is when pixels reach the screen.
      requestAnimationFrame(() => {
        if (state.firstPaintMs) return;
        state.firstPaintMs = performance.now();
        $("heatmap").dataset.painted = "1";
        refreshList(); // now the node list
      });
    }
  },
});

function nodeName(i) {
  return state.grid.nodes[i].name;
}

async function pairDetail(src, dst) {
  const key = `${src}\n${dst}`;
  if (!state.pairs.has(key)) {
    const grid = state.grid;
    const p = getJSON(sweepPath(grid.sweep, `/pair?src=${encodeURIComponent(src)}&dst=${encodeURIComponent(dst)}`));
    state.pairs.set(key, p);
    p.catch(() => state.pairs.delete(key));
  }
  return state.pairs.get(key);
}

let hoverTimer = 0;
function onHover(t, ev) {
  state.hover = t;
  state.hoverEv = ev;
  clearTimeout(hoverTimer);
  if (!t || !state.layer) {
    hideTooltip();
    return;
  }
  const g = state.grid;
  if (t.kind === "block") {
    const a = g.groups[t.a];
    const b = g.groups[t.b];
    const s = heatmap.blockStats();
    const k = t.a * s.G + t.b;
    showText(ev, `${a.name || "(no group)"} → ${b.name || "(no group)"}`, [
      `${a.count} × ${b.count} nodes, ${s.tested[k]} pair(s) tested, ${s.bad[k]} bad`,
      `worst: ${codeText(state.layer.header, s.worst[k])}`,
      "click to zoom into these two groups",
    ]);
    return;
  }
  if (t.kind === "hca") {
    const n = g.nodes[t.i];
    showText(ev, `${n.name} rail ${t.rail}`, [
      `${n.bad[t.rail]} of ${n.tested[t.rail]} tested cells bad (${n.total[t.rail]} cells as initiator or target)`,
      `group ${n.group || "–"}, ${n.state || "?"}`,
      "click to show this HCA's row and column",
    ]);
    return;
  }
  const src = nodeName(t.i);
  const dst = nodeName(t.j);
  const code = state.layer.body[t.i * g.nodes.length + t.j];
  const show = (detail) => {
    if (state.hover !== t) return;
    showPair(state.hoverEv, { src, dst, rail: state.rail, header: state.layer.header, code, detail });
  };
  const key = `${src}\n${dst}`;
  const cached = state.pairs.get(key);
  show(null);
  if (cached) cached.then(show, () => {});
  else hoverTimer = setTimeout(() => pairDetail(src, dst).then(show, () => {}), 80);
}

function onClick(t) {
  const g = state.grid;
  if (t.kind === "pair") {
    openDrill(nodeName(t.i), nodeName(t.j));
  } else if (t.kind === "block") {
    const a = g.groups[t.a];
    const b = g.groups[t.b];
    setMode("pairs");
    heatmap.zoomTo(a.start, a.start + a.count, b.start, b.start + b.count);
  } else if (t.kind === "hca") {
    heatmap.focus = t.i;
    setMode("pairs");
    setRail(String(t.rail));
  }
}

async function openDrill(src, dst) {
  hideTooltip();
  const dlg = $("drill");
  $("drill-title").textContent = `${src} ⇄ ${dst}`;
  $("drill-body").replaceChildren(el("p", "sub", "loading…"));
  if (!dlg.open) dlg.showModal();
  try {
    renderDrill(await pairDetail(src, dst), state.rail);
  } catch (e) {
    $("drill-body").replaceChildren(el("p", "port-bad", `Could not load the pair: ${e.message}`));
  }
}

const HINTS = {
  pairs: "Row = initiator (src), column = target (dst). Hover a cell for its figures, click it for the drill-down. " +
    "Wheel zooms, drag pans, “fit” shows everything; Esc clears the highlight.",
  groups: "Row = initiator group, column = target group. Hover a block for its counts, click it to see its node pairs.",
  hcas: "One row per node, one column per rail: each HCA's share of bad cells. Click an HCA to show its row and column.",
};

function setMode(mode) {
  state.mode = mode;
  $("mode").value = mode;
  $("hint").textContent = HINTS[mode];
  heatmap.setMode(mode);
}

function setRail(rail) {
  state.rail = rail;
  $("rail").value = rail;
  if (state.grid) renderMatrixInfo(); // the selected chip
  loadLayer();
}

// ---- loading -------------------------------------------------------------------

// loadMatrix fetches the grid and the current layer. Calls while one runs
// are folded into one more run, and runs are spaced by RELOAD_MIN_MS, so
// a sweep committing rounds quickly costs a bounded number of fetches.
async function loadMatrix() {
  if (state.loading) {
    state.reloadAgain = true;
    return;
  }
  state.loading = true;
  try {
    const wait = state.lastLoad + RELOAD_MIN_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    state.lastLoad = Date.now();
    const id = state.sweepID;
    let grid = null;
    // The layer is asked for alongside the grid: the server derives both
    // from one pass, and the page saves a round trip on the first paint.
    const early = id && (state.rail === "all" || (state.grid && state.grid.sweep === id)) ? layerFor(id) : null;
    if (early) early.catch(() => {});
    if (id) {
      const res = await request(sweepPath(id, "/grid"));
      if (res.status !== 404) grid = await readJSON(res);
    }
    if (id !== state.sweepID) return;
    if (!grid) {
      state.grid = null;
      state.layer = null;
      heatmap.set(null, null);
      renderMatrixInfo();
      return;
    }
    if (!state.grid || state.grid.sweep !== grid.sweep) heatmap.focus = -1;
    if (JSON.stringify(grid) !== JSON.stringify(state.grid)) state.pairs.clear();
    state.grid = grid;
    if (state.rail !== "all" && Number(state.rail) >= grid.rails) state.rail = "all";
    renderMatrixInfo();
    await loadLayer(early);
  } catch (e) {
    setConn(`connection problem: ${e.message}`);
  } finally {
    state.loading = false;
    if (state.reloadAgain) {
      state.reloadAgain = false;
      loadMatrix();
    }
  }
}

let layerSeq = 0;
function layerFor(id) {
  const p = getLayer(id, state.metric, state.rail);
  p.want = `${id}|${state.metric}|${state.rail}`;
  return p;
}

// loadLayer shows the layer for the current metric and rail; pending is a
// request made earlier, used only if it still asks for what is wanted.
async function loadLayer(pending) {
  const grid = state.grid;
  if (!grid) return;
  const seq = ++layerSeq;
  if (pending && pending.want !== `${grid.sweep}|${state.metric}|${state.rail}`) pending = null;
  try {
    const layer = await (pending || layerFor(grid.sweep));
    if (seq !== layerSeq) return; // a newer choice superseded this one
    if (!state.layer || layer.etag !== state.layer.etag || layer.header.metric !== state.layer.header.metric) state.layer = layer;
    if (layer.header.metric === "status" && layer.header.rail < 0) {
      const n = layer.header.n;
      state.loads.push({ sweep: grid.sweep, pairs: n * (n - 1), untested: layer.header.counts[2] || 0 });
    }
    heatmap.set(grid, state.layer);
    setConn("");
  } catch (e) {
    if (seq === layerSeq) setConn(`could not load the heatmap: ${e.message}`);
  }
}

async function refreshList() {
  clearTimeout(state.timer);
  // The sweep list decides what the heatmap loads; the node list (megabytes
  // at 1,024 nodes) waits for the first paint unless it is on screen.
  const wantNodes = state.firstPaintMs || !$("view-nodes").hidden || (state.listed && !state.sweepID);
  const nodes = wantNodes ? getJSON("api/v1/nodes") : Promise.resolve(null);
  try {
    state.sweeps = (await getJSON("api/v1/sweeps")) || [];
    const before = state.sweepID;
    if (state.follow || !state.sweeps.some((s) => s.id === state.sweepID)) {
      state.sweepID = state.sweeps.length ? state.sweeps[0].id : "";
    }
    renderSweepSelect();
    const cur = currentSweep();
    if (state.sweepID !== before || !state.grid) loadMatrix();
    if (cur && cur.state === "running") watch(cur);
    else showProgress(cur);
    renderHistory(state.sweeps, state.sweepID);
    state.listed = true;
    const list = await nodes;
    if (list) state.nodes = list;
    if (!$("view-nodes").hidden) renderNodes(state.nodes);
    setConn("");
  } catch (e) {
    nodes.catch(() => {});
    setConn(`connection problem: ${e.message}; retrying`);
  }
  state.timer = setTimeout(refreshList, LIST_POLL_MS);
}

const currentSweep = () => state.sweeps.find((s) => s.id === state.sweepID) || null;

// watch follows a running sweep's progress events until it ends.
function watch(sweep) {
  if (state.stream && state.stream.id === sweep.id) return;
  if (state.stream) state.stream.abort.abort();
  const abort = new AbortController();
  state.stream = { id: sweep.id, abort };
  let cellsDone = -1;
  events(sweep.id, abort.signal, (name, p) => {
    if (state.sweepID !== p.id) return;
    state.progress.push({ name, ...p });
    showProgress(p);
    if (name === "end") {
      loadMatrix();
      refreshList();
    } else if (p.cells_done !== cellsDone) {
      cellsDone = p.cells_done;
      loadMatrix(); // cells fill in as rounds commit
    }
  })
    .catch((e) => {
      if (!abort.signal.aborted) setConn(`progress stream: ${e.message}; polling instead`);
    })
    .finally(() => {
      if (state.stream && state.stream.abort === abort) state.stream = null;
    });
}

// ---- rendering -----------------------------------------------------------------

function setConn(msg) {
  $("conn").textContent = msg;
}

function showError(msg) {
  const e = $("error");
  e.textContent = msg;
  e.hidden = !msg;
}

function showProgress(p) {
  const box = $("progress");
  if (!p) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const bar = $("progress-bar");
  bar.max = Math.max(1, p.cells);
  bar.value = p.cells_done;
  const pct = p.cells ? Math.floor((100 * p.cells_done) / p.cells) : 0;
  const retest = p.retest_pass ? ` · retest pass ${p.retest_pass} (${p.retested} pairs)` : "";
  const head = p.state === "running" ? "running" : p.state;
  $("progress-text").textContent = `${head}: round ${p.rounds_done} of ${p.rounds} · cells ${p.cells_done}/${p.cells} (${pct}%)${retest}`;
}

function renderSweepSelect() {
  const sel = $("sweep");
  const opts = state.sweeps.map((s) => {
    const o = el("option", "", `${s.id} · ${s.state} · ${s.mode} · ${(s.nodes || []).length} nodes`);
    o.value = s.id;
    return o;
  });
  if (!opts.length) {
    const o = el("option", "", "no sweeps yet");
    o.value = "";
    opts.push(o);
  }
  const key = opts.map((o) => o.value + o.textContent).join("|");
  if (sel.dataset.key !== key) {
    sel.replaceChildren(...opts);
    sel.dataset.key = key;
  }
  sel.value = state.sweepID;
}

function renderMatrixInfo() {
  const sw = currentSweep();
  renderPanels(state.grid, {
    sweepID: state.sweepID,
    running: !!sw && sw.state === "running",
    rail: state.rail,
    onRail: setRail,
    onSuspect: showSuspect,
  });
}

// showSuspect points the heatmap at what a suspect blames.
function showSuspect(s) {
  const g = state.grid;
  const pos = (name) => g.nodes.findIndex((n) => n.name === name);
  location.hash = "#heatmap";
  if (s.kind === "pair") {
    openDrill(s.node, s.peer);
    return;
  }
  if (s.kind === "switch-group") {
    const value = (s.group || "").split("=").slice(1).join("=");
    const grp = g.groups.find((x) => x.name === value);
    setMode("groups");
    if (s.rail >= 0) setRail(String(s.rail));
    if (grp) heatmap.setHover({ kind: "block", a: g.groups.indexOf(grp), b: g.groups.indexOf(grp) });
    return;
  }
  heatmap.focus = s.node ? pos(s.node) : -1;
  setMode("pairs");
  heatmap.fit();
  setRail(s.rail >= 0 ? String(s.rail) : "all");
}

// ---- tabs and wiring -------------------------------------------------------------

function showTab() {
  const tab = (location.hash || "#heatmap").slice(1);
  const views = ["heatmap", "nodes", "sweeps"];
  const cur = views.includes(tab) ? tab : "heatmap";
  for (const v of views) {
    $(`view-${v}`).hidden = v !== cur;
    $(`tab-${v}`).classList.toggle("active", v === cur);
  }
  hideTooltip();
  if (cur === "heatmap") heatmap.draw();
  if (cur === "nodes") renderNodes(state.nodes);
}

$("sweep").addEventListener("change", (ev) => {
  state.sweepID = ev.target.value;
  state.follow = ev.target.selectedIndex === 0;
  state.grid = null;
  state.layer = null;
  heatmap.focus = -1;
  loadMatrix();
  refreshList();
});
$("metric").addEventListener("change", (ev) => {
  state.metric = ev.target.value;
  loadLayer();
});
$("rail").addEventListener("change", (ev) => setRail(ev.target.value));
$("mode").addEventListener("change", (ev) => setMode(ev.target.value));
$("zoom-in").addEventListener("click", () => heatmap.zoomBy(1.5));
$("zoom-out").addEventListener("click", () => heatmap.zoomBy(1 / 1.5));
$("zoom-fit").addEventListener("click", () => heatmap.fit());
$("drill-close").addEventListener("click", () => $("drill").close());
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape" && !$("drill").open) {
    heatmap.focus = -1;
    heatmap.setHover(null);
    heatmap.draw();
    hideTooltip();
  }
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refreshList();
});
window.addEventListener("hashchange", showTab);
window.addEventListener("scroll", () => place(state.hoverEv), { passive: true });
let lastWidth = 0;
new ResizeObserver(() => {
  const w = $("heatmap-wrap").clientWidth;
  if (w !== lastWidth && w > 0) {
    lastWidth = w;
    heatmap.draw();
  }
}).observe($("heatmap-wrap"));

bindNodes();
bindSweeps({
  onSelect(id) {
    state.sweepID = id;
    state.follow = state.sweeps.length > 0 && state.sweeps[0].id === id;
    state.grid = null;
    state.layer = null;
    loadMatrix();
    refreshList();
  },
  onStarted(info) {
    state.sweepID = info.id;
    state.follow = true;
    showError("");
    refreshList();
  },
  onError: showError,
});

// For scripts and the browser tests: where things are, and when the first
// complete heatmap reached the screen (ms since navigation started).
window.rdmamesh = {
  get firstPaintMs() {
    return state.firstPaintMs;
  },
  get progress() {
    return state.progress;
  },
  get loads() {
    return state.loads;
  },
  get grid() {
    return state.grid;
  },
  // cellCenter is the client position of pair (i, j) in the pairs view.
  cellCenter(i, j) {
    const d = $("heatmap").dataset;
    const r = $("heatmap").getBoundingClientRect();
    const s = Number(d.s);
    return { x: r.left + Number(d.left) + (j - Number(d.ox) + 0.5) * s, y: r.top + Number(d.top) + (i - Number(d.oy) + 0.5) * s };
  },
  // findCode returns the first pair whose layer byte is code.
  findCode(code) {
    const l = state.layer;
    if (!l) return null;
    const n = l.header.n;
    const k = l.body.indexOf(code);
    return k < 0 ? null : { i: Math.floor(k / n), j: k % n, src: nodeName(Math.floor(k / n)), dst: nodeName(k % n) };
  },
  APIError,
};

state.metric = $("metric").value;
state.mode = $("mode").value;
heatmap.mode = state.mode;
$("hint").textContent = HINTS[state.mode];
showTab();
refreshList();

// rdmamesh UI: one page over /api/v1, no dependencies, no build step. This
// module wires the views together; js/ holds the parts. The heatmap reads
// the compact API (grid + one-byte-per-pair layers), never the full matrix
// JSON, which is hundreds of MB at 1,024 nodes x 8 rails.

import { request, readJSON, getJSON, getLayer, events, sweepPath } from "./js/api.js";
import { Heatmap } from "./js/heatmap.js";
import { renderLegend } from "./js/legend.js";
import { renderNodes, bindNodes } from "./js/nodes.js";
import { renderHistory, bindSweeps, showProgress, renderSweepSelect } from "./js/sweeps.js";
import { pointer } from "./js/pointer.js";
import { scriptingAPI } from "./js/scripting.js";
import { hideTooltip, place } from "./js/tooltip.js";
import { renderPanels } from "./js/panels.js";
import { $ } from "./js/util.js";
import { overviewPlan, suspectPlan, nodePlan, whyText, ZOOM_SPAN, HINTS } from "./js/views.js";
import { LIVE_ID, fetchLive, liveController } from "./js/live.js";
import { fabricView } from "./js/fabric.js";
import { cablingView } from "./js/cabling.js";

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
  // auto: the page shows the view the sweep's evidence picks (the grid's
  // overview) until the operator picks a view or a suspect.
  auto: true,
  railLayers: [], // the rails view's layers, by rail
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
  live: null, // the live mesh when it is on: {info, at} (js/live.js)
  liveWindows: [], // live windows that refreshed the view, for the page's own tests
};
let lastSize = ""; // canvasSpace() of the last draw

// ---- heatmap ------------------------------------------------------------------

const live = liveController(state, {
  onWindow: () => loadMatrix(), // the grid and the current layer (and the rails view's layers)
  onError: (msg) => setConn(msg),
});

const { onHover, openDrill } = pointer(state, () => heatmap);
const fabric = fabricView(openDrill);
const cablingTab = cablingView();
const heatmap = new Heatmap($("heatmap"), $("heatmap-wrap"), {
  onHover,
  onClick,
  onPaint() {
    const h = state.layer && state.layer.header;
    if (h) $("heatmap").dataset.layer = `${h.metric}:${h.rail < 0 ? "all" : h.rail}`;
    lastSize = canvasSpace(); // what this draw was laid out in
    renderLegend($("legend"), state.layer, heatmap.mode, heatmap.pool, state.grid, heatmap.complete && heatmap.rails);
    refit(); // a legend of another height moves the canvas
    if (!state.firstPaintMs && heatmap.complete) {
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

const nodeName = (i) => state.grid.nodes[i].name;

function onClick(t) {
  const g = state.grid;
  state.auto = false;
  if (t.kind === "pair" && t.rail >= 0) {
    // A small multiple's pixel is several pairs: zoom into that rail there.
    const span = ZOOM_SPAN / 2;
    show({ mode: "pairs", rail: String(t.rail), focus: { r0: t.i, r1: t.i + 1, c0: t.j, c1: t.j + 1 },
      zoom: [t.i - span, t.i + span, t.j - span, t.j + span], focusRail: -1 });
  } else if (t.kind === "pair") {
    openDrill(nodeName(t.i), nodeName(t.j));
  } else if (t.kind === "block") {
    const a = g.groups[t.a];
    const b = g.groups[t.b];
    setMode("pairs");
    heatmap.zoomTo(a.start, a.start + a.count, b.start, b.start + b.count);
  } else if (t.kind === "hca") {
    show(nodePlan(g, t.i, String(t.rail)));
  }
}

// show applies a plan (js/views.js): the view, rail, highlight and zoom.
function show(plan) {
  hideTooltip(); // it described what was under the pointer before the move
  heatmap.hover = null;
  heatmap.focus = plan.focus;
  heatmap.focusRail = plan.focusRail;
  heatmap.view = null;
  setMode(plan.mode);
  if (plan.zoom) heatmap.zoomTo(...plan.zoom);
  if (plan.rail !== state.rail) setRail(plan.rail);
  renderWhy();
}

function setMode(mode) {
  state.mode = mode;
  $("mode").value = mode;
  $("rail").disabled = mode === "rails"; // that view shows every rail
  $("hint").textContent = HINTS[mode];
  heatmap.setMode(mode);
  renderWhy();
  if (mode === "rails") loadRails();
}

function setRail(rail) {
  state.rail = rail;
  $("rail").value = rail;
  if (state.grid) renderMatrixInfo(); // the selected chip
  renderWhy();
  loadLayer();
}

function renderWhy() {
  const text = whyText(state.grid, state.mode, state.rail, state.auto);
  $("view-why").textContent = text;
  $("view-why").hidden = !text;
  refit();
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
    if (!state.grid || state.grid.sweep !== grid.sweep) heatmap.focus = null;
    if (JSON.stringify(grid) !== JSON.stringify(state.grid)) state.pairs.clear();
    state.grid = grid;
    if (state.rail !== "all" && Number(state.rail) >= grid.rails) state.rail = "all";
    if (state.auto) {
      const plan = overviewPlan(grid);
      if (plan.mode !== state.mode) setMode(plan.mode);
      if (plan.rail !== state.rail) state.rail = plan.rail;
    }
    renderMatrixInfo();
    renderWhy();
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
    if (layer.header.order !== grid.order) {
      // Nodes came or went between the grid and the layer (the live
      // matrix follows membership): fetch the grid again, then the layer.
      if (state.loading) state.reloadAgain = true;
      else loadMatrix();
      return;
    }
    if (!state.layer || layer.etag !== state.layer.etag || layer.header.metric !== state.layer.header.metric) state.layer = layer;
    if (layer.header.metric === "status" && layer.header.rail < 0) {
      const n = layer.header.n;
      state.loads.push({ sweep: grid.sweep, pairs: n * (n - 1), untested: layer.header.counts[2] || 0 });
    }
    heatmap.set(grid, state.layer);
    setConn("");
    if (state.mode === "rails") loadRails();
  } catch (e) {
    if (seq === layerSeq) setConn(`could not load the heatmap: ${e.message}`);
  }
}

// loadRails fetches the current metric on every rail for the rails view,
// drawing each as it arrives.
let railsSeq = 0;
async function loadRails() {
  const grid = state.grid;
  if (!grid || state.mode !== "rails") return;
  const seq = ++railsSeq;
  const key = `${grid.sweep}|${state.metric}`;
  if (state.railsKey !== key) {
    state.railsKey = key;
    state.railLayers = new Array(grid.rails).fill(null);
  }
  const layers = state.railLayers;
  try {
    await Promise.all(layers.map((_, r) => getLayer(grid.sweep, state.metric, r).then((l) => {
      if (seq !== railsSeq) return;
      if (!layers[r] || layers[r].etag !== l.etag) layers[r] = l;
      heatmap.setRails(layers.slice());
    })));
  } catch (e) {
    if (seq === railsSeq) setConn(`could not load the rails: ${e.message}`);
  }
}

async function refreshList() {
  clearTimeout(state.timer);
  // The sweep list decides what the heatmap loads; the node list (megabytes
  // at 1,024 nodes) waits for the first paint unless it is on screen.
  const wantNodes = state.firstPaintMs || !$("view-nodes").hidden || (state.listed && !state.sweepID);
  const nodes = wantNodes ? getJSON("api/v1/nodes") : Promise.resolve(null);
  const liveInfo = fetchLive().catch(() => null); // a coordinator without the live mesh is no connection problem
  // The topology (megabytes on a large fabric) decides only whether the
  // Fabric tab shows: it waits like the node list.
  if (wantNodes || !$("view-fabric").hidden) fabric.load();
  try {
    state.sweeps = (await getJSON("api/v1/sweeps")) || [];
    live.set(await liveInfo);
    const before = state.sweepID;
    const onLive = state.sweepID === LIVE_ID && state.live;
    if (!onLive && (state.follow || !state.sweeps.some((s) => s.id === state.sweepID))) {
      // With no sweep yet the page opens on the live mesh, and still
      // follows the first sweep when one starts.
      state.sweepID = state.sweeps.length ? state.sweeps[0].id : state.live ? LIVE_ID : "";
    }
    renderSweepSelect(state.sweeps, state.sweepID, !!state.live);
    live.sync();
    const cur = currentSweep();
    if (state.sweepID !== before || !state.grid) loadMatrix();
    if (cur && cur.state === "running") watch(cur);
    else showProgress(cur);
    renderHistory(state.sweeps, state.sweepID);
    state.listed = true;
    const list = await nodes;
    if (list) state.nodes = list;
    if (!$("view-nodes").hidden) renderNodes(state.nodes);
    if (!$("view-cabling").hidden) loadCabling();
    setConn("");
  } catch (e) {
    nodes.catch(() => {});
    setConn(`connection problem: ${e.message}; retrying`);
  }
  state.timer = setTimeout(refreshList, LIST_POLL_MS);
}

// loadCabling judges the cables with the selected sweep's traced paths
// (the newest sweep's on the live mesh).
const loadCabling = () => cablingTab.load(state.sweepID === LIVE_ID ? "" : state.sweepID);

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

function renderMatrixInfo() {
  const sw = currentSweep();
  renderPanels(state.grid, {
    sweepID: state.sweepID,
    live: state.sweepID === LIVE_ID,
    running: !!sw && sw.state === "running",
    rail: state.rail,
    onRail: setRail,
    onSuspect: showSuspect,
  });
  fabric.setGrid(state.grid);
}

// showSuspect zooms the heatmap to what a suspect blames and highlights it;
// a link or switch, which no node's row shows, opens on the Fabric view.
function showSuspect(s) {
  if ((s.kind === "link" || s.kind === "switch") && fabric.focus(s)) {
    location.hash = "#fabric";
    return;
  }
  state.auto = false;
  show(suspectPlan(state.grid, s));
}

// ---- tabs and wiring -------------------------------------------------------------

function showTab() {
  const tab = (location.hash || "#heatmap").slice(1);
  const views = ["heatmap", "fabric", "cabling", "nodes", "sweeps"];
  const cur = views.includes(tab) ? tab : "heatmap";
  for (const v of views) {
    $(`view-${v}`).hidden = v !== cur;
    $(`tab-${v}`).classList.toggle("active", v === cur);
  }
  hideTooltip();
  if (cur === "heatmap") heatmap.draw();
  if (cur === "nodes") renderNodes(state.nodes);
  if (cur === "fabric") fabric.show();
  if (cur === "cabling") loadCabling();
}

$("sweep").addEventListener("change", (ev) => {
  state.sweepID = ev.target.value;
  state.follow = state.sweeps.length > 0 && ev.target.value === state.sweeps[0].id;
  state.grid = null;
  state.layer = null;
  heatmap.focus = null;
  loadMatrix();
  refreshList();
});
$("metric").addEventListener("change", (ev) => {
  state.metric = ev.target.value;
  loadLayer(); // and the rails' layers after it, in the rails view
});
$("rail").addEventListener("change", (ev) => {
  state.auto = false;
  setRail(ev.target.value);
});
$("mode").addEventListener("change", (ev) => {
  state.auto = false;
  setMode(ev.target.value);
});
$("zoom-in").addEventListener("click", () => heatmap.zoomBy(1.5));
$("zoom-out").addEventListener("click", () => heatmap.zoomBy(1 / 1.5));
$("zoom-fit").addEventListener("click", () => heatmap.fit());
$("drill-close").addEventListener("click", () => $("drill").close());
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape" && !$("drill").open) {
    heatmap.focus = null;
    heatmap.focusRail = -1;
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
// The canvas fills its panel: redraw when the panel's width or the
// window's height changes (the canvas's own height is set by the draw).
// canvasSpace is what the canvas's size depends on: the panel's width, the
// window's height and how far down the page the canvas starts (the legend
// and the line above it can change height). refit redraws when it changed
// since the last draw.
function canvasSpace() {
  const wrap = $("heatmap-wrap");
  return `${wrap.clientWidth}x${window.innerHeight}@${Math.round(wrap.getBoundingClientRect().top + window.scrollY)}`;
}
function refit() {
  if ($("heatmap-wrap").clientWidth > 0 && canvasSpace() !== lastSize) heatmap.draw();
}
new ResizeObserver(refit).observe($("heatmap-wrap"));
new ResizeObserver(refit).observe($("summary"));
window.addEventListener("resize", refit);

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
window.rdmamesh = scriptingAPI(state, fabric, cablingTab);

state.metric = $("metric").value;
state.mode = $("mode").value;
heatmap.mode = state.mode;
$("hint").textContent = HINTS[state.mode];
showTab();
refreshList();

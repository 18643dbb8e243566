// The Fabric view: the topology's switches and cables one rail plane at a
// time (js/fabricdraw.js draws them), each cable coloured by the share of
// the selected sweep's tests through it that were bad (js/fabricload.js)
// and its link, cable and switch suspects marked over that; hover for a
// name and the share, click for a suspect's reason and fix beside the
// drawing (js/fabricside.js), and for a cable the tests that crossed it
// (js/fabriccells.js). The tab shows only when the coordinator has a
// topology: GET /api/v1/topology is 404 without.

import { request, readJSON } from "./api.js";
import { showText, hideTooltip, place } from "./tooltip.js";
import { $, el, fmtShare } from "./util.js";
import { indexTopology, findEnd, endName, layout, drawPlane, pathD, cablePath, hitCable } from "./fabricdraw.js";
import { describe, renderDetail, renderFabricSuspects, planeName } from "./fabricside.js";
import { linkCells } from "./fabriccells.js";
import { BANDS, linkLoads, indexLoads, drawLoads, clearLoads, loadLines } from "./fabricload.js";

const KINDS = new Set(["link", "cable", "switch"]);

// fabricView keeps the view's state; the page calls load() (after its first
// paint, or at once when the view shows), show() when the tab opens and
// setGrid() whenever the selected sweep's grid changes. onCell(src, dst)
// opens a pair's drill-down, as a click on the heatmap does.
export function fabricView(onCell) {
  const st = {
    status: "unknown", // unknown | loading | none (404) | ready | error
    why: "",
    ix: null, // indexTopology's answer
    plane: null,
    picked: false, // the operator picked the plane: stop following the suspects
    grid: null,
    gridKey: "",
    found: [], // the grid's link, cable and switch suspects placed on the topology
    drawn: null, // drawPlane's answer, for key
    key: "",
    marked: [], // switches and leaf bars marked
    own: new Map(), // cable -> the path it has of its own (suspect or selected)
    hover: null, // the hovered cable's path
    selected: null, // {kind: cable | switch | hosts, i}
    loadIdx: null, // indexLoads' answer and what it was computed from
    loadBars: [], // leaf bars classed by their host cables' share
    loadsOn: null, // the drawing and the index the shares were last drawn from
    loadsOf: null,
  };
  let loading = null;
  const cells = linkCells(onCell);
  // The loads change inside the render that asks for them when there are
  // none to fetch: render again after that one, not inside it.
  const loads = linkLoads(() => queueMicrotask(() => st.status === "ready" && !$("view-fabric").hidden && render()));
  renderLoadLegend();

  // loadIndex places the loads held on the topology, when they are the
  // selected sweep's: a switch of sweeps shows none until its own come.
  // It is computed again only when what it depends on changed: a grid
  // polled again for the same sweep leaves the drawn shares alone.
  function loadIndex() {
    const { sweep, list } = loads.get();
    const mine = !!st.grid && sweep === st.grid.sweep;
    const healthy = !!st.grid && st.grid.healthy;
    const c = st.loadIdx;
    if (!c || c.ix !== st.ix || c.list !== list || c.mine !== mine || c.healthy !== healthy) {
      const idx = indexLoads(st.ix, mine ? list : []);
      idx.known = mine && (list.length > 0 || healthy);
      st.loadIdx = { ix: st.ix, list, mine, healthy, idx };
    }
    return st.loadIdx.idx;
  }

  function load() {
    if (loading || st.status === "ready" || st.status === "none") return loading;
    loading = (async () => {
      if (st.status === "unknown") st.status = "loading";
      try {
        const res = await request("api/v1/topology");
        if (res.status === 404) {
          st.why = (await readJSON(res).catch((e) => e)).message;
          st.status = "none";
        } else {
          st.ix = indexTopology(await readJSON(res));
          st.status = "ready";
          st.drawn = null;
          resolve();
        }
      } catch (e) {
        st.status = "error";
        st.why = e.message;
      } finally {
        loading = null;
      }
      render();
    })();
    return loading;
  }

  // resolve places the grid's suspects: the cable (and, one way, the end
  // it leaves from) of a link, the leaf of a cable, the switch, and the
  // plane each is drawn in.
  function resolve() {
    st.found = [];
    const ix = st.ix;
    if (!ix || !st.grid) return;
    for (const s of st.grid.suspects) {
      if (!KINDS.has(s.kind)) continue;
      const f = { s, cls: s.verdict === "failed" ? "sus-failed" : "sus-perf", cable: -1, from: "", sw: -1, leaf: -1, plane: -1 };
      if (s.kind === "switch") {
        f.sw = ix.byName.has(s.switch) ? ix.byName.get(s.switch) : -1;
      } else {
        const ends = s.ends || [];
        const e = ends.map((n) => findEnd(ix, n)).find(Boolean) || (s.node && s.device ? findEnd(ix, `${s.node}/${s.device}`) : null);
        if (e) {
          const c = ix.t.cables[e.cable];
          f.cable = e.cable;
          if (s.kind === "cable") f.leaf = c.a.switch >= 0 ? c.a.switch : c.b.switch;
          else if (s.direction === "one-way") f.from = endName(ix.t, c.a) === ends[0] ? "a" : "b";
        }
      }
      const sw = f.sw >= 0 ? f.sw : f.leaf >= 0 ? f.leaf : f.cable >= 0 ? ix.t.cables[f.cable].a.switch : -1;
      const plane = sw >= 0 ? ix.t.switches[sw].plane : -1;
      f.plane = plane >= 0 ? plane : s.rail >= 0 ? s.rail : -1;
      st.found.push(f);
    }
  }

  const onPlane = (f, p) => p < 0 || f.plane < 0 || f.plane === p;

  function pickPlane() {
    const planes = st.ix.planes;
    if (st.picked && planes.includes(st.plane)) return;
    const first = st.found.find((f) => planes.includes(f.plane));
    st.plane = first ? first.plane : planes[0];
  }

  function renderPlanes() {
    const sel = $("fabric-plane");
    const labels = st.ix.planes.map((p) => {
      const n = st.found.filter((f) => onPlane(f, p)).length;
      return `${planeName(p)}${n ? ` · ${n} suspect${n > 1 ? "s" : ""}` : ""}`;
    });
    if ([...sel.options].map((o) => o.textContent).join("\n") !== labels.join("\n")) {
      sel.replaceChildren(...st.ix.planes.map((p, k) => {
        const o = el("option", "", labels[k]);
        o.value = String(p);
        return o;
      }));
    }
    sel.value = String(st.plane);
  }

  function draw() {
    const width = $("fabric-wrap").clientWidth;
    const key = `${st.plane}|${width}`;
    if (st.drawn && key === st.key) return;
    st.key = key;
    st.marked = [];
    const t0 = performance.now();
    st.drawn = drawPlane($("fabric-svg"), st.ix, layout(st.ix, st.plane, width));
    st.drawMs = performance.now() - t0;
  }

  // mark colours the cables and leaf bars bad tests crossed by their
  // share, the suspects' switches and leaf bars, draws the suspect and
  // selected cables over the rest (a one-way link from its hurt end, with
  // an arrow), and undoes the previous marks first.
  function mark() {
    const d = st.drawn;
    for (const e of st.marked) e.classList.remove("suspect", "sus-failed", "sus-perf", "selected");
    st.marked = [];
    // The shares change with the loads or the drawing only, not with a
    // click: redrawn at 512 leaves they would cost every click 50 ms.
    const idx = loadIndex();
    if (st.loadsOn !== d || st.loadsOf !== idx) {
      clearLoads(st.loadBars);
      st.loadBars = drawLoads(d, idx);
      st.loadsOn = d;
      st.loadsOf = idx;
    }
    d.marks.replaceChildren();
    st.hover = null;
    const sev = (e, f) => {
      if (f.cls === "sus-perf" && e.classList.contains("sus-failed")) return;
      e.classList.remove("sus-perf");
      e.classList.add("suspect", f.cls);
    };
    const box = (e, f) => {
      if (!e) return;
      st.marked.push(e);
      if (f) sev(e, f);
      else e.classList.add("selected");
    };
    const paths = new Map(); // cable -> its own path
    for (const f of st.found) {
      if (f.s.kind === "switch") box(d.switches.get(f.sw), f);
      else if (f.s.kind === "cable") box(d.hosts.get(f.leaf), f);
      else if (d.index.has(f.cable)) {
        if (!paths.has(f.cable)) paths.set(f.cable, cablePath(st.ix, d, f.cable, "", f.from));
        const p = paths.get(f.cable);
        sev(p, f);
        if (f.from) {
          p.setAttribute("d", pathD(d.geo, d.index.get(f.cable), f.from));
          p.setAttribute("marker-mid", `url(#fabric-arrow-${f.cls === "sus-failed" ? "failed" : "perf"})`);
          p.classList.add("one-way");
        }
      }
    }
    const t = st.selected;
    if (t && t.kind === "cable") {
      if (d.index.has(t.i)) (paths.get(t.i) || cablePath(st.ix, d, t.i, "")).classList.add("selected");
    } else if (t) {
      box((t.kind === "switch" ? d.switches : d.hosts).get(t.i));
    }
    st.own = paths; // cables drawn on their own: no hover path over them
  }

  // at lists the suspects an element stands for.
  const at = (t) => st.found.filter((f) => (t.kind === "cable" && f.s.kind === "link" && f.cable === t.i) ||
    (t.kind === "switch" && f.sw === t.i) || (t.kind === "hosts" && f.leaf === t.i));

  function render() {
    const ready = st.status === "ready";
    $("tab-fabric").hidden = !ready;
    if ($("view-fabric").hidden) return;
    $("fabric-panels").hidden = !ready;
    const sum = $("fabric-summary");
    if (!ready) {
      sum.textContent = st.status === "none" ? `No fabric to show: ${st.why}.` :
        st.status === "error" ? `Could not load the topology: ${st.why}` : "Loading the topology…";
      return;
    }
    loads.update(st.grid);
    pickPlane();
    renderPlanes();
    draw();
    const t0 = performance.now();
    mark();
    st.markMs = performance.now() - t0;
    const found = st.found.filter((f) => onPlane(f, st.plane));
    sum.textContent = summary(found.length);
    renderFabricSuspects(st.grid, st.found, (f) => focusFound(f));
    renderDetail(st.ix, st.selected, st.selected ? at(st.selected) : [], st.selected ? loadLines(st.ix, loadIndex(), st.selected, loadIndex().known) : []);
    cells.show(st.grid, st.selected && st.selected.kind === "cable" ? st.selected.i : null);
  }

  function summary(here) {
    const { t } = st.ix;
    const sw = st.drawn.switches.size;
    const tiers = [1, 2, 3].map((tr) => [...st.drawn.switches.keys()].filter((i) => t.switches[i].tier === tr).length);
    const parts = [`${tiers[0]} leaves`, `${tiers[1]} spines`, tiers[2] ? `${tiers[2]} cores` : "", sw > tiers[0] + tiers[1] + tiers[2] ? `${sw} switches in all` : "",
      `${st.drawn.geo.n} cables between switches`, `${[...st.drawn.hosts.keys()].reduce((a, i) => a + st.ix.hosts[i], 0)} HCAs`];
    const sus = !st.grid ? "no matrix for the selected sweep yet: suspects show once it has one" :
      `${here} link/cable/switch suspect${here === 1 ? "" : "s"} here, ${st.found.length} in the fabric`;
    return `${planeName(st.plane)}: ${parts.filter(Boolean).join(", ")} · ${sus}${st.grid ? loadSummary() : ""}`;
  }

  // loadSummary says how many of the plane's cables between switches bad
  // tests crossed and the worst share, or why the shares are missing.
  function loadSummary() {
    const { error } = loads.get();
    if (error) return ` · no share of bad tests per cable: ${error}`;
    let n = 0;
    let worst = 0;
    for (const [k, e] of loadIndex().cables) {
      if (!st.drawn.index.has(k)) continue;
      n++;
      worst = Math.max(worst, e.share);
    }
    return n ? ` · bad tests crossed ${n} of them, the worst ${fmtShare(worst)} bad` : "";
  }

  // renderLoadLegend lists the share colours, from BANDS.
  function renderLoadLegend() {
    const swatch = (cls, text) => {
      const s = el("span", "swatch");
      s.append(el("i", cls), text);
      return s;
    };
    $("fabric-load-legend").replaceChildren(el("span", "", "share of bad tests through a cable, its worse way:"),
      swatch("sw-neutral", "none"), ...BANDS.map((b, i) => swatch(`load-${i + 1}`, b.label)));
  }

  function focusFound(f) {
    if (st.ix.planes.includes(f.plane)) {
      st.plane = f.plane;
      st.picked = true;
    }
    st.selected = f.s.kind === "switch" ? { kind: "switch", i: f.sw } : f.s.kind === "cable" ? { kind: "hosts", i: f.leaf } : { kind: "cable", i: f.cable };
    render();
  }

  // ---- pointer -------------------------------------------------------------------

  const svg = $("fabric-svg");
  // target is what the pointer is on: a switch, a leaf's bar, a cable
  // drawn on its own, or the nearest of the rest within 4 px.
  const target = (ev) => {
    const e = ev.target.closest && ev.target.closest("[data-c],[data-sw],[data-hosts]");
    if (e) {
      const d = e.dataset;
      return d.c !== undefined ? { kind: "cable", i: Number(d.c) } : d.sw !== undefined ? { kind: "switch", i: Number(d.sw) } : { kind: "hosts", i: Number(d.hosts) };
    }
    const m = st.drawn && svg.getScreenCTM();
    if (!m) return null;
    const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
    const k = hitCable(st.drawn, p.x, p.y, 4);
    return k >= 0 ? { kind: "cable", i: k } : null;
  };
  let hovered = "";
  function hover(t) {
    if (st.hover) st.hover.remove();
    st.hover = t && t.kind === "cable" && !st.own.has(t.i) && !(st.selected && st.selected.kind === "cable" && st.selected.i === t.i) ?
      cablePath(st.ix, st.drawn, t.i, "hover") : null;
  }
  svg.addEventListener("mousemove", (ev) => {
    const t = target(ev);
    const key = t ? `${t.kind}:${t.i}` : "";
    if (key === hovered) return t && place(ev);
    hovered = key;
    hover(t);
    if (!t) return hideTooltip();
    const found = at(t);
    const { title, lines } = describe(st.ix, t, found, loadLines(st.ix, loadIndex(), t, loadIndex().known));
    showText(ev, title, [...lines, found.length ? "click for the fix" : "click to select"]);
  });
  svg.addEventListener("mouseleave", () => {
    hovered = "";
    hover(null);
    hideTooltip();
  });
  svg.addEventListener("click", (ev) => {
    st.selected = target(ev);
    hovered = "";
    render();
  });
  $("fabric-plane").addEventListener("change", (ev) => {
    st.plane = Number(ev.target.value);
    st.picked = true;
    render();
  });
  let resizeTimer = 0;
  new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => st.status === "ready" && render(), 150);
  }).observe($("fabric-wrap"));

  return {
    load,
    show() {
      if (st.status === "none" || st.status === "error") st.status = "unknown"; // ask again: a restarted coordinator may have one now
      if (loads.get().error) loads.retry();
      load();
      render();
    },
    setGrid(g) {
      const key = g ? `${g.sweep}|${JSON.stringify(g.suspects.filter((s) => KINDS.has(s.kind)))}` : "";
      st.grid = g;
      // A running sweep's loads change with its counts, its suspects less often.
      if (st.status === "ready" && !$("view-fabric").hidden) loads.update(g);
      if (key === st.gridKey) return;
      st.gridKey = key;
      resolve();
      render();
    },
    // focus shows a link, cable or switch suspect of the grid; false when
    // the view cannot (no topology, or the suspect is not on it).
    focus(s) {
      const f = st.status === "ready" && st.found.find((x) => x.s === s || JSON.stringify(x.s) === JSON.stringify(s));
      if (!f || (f.cable < 0 && f.sw < 0)) return false;
      focusFound(f);
      return true;
    },
    // For the browser tests (window.rdmamesh.fabric).
    // drawMs: how long the last layout and SVG build took; markMs: the
    // last marking of the shares and suspects over it.
    // cells: the selected cable's tests shown ({key, crossed, listed}), null before any.
    // loads: the sweep whose link shares are held and how many directions.
    info: () => ({ status: st.status, plane: st.plane, suspects: st.found.length, marked: svg.querySelectorAll(".suspect").length, drawn: !!st.drawn,
      drawMs: st.drawMs || 0, markMs: st.markMs || 0, cells: cells.info(),
      loads: { sweep: loads.get().sweep, n: loads.get().list.length, error: loads.get().error } }),
  };
}

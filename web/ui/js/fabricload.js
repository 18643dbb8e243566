// The Fabric view's link shares: the matrix's link_loads (each direction
// of a cable that bad tests crossed, with the share of the tests through
// it that were bad) placed on the topology, a cable coloured by its worse
// direction and a leaf's host bar by its worst host cable. They come with
// the grid (GET .../grid's link_loads), which the view polls anyway.

import { fmtShare } from "./util.js";
import { endName, findEnd, pathD } from "./fabricdraw.js";

// BANDS are the colour steps, lowest first; band(s) is 1 + the index of
// the last one s reaches, 0 for no bad test. Where a few bad tests
// scattered by chance sit (well under 1 %) is told from a link that
// drops a twentieth of its traffic, and from one that is broken.
export const BANDS = [
  { from: 0, label: "< 1%" },
  { from: 0.01, label: "1–5%" },
  { from: 0.05, label: "5–20%" },
  { from: 0.2, label: "≥ 20%" },
];
export function band(share) {
  if (!(share > 0)) return 0;
  let b = 1;
  while (b < BANDS.length && share >= BANDS[b].from) b++;
  return b;
}

// linkLoads holds the loads; onChange() runs when new ones (or none)
// replace those held.
export function linkLoads(onChange) {
  let want = ""; // the grid the loads were taken from: sweep and counts
  let sweep = "";
  let list = [];
  let error = "";

  // update takes grid's loads when its sweep or counts changed (a running
  // sweep's change every round, and so may its loads).
  function update(grid) {
    const key = grid && !grid.healthy ? `${grid.sweep}|${JSON.stringify(grid.counts)}` : "";
    if (key === want) return;
    want = key;
    if (!key) return set(grid ? grid.sweep : "", [], "");
    set(grid.sweep, grid.link_loads || [], "");
  }

  function set(s, l, err) {
    const same = s === sweep && l === list && err === error;
    sweep = s;
    list = l;
    error = err;
    if (!same) onChange();
  }

  // retry forgets what was asked for, so that update asks again.
  const retry = () => (want = "");

  return { update, retry, get: () => ({ sweep, list, error }) };
}

// indexLoads places loads on topology index ix: {cables: Map cable ->
// {ab, ba, share}, hosts: Map leaf -> {load, cable, share}, where ab and
// ba are a direction's load or null and share the worse one's}. A load
// names its cable by index and by its ends; when the index names other
// ends (the topology changed since the sweep) the ends decide.
export function indexLoads(ix, loads) {
  const { t } = ix;
  const cables = new Map();
  const hosts = new Map();
  for (const l of loads) {
    const p = place(ix, l);
    if (!p) continue;
    const e = cables.get(p.cable) || { ab: null, ba: null, share: 0 };
    e[p.dir] = l;
    e.share = Math.max(e.share, l.share);
    cables.set(p.cable, e);
    const c = t.cables[p.cable];
    const leaf = c.a.switch < 0 ? c.b.switch : c.b.switch < 0 ? c.a.switch : -1;
    if (leaf >= 0 && (!hosts.has(leaf) || hosts.get(leaf).share < l.share)) hosts.set(leaf, { load: l, cable: p.cable, share: l.share });
  }
  return { cables, hosts };
}

// place is the cable of load l on the topology and the way l runs over
// it: {cable, dir: "ab" | "ba"}, or null when the topology lacks it.
function place(ix, l) {
  const { t } = ix;
  const c = t.cables[l.cable];
  if (c) {
    const a = endName(t, c.a);
    const b = endName(t, c.b);
    if (a === l.from && b === l.to) return { cable: l.cable, dir: "ab" };
    if (b === l.from && a === l.to) return { cable: l.cable, dir: "ba" };
  }
  // By a switch port: findEnd finds an HCA's only by scanning every cable.
  const arrives = l.to.includes(":");
  const e = findEnd(ix, arrives ? l.to : l.from);
  if (!e) return null;
  const fromA = arrives ? e.side === "b" : e.side === "a";
  return { cable: e.cable, dir: fromA ? "ab" : "ba" };
}

// drawLoads draws the loaded cables of drawn plane d into d.loads, one
// <path> per band (a subpath a cable, under the suspects' own paths: no
// element per cable, however many carried a bad test), and gives the
// leaves' host bars their band's class. It returns the bars it classed,
// for clearLoads.
export function drawLoads(d, idx) {
  const parts = BANDS.map(() => []);
  const ks = BANDS.map(() => []);
  for (const [k, e] of idx.cables) {
    if (!d.index.has(k)) continue;
    const b = band(e.share) - 1;
    parts[b].push(pathD(d.geo, d.index.get(k)));
    ks[b].push(k);
  }
  const paths = [];
  parts.forEach((p, b) => {
    if (!p.length) return;
    const path = document.createElementNS(d.loads.namespaceURI, "path");
    path.setAttribute("class", `loads load-${b + 1}`);
    path.setAttribute("d", p.join(""));
    path.setAttribute("data-cables", ks[b].join(" ")); // for scripts and the browser tests
    paths.push(path);
  });
  d.loads.replaceChildren(...paths);
  const bars = [];
  for (const [leaf, h] of idx.hosts) {
    const bar = d.hosts.get(leaf);
    if (!bar) continue;
    bar.classList.add(`load-${band(h.share)}`);
    bars.push(bar);
  }
  return bars;
}

export function clearLoads(bars) {
  for (const bar of bars) bar.classList.remove(...BANDS.map((_, b) => `load-${b + 1}`));
}

const tests = (l) => `${l.bad} of ~${Math.round(l.tests)} tests through it were bad (${fmtShare(l.share)})`;

// loadLines says what went through element t ({kind: cable | hosts, i}):
// each loaded direction of a cable, the worse first, or a leaf's worst
// host cable. known: the sweep's bad tests were routed, so an element
// without a load carried none of them.
export function loadLines(ix, idx, t, known) {
  const { t: topo } = ix;
  if (t.kind === "cable") {
    const e = idx.cables.get(t.i);
    if (!e) return known ? ["no routed bad test crossed it"] : [];
    const c = topo.cables[t.i];
    const way = (from, to) => `${endName(topo, from)} → ${endName(topo, to)}`;
    const ways = [];
    if (e.ab) ways.push([e.ab, way(c.a, c.b)]);
    if (e.ba) ways.push([e.ba, way(c.b, c.a)]);
    return ways.sort((x, y) => y[0].share - x[0].share).map(([l, w]) => `${tests(l)}, ${w}`);
  }
  if (t.kind !== "hosts") return [];
  const h = idx.hosts.get(t.i);
  if (!h) return known ? ["no routed bad test crossed its host cables"] : [];
  return [`worst host cable ${h.load.from} → ${h.load.to}: ${tests(h.load)}`];
}

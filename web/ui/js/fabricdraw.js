// One rail plane of the fabric as SVG (the Fabric view): leaves in the
// bottom row, spines above them, cores on top, a 3-tier fabric's pods side
// by side. The cables between switches are one <path> (a subpath each),
// each switch a <rect>, and under each leaf a bar for its host cables with
// their count: HCAs are too many to draw. drawPlane builds it once per
// topology, plane and width; the cables bad tests crossed are redrawn in
// their share's colour, a <path> per colour, a suspect, the hovered and the
// selected cable get a <path> of their own over the rest (cablePath),
// suspect switches a class, and nothing runs per frame.

// The SVG namespace, taken from the page's <svg> by drawPlane: the UI's
// sources name no URL at all (web/ui_test.go checks).
let ns = "";
const BOX_H = 22;
const ROW = 150; // between two tiers' rows
const LEFT = 52; // the tier labels
const RIGHT = 12;
const CHAR = 6.2; // px per character of an 11 px label, roughly

export const tierName = (t) => ({ 1: "leaf", 2: "spine", 3: "core" })[t] || `tier ${t}`;

export function endName(t, e) {
  if (e.switch >= 0) return `${t.switches[e.switch].name}:${e.port}`;
  const h = t.hcas[e.hca];
  return h.device ? `${h.node}/${h.device}` : `${h.node} rail ${h.rail}`;
}

// indexTopology derives what the view looks things up by: switches by
// name, each switch's cables (cables of switch i are cab[start[i]] up to
// cab[start[i+1]]), each switch's host cables, and the rail planes.
export function indexTopology(t) {
  const n = t.switches.length;
  const byName = new Map(t.switches.map((s, i) => [s.name, i]));
  const start = new Int32Array(n + 1);
  const hosts = new Int32Array(n);
  for (const c of t.cables) {
    if (c.a.switch >= 0) start[c.a.switch + 1]++;
    if (c.b.switch >= 0) start[c.b.switch + 1]++;
    if (c.a.switch < 0 && c.b.switch >= 0) hosts[c.b.switch]++;
    if (c.b.switch < 0 && c.a.switch >= 0) hosts[c.a.switch]++;
  }
  for (let i = 0; i < n; i++) start[i + 1] += start[i];
  const fill = start.slice(0, n);
  const cab = new Int32Array(start[n]);
  t.cables.forEach((c, k) => {
    if (c.a.switch >= 0) cab[fill[c.a.switch]++] = k;
    if (c.b.switch >= 0) cab[fill[c.b.switch]++] = k;
  });
  const planes = [...new Set(t.switches.map((s) => s.plane).filter((p) => p >= 0))].sort((a, b) => a - b);
  return { t, byName, start, cab, hosts, planes: planes.length ? planes : [-1] };
}

// findEnd finds the cable of a port named as the topology names it
// ("leaf-r0-05:33", "node-03/mlx5_1"): {cable, side: "a" | "b"} or null.
export function findEnd(ix, name) {
  const { t } = ix;
  const k = name.lastIndexOf(":");
  const sw = k > 0 ? ix.byName.get(name.slice(0, k)) : undefined;
  if (sw !== undefined) {
    const port = Number(name.slice(k + 1));
    for (let j = ix.start[sw]; j < ix.start[sw + 1]; j++) {
      const c = t.cables[ix.cab[j]];
      if (c.a.switch === sw && c.a.port === port) return { cable: ix.cab[j], side: "a" };
      if (c.b.switch === sw && c.b.port === port) return { cable: ix.cab[j], side: "b" };
    }
    return null;
  }
  // An HCA end: rare (a cable suspect names its leaf port too), so scan.
  for (let c = 0; c < t.cables.length; c++) {
    const { a, b } = t.cables[c];
    if (a.switch < 0 && endName(t, a) === name) return { cable: c, side: "a" };
    if (b.switch < 0 && endName(t, b) === name) return { cable: c, side: "b" };
  }
  return null;
}

const inPlane = (s, plane) => plane < 0 || s.plane < 0 || s.plane === plane;
const byName = (t) => (i, j) => t.switches[i].name.localeCompare(t.switches[j].name, undefined, { numeric: true });

// layout places plane's switches in a width px wide drawing.
export function layout(ix, plane, width) {
  const { t } = ix;
  const shown = [];
  t.switches.forEach((s, i) => inPlane(s, plane) && shown.push(i));
  shown.sort(byName(t));
  const tiers = [...new Set(shown.map((i) => t.switches[i].tier))].sort((a, b) => b - a); // top row first
  const podded = (i) => t.switches[i].tier < 3;
  const pods = [...new Set(shown.filter(podded).map((i) => t.switches[i].pod))].sort((a, b) => a - b);
  const split = pods.length > 1;
  const W = Math.max(width, 320);
  const inner = W - LEFT - RIGHT;
  const top = split ? 40 : 16;
  // A pod's share of the width follows its widest row.
  const weight = pods.map((p) => Math.max(1, ...tiers.map((tr) => shown.filter((i) => podded(i) && t.switches[i].pod === p && t.switches[i].tier === tr).length)));
  const gap = split ? Math.min(18, inner / pods.length / 8) : 0;
  const per = (inner - gap * (pods.length - 1)) / weight.reduce((a, b) => a + b, 0);
  const segs = [];
  let x0 = LEFT;
  pods.forEach((p, k) => {
    segs.push({ pod: p, x0, w: weight[k] * per });
    x0 += weight[k] * per + gap;
  });
  const n = t.switches.length;
  const L = { W, plane, shown, split, segs, x: new Float32Array(n).fill(NaN), y: new Float32Array(n), w: new Float32Array(n), rows: [] };
  tiers.forEach((tier, r) => {
    const y = top + r * ROW;
    const inRow = shown.filter((i) => t.switches[i].tier === tier);
    const groups = split && tier < 3 ? segs.map((s) => ({ ...s, sw: inRow.filter((i) => t.switches[i].pod === s.pod) }))
      : [{ x0: LEFT, w: inner, sw: inRow }];
    const slot = Math.min(...groups.filter((g) => g.sw.length).map((g) => g.w / g.sw.length));
    const bw = Math.max(1.5, Math.min(120, slot * 0.8));
    for (const g of groups) {
      g.sw.forEach((i, k) => {
        L.x[i] = g.x0 + (k + 0.5) * (g.w / g.sw.length) - bw / 2;
        L.y[i] = y;
        L.w[i] = bw;
      });
    }
    L.rows.push({ tier, y, bw });
  });
  L.H = top + (tiers.length - 1) * ROW + BOX_H + (tiers.includes(1) ? 40 : 12);
  L.cables = cableEnds(ix, L);
  return L;
}

// cableEnds places each switch-to-switch cable of the plane: from the top
// edge of its lower switch to the bottom edge of its upper one (top to top
// within a row), each switch's cables spread over its edge in port order.
// Cable d of the answer is topology cable k[d]; its end A is at
// (xy[4d], xy[4d+1]), its end B at (xy[4d+2], xy[4d+3]).
function cableEnds(ix, L) {
  const { t } = ix;
  const up = new Map(); // switch -> port * 2^22 + 2d + side of each end on its top edge
  const down = new Map(); // likewise, bottom edge
  const add = (m, sw, v) => (m.has(sw) ? m.get(sw).push(v) : m.set(sw, [v]));
  const ks = [];
  const flats = [];
  for (let k = 0; k < t.cables.length; k++) {
    const { a, b } = t.cables[k];
    if (a.switch < 0 || b.switch < 0 || Number.isNaN(L.x[a.switch]) || Number.isNaN(L.x[b.switch])) continue;
    const ta = t.switches[a.switch].tier;
    const tb = t.switches[b.switch].tier;
    const d = ks.length;
    add(ta <= tb ? up : down, a.switch, a.port * 4194304 + 2 * d);
    add(tb <= ta ? up : down, b.switch, b.port * 4194304 + 2 * d + 1);
    ks.push(k);
    flats.push(ta === tb ? 1 : 0);
  }
  const xy = new Float32Array(4 * ks.length);
  const place = (m, dy) => {
    for (const [sw, list] of m) {
      const sorted = Float64Array.from(list).sort();
      const n = sorted.length;
      for (let j = 0; j < n; j++) {
        const end = sorted[j] % 4194304; // 2d + side
        xy[2 * end] = L.x[sw] + (L.w[sw] * (j + 0.5)) / n;
        xy[2 * end + 1] = L.y[sw] + dy;
      }
    }
  };
  place(up, 0);
  place(down, BOX_H);
  return { n: ks.length, k: Int32Array.from(ks), flat: Uint8Array.from(flats), xy };
}

const r1 = (v) => Math.round(v * 10) / 10;

// pathD is the path of placed cable d (of cableEnds' answer g) from one end
// to the other through a middle vertex, where a one-way suspect's arrow
// sits (marker-mid); from "b" runs it from end B. Cables within a row bow up.
export function pathD(g, d, from) {
  const o = 4 * d;
  const [px, py, qx, qy] = from === "b" ? [g.xy[o + 2], g.xy[o + 3], g.xy[o], g.xy[o + 1]] : [g.xy[o], g.xy[o + 1], g.xy[o + 2], g.xy[o + 3]];
  const my = g.flat[d] ? Math.min(py, qy) - 30 : (py + qy) / 2;
  return `M${r1(px)} ${r1(py)}L${r1((px + qx) / 2)} ${r1(my)}L${r1(qx)} ${r1(qy)}`;
}

function node(tag, attrs, text) {
  const e = document.createElementNS(ns, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

// label is what fits in w px of a switch's name: all of it, its last part
// ("03" of "leaf-r0-03") or nothing.
function label(name, w) {
  if (w >= name.length * CHAR + 6) return name;
  const tail = name.slice(name.lastIndexOf("-") + 1);
  return w >= tail.length * CHAR + 4 ? tail : "";
}

// drawPlane replaces svg's content with layout L and returns what the
// view marks and hit-tests: {switches: Map switch -> rect, hosts: Map leaf
// -> bar, geo: L.cables, index: Map cable -> its place d in geo, loads: the
// group the link shares' paths go in (js/fabricload.js), over the cables,
// marks: the group cablePath's paths go in, over those}. Every cable is one
// subpath of a single <path>: 16,384 elements would cost a second to build
// and style.
export function drawPlane(svg, ix, L) {
  const { t } = ix;
  ns = svg.namespaceURI;
  svg.setAttribute("viewBox", `0 0 ${L.W} ${L.H}`);
  svg.setAttribute("width", L.W);
  svg.setAttribute("height", L.H);
  svg.classList.toggle("dense", L.cables.n > 1500);
  const defs = node("defs");
  for (const v of ["failed", "perf"]) {
    const m = node("marker", { id: `fabric-arrow-${v}`, class: `arrow-${v}`, viewBox: "0 0 10 10", refX: 5, refY: 5,
      markerWidth: 3.5, markerHeight: 3.5, orient: "auto" });
    m.append(node("path", { d: "M0 0L10 5L0 10z" }));
    defs.append(m);
  }
  const back = node("g", { class: "backdrop" });
  if (L.split) {
    const spineY = Math.min(...L.rows.filter((r) => r.tier < 3).map((r) => r.y));
    for (const s of L.segs) {
      back.append(node("rect", { class: "pod", x: r1(s.x0 - 3), y: spineY - 22, width: r1(s.w + 6), height: L.H - spineY + 20, rx: 4 }));
      back.append(node("text", { class: "pod-label", x: r1(s.x0 + s.w / 2), y: spineY - 8 }, `pod ${s.pod}`));
    }
  }
  for (const r of L.rows) back.append(node("text", { class: "tier-label", x: 4, y: r.y + BOX_H / 2 + 4 }, tierName(r.tier)));
  const g = L.cables;
  const out = { switches: new Map(), hosts: new Map(), geo: g, index: new Map(), loads: node("g", { class: "load-bands" }), marks: node("g", { class: "marks" }) };
  const d = new Array(g.n);
  for (let i = 0; i < g.n; i++) {
    d[i] = pathD(g, i);
    out.index.set(g.k[i], i);
  }
  const all = node("path", { class: "cables", d: d.join("") });
  const boxes = node("g", { class: "switches" });
  for (const i of L.shown) {
    const s = t.switches[i];
    const x = L.x[i];
    const w = L.w[i];
    const rect = node("rect", { class: `sw tier-${s.tier}`, x: r1(x), y: L.y[i], width: r1(w), height: BOX_H, rx: w > 6 ? 3 : 0, "data-sw": i, "data-name": s.name });
    out.switches.set(i, rect);
    boxes.append(rect);
    const text = label(s.name, w);
    if (text) boxes.append(node("text", { class: "sw-label", x: r1(x + w / 2), y: L.y[i] + BOX_H / 2 + 4 }, text));
    if (s.tier !== 1 && !ix.hosts[i]) continue;
    const bar = node("rect", { class: "hosts", x: r1(x), y: L.y[i] + BOX_H + 4, width: r1(w), height: 7, "data-hosts": i });
    out.hosts.set(i, bar);
    boxes.append(bar);
    const count = ix.hosts[i];
    const num = w >= 50 ? `${count} HCAs` : w >= 14 ? String(count) : "";
    if (num) boxes.append(node("text", { class: "host-count", x: r1(x + w / 2), y: L.y[i] + BOX_H + 24 }, num));
  }
  svg.replaceChildren(defs, back, all, out.loads, out.marks, boxes);
  return out;
}

// cablePath draws cable k of a drawn plane on its own, over the others (a
// suspect, the hovered or the selected cable), from end "a" or "b".
export function cablePath(ix, drawn, k, cls, from) {
  const c = ix.t.cables[k];
  const p = node("path", { class: `cable ${cls}`, d: pathD(drawn.geo, drawn.index.get(k), from), "data-c": k,
    "data-ends": `${endName(ix.t, c.a)} ${endName(ix.t, c.b)}` });
  drawn.marks.append(p);
  return p;
}

// hitCable is the drawn cable nearest to svg point (x, y) within tol, or -1.
export function hitCable(drawn, x, y, tol) {
  const g = drawn.geo;
  let best = -1;
  let bestD = tol * tol;
  const seg = (ax, ay, bx, by) => {
    const dx = bx - ax;
    const dy = by - ay;
    const len = dx * dx + dy * dy;
    const u = len ? Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / len)) : 0;
    const ex = ax + u * dx - x;
    const ey = ay + u * dy - y;
    return ex * ex + ey * ey;
  };
  for (let i = 0; i < g.n; i++) {
    const o = 4 * i;
    const [ax, ay, bx, by] = [g.xy[o], g.xy[o + 1], g.xy[o + 2], g.xy[o + 3]];
    if ((x < ax - tol && x < bx - tol) || (x > ax + tol && x > bx + tol)) continue;
    let d2;
    if (g.flat[i]) {
      const mx = (ax + bx) / 2;
      const my = Math.min(ay, by) - 30;
      d2 = Math.min(seg(ax, ay, mx, my), seg(mx, my, bx, by));
    } else {
      if ((y < ay - tol && y < by - tol) || (y > ay + tol && y > by + tol)) continue;
      d2 = seg(ax, ay, bx, by);
    }
    if (d2 < bestD) {
      bestD = d2;
      best = g.k[i];
    }
  }
  return best;
}

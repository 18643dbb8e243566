// The pairs view's margins, from the matrix outward on each axis: bars of
// each row's and column's share of bad pairs, the switch groups as shaded
// spans with their names, then node names. Each label is drawn once per
// frame, bold when hovered, so a hover never draws a name over itself.

import { MIN_LINE_PX } from "./pairs.js";

export const FONT = (px, bold) => `${bold ? "bold " : ""}${px}px system-ui, sans-serif`;
export const BAR = 16; // the marginal bars' length at 100% bad
export const GAP = 3;
const TEXT = "#1b1b1b";
const FAULT_TEXT = "#b34700"; // the page's --bad: a fault line's name
export const NAMES_AT = 9; // px per node from which every visible node is named
const LINE_H = 12; // px a label needs along its axis

export const css = (c) => `rgb(${c & 255},${(c >> 8) & 255},${(c >> 16) & 255})`;
export const groupName = (g) => g.name || "(no group)";

// margins measures what the axes need beside the matrix: node names (a
// sample of them) and, when nodes have switch groups, the group names.
export function margins(ctx, grid) {
  ctx.font = FONT(11, true);
  let nw = 0;
  const nodes = grid.nodes;
  const step = Math.max(1, Math.floor(nodes.length / 64));
  for (let k = 0; k < nodes.length; k += step) nw = Math.max(nw, ctx.measureText(nodes[k].name).width);
  let gw = 0;
  if (grid.group_label && grid.groups.length) {
    for (const g of grid.groups) gw = Math.max(gw, ctx.measureText(groupName(g)).width);
    gw = Math.min(110, Math.ceil(gw) + 10);
  }
  nw = Math.min(140, Math.ceil(nw) + 6);
  return { nw, gw, size: nw + gw + BAR + 3 * GAP };
}

// An axis of the pairs view in one frame: `across` is the column axis
// (labels above the matrix, rotated), otherwise the row axis on the left.
function axis(L, P, across) {
  const s = across ? P.sx : P.sy;
  const o = across ? P.ox : P.oy;
  const origin = across ? P.x : P.y;
  const edge = across ? L.top : L.left; // where the matrix starts
  return { across, s, o, origin, edge, at: (k) => origin + (k - o) * s, vis: across ? P.visW : P.visH };
}

// drawMargins draws both axes. f: {grid, stats, lut, hover: {i, j}|null,
// focus: {r0, r1, c0, c1}|null}.
export function drawMargins(ctx, L, P, f) {
  for (const across of [false, true]) {
    const A = axis(L, P, across);
    const st = f.stats;
    bars(ctx, A, f, across ? st.colBad : st.rowBad, across ? st.colTested : st.rowTested,
      across ? st.colBy : st.rowBy, new Set(across ? st.cols : st.rows));
    const hovered = f.hover ? (across ? f.hover.j : f.hover.i) : -1;
    if (L.gw) groupTier(ctx, L, A, f.grid.groups, f.grid.nodes, hovered);
    names(ctx, L, A, f, hovered);
  }
  ctx.textAlign = "start";
}

// place runs fn(ctx) with text drawn along the axis at position p (the
// centre of a row or column) and distance d out from the matrix edge.
function place(ctx, A, p, d, fn) {
  ctx.save();
  if (A.across) {
    ctx.translate(p, A.edge - d);
    ctx.rotate(-Math.PI / 2);
  } else {
    ctx.translate(A.edge - d, p);
  }
  fn(ctx);
  ctx.restore();
}

// bars: each row's (column's) share of bad pairs as a bar out from the
// matrix, one segment per kind of bad in its colour, the worst kind nearest
// the matrix; fault lines at least MIN_LINE_PX thick.
function bars(ctx, A, f, bad, tested, by, lines) {
  const base = A.edge - GAP; // bars grow outward from here
  ctx.fillStyle = "#f1f1ee";
  if (A.across) ctx.fillRect(A.origin, base - BAR, A.vis, BAR);
  else ctx.fillRect(base - BAR, A.origin, BAR, A.vis);
  const k0 = Math.max(0, Math.floor(A.o));
  const k1 = Math.min(bad.length, Math.ceil(A.o + A.vis / A.s));
  const draw = (k) => {
    const thick = Math.max(lines.has(k) ? MIN_LINE_PX : 1, A.s);
    const c = A.at(k) + A.s / 2 - thick / 2;
    let out = 0;
    for (const code of f.stats.badCodes) {
      const len = (BAR * by[code][k]) / tested[k];
      if (!len) continue;
      ctx.fillStyle = css(f.lut[code]);
      if (A.across) ctx.fillRect(c, base - out - len, thick, len);
      else ctx.fillRect(base - out - len, c, len, thick);
      out += len;
    }
  };
  // Faint ones first: where several share a pixel, the worst is on top.
  for (let k = k0; k < k1; k++) if (bad[k] && !lines.has(k)) draw(k);
  for (const k of lines) if (k >= k0 && k < k1) draw(k);
}

// groupTier shades each switch group's span and names the groups that have
// room, every g-th one when they are thinner than a label, and always the
// hovered node's group.
function groupTier(ctx, L, A, groups, nodes, hovered) {
  const d0 = BAR + 2 * GAP; // from the matrix edge to the tier
  const lo = A.origin;
  const hi = A.origin + A.vis;
  const hg = hovered >= 0 ? groups.findIndex((g) => hovered >= g.start && hovered < g.start + g.count) : -1;
  groups.forEach((g, k) => {
    const a = Math.max(lo, A.at(g.start));
    const b = Math.min(hi, A.at(g.start + g.count));
    if (b <= a) return;
    ctx.fillStyle = k === hg ? "#c9dced" : k % 2 ? "#e6e6e1" : "#f5f5f1";
    if (A.across) ctx.fillRect(a, L.top - d0 - L.gw, b - a, L.gw);
    else ctx.fillRect(L.left - d0 - L.gw, a, L.gw, b - a);
  });
  const avg = (nodes.length / Math.max(1, groups.length)) * A.s;
  const every = Math.max(1, Math.ceil(LINE_H / Math.max(avg, 0.01)));
  const hp = hg >= 0 ? A.at(groups[hg].start + groups[hg].count / 2) : -1e9;
  ctx.textBaseline = "middle";
  groups.forEach((g, k) => {
    const p = A.at(g.start + g.count / 2);
    if (p < lo || p > hi) return;
    const named = k === hg || (k % every === 0 && Math.abs(p - hp) >= LINE_H);
    if (!named) return;
    ctx.font = FONT(11, k === hg);
    ctx.fillStyle = TEXT;
    place(ctx, A, p, d0 + L.gw / 2, (c) => {
      c.textAlign = "center";
      c.fillText(groupName(g), 0, 0, L.gw - 4);
    });
  });
}

// names: every visible node once there is room; otherwise the hovered
// node, the focused one and the fault lines', in that order, skipping
// those that would overlap one already placed.
function names(ctx, L, A, f, hovered) {
  if (!L.nw) return; // no room kept: nothing to name at this zoom
  const d = BAR + 3 * GAP + L.gw; // from the matrix edge to the names
  const nodes = f.grid.nodes;
  const fr = f.focus ? (A.across ? [f.focus.c0, f.focus.c1] : [f.focus.r0, f.focus.r1]) : null;
  const focused = (k) => fr && fr[1] - fr[0] === 1 && k === fr[0];
  const lines = new Set(A.across ? f.stats.cols : f.stats.rows);
  ctx.save();
  ctx.beginPath(); // names stay in their margin
  if (A.across) ctx.rect(A.origin - LINE_H, 0, A.vis + 2 * LINE_H, L.top - d + 2);
  else ctx.rect(0, A.origin - LINE_H, L.left - d + 2, A.vis + 2 * LINE_H);
  ctx.clip();
  ctx.textBaseline = "middle";
  const label = (k, px) => {
    const bold = k === hovered || focused(k);
    ctx.font = FONT(px, bold);
    ctx.fillStyle = lines.has(k) ? FAULT_TEXT : TEXT;
    place(ctx, A, A.at(k) + A.s / 2, d, (c) => {
      c.textAlign = A.across ? "left" : "right"; // away from the matrix
      c.fillText(nodes[k].name, 0, 0);
    });
  };
  if (A.s >= NAMES_AT) {
    const k0 = Math.max(0, Math.floor(A.o));
    const k1 = Math.min(nodes.length, Math.ceil(A.o + A.vis / A.s));
    const px = Math.min(12, Math.floor(A.s) - 1);
    for (let k = k0; k < k1; k++) label(k, px);
  } else {
    const want = [hovered, fr && fr[1] - fr[0] === 1 ? fr[0] : -1, ...lines];
    const placed = [];
    const seen = new Set();
    for (const k of want) {
      if (k < 0 || seen.has(k)) continue;
      seen.add(k);
      const p = A.at(k) + A.s / 2;
      if (p < A.origin || p > A.origin + A.vis || placed.some((q) => Math.abs(q - p) < LINE_H)) continue;
      placed.push(p);
      label(k, 11);
    }
  }
  ctx.restore();
}

// Painting one node × node layer into a plot rectangle: the pooled image,
// the rows and columns that carry a fault widened so they stay visible at
// any zoom, cell borders and switch-group lines. The pairs view and each of
// the per-rail small multiples use it.
//
// A plot P is {x, y, w, h, sx, sy, ox, oy}: its screen rectangle, screen
// px per pair across and down, and the first pair shown (fractional).

import { lut, rankTable, V_FAILED } from "./palette.js";

// A row or column at least LINE_SHARE bad is a fault's line (a dead HCA's
// cross, a slow node's row); it is drawn at least MIN_LINE_PX thick, since
// at 1,024 nodes a pair is under a pixel and a 1 px line is missed.
export const MIN_LINE_PX = 4;
export const LINE_SHARE = 0.5;
// Beyond this many lines the fault is a band or a whole rail, already
// plain; widening them all would paint over the healthy cells between.
const MAX_LINES = 64;

const isTested = (status) => (status ? (c) => c !== 0 && c !== 2 : (c) => c > 1);
const isBad = (status) => (status ? (c) => c >= 3 : (c) => c === V_FAILED);

// prep attaches a layer's colour and rank tables, once.
export function prep(layer) {
  if (!layer.lut) {
    layer.lut = lut(layer.header);
    layer.rank = rankTable(layer.header);
    layer.images = new Map();
    layer.strips = new Map();
  }
  return layer;
}

// lineStats counts, per row and per column, the tested and bad pairs, the
// bad ones by code (rowBy[code], worst code first in badCodes), and picks
// the fault lines. One pass over n² bytes, kept on the layer.
export function lineStats(layer) {
  if (layer.stats) return layer.stats;
  prep(layer);
  const n = layer.header.n;
  const body = layer.body;
  const status = layer.header.metric === "status";
  const tested = isTested(status);
  const bad = isBad(status);
  const s = {
    rowBad: new Int32Array(n), rowTested: new Int32Array(n), rowBy: [],
    colBad: new Int32Array(n), colTested: new Int32Array(n), colBy: [],
    badCodes: status ? [5, 4, 3] : [V_FAILED], // failed, low bandwidth, slow
    bad: 0, tested: 0,
  };
  for (const c of s.badCodes) {
    s.rowBy[c] = new Int32Array(n);
    s.colBy[c] = new Int32Array(n);
  }
  for (let i = 0; i < n; i++) {
    const row = i * n;
    for (let j = 0; j < n; j++) {
      const c = body[row + j];
      if (!tested(c)) continue;
      s.rowTested[i]++;
      s.colTested[j]++;
      if (bad(c)) {
        s.rowBad[i]++;
        s.colBad[j]++;
        s.rowBy[c][i]++;
        s.colBy[c][j]++;
      }
    }
  }
  for (let k = 0; k < n; k++) {
    s.bad += s.rowBad[k];
    s.tested += s.rowTested[k];
  }
  const lines = (b, t) => {
    const out = [];
    for (let k = 0; k < n; k++) if (t[k] && b[k] >= LINE_SHARE * t[k]) out.push(k);
    return out.length <= MAX_LINES ? out : [];
  };
  s.rows = lines(s.rowBad, s.rowTested);
  s.cols = lines(s.colBad, s.colTested);
  layer.stats = s;
  return s;
}

// image returns the layer as a canvas pooled by kx pairs across and ky
// down (each pixel the worst pair under it), so a single failed pair never
// vanishes in the overview.
function image(layer, kx, ky) {
  const key = `${kx}x${ky}`;
  let img = layer.images.get(key);
  if (img) return img;
  const n = layer.header.n;
  const mx = Math.ceil(n / kx);
  const my = Math.ceil(n / ky);
  img = document.createElement("canvas");
  img.width = mx;
  img.height = my;
  const ictx = img.getContext("2d");
  const data = ictx.createImageData(mx, my);
  const px = new Uint32Array(data.data.buffer);
  const { body, lut: table, rank } = layer;
  if (kx === 1 && ky === 1) {
    for (let i = 0; i < body.length; i++) px[i] = table[body[i]];
  } else {
    const worst = new Uint8Array(mx * my);
    for (let i = 0; i < n; i++) {
      const row = i * n;
      const prow = Math.floor(i / ky) * mx;
      for (let j = 0; j < n; j++) {
        const code = body[row + j];
        const p = prow + Math.floor(j / kx);
        if (rank[code] > rank[worst[p]]) worst[p] = code;
      }
    }
    for (let p = 0; p < worst.length; p++) px[p] = table[worst[p]];
  }
  ictx.putImageData(data, 0, 0);
  layer.images.set(key, img);
  return img;
}

// strip is row i (across) or column i (down) of the layer, pooled by k
// along its length: what a fault line is widened from, so the widened line
// still shows its own cells.
function strip(layer, across, i, k) {
  const key = `${across ? "r" : "c"}${i}:${k}`;
  let img = layer.strips.get(key);
  if (img) return img;
  const n = layer.header.n;
  const m = Math.ceil(n / k);
  img = document.createElement("canvas");
  img.width = across ? m : 1;
  img.height = across ? 1 : m;
  const ictx = img.getContext("2d");
  const data = ictx.createImageData(img.width, img.height);
  const px = new Uint32Array(data.data.buffer);
  const { body, lut: table, rank } = layer;
  const worst = new Uint8Array(m);
  for (let t = 0; t < n; t++) {
    const code = across ? body[i * n + t] : body[t * n + i];
    const p = Math.floor(t / k);
    if (rank[code] > rank[worst[p]]) worst[p] = code;
  }
  for (let p = 0; p < m; p++) px[p] = table[worst[p]];
  ictx.putImageData(data, 0, 0);
  layer.strips.set(key, img);
  return img;
}

// span maps the visible part of a pooled axis onto the screen: source
// pixels s0..s0+sn of an image pooled by k cover screen dst..dst+len.
function span(origin, o, s, k, vis, size) {
  const s0 = Math.floor(o / k);
  const sn = Math.max(0, Math.min(size - s0, Math.ceil(vis / (k * s)) + 2));
  return { s0, sn, dst: origin + (s0 * k - o) * s, len: sn * k * s };
}

// paintLayer draws layer in plot P and returns the pooling and the visible
// extent. groups (optional) draws switch-group lines where they fit.
export function paintLayer(ctx, layer, P, groups) {
  prep(layer);
  const n = layer.header.n;
  const kx = P.sx >= 1 ? 1 : Math.ceil(1 / P.sx);
  const ky = P.sy >= 1 ? 1 : Math.ceil(1 / P.sy);
  const visW = Math.min(P.w, (n - P.ox) * P.sx);
  const visH = Math.min(P.h, (n - P.oy) * P.sy);
  const img = image(layer, kx, ky);
  const X = span(P.x, P.ox, P.sx, kx, visW, img.width);
  const Y = span(P.y, P.oy, P.sy, ky, visH, img.height);
  ctx.save();
  ctx.beginPath();
  ctx.rect(P.x, P.y, visW, visH);
  ctx.clip();
  ctx.imageSmoothingEnabled = false;
  // Only the visible part: zoomed in on 1,024 nodes the whole image would
  // be tens of thousands of pixels wide.
  ctx.drawImage(img, X.s0, Y.s0, X.sn, Y.sn, X.dst, Y.dst, X.len, Y.len);
  const stats = lineStats(layer);
  // Fault lines thinner than MIN_LINE_PX, widened about their centre.
  if (P.sy < MIN_LINE_PX) {
    for (const i of stats.rows) {
      const y = Math.round(P.y + (i - P.oy + 0.5) * P.sy - MIN_LINE_PX / 2); // whole pixels: crisp edges
      if (y + MIN_LINE_PX < P.y || y > P.y + visH) continue;
      const st = strip(layer, true, i, kx);
      ctx.drawImage(st, X.s0, 0, X.sn, 1, X.dst, y, X.len, MIN_LINE_PX);
    }
  }
  if (P.sx < MIN_LINE_PX) {
    for (const j of stats.cols) {
      const x = Math.round(P.x + (j - P.ox + 0.5) * P.sx - MIN_LINE_PX / 2);
      if (x + MIN_LINE_PX < P.x || x > P.x + visW) continue;
      const st = strip(layer, false, j, ky);
      ctx.drawImage(st, 0, Y.s0, 1, Y.sn, x, Y.dst, MIN_LINE_PX, Y.len);
    }
  }
  const i0 = Math.floor(P.oy);
  const j0 = Math.floor(P.ox);
  const i1 = Math.min(n, Math.ceil(P.oy + visH / P.sy));
  const j1 = Math.min(n, Math.ceil(P.ox + visW / P.sx));
  if (P.sx >= 6 && P.sy >= 6) {
    // Cell borders once cells are big enough to tell apart.
    ctx.strokeStyle = "rgba(255,255,255,0.9)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let j = j0; j <= j1; j++) {
      const x = P.x + (j - P.ox) * P.sx;
      ctx.moveTo(x, P.y);
      ctx.lineTo(x, P.y + visH);
    }
    for (let i = i0; i <= i1; i++) {
      const y = P.y + (i - P.oy) * P.sy;
      ctx.moveTo(P.x, y);
      ctx.lineTo(P.x + visW, y);
    }
    ctx.stroke();
  }
  if (groups) groupLines(ctx, P, groups, visW, visH);
  ctx.restore();
  return { kx, ky, visW, visH, i0, i1, j0, j1, stats };
}

// groupLines separates switch groups once every group is at least
// GROUP_LINE_PX on both axes: closer lines would stripe the map and hide
// the cells between them (the axes' group tier marks groups at any zoom).
const GROUP_LINE_PX = 16;
function groupLines(ctx, P, groups, visW, visH) {
  if (groups.length < 2) return;
  const minCount = Math.min(...groups.map((g) => g.count));
  if (minCount * Math.min(P.sx, P.sy) < GROUP_LINE_PX) return;
  ctx.strokeStyle = "rgba(40,40,40,0.55)";
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const g of groups.slice(1)) {
    const x = Math.round(P.x + (g.start - P.ox) * P.sx) + 0.5;
    const y = Math.round(P.y + (g.start - P.oy) * P.sy) + 0.5;
    if (x > P.x && x < P.x + visW) {
      ctx.moveTo(x, P.y);
      ctx.lineTo(x, P.y + visH);
    }
    if (y > P.y && y < P.y + visH) {
      ctx.moveTo(P.x, y);
      ctx.lineTo(P.x + visW, y);
    }
  }
  ctx.stroke();
}

// badShare is the share of the layer's tested pairs that are bad.
export function badShare(layer) {
  const s = lineStats(layer);
  return s.tested ? s.bad / s.tested : 0;
}

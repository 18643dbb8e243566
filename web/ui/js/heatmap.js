// The heatmap canvas: node × node pairs (zoom, pan, hover, a highlighted
// suspect), one small pairs heatmap per rail, switch group × switch group
// blocks, and node × rail HCA tallies. The canvas fills its panel: the
// width of the panel and the height of the window below it, so cells are
// as wide as the panel allows rather than square.

import { FONT, NAMES_AT, margins, drawMargins, groupName } from "./axes.js";
import { paintLayer, prep, lineStats, MIN_LINE_PX } from "./pairs.js";
import { blockStats, drawGroups, drawHCAs } from "./rollup.js";
import { drawRails, railTarget } from "./multiples.js";

const MAX_CELL_PX = 64;
const BELOW_PX = 40; // kept under the canvas for the hint line

export class Heatmap {
  // cb: onHover(target | null, ev), onClick(target, ev), onPaint()
  // A target is {kind: "pair", i, j, rail?} | {kind: "block", a, b} | {kind: "hca", i, rail}.
  constructor(canvas, wrap, cb) {
    this.canvas = canvas;
    this.wrap = wrap;
    this.ctx = canvas.getContext("2d");
    this.cb = cb;
    this.grid = null;
    this.layer = null;
    this.rails = []; // per rail, the layer the rails view draws (null while loading)
    this.mode = "pairs";
    this.view = null; // {z, ox, oy}: zoom over the fit, top-left pair
    this.hover = null;
    // The highlighted suspect: rows r0..r1 and columns c0..c1 (display
    // positions, end excluded) in the pairs view, focusRail in the rails view.
    this.focus = null;
    this.focusRail = -1;
    this.blocks = null;
    this.pool = "";
    this.bindEvents();
  }

  set(grid, layer) {
    const sameNodes = this.grid && grid && this.grid.nodes.length === grid.nodes.length;
    if (!this.grid || !grid || this.grid.sweep !== grid.sweep) this.rails = []; // another sweep's
    if (layer !== this.layer) this.blocks = null;
    if (layer) prep(layer);
    this.grid = grid;
    this.layer = layer;
    if (!sameNodes) this.view = null; // a different matrix: fit again
    this.draw();
  }

  setRails(layers) {
    this.rails = layers;
    this.draw();
  }

  setMode(mode) {
    this.mode = mode;
    this.hover = null;
    this.draw();
  }

  get n() {
    return this.grid ? this.grid.nodes.length : 0;
  }

  // complete: everything the current view draws has arrived.
  get complete() {
    if (!this.grid || !this.layer) return false;
    if (this.mode !== "rails") return true;
    const m = this.layer.header.metric;
    return this.rails.length === this.grid.rails && this.rails.every((l) => l && l.header.metric === m);
  }

  // ---- geometry -----------------------------------------------------------

  layout() {
    const W = Math.max(320, Math.floor(this.wrap.clientWidth));
    const docTop = this.wrap.getBoundingClientRect().top + window.scrollY;
    const H = Math.max(360, Math.floor(window.innerHeight - docTop - BELOW_PX));
    const L = { W, H, left: 8, top: 8, nw: 0, gw: 0 };
    const ctx = this.ctx;
    if (this.grid && this.n) {
      if (this.mode === "pairs") {
        const m = margins(ctx, this.grid);
        const nw = this.wantNames(W, H, m.size - m.nw) ? m.nw : 0;
        const size = m.size - m.nw + nw;
        Object.assign(L, { left: size, top: size, nw, gw: m.gw });
      } else if (this.mode === "groups") {
        ctx.font = FONT(12, true);
        const w = Math.max(30, ...this.grid.groups.map((g) => ctx.measureText(groupName(g)).width));
        L.left = L.top = Math.min(150, Math.ceil(w) + 12);
      } else if (this.mode === "hcas") {
        const m = margins(ctx, this.grid);
        L.left = Math.max(m.nw, m.gw) + 12;
        L.top = 24;
      }
    }
    L.pw = W - L.left - 8;
    L.ph = H - L.top - 8;
    return L;
  }

  // wantNames: whether the pairs view keeps room for node names, given
  // the margin without them. Names are drawn for fault lines and the
  // highlighted suspect, and for every node once cells are NAMES_AT px;
  // otherwise the room would stay empty.
  wantNames(W, H, base) {
    if (this.focus) return true;
    if (this.layer) {
      const s = lineStats(this.layer);
      if (s.rows.length || s.cols.length) return true;
    }
    const z = this.view ? this.view.z : 1;
    return (z * (Math.max(W, H) - base - 8)) / Math.max(1, this.n) >= NAMES_AT;
  }

  // scales: screen px per pair across and down. The fit (z = 1) fills the
  // plot; zooming keeps its aspect until a cell reaches MAX_CELL_PX.
  scales(L, v) {
    const n = Math.max(1, this.n);
    return { sx: Math.min(MAX_CELL_PX, (v.z * L.pw) / n), sy: Math.min(MAX_CELL_PX, (v.z * L.ph) / n) };
  }

  clampView(L, v) {
    const n = this.n;
    const zmax = Math.max(1, (MAX_CELL_PX * n) / Math.max(1, Math.min(L.pw, L.ph)));
    v.z = Math.min(zmax, Math.max(1, v.z));
    const { sx, sy } = this.scales(L, v);
    v.ox = Math.min(Math.max(0, v.ox), Math.max(0, n - L.pw / sx));
    v.oy = Math.min(Math.max(0, v.oy), Math.max(0, n - L.ph / sy));
    return v;
  }

  fit() {
    this.view = null;
    this.draw();
  }

  zoomBy(f, px, py) {
    const L = this.L;
    if (!L || this.mode !== "pairs" || !this.n || !this.view) return;
    const v = this.view;
    let { sx, sy } = this.scales(L, v);
    if (px === undefined) {
      px = L.left + Math.min(L.pw, this.n * sx) / 2;
      py = L.top + Math.min(L.ph, this.n * sy) / 2;
    }
    const cx = v.ox + (px - L.left) / sx;
    const cy = v.oy + (py - L.top) / sy;
    v.z *= f;
    this.clampView(L, v);
    ({ sx, sy } = this.scales(L, v));
    v.ox = cx - (px - L.left) / sx;
    v.oy = cy - (py - L.top) / sy;
    this.clampView(L, v);
    this.draw();
  }

  // zoomTo centres rows r0..r1 and columns c0..c1 (display positions) in
  // the pairs view, zoomed so the longer of the two spans fills it.
  zoomTo(r0, r1, c0, c1) {
    this.mode = "pairs";
    const L = this.layout();
    const n = this.n;
    const v = { z: n / Math.max(r1 - r0, c1 - c0, 1), ox: 0, oy: 0 };
    this.clampView(L, v);
    const { sx, sy } = this.scales(L, v);
    v.ox = (c0 + c1) / 2 - L.pw / sx / 2;
    v.oy = (r0 + r1) / 2 - L.ph / sy / 2;
    this.view = this.clampView(L, v);
    this.draw();
  }

  // ---- drawing --------------------------------------------------------------

  draw() {
    const L = (this.L = this.layout());
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    c.width = Math.round(L.W * dpr);
    c.height = Math.round(L.H * dpr);
    c.style.width = `${L.W}px`;
    c.style.height = `${L.H}px`;
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, L.W, L.H);
    this.pool = "";
    if (!this.grid || !this.layer || !this.n) {
      ctx.fillStyle = "#5a5a5a";
      ctx.font = FONT(13);
      ctx.fillText(this.grid ? "Loading the heatmap…" : "No matrix for this sweep yet.", 8, 30);
      this.publish(L, null);
      return;
    }
    if (this.mode === "groups") drawGroups(this, L);
    else if (this.mode === "hcas") drawHCAs(this, L);
    else if (this.mode === "rails") drawRails(this, L);
    else this.drawPairs(L);
    this.cb.onPaint && this.cb.onPaint();
  }

  // publish exposes the geometry to scripts and browser tests: the centre
  // of pair (i, j) is at left + (j - ox + 0.5) * sx, top + (i - oy + 0.5) * sy;
  // rows and cols are how many pairs the plot shows down and across.
  publish(L, v) {
    const d = this.canvas.dataset;
    const g = v || { s: 0, sx: 0, sy: 0, ox: 0, oy: 0, rows: 0, cols: 0 };
    Object.assign(d, { mode: this.mode, n: this.n, left: L.left, top: L.top, s: g.s, sx: g.sx, sy: g.sy, ox: g.ox, oy: g.oy, rows: g.rows, cols: g.cols });
    d.focus = this.focus && this.focus.r1 - this.focus.r0 === 1 ? this.focus.r0 : "";
  }

  drawPairs(L) {
    const ctx = this.ctx;
    if (!this.view) this.view = { z: 1, ox: 0, oy: 0 };
    const v = this.clampView(L, this.view);
    const { sx, sy } = this.scales(L, v);
    const P = { x: L.left, y: L.top, w: L.pw, h: L.ph, sx, sy, ox: v.ox, oy: v.oy };
    const r = paintLayer(ctx, this.layer, P, this.grid.groups);
    P.visW = r.visW;
    P.visH = r.visH;
    const X = (j) => P.x + (j - v.ox) * sx;
    const Y = (i) => P.y + (i - v.oy) * sy;
    ctx.save();
    ctx.beginPath();
    ctx.rect(P.x, P.y, P.visW, P.visH);
    ctx.clip();
    const h = this.hover && this.hover.kind === "pair" ? this.hover : null;
    if (h) {
      ctx.fillStyle = "rgba(0,0,0,0.07)";
      ctx.fillRect(P.x, Y(h.i), P.visW, sy);
      ctx.fillRect(X(h.j), P.y, sx, P.visH);
    }
    if (this.focus) this.drawFocus(P, X, Y);
    if (h) {
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 2;
      const w = Math.max(sx, MIN_LINE_PX);
      const hh = Math.max(sy, MIN_LINE_PX);
      ctx.strokeRect(X(h.j) + sx / 2 - w / 2, Y(h.i) + sy / 2 - hh / 2, w, hh);
    }
    ctx.restore();
    drawMargins(ctx, L, P, { grid: this.grid, stats: r.stats, lut: this.layer.lut, hover: h, focus: this.focus });
    this.pool = r.kx > 1 || r.ky > 1 ? `${r.kx}×${r.ky}` : "";
    this.canvas.dataset.pool = this.pool || "1";
    this.publish(L, { s: Math.min(sx, sy), sx, sy, ox: v.ox, oy: v.oy, rows: L.ph / sy, cols: L.pw / sx });
  }

  // drawFocus highlights the focused rows and columns: the rest of the
  // plot is veiled and the two bands outlined, at least MIN_LINE_PX wide.
  drawFocus(P, X, Y) {
    const ctx = this.ctx;
    const f = this.focus;
    const band = (a, b) => (b - a >= MIN_LINE_PX ? [a, b] : [(a + b) / 2 - MIN_LINE_PX / 2, (a + b) / 2 + MIN_LINE_PX / 2]);
    const [ya, yb] = band(Y(f.r0), Y(f.r1));
    const [xa, xb] = band(X(f.c0), X(f.c1));
    const x1 = P.x + P.visW;
    const y1 = P.y + P.visH;
    ctx.fillStyle = "rgba(255,255,255,0.6)";
    for (const [a, b] of [[P.x, xa], [xb, x1]]) {
      for (const [c, d] of [[P.y, ya], [yb, y1]]) if (b > a && d > c) ctx.fillRect(a, c, b - a, d - c);
    }
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 2;
    ctx.strokeRect(P.x - 1, ya - 1, P.visW + 2, yb - ya + 2);
    ctx.strokeRect(xa - 1, P.y - 1, xb - xa + 2, P.visH + 2);
  }

  blockStats() {
    return blockStats(this);
  }

  // ---- hit testing and events ------------------------------------------------

  targetAt(ev) {
    const L = this.L;
    if (!L || !this.layer || !this.n) return null;
    const rect = this.canvas.getBoundingClientRect();
    const cx = ev.clientX - rect.left;
    const cy = ev.clientY - rect.top;
    if (this.mode === "rails") return railTarget(this, cx, cy);
    const x = cx - L.left;
    const y = cy - L.top;
    if (x < 0 || y < 0 || x > L.pw || y > L.ph) return null;
    const d = this.canvas.dataset;
    if (this.mode === "groups") {
      const G = this.grid.groups.length;
      const a = Math.floor(y / Number(d.ch));
      const b = Math.floor(x / Number(d.cw));
      return a < G && b < G ? { kind: "block", a, b } : null;
    }
    if (this.mode === "hcas") {
      const rail = Math.floor(x / Number(d.cw));
      const i = Math.floor(y / (L.ph / this.n));
      return rail < this.grid.rails && i < this.n ? { kind: "hca", i, rail } : null;
    }
    const v = this.view;
    const { sx, sy } = this.scales(L, v);
    const i = Math.floor(v.oy + y / sy);
    const j = Math.floor(v.ox + x / sx);
    if (i >= this.n || j >= this.n || i === j) return null;
    return { kind: "pair", i, j };
  }

  setHover(t) {
    const key = (t) => (t ? `${t.kind}:${t.i}:${t.j}:${t.a}:${t.b}:${t.rail}` : "");
    if (key(t) === key(this.hover)) return false;
    this.hover = t;
    this.draw();
    return true;
  }

  bindEvents() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener("pointerdown", (ev) => {
      if (this.mode !== "pairs" || !this.view) return;
      drag = { x: ev.clientX, y: ev.clientY, ox: this.view.ox, oy: this.view.oy, moved: false };
      c.setPointerCapture(ev.pointerId);
    });
    c.addEventListener("pointermove", (ev) => {
      if (drag) {
        const dx = ev.clientX - drag.x;
        const dy = ev.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          c.classList.add("dragging");
          const { sx, sy } = this.scales(this.L, this.view);
          this.view.ox = drag.ox - dx / sx;
          this.view.oy = drag.oy - dy / sy;
          this.hover = null;
          this.draw();
          this.cb.onHover(null, ev);
          return;
        }
      }
      const t = this.targetAt(ev);
      this.setHover(t);
      this.cb.onHover(t, ev);
    });
    c.addEventListener("pointerup", (ev) => {
      const wasDrag = drag && drag.moved;
      drag = null;
      c.classList.remove("dragging");
      if (wasDrag) return;
      const t = this.targetAt(ev);
      if (t) this.cb.onClick(t, ev);
    });
    c.addEventListener("pointerleave", (ev) => {
      if (drag) return;
      if (this.setHover(null)) this.cb.onHover(null, ev);
    });
    c.addEventListener(
      "wheel",
      (ev) => {
        if (this.mode !== "pairs") return;
        ev.preventDefault();
        const rect = c.getBoundingClientRect();
        this.zoomBy(ev.deltaY < 0 ? 1.25 : 0.8, ev.clientX - rect.left, ev.clientY - rect.top);
      },
      { passive: false },
    );
  }
}

// The heatmap canvas: node × node pairs (zoom, pan, hover), switch group ×
// switch group blocks, and node × rail HCA tallies. The pairs view draws an
// n×n image made from the layer's code bytes through a colour table, so a
// 1,024-node layer is one putImageData and one drawImage, not a million
// fillRects.

import { lut, rankTable } from "./palette.js";
import { blockStats, drawGroups, drawHCAs } from "./rollup.js";

const FONT = (px, bold) => `${bold ? "bold " : ""}${px}px system-ui, sans-serif`;
const MAX_CELL_PX = 48;

export class Heatmap {
  // cb: onHover(target | null, ev), onClick(target, ev), onPaint()
  // A target is {kind: "pair", i, j} | {kind: "block", a, b} | {kind: "hca", i, rail}.
  constructor(canvas, wrap, cb) {
    this.canvas = canvas;
    this.wrap = wrap;
    this.ctx = canvas.getContext("2d");
    this.cb = cb;
    this.grid = null;
    this.layer = null;
    this.mode = "pairs";
    this.view = null; // {s, ox, oy}: px per cell, top-left cell
    this.hover = null;
    this.focus = -1; // a node whose row and column stay outlined
    this.images = new Map(); // pooling factor → canvas, for this layer
    this.blocks = null;
    this.bindEvents();
  }

  set(grid, layer) {
    const sameNodes = this.grid && grid && this.grid.nodes.length === grid.nodes.length;
    if (layer !== this.layer) {
      this.images.clear();
      this.blocks = null;
      this.lut = layer ? lut(layer.header) : null;
      this.rank = layer ? rankTable(layer.header) : null;
    }
    this.grid = grid;
    this.layer = layer;
    if (!sameNodes) this.view = null; // a different matrix: fit again
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

  // ---- geometry -----------------------------------------------------------

  layout() {
    const W = Math.max(320, this.wrap.clientWidth);
    const H = Math.round(Math.min(Math.max(360, W * 0.9), Math.max(360, window.innerHeight * 0.78)));
    const ctx = this.ctx;
    ctx.font = FONT(11, true);
    let label = 40;
    if (this.grid) {
      // Node names are drawn once cells are 9 px, which needs no more than
      // 1/9 of the nodes on screen at fit; otherwise only group names.
      const names = this.grid.nodes;
      const step = Math.max(1, Math.floor(names.length / 64));
      const fitPx = Math.min(W, H) / Math.max(1, names.length);
      if (fitPx >= 9 || this.mode === "hcas") {
        for (let k = 0; k < names.length; k += step) label = Math.max(label, ctx.measureText(names[k].name).width);
      }
      for (const g of this.grid.groups) label = Math.max(label, ctx.measureText(g.name || "(no group)").width);
    }
    label = Math.min(150, Math.ceil(label) + 12);
    return { W, H, left: label, top: this.mode === "hcas" ? 24 : label, pw: W - label - 8, ph: H - (this.mode === "hcas" ? 24 : label) - 8 };
  }

  fitView(L) {
    const s = Math.min(L.pw, L.ph) / Math.max(1, this.n);
    return { s: Math.min(s, MAX_CELL_PX), ox: 0, oy: 0 };
  }

  clampView(L, v) {
    const fit = this.fitView(L).s;
    v.s = Math.min(MAX_CELL_PX, Math.max(fit, v.s));
    const n = this.n;
    v.ox = Math.min(Math.max(0, v.ox), Math.max(0, n - L.pw / v.s));
    v.oy = Math.min(Math.max(0, v.oy), Math.max(0, n - L.ph / v.s));
    return v;
  }

  fit() {
    this.view = null;
    this.draw();
  }

  zoomBy(f, px, py) {
    const L = this.L;
    if (!L || this.mode !== "pairs" || !this.n) return;
    const v = this.view;
    if (px === undefined) {
      px = L.left + Math.min(L.pw, this.n * v.s) / 2;
      py = L.top + Math.min(L.ph, this.n * v.s) / 2;
    }
    const cx = v.ox + (px - L.left) / v.s;
    const cy = v.oy + (py - L.top) / v.s;
    v.s *= f;
    this.clampView(L, v);
    v.ox = cx - (px - L.left) / v.s;
    v.oy = cy - (py - L.top) / v.s;
    this.clampView(L, v);
    this.draw();
  }

  // zoomTo shows rows r0..r1 and columns c0..c1 (display positions).
  zoomTo(r0, r1, c0, c1) {
    this.mode = "pairs";
    const L = this.layout();
    const span = Math.max(r1 - r0, c1 - c0, 1);
    const v = { s: Math.min(L.pw, L.ph) / span, ox: c0, oy: r0 };
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
    if (!this.grid || !this.layer || !this.n) {
      ctx.fillStyle = "#5a5a5a";
      ctx.font = FONT(13);
      ctx.fillText(this.grid ? "Loading the heatmap…" : "No matrix for this sweep yet.", 8, 30);
      this.publish(L, null);
      return;
    }
    if (this.mode === "groups") drawGroups(this, L);
    else if (this.mode === "hcas") drawHCAs(this, L);
    else this.drawPairs(L);
    this.cb.onPaint && this.cb.onPaint();
  }

  // publish exposes the geometry to scripts and browser tests: the centre
  // of pair (i, j) is at left + (j - ox + 0.5) * s, top + (i - oy + 0.5) * s.
  publish(L, v) {
    const d = this.canvas.dataset;
    Object.assign(d, { mode: this.mode, n: this.n, left: L.left, top: L.top, s: v ? v.s : 0, ox: v ? v.ox : 0, oy: v ? v.oy : 0 });
  }

  // image returns the pairs layer as a canvas, pooled by k (each pixel the
  // worst of k×k pairs) when the zoom puts several pairs on one pixel, so a
  // single failed pair never vanishes in the overview.
  image(k) {
    let img = this.images.get(k);
    if (img) return img;
    const n = this.n;
    const m = Math.ceil(n / k);
    img = document.createElement("canvas");
    img.width = m;
    img.height = m;
    const ictx = img.getContext("2d");
    const data = ictx.createImageData(m, m);
    const px = new Uint32Array(data.data.buffer);
    const body = this.layer.body;
    const { lut: table, rank } = this;
    if (k === 1) {
      for (let i = 0; i < body.length; i++) px[i] = table[body[i]];
    } else {
      const worst = new Uint8Array(m * m);
      for (let i = 0; i < n; i++) {
        const row = i * n;
        const prow = Math.floor(i / k) * m;
        for (let j = 0; j < n; j++) {
          const code = body[row + j];
          const p = prow + Math.floor(j / k);
          if (rank[code] > rank[worst[p]]) worst[p] = code;
        }
      }
      for (let p = 0; p < worst.length; p++) px[p] = table[worst[p]];
    }
    ictx.putImageData(data, 0, 0);
    this.images.set(k, img);
    return img;
  }

  drawPairs(L) {
    const ctx = this.ctx;
    const n = this.n;
    if (!this.view) this.view = this.fitView(L);
    const v = this.clampView(L, this.view);
    const k = v.s >= 1 ? 1 : Math.ceil(1 / v.s);
    const img = this.image(k);
    const visW = Math.min(L.pw, n * v.s);
    const visH = Math.min(L.ph, n * v.s);
    ctx.save();
    ctx.beginPath();
    ctx.rect(L.left, L.top, visW, visH);
    ctx.clip();
    ctx.imageSmoothingEnabled = false;
    // Only the visible part of the image: zoomed in on 1,024 nodes the
    // whole image would be tens of thousands of pixels wide.
    const ps = k * v.s; // screen px per image px
    const sx = Math.floor(v.ox / k);
    const sy = Math.floor(v.oy / k);
    const sw = Math.min(img.width - sx, Math.ceil(visW / ps) + 2);
    const sh = Math.min(img.height - sy, Math.ceil(visH / ps) + 2);
    ctx.drawImage(img, sx, sy, sw, sh, L.left + (sx * k - v.ox) * v.s, L.top + (sy * k - v.oy) * v.s, sw * ps, sh * ps);
    const j0 = Math.floor(v.ox);
    const i0 = Math.floor(v.oy);
    const j1 = Math.min(n, Math.ceil(v.ox + visW / v.s));
    const i1 = Math.min(n, Math.ceil(v.oy + visH / v.s));
    const X = (j) => L.left + (j - v.ox) * v.s;
    const Y = (i) => L.top + (i - v.oy) * v.s;
    if (v.s >= 6) {
      // Cell borders once cells are big enough to tell apart.
      ctx.strokeStyle = "rgba(255,255,255,0.9)";
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let j = j0; j <= j1; j++) {
        ctx.moveTo(X(j), L.top);
        ctx.lineTo(X(j), L.top + visH);
      }
      for (let i = i0; i <= i1; i++) {
        ctx.moveTo(L.left, Y(i));
        ctx.lineTo(L.left + visW, Y(i));
      }
      ctx.stroke();
    }
    this.drawGroupLines(L, X, Y, visW, visH);
    const h = this.hover && this.hover.kind === "pair" ? this.hover : null;
    if (h) {
      ctx.fillStyle = "rgba(0,0,0,0.07)";
      ctx.fillRect(L.left, Y(h.i), visW, v.s);
      ctx.fillRect(X(h.j), L.top, v.s, visH);
    }
    if (this.focus >= 0) {
      ctx.strokeStyle = "#0072B2";
      ctx.lineWidth = 2;
      ctx.strokeRect(L.left, Y(this.focus), visW, Math.max(v.s, 2));
      ctx.strokeRect(X(this.focus), L.top, Math.max(v.s, 2), visH);
    }
    if (h) {
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 2;
      const sz = Math.max(v.s, 4);
      ctx.strokeRect(X(h.j) + v.s / 2 - sz / 2, Y(h.i) + v.s / 2 - sz / 2, sz, sz);
    }
    ctx.restore();
    this.drawAxes(L, v, i0, i1, j0, j1, X, Y);
    this.publish(L, v);
    this.canvas.dataset.pool = k;
  }

  drawGroupLines(L, X, Y, visW, visH) {
    const groups = this.grid.groups;
    if (groups.length < 2) return;
    // Lines closer than a few pixels would hide the cells they separate.
    const minSpan = Math.min(...groups.map((g) => g.count)) * this.view.s;
    if (minSpan < 6) return;
    const ctx = this.ctx;
    ctx.strokeStyle = "rgba(40,40,40,0.55)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const g of groups.slice(1)) {
      const x = Math.round(X(g.start)) + 0.5;
      const y = Math.round(Y(g.start)) + 0.5;
      if (x > L.left && x < L.left + visW) {
        ctx.moveTo(x, L.top);
        ctx.lineTo(x, L.top + visH);
      }
      if (y > L.top && y < L.top + visH) {
        ctx.moveTo(L.left, y);
        ctx.lineTo(L.left + visW, y);
      }
    }
    ctx.stroke();
  }

  // drawAxes labels nodes when they fit, else switch groups.
  drawAxes(L, v, i0, i1, j0, j1, X, Y) {
    const ctx = this.ctx;
    const nodes = this.grid.nodes;
    const h = this.hover && this.hover.kind === "pair" ? this.hover : null;
    ctx.fillStyle = "#1b1b1b";
    ctx.textBaseline = "middle";
    const label = (text, x, y, bold, px) => {
      ctx.font = FONT(px, bold);
      ctx.textAlign = "right";
      ctx.fillText(text, L.left - 4, y);
      ctx.save();
      ctx.translate(x, L.top - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "left";
      ctx.fillText(text, 0, 0);
      ctx.restore();
    };
    if (v.s >= 9) {
      const px = Math.min(12, Math.floor(v.s) - 1);
      for (let k = Math.max(i0, j0); k < Math.max(i1, j1); k++) {
        const bold = h && (h.i === k || h.j === k);
        ctx.font = FONT(px, bold);
        if (k >= i0 && k < i1) {
          ctx.textAlign = "right";
          ctx.fillText(nodes[k].name, L.left - 4, Y(k) + v.s / 2);
        }
        if (k >= j0 && k < j1) {
          ctx.save();
          ctx.translate(X(k) + v.s / 2, L.top - 4);
          ctx.rotate(-Math.PI / 2);
          ctx.textAlign = "left";
          ctx.fillText(nodes[k].name, 0, 0);
          ctx.restore();
        }
      }
    } else {
      // Group names, every k-th one when groups are thinner than a line of text.
      const groups = this.grid.groups;
      const avg = (this.n / Math.max(1, groups.length)) * v.s;
      const every = Math.max(1, Math.ceil(14 / Math.max(avg, 0.1)));
      groups.forEach((g, k) => {
        if (k % every !== 0 || g.count * v.s * every < 12) return;
        const mid = g.start + g.count / 2;
        const x = X(mid);
        const y = Y(mid);
        const inX = x > L.left && x < L.left + L.pw;
        const inY = y > L.top && y < L.top + L.ph;
        if (inX || inY) label(g.name || "(no group)", inX ? x : -999, inY ? y : -999, false, 11);
      });
    }
    if (h) {
      // Always name the hovered pair on the axes, whatever the zoom.
      ctx.fillStyle = "#000";
      label(nodes[h.i].name, -999, Y(h.i) + v.s / 2, true, 11);
      label(nodes[h.j].name, X(h.j) + v.s / 2, -999, true, 11);
    }
    ctx.textAlign = "start";
  }

  blockStats() {
    return blockStats(this);
  }

  // ---- hit testing and events ------------------------------------------------

  targetAt(ev) {
    const L = this.L;
    if (!L || !this.layer || !this.n) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left - L.left;
    const y = ev.clientY - rect.top - L.top;
    if (x < 0 || y < 0 || x > L.pw || y > L.ph) return null;
    if (this.mode === "groups") {
      const G = this.grid.groups.length;
      const cs = Math.min(L.pw, L.ph) / G;
      const a = Math.floor(y / cs);
      const b = Math.floor(x / cs);
      return a < G && b < G ? { kind: "block", a, b } : null;
    }
    if (this.mode === "hcas") {
      const cw = Number(this.canvas.dataset.cw);
      const rail = Math.floor(x / cw);
      const i = Math.floor(y / (L.ph / this.n));
      return rail < this.grid.rails && i < this.n ? { kind: "hca", i, rail } : null;
    }
    const v = this.view;
    const i = Math.floor(v.oy + y / v.s);
    const j = Math.floor(v.ox + x / v.s);
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
          this.view.ox = drag.ox - dx / this.view.s;
          this.view.oy = drag.oy - dy / this.view.s;
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

// Each rail on its own: one small pairs heatmap per rail, filling the
// panel. When a rail is bad across the fabric (every node's mlx5_2 down)
// the worst of all rails is one solid block that reads as a total outage;
// side by side, the bad rail is one block among healthy ones.

import { paintLayer, badShare, LINE_SHARE, MIN_LINE_PX } from "./pairs.js";
import { FONT } from "./axes.js";
import { fmtShare } from "./util.js";

const TITLE = 18; // px above each small heatmap for its name
const GAP = 14;

// railPanels lays the rails out in the columns × rows that give each the
// most pixels on its shorter side, filling the plot area.
export function railPanels(L, rails, n) {
  let best = null;
  for (let cols = 1; cols <= rails; cols++) {
    const rows = Math.ceil(rails / cols);
    const w = (L.pw - GAP * (cols - 1)) / cols;
    const h = (L.ph - rows * TITLE - GAP * (rows - 1)) / rows;
    if (w > 0 && h > 0 && (!best || Math.min(w, h) > best.score)) best = { cols, w, h, score: Math.min(w, h) };
  }
  if (!best) return [];
  return Array.from({ length: rails }, (_, r) => {
    const c = r % best.cols;
    const k = Math.floor(r / best.cols);
    const x = L.left + c * (best.w + GAP);
    const y = L.top + TITLE + k * (best.h + TITLE + GAP);
    return { rail: r, x, y, w: best.w, h: best.h, sx: best.w / n, sy: best.h / n, ox: 0, oy: 0 };
  });
}

export function drawRails(hm, L) {
  const ctx = hm.ctx;
  const { grid } = hm;
  const panels = railPanels(L, grid.rails, hm.n);
  const ov = grid.overview || {};
  hm.panels = panels;
  for (const P of panels) {
    const layer = hm.rails[P.rail];
    const share = layer ? badShare(layer) : (ov.rail_bad || [])[P.rail] || 0;
    ctx.textBaseline = "alphabetic";
    ctx.textAlign = "start";
    ctx.font = FONT(12, true);
    ctx.fillStyle = share >= LINE_SHARE ? "#b34700" : "#1b1b1b";
    const name = `rail ${P.rail}`;
    ctx.fillText(name, P.x, P.y - 5);
    ctx.font = FONT(12);
    ctx.fillText(` · ${fmtShare(share)} of pairs bad`, P.x + ctx.measureText(name).width + 4, P.y - 5);
    if (!layer) {
      ctx.fillStyle = "#eeeeea";
      ctx.fillRect(P.x, P.y, P.w, P.h);
      continue;
    }
    const r = paintLayer(ctx, layer, P, grid.groups);
    ctx.strokeStyle = "#888";
    ctx.lineWidth = 1;
    ctx.strokeRect(P.x - 0.5, P.y - 0.5, r.visW + 1, r.visH + 1);
    const h = hm.hover;
    if (h && h.kind === "pair" && h.rail === P.rail) {
      const sz = Math.max(MIN_LINE_PX, Math.min(P.sx, P.sy));
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 2;
      ctx.strokeRect(P.x + (h.j + 0.5) * P.sx - sz / 2, P.y + (h.i + 0.5) * P.sy - sz / 2, sz, sz);
    }
    if (hm.focusRail === P.rail) {
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 3;
      ctx.strokeRect(P.x - 4, P.y - 4, P.w + 8, P.h + 8);
    }
  }
  const s = panels.length ? Math.min(panels[0].sx, panels[0].sy) : 0;
  hm.publish(L, { s, sx: s, sy: s, ox: 0, oy: 0, rows: hm.n, cols: hm.n });
  // Where each rail is, for scripts and the browser tests: rail, x, y, w, h.
  hm.canvas.dataset.panels = JSON.stringify(panels.map((p) => [p.rail, p.x, p.y, p.w, p.h].map(Math.round)));
}

// railTarget is the pair under canvas point (x, y), with its rail.
export function railTarget(hm, x, y) {
  for (const P of hm.panels || []) {
    if (x < P.x || y < P.y || x >= P.x + P.w || y >= P.y + P.h) continue;
    const i = Math.floor((y - P.y) / P.sy);
    const j = Math.floor((x - P.x) / P.sx);
    return i === j || i >= hm.n || j >= hm.n ? null : { kind: "pair", i, j, rail: P.rail };
  }
  return null;
}

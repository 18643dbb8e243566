// The heatmap's rollups: switch group × switch group blocks folded from the
// pairs layer, and node × rail HCA tallies from the grid. Both fill the plot
// and label a cell with its share of bad pairs (fmtShare: 0% is clean) when
// it has room.

import { hcaColor, HCA_STEPS, V_FAILED } from "./palette.js";
import { FONT, css, groupName } from "./axes.js";
import { MIN_LINE_PX } from "./pairs.js";
import { fmtShare } from "./util.js";

// share writes a cell's bad share centred in it, black or white, whichever
// reads on its colour (c: packed RGBA as the layers' colour tables hold).
function share(ctx, text, c, x, y, w, h) {
  if (w < 30 || h < 16) return;
  const lum = 0.2126 * (c & 255) + 0.7152 * ((c >> 8) & 255) + 0.0722 * ((c >> 16) & 255);
  ctx.fillStyle = lum < 128 ? "#fff" : "#000";
  ctx.font = FONT(Math.min(12, Math.floor(h / 2)));
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, x + w / 2, y + h / 2, w - 4);
}

const hexPacked = (h) => parseInt(h.slice(1, 3), 16) | (parseInt(h.slice(3, 5), 16) << 8) | (parseInt(h.slice(5, 7), 16) << 16);

// blockStats folds the layer into switch group × switch group blocks:
// the worst code and, for status, the bad and tested counts.
export function blockStats(hm) {
  if (hm.blocks) return hm.blocks;
  const { groups } = hm.grid;
  const n = hm.n;
  const G = groups.length;
  const of = new Int32Array(n);
  groups.forEach((g, gi) => of.fill(gi, g.start, g.start + g.count));
  const worst = new Uint8Array(G * G);
  const bad = new Int32Array(G * G);
  const tested = new Int32Array(G * G);
  const body = hm.layer.body;
  const rank = hm.layer.rank;
  const status = hm.layer.header.metric === "status";
  for (let i = 0; i < n; i++) {
    const gr = of[i] * G;
    for (let j = 0; j < n; j++) {
      const code = body[i * n + j];
      if (!code) continue;
      const b = gr + of[j];
      if (rank[code] > rank[worst[b]]) worst[b] = code;
      if (status ? code !== 2 : code !== 1) tested[b]++;
      if (status ? code >= 3 : code === V_FAILED) bad[b]++;
    }
  }
  hm.blocks = { G, worst, bad, tested };
  return hm.blocks;
}

export function drawGroups(hm, L) {
  const ctx = hm.ctx;
  const { groups } = hm.grid;
  const { G, worst, bad, tested } = blockStats(hm);
  const cw = L.pw / G;
  const ch = L.ph / G;
  const gap = (s) => (s >= 6 ? 1 : 0);
  const table = hm.layer.lut;
  for (let a = 0; a < G; a++) {
    for (let b = 0; b < G; b++) {
      const k = a * G + b;
      const c = table[worst[k]];
      const x = L.left + b * cw;
      const y = L.top + a * ch;
      ctx.fillStyle = css(c);
      ctx.fillRect(x, y, cw - gap(cw), ch - gap(ch));
      if (tested[k]) share(ctx, fmtShare(bad[k] / tested[k]), c, x, y, cw, ch);
    }
  }
  const h = hm.hover && hm.hover.kind === "block" ? hm.hover : null;
  if (h) {
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 2;
    ctx.strokeRect(L.left + h.b * cw, L.top + h.a * ch, cw, ch);
  }
  // Group names, each drawn once, bold on the hovered block's row and column.
  ctx.fillStyle = "#1b1b1b";
  ctx.textBaseline = "middle";
  const label = (s) => Math.min(12, Math.max(7, Math.floor(s) - 2));
  const every = (s) => Math.max(1, Math.ceil((label(s) + 2) / s));
  for (let g = 0; g < G; g += every(ch)) {
    ctx.font = FONT(label(ch), h && h.a === g);
    ctx.textAlign = "right";
    ctx.fillText(groupName(groups[g]), L.left - 4, L.top + (g + 0.5) * ch);
  }
  for (let g = 0; g < G; g += every(cw)) {
    ctx.font = FONT(label(cw), h && h.b === g);
    ctx.save();
    ctx.translate(L.left + (g + 0.5) * cw, L.top - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "left";
    ctx.fillText(groupName(groups[g]), 0, 0);
    ctx.restore();
  }
  ctx.textAlign = "start";
  hm.publish(L, { s: Math.min(cw, ch), sx: cw, sy: ch, ox: 0, oy: 0, rows: G, cols: G });
  hm.canvas.dataset.cw = cw;
  hm.canvas.dataset.ch = ch;
}

export function drawHCAs(hm, L) {
  const ctx = hm.ctx;
  const { nodes, groups, rails } = hm.grid;
  const n = hm.n;
  const cw = L.pw / Math.max(1, rails);
  const rh = L.ph / n;
  // Pool rows when they are thinner than a pixel: worst share wins.
  const k = rh >= 1 ? 1 : Math.ceil(1 / rh);
  const shareOf = (x, r) => (nodes[x].tested[r] ? nodes[x].bad[r] / nodes[x].tested[r] : -1);
  for (let r = 0; r < rails; r++) {
    const x = L.left + r * cw;
    for (let i = 0; i < n; i += k) {
      let w = i;
      for (let x2 = i + 1; x2 < Math.min(n, i + k); x2++) if (shareOf(x2, r) > shareOf(w, r)) w = x2;
      ctx.fillStyle = hcaColor(nodes[w].bad[r], nodes[w].tested[r]);
      ctx.fillRect(x, L.top + i * rh, cw - 2, Math.max(1, k * rh - (rh >= 6 ? 1 : 0)));
    }
    // An HCA worse than the lightest step stays at least MIN_LINE_PX tall,
    // drawn over its neighbours, the worst last so it stays on top.
    if (rh < MIN_LINE_PX) {
      const bad = [];
      for (let i = 0; i < n; i++) if (shareOf(i, r) > HCA_STEPS[1].upTo) bad.push(i);
      bad.sort((a, b) => shareOf(a, r) - shareOf(b, r));
      for (const i of bad) {
        ctx.fillStyle = hcaColor(nodes[i].bad[r], nodes[i].tested[r]);
        ctx.fillRect(x, Math.round(L.top + (i + 0.5) * rh - MIN_LINE_PX / 2), cw - 2, MIN_LINE_PX);
      }
    } else {
      for (let i = 0; i < n; i++) {
        const t = nodes[i].tested[r];
        if (t) share(ctx, fmtShare(nodes[i].bad[r] / t), hexPacked(hcaColor(nodes[i].bad[r], t)), x, L.top + i * rh, cw - 2, rh);
      }
    }
  }
  ctx.fillStyle = "#1b1b1b";
  ctx.textBaseline = "middle";
  ctx.textAlign = "center";
  ctx.font = FONT(11);
  for (let r = 0; r < rails; r++) ctx.fillText(`rail ${r}`, L.left + (r + 0.5) * cw, L.top - 10);
  ctx.textAlign = "right";
  const h = hm.hover && hm.hover.kind === "hca" ? hm.hover : null;
  if (rh >= 9) {
    for (let i = 0; i < n; i++) {
      ctx.font = FONT(Math.min(12, Math.floor(rh) - 1), h && h.i === i);
      ctx.fillText(nodes[i].name, L.left - 4, L.top + (i + 0.5) * rh);
    }
  } else {
    ctx.font = FONT(11);
    for (const g of groups) {
      if (g.count * rh < 12) continue;
      ctx.fillText(groupName(g), L.left - 4, L.top + (g.start + g.count / 2) * rh);
    }
  }
  if (groups.length > 1) {
    ctx.strokeStyle = "rgba(40,40,40,0.55)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const g of groups.slice(1)) {
      const y = Math.round(L.top + g.start * rh) + 0.5;
      ctx.moveTo(L.left, y);
      ctx.lineTo(L.left + rails * cw, y);
    }
    ctx.stroke();
  }
  if (h) {
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 2;
    ctx.strokeRect(L.left + h.rail * cw, L.top + h.i * rh, cw - 2, Math.max(rh, 3));
  }
  ctx.textAlign = "start";
  hm.publish(L, { s: rh, sx: cw, sy: rh, ox: 0, oy: 0, rows: n, cols: rails });
  hm.canvas.dataset.cw = cw;
}

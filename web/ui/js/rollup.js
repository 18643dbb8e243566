// The heatmap's rollups: switch group × switch group blocks folded from the
// pairs layer, and node × rail HCA tallies from the grid.

import { hcaColor, STATUS, V_FAILED } from "./palette.js";

const FONT = (px, bold) => `${bold ? "bold " : ""}${px}px system-ui, sans-serif`;

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
  const rank = hm.rank;
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
  const cs = Math.min(L.pw, L.ph) / G;
  const table = hm.lut;
  for (let a = 0; a < G; a++) {
    for (let b = 0; b < G; b++) {
      const code = worst[a * G + b];
      const c = table[code];
      ctx.fillStyle = `rgb(${c & 255},${(c >> 8) & 255},${(c >> 16) & 255})`;
      ctx.fillRect(L.left + b * cs, L.top + a * cs, cs - (cs >= 6 ? 1 : 0), cs - (cs >= 6 ? 1 : 0));
      const t = tested[a * G + b];
      if (cs >= 34 && t) {
        const share = bad[a * G + b] / t;
        // Text in black or white, whichever reads on the block's colour.
        const lum = 0.2126 * (c & 255) + 0.7152 * ((c >> 8) & 255) + 0.0722 * ((c >> 16) & 255);
        ctx.fillStyle = lum < 128 ? "#fff" : "#000";
        ctx.font = FONT(Math.min(12, Math.floor(cs / 4)));
        ctx.textAlign = "center";
        ctx.textBaseline = "middle";
        ctx.fillText(share ? `${Math.round(100 * share)}%` : "0", L.left + (b + 0.5) * cs, L.top + (a + 0.5) * cs);
      }
    }
  }
  const h = hm.hover && hm.hover.kind === "block" ? hm.hover : null;
  if (h) {
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 2;
    ctx.strokeRect(L.left + h.b * cs, L.top + h.a * cs, cs, cs);
  }
  ctx.fillStyle = "#1b1b1b";
  ctx.textBaseline = "middle";
  const px = Math.min(12, Math.max(7, Math.floor(cs) - 2));
  const step = Math.max(1, Math.ceil((px + 2) / cs));
  for (let g = 0; g < G; g += step) {
    const name = groups[g].name || "(no group)";
    ctx.font = FONT(px, h && (h.a === g || h.b === g));
    ctx.textAlign = "right";
    ctx.fillText(name, L.left - 4, L.top + (g + 0.5) * cs);
    ctx.save();
    ctx.translate(L.left + (g + 0.5) * cs, L.top - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "left";
    ctx.fillText(name, 0, 0);
    ctx.restore();
  }
  ctx.textAlign = "start";
  hm.publish(L, { s: cs, ox: 0, oy: 0 });
}

export function drawHCAs(hm, L) {
  const ctx = hm.ctx;
  const { nodes, groups, rails } = hm.grid;
  const n = hm.n;
  const cw = Math.min(90, L.pw / Math.max(1, rails));
  const rh = L.ph / n;
  // Pool rows when they are thinner than a pixel: worst share wins.
  const k = rh >= 1 ? 1 : Math.ceil(1 / rh);
  for (let r = 0; r < rails; r++) {
    for (let i = 0; i < n; i += k) {
      let worst = -1;
      let color = STATUS[2].color;
      for (let x = i; x < Math.min(n, i + k); x++) {
        const t = nodes[x].tested[r];
        const share = t ? nodes[x].bad[r] / t : -1;
        if (share > worst) {
          worst = share;
          color = hcaColor(nodes[x].bad[r], t);
        }
      }
      ctx.fillStyle = color;
      ctx.fillRect(L.left + r * cw, L.top + i * rh, cw - 2, Math.max(1, k * rh - (rh >= 6 ? 1 : 0)));
    }
  }
  ctx.fillStyle = "#1b1b1b";
  ctx.textBaseline = "middle";
  ctx.textAlign = "center";
  ctx.font = FONT(11);
  for (let r = 0; r < rails; r++) ctx.fillText(`rail ${r}`, L.left + (r + 0.5) * cw, L.top - 10);
  ctx.textAlign = "right";
  if (rh >= 9) {
    ctx.font = FONT(Math.min(12, Math.floor(rh) - 1));
    for (let i = 0; i < n; i++) ctx.fillText(nodes[i].name, L.left - 4, L.top + (i + 0.5) * rh);
  } else {
    for (const g of groups) {
      if (g.count * rh < 12) continue;
      ctx.fillText(g.name || "(no group)", L.left - 4, L.top + (g.start + g.count / 2) * rh);
    }
  }
  if (groups.length > 1) {
    ctx.strokeStyle = "rgba(40,40,40,0.55)";
    ctx.beginPath();
    for (const g of groups.slice(1)) {
      const y = Math.round(L.top + g.start * rh) + 0.5;
      ctx.moveTo(L.left, y);
      ctx.lineTo(L.left + rails * cw, y);
    }
    ctx.stroke();
  }
  const h = hm.hover && hm.hover.kind === "hca" ? hm.hover : null;
  if (h) {
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 2;
    ctx.strokeRect(L.left + h.rail * cw, L.top + h.i * rh, cw - 2, Math.max(rh, 3));
  }
  ctx.textAlign = "start";
  hm.publish(L, { s: rh, ox: 0, oy: 0 });
  hm.canvas.dataset.cw = cw;
}

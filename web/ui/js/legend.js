// The legend under the toolbar: what each colour means, with units, for the
// layer and rollup on screen.

import { STATUS, HCA_STEPS, viridis, shadeT, rgbCSS } from "./palette.js";
import { el, fmtValue } from "./util.js";
import { MIN_LINE_PX } from "./pairs.js";

function swatch(color, label, count) {
  const s = el("span", "swatch");
  const i = el("i");
  i.style.background = color;
  s.append(i, count === undefined ? label : `${label} (${count.toLocaleString()})`);
  return s;
}

// ramp draws the value palette from the scale's low end to its high end.
function ramp(header) {
  const wrap = el("span", "ramp");
  const c = document.createElement("canvas");
  c.width = 160;
  c.height = 12;
  const ctx = c.getContext("2d");
  for (let x = 0; x < c.width; x++) {
    ctx.fillStyle = rgbCSS(viridis(shadeT(x / (c.width - 1), header.better)));
    ctx.fillRect(x, 0, 1, c.height);
  }
  const { scale, unit } = header;
  const lo = el("span", "", fmtValue(scale.lo, unit));
  const hi = el("span", "", `${fmtValue(scale.hi, unit)}${scale.kind === "log" ? " (log scale)" : ""}`);
  wrap.append(lo, c, hi);
  return wrap;
}

// pool: "kx×ky" when each pixel stands for several pairs, else "".
// rails: in the rails view, every rail's layer once all have arrived; the
// counts are then of every rail's cells.
export function renderLegend(box, layer, mode, pool, grid, rails) {
  const parts = [];
  if (!layer) {
    box.replaceChildren();
    return;
  }
  const h = layer.header;
  let counts = h.counts || [];
  const perRail = mode === "rails" && rails && rails.length > 0;
  if (perRail) {
    counts = [];
    for (const r of rails) (r.header.counts || []).forEach((c, k) => (counts[k] = (counts[k] || 0) + c));
  }
  const cnt = (code) => counts[code] || 0;
  if (mode === "hcas") {
    parts.push(el("span", "legend-note", "Share of each HCA's cells (as initiator or target) that are bad:"));
    for (const s of HCA_STEPS) parts.push(swatch(s.color, s.label));
    parts.push(swatch(STATUS[2].color, "nothing tested"));
  } else if (h.metric === "status") {
    for (let c = 1; c < STATUS.length; c++) parts.push(swatch(STATUS[c].color, STATUS[c].label, cnt(c)));
    parts.push(el("span", "legend-note", perRail ? "(cells of every rail)" : "(node pairs)"));
  } else {
    parts.push(ramp(h));
    parts.push(el("span", "legend-note", h.better === "lower" ? "dark = slower" : "dark = less"));
    parts.push(swatch(STATUS[5].color, "failed (no figure)", cnt(2)));
    parts.push(swatch(STATUS[2].color, "untested / not measured", cnt(1)));
  }
  if (mode === "groups") {
    parts.push(el("span", "legend-note", `each block: the worst pair between two ${grid && grid.group_label ? `“${grid.group_label}”` : "switch"} groups; % = share of its pairs that are bad`));
  }
  if ((mode === "pairs" || mode === "rails") && pool) {
    parts.push(el("span", "legend-note", `zoomed out: each pixel shows the worst of ${pool} pairs; rows and columns at least half bad stay ${MIN_LINE_PX} px wide`));
  }
  if (mode === "pairs" && layer.stats && layer.stats.bad > 0) {
    parts.push(el("span", "legend-note", "bars beside the axes: each row's and column's share of bad pairs"));
  }
  if (mode === "pairs" && h.rail < 0 && grid && grid.rails > 1) {
    parts.push(el("span", "legend-note", "all rails: the worst rail of each pair"));
  }
  box.replaceChildren(...parts);
}

// The pair drill-down: every measurement between two nodes, both
// directions and every rail, with the latency distribution, bandwidth
// against line rate, error cause and fix, and the retest history.

import { RAIL_COLORS } from "./palette.js";
import { $, el, fmtUs, fmtGbps, fmtNum } from "./util.js";

const QUANTILES = [
  { key: "min_ns", label: "min", x: 0 },
  { key: "p50_ns", label: "p50", x: Math.log10(2) },
  { key: "p90_ns", label: "p90", x: 1 },
  { key: "p99_ns", label: "p99", x: 2 },
  { key: "p999_ns", label: "p99.9", x: 3 },
  { key: "max_ns", label: "max", x: 3.6 },
];

// portRate is a node's port speed on a rail, 0 when unknown.
function portRate(node, rail) {
  const p = (node.ports || []).find((p) => p.rail === rail) || (node.ports || [])[rail];
  return (p && p.rate_gbps) || 0;
}

function lineRate(pair, c) {
  const [a, b] = c.src === pair.src.name ? [pair.src, pair.dst] : [pair.dst, pair.src];
  const ra = portRate(a, c.rail);
  const rb = portRate(b, c.dst_rail !== undefined ? c.dst_rail : c.rail);
  return ra && rb ? Math.min(ra, rb) : ra || rb;
}

// latencyChart draws each cell's quantiles on a percentile axis (spaced by
// -log10(1-p), so the tail gets room) against latency on a log axis.
function latencyChart(series) {
  const W = 460;
  const H = 250;
  const m = { l: 62, r: 16, t: 12, b: 34 };
  const c = document.createElement("canvas");
  const dpr = window.devicePixelRatio || 1;
  c.width = W * dpr;
  c.height = H * dpr;
  c.style.width = `${W}px`;
  c.style.height = `${H}px`;
  c.className = "chart";
  c.setAttribute("role", "img");
  const ctx = c.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const vals = series.flatMap((s) => QUANTILES.map((q) => s.lat[q.key]).filter((v) => v > 0));
  if (!vals.length) {
    ctx.fillStyle = "#5a5a5a";
    ctx.font = "13px system-ui, sans-serif";
    ctx.fillText("No latency measured between these nodes.", 12, 30);
    c.setAttribute("aria-label", "no latency measured");
    return c;
  }
  const lo = Math.log10(Math.min(...vals) * 0.9);
  const hi = Math.log10(Math.max(...vals) * 1.1);
  const X = (x) => m.l + (x / 3.6) * (W - m.l - m.r);
  const Y = (ns) => H - m.b - ((Math.log10(ns) - lo) / Math.max(1e-9, hi - lo)) * (H - m.t - m.b);
  ctx.font = "11px system-ui, sans-serif";
  ctx.strokeStyle = "#e4e4e0";
  ctx.fillStyle = "#5a5a5a";
  ctx.textAlign = "center";
  for (const q of QUANTILES) {
    ctx.beginPath();
    ctx.moveTo(X(q.x), m.t);
    ctx.lineTo(X(q.x), H - m.b);
    ctx.stroke();
    ctx.fillText(q.label, X(q.x), H - m.b + 14);
  }
  ctx.fillText("percentile", (m.l + W - m.r) / 2, H - 4);
  ctx.textAlign = "right";
  for (const ns of ticks(10 ** lo, 10 ** hi)) {
    const y = Y(ns);
    ctx.strokeStyle = "#eeeeea";
    ctx.beginPath();
    ctx.moveTo(m.l, y);
    ctx.lineTo(W - m.r, y);
    ctx.stroke();
    ctx.fillText(fmtUs(ns), m.l - 4, y + 3);
  }
  for (const s of series) {
    const pts = QUANTILES.filter((q) => s.lat[q.key] > 0).map((q) => [X(q.x), Y(s.lat[q.key])]);
    ctx.strokeStyle = s.color;
    ctx.fillStyle = s.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dashed ? [6, 4] : []);
    ctx.beginPath();
    pts.forEach(([x, y], k) => (k ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    ctx.stroke();
    ctx.setLineDash([]);
    for (const [x, y] of pts) ctx.fillRect(x - 2.5, y - 2.5, 5, 5);
  }
  c.setAttribute("aria-label", `latency percentiles of ${series.length} measurements`);
  return c;
}

// ticks picks round latencies inside lo..hi for a log axis: 1-2-5 steps
// over wide ranges, finer steps when the range is narrow.
function ticks(lo, hi) {
  for (const steps of [[1, 2, 5], [1, 1.5, 2, 3, 5, 7], [1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 4, 5, 6, 8], Array.from({ length: 90 }, (_, k) => 1 + k / 10)]) {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const f of steps) {
        const v = f * 10 ** e;
        if (v >= lo && v <= hi) out.push(v);
      }
    }
    if (out.length >= 3) return out.length > 9 ? out.filter((_, k) => k % Math.ceil(out.length / 8) === 0) : out;
  }
  return [lo, hi];
}

// bandwidthBars draws each cell's Gb/s against its line rate.
function bandwidthBars(rows) {
  const box = el("div");
  const max = Math.max(1, ...rows.map((r) => Math.max(r.gbps || 0, r.rate || 0)));
  const W = 460;
  const rowH = 18;
  const c = document.createElement("canvas");
  const H = rows.length * rowH + 8;
  const dpr = window.devicePixelRatio || 1;
  c.width = W * dpr;
  c.height = H * dpr;
  c.style.width = `${W}px`;
  c.style.height = `${H}px`;
  c.className = "chart";
  const ctx = c.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const left = 130;
  const X = (g) => left + (g / max) * (W - left - 90);
  ctx.font = "11px system-ui, sans-serif";
  rows.forEach((r, k) => {
    const y = 4 + k * rowH;
    ctx.fillStyle = "#1b1b1b";
    ctx.textAlign = "right";
    ctx.fillText(r.label, left - 6, y + 12);
    if (r.rate) {
      ctx.fillStyle = "#eeeeea";
      ctx.fillRect(left, y + 2, X(r.rate) - left, rowH - 5);
    }
    ctx.fillStyle = r.color;
    if (r.gbps) ctx.fillRect(left, y + 2, X(r.gbps) - left, rowH - 5);
    ctx.fillStyle = "#1b1b1b";
    ctx.textAlign = "left";
    const pct = r.gbps && r.rate ? ` (${Math.round((100 * r.gbps) / r.rate)}%)` : "";
    ctx.fillText(r.gbps ? `${fmtGbps(r.gbps)}${pct}` : r.failed ? "failed" : "not measured", Math.max(X(r.gbps || 0), X(r.rate || 0)) + 6, y + 12);
  });
  box.append(c);
  return box;
}

function cellRow(pair, c, dir) {
  const tr = el("tr");
  const td = (t, cls) => tr.append(el("td", cls || "", t));
  const rate = lineRate(pair, c);
  td(dir);
  td(c.dst_rail !== undefined ? `${c.rail}→${c.dst_rail}` : c.rail, "num");
  td(`${c.src_device || "?"} → ${c.dst_device || "?"}`, "mono");
  const v = el("td");
  v.append(el("span", `verdict v-${c.verdict}`, c.verdict));
  if (c.class && c.class !== "ok") v.append(el("span", "class", ` ${c.class}`));
  tr.append(v);
  td(fmtUs(c.latency && c.latency.p50_ns), "num");
  td(fmtUs(c.latency && c.latency.p99_ns), "num");
  td(fmtGbps(c.bandwidth && c.bandwidth.gbps), "num");
  td(c.bandwidth && rate ? `${fmtNum((100 * c.bandwidth.gbps) / rate)}%` : "–", "num");
  td(c.round || "–", "num");
  td((c.retests || []).length || "", "num");
  td(c.reason || "");
  return tr;
}

function table(head, rows) {
  const t = el("table");
  const tr = el("tr");
  for (const h of head) tr.append(el("th", "", h));
  t.append(el("thead"), el("tbody"));
  t.tHead.append(tr);
  t.tBodies[0].append(...rows);
  return t;
}

function errorBox(c, cells) {
  const e = c.error;
  const box = el("div", "cause");
  const where = [e.verb, e.errno ? `errno ${e.errno}` : "", e.wc_status ? `wc status ${e.wc_status}` : ""].filter(Boolean).join(", ");
  box.append(el("div", "", `${e.class}${where ? ` at ${where}` : ""} — ${cells.join(", ")}`));
  box.append(el("div", "", `Cause: ${e.cause}`));
  if (e.fix) box.append(el("div", "fix", `Fix: ${e.fix}`));
  return box;
}

// renderDrill fills the dialog for a pair answer (GET .../pair).
export function renderDrill(pair, focusRail) {
  $("drill-title").textContent = `${pair.src.name} ⇄ ${pair.dst.name}`;
  const body = $("drill-body");
  const cells = [...pair.forward.map((c) => ["→", c]), ...pair.reverse.map((c) => ["←", c])];
  const out = [];
  const nodeLine = (n) => {
    const labels = Object.entries(n.labels || {}).map(([k, v]) => `${k}=${v}`).join(" ");
    return `${n.name}: ${n.state || "?"}${labels ? `, ${labels}` : ""}, ${(n.ports || []).length} HCA(s)`;
  };
  out.push(el("p", "sub", `${nodeLine(pair.src)} · ${nodeLine(pair.dst)}. → is ${pair.src.name} initiating, ← is ${pair.dst.name}.`));

  // One box per distinct cause: eight rails of one dead port say it once,
  // naming every cell it covers.
  const causes = new Map();
  for (const [, c] of cells.concat((pair.cross || []).map((c) => ["", c]))) {
    if (!c.error) continue;
    const key = `${c.error.class}|${c.error.cause}|${c.error.fix}`;
    if (!causes.has(key)) causes.set(key, { c, where: [] });
    causes.get(key).where.push(`${c.src} → ${c.dst} rail ${c.rail}`);
  }
  if (causes.size) {
    out.push(el("h3", "", "Error cause and fix"));
    for (const { c, where } of causes.values()) out.push(errorBox(c, where));
  }

  out.push(el("h3", "", "Measurements"));
  out.push(table(["dir", "rail", "HCAs", "verdict", "p50", "p99", "Gb/s", "% line", "round", "retests", "reason"],
    cells.map(([d, c]) => cellRow(pair, c, d))));

  const grid = el("div", "drill-grid");
  const latBox = el("div");
  latBox.append(el("h3", "", "Latency distribution"));
  const shown = cells.filter(([, c]) => c.latency && (focusRail === "all" || c.rail === Number(focusRail)));
  const series = shown.map(([d, c]) => ({ lat: c.latency, color: RAIL_COLORS[c.rail % RAIL_COLORS.length], dashed: d === "←" }));
  latBox.append(latencyChart(series));
  const samples = shown.map(([, c]) => c.latency.samples).filter(Boolean);
  latBox.append(el("p", "caption",
    `Percentile plot drawn from the quantiles each test reported (min, p50, p90, p99, p99.9, max` +
    `${samples.length ? ` of ${Math.min(...samples) === Math.max(...samples) ? samples[0] : `${Math.min(...samples)}–${Math.max(...samples)}`} samples` : ""}); the lines join those ` +
    `points, the raw samples are not kept. Colour = rail, solid → / dashed ←` +
    `${focusRail === "all" ? "" : `; rail ${focusRail} only`}.`));
  const legend = el("div", "");
  for (const r of [...new Set(shown.map(([, c]) => c.rail))]) {
    const s = el("span", "swatch");
    const i = el("i");
    i.style.background = RAIL_COLORS[r % RAIL_COLORS.length];
    s.append(i, `rail ${r} `);
    legend.append(s);
  }
  latBox.append(legend);
  const bwBox = el("div");
  bwBox.append(el("h3", "", "Bandwidth against line rate"));
  bwBox.append(bandwidthBars(cells.map(([d, c]) => ({ label: `rail ${c.rail} ${d}`, gbps: c.bandwidth && c.bandwidth.gbps,
    rate: lineRate(pair, c), failed: c.verdict === "failed", color: RAIL_COLORS[c.rail % RAIL_COLORS.length] }))));
  bwBox.append(el("p", "caption", "Grey: the slower end's port rate; bar: measured Gb/s."));
  grid.append(latBox, bwBox);
  out.push(grid);

  const retested = cells.filter(([, c]) => (c.retests || []).length);
  out.push(el("h3", "", "Retest history"));
  if (!retested.length) {
    out.push(el("p", "sub", "No retests: no cell between these nodes needed confirming."));
  } else {
    const rows = [];
    for (const [d, c] of retested) {
      const first = { round: c.round, class: c.class, latency: c.latency, bandwidth: c.bandwidth, error: c.error };
      [first, ...c.retests].forEach((a, k) => {
        const tr = el("tr");
        for (const t of [`rail ${c.rail} ${d}`, k === 0 ? "first" : `retest ${k}`, a.round || "–", a.class,
          fmtUs(a.latency && a.latency.p50_ns), fmtGbps(a.bandwidth && a.bandwidth.gbps), (a.error && a.error.cause) || ""]) {
          tr.append(el("td", "", t));
        }
        rows.push(tr);
      });
    }
    out.push(table(["cell", "attempt", "round", "class", "p50", "Gb/s", "cause"], rows));
    out.push(el("p", "caption", "The first row is the sweep's own measurement; the cell's verdict is judged from all of its attempts."));
  }
  if (pair.cross && pair.cross.length) {
    out.push(el("h3", "", "Cross-rail cells"));
    out.push(table(["dir", "rail", "HCAs", "verdict", "p50", "p99", "Gb/s", "% line", "round", "retests", "reason"],
      pair.cross.map((c) => cellRow(pair, c, c.src === pair.src.name ? "→" : "←"))));
  }
  body.replaceChildren(...out);
}

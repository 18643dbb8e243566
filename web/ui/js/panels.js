// The panels beside and above the heatmap: the summary line, the rail
// selector's options, the ranked suspects and the per-rail chips.

import { STATUS } from "./palette.js";
import { $, el, fmtUs, fmtGbps, suspectTarget } from "./util.js";

// renderPanels shows grid g (null: none yet). ctx: {sweepID, live, running,
// rail, onRail(rail), onSuspect(suspect)}.
export function renderPanels(g, ctx) {
  const sum = $("summary");
  if (!g) {
    sum.textContent = ctx.live ? "The live mesh has judged no window yet: the workers report one per window." :
      ctx.sweepID ? "No matrix for this sweep yet." : "No sweeps yet: start one from the Sweeps tab.";
    $("suspects").replaceChildren(el("li", "", "No matrix yet."));
    $("rails").replaceChildren();
    return;
  }
  const running = ctx.running;
  const badge = el("span", `badge ${running ? "running" : g.healthy ? "healthy" : "unhealthy"}`,
    running ? "RUNNING" : g.healthy ? "HEALTHY" : "UNHEALTHY");
  const counts = STATUS.filter(Boolean).map((s) => `${(g.counts[s.key] || 0).toLocaleString()} ${s.label}`).join(", ");
  sum.replaceChildren(badge, `${ctx.live ? "live: " : ""}${g.nodes.length} nodes × ${g.rails} rail(s), ${g.cells.toLocaleString()} cells: ${counts}` +
    `${g.cross ? ` · ${g.cross} cross-rail cells (in the drill-down)` : ""} · ${g.suspects.length} suspect(s)` +
    `${g.group_label ? ` · ordered by “${g.group_label}”` : ""}`);
  const sel = $("rail");
  const want = ["all", ...Array.from({ length: g.rails }, (_, r) => String(r))];
  if ([...sel.options].map((o) => o.value).join() !== want.join()) {
    sel.replaceChildren(...want.map((v) => {
      const o = el("option", "", v === "all" ? "all rails (worst)" : `rail ${v}`);
      o.value = v;
      return o;
    }));
  }
  sel.value = ctx.rail;
  renderSuspects(g, ctx);
  renderRails(g, ctx);
}

function renderSuspects(g, ctx) {
  const ol = $("suspects");
  if (!g.suspects.length) {
    ol.replaceChildren(el("li", "", "No suspects."));
    return;
  }
  ol.replaceChildren(...g.suspects.map((s) => {
    const li = suspectItem(s);
    li.title = ["link", "switch"].includes(s.kind) ? "show on the fabric" : "show on the heatmap";
    li.addEventListener("click", () => ctx.onSuspect(s));
    return li;
  }));
}

// suspectItem is one suspect as a list item: what it blames, how many
// cells, the reason, the fix and a note (the Fabric view shows them too).
export function suspectItem(s) {
  const li = el("li");
  li.append(el("span", "what", suspectTarget(s)), " ");
  if (s.class) li.append(el("span", "class", s.class), " ");
  li.append(el("span", "sub", `${s.bad}/${s.total} cells bad${s.confidence ? `, confidence ${s.confidence.toFixed(2)}` : ""}`));
  li.append(el("div", "", s.reason));
  if (s.fix) li.append(el("div", "fix", `Fix: ${s.fix}`));
  if (s.note) li.append(el("div", "evidence", s.note));
  return li;
}

export function renderRails(g, ctx) {
  const chip = (label, rail, bad, extra) => {
    const b = el("button", `rail-chip${bad ? " bad" : ""}${ctx.rail === rail ? " selected" : ""}`);
    b.type = "button";
    b.append(el("div", "", label), el("div", "sub", extra));
    b.addEventListener("click", () => ctx.onRail(rail));
    return b;
  };
  const anyBad = ["failed", "slow-latency", "low-bandwidth"].some((k) => g.counts[k] > 0);
  const chips = [chip("all rails", "all", anyBad, "worst per pair")];
  for (const r of g.rail_rollups) {
    const rail = r.key.replace(/^rail-/, "");
    const bad = r.failed + r.slow + r.low_bandwidth;
    chips.push(chip(`rail ${rail}`, rail, bad > 0, `${bad} bad · p50 ${fmtUs(r.p50_ns)} · min ${fmtGbps(r.min_gbps)}`));
  }
  $("rails").replaceChildren(...chips);
}

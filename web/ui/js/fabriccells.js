// The tests through the selected cable of the Fabric view, from
// GET /api/v1/sweeps/{id}/links/{cable}/cells: how many crossed it and how
// many of them were bad, how many may have but carry no flow to route by,
// and the first of them, worst first, each opening its pair's drill-down.

import { getJSON, sweepPath } from "./api.js";
import { $, el, fmtUs, fmtGbps } from "./util.js";

const BAD = ["failed", "low-bandwidth", "slow-latency"];

// linkCells shows the list; onCell(src, dst) opens a pair's drill-down.
export function linkCells(onCell) {
  let want = ""; // the answer wanted: sweep, cable and the grid's counts
  let last = null; // {key, crossed, listed} of the answer shown, for the tests

  // show lists cable's tests in the grid's sweep; a null cable hides the list.
  async function show(grid, cable) {
    const panel = $("fabric-cells-panel");
    if (!grid || cable === null) {
      panel.hidden = true;
      want = "";
      return;
    }
    panel.hidden = false;
    // A running sweep's grid changes with every round: so do the tests.
    const key = `${grid.sweep}|${cable}|${JSON.stringify(grid.counts)}`;
    if (key === want) return;
    want = key;
    const box = $("fabric-cells");
    box.replaceChildren(el("p", "sub", "loading the tests through it…"));
    try {
      const a = await getJSON(sweepPath(grid.sweep, `/links/${cable}/cells`));
      if (want !== key) return;
      render(box, a);
      last = { key, crossed: a.crossed, listed: a.cells.length };
    } catch (e) {
      if (want !== key) return;
      box.replaceChildren(el("p", "port-bad", `Could not list the tests through it: ${e.message}`));
      want = ""; // ask again when the view next renders
    }
  }

  function render(box, a) {
    const bad = BAD.reduce((n, v) => n + (a.counts[v] || 0), 0);
    const parts = [];
    const kinds = BAD.filter((v) => a.counts[v]).map((v) => `${v} ${a.counts[v]}`).join(", ");
    parts.push(el("p", "", `${a.crossed} test${a.crossed === 1 ? "" : "s"} crossed it, ${bad} bad${kinds ? ` (${kinds})` : ""}.`));
    if (a.unknown) {
      parts.push(el("p", "sub", `${a.unknown} more may have: RoCE tests without a recorded flow (UDP source port), ` +
        "whose path among the equal ones is unknown, are left out rather than guessed."));
    }
    if (a.cells.length < a.crossed) parts.push(el("p", "sub", `The first ${a.cells.length}, worst first:`));
    const ol = el("ol", "link-cells");
    ol.append(...a.cells.map((c) => item(c, a.ends)));
    if (a.cells.length) parts.push(ol);
    box.replaceChildren(...parts);
  }

  // item is one test: its path's verdict, its ends and rail, the figures
  // the heatmap's tooltip gives and which way it crossed the cable.
  function item(c, ends) {
    const li = el("li", "link-cell");
    Object.assign(li.dataset, { src: c.src, dst: c.dst, rail: String(c.rail), path: c.path_verdict });
    const head = el("div");
    head.append(el("span", `verdict v-${c.path_verdict}`, c.path_verdict), ` ${c.src} → ${c.dst}`, el("span", "k", ` rail ${c.rail}`));
    if (c.class && c.class !== "ok") head.append(` (${c.class})`);
    li.append(head);
    if (c.latency || c.bandwidth) {
      li.append(el("div", "sub", `p50 ${fmtUs(c.latency && c.latency.p50_ns)} · p99 ${fmtUs(c.latency && c.latency.p99_ns)} · ${fmtGbps(c.bandwidth && c.bandwidth.gbps)}`));
    }
    const way = (d) => (d === "ab" ? `${ends[0]} → ${ends[1]}` : `${ends[1]} → ${ends[0]}`);
    const ways = [c.data ? `data ${way(c.data)}` : "", c.return ? `return ${way(c.return)}` : ""].filter(Boolean);
    li.append(el("div", "sub", ways.join(" · ")));
    if (c.verdict !== c.path_verdict) {
      li.append(el("div", "sub", `first attempt ${c.path_verdict} over this cable; ${c.verdict} after retests, which took other paths`));
    }
    li.title = "open the pair's drill-down";
    li.tabIndex = 0;
    li.addEventListener("click", () => onCell(c.src, c.dst));
    li.addEventListener("keydown", (ev) => ev.key === "Enter" && onCell(c.src, c.dst));
    return li;
  }

  return { show, info: () => last };
}
